package costmodel

import (
	"fmt"
	"strings"

	"github.com/hcclprof/hcclprof/analysis/hardware"
)

// Atlas A3 as HCCL 8.x runs it inside one super-node. Three things shape its cost
// and none of them is an α-β line per algorithm (docs/costmodel.md §4.1):
//
//   - Two expansion paths. With HCCL_OP_EXPANSION_MODE=AIV, ops under HCCL's A3 entry
//     sizes (hccl_aiv.h) run as one vector-core kernel: a few µs. Above them, and
//     always in the default AI_CPU mode, HCCL expands the op on the AI CPU, whose
//     launch costs about a hundred µs before a byte moves.
//   - A per-die ceiling. Each die injects at most its share of the package's UB/HCCS
//     ports whatever the rank count; p−1 links of 56 GB/s each do not add up past it.
//   - Servers of one super-node talk over the same HCCS fabric, not RoCE: level 1
//     adds steps, not a slower link.
const (
	// a3DieInjectionGBps is one die's share of a 910C package's 392 GB/s of
	// unidirectional UB bandwidth (Huawei, "Serving Large Language Models on Huawei
	// CloudMatrix384", 2025, §3: 7 × 56 GB/s ports per package, two dies).
	a3DieInjectionGBps = 196.0
	// a3SIOGBps is the die-to-die SIO link of one package, one direction: HCCL's
	// device capacity table gives 240 GB/s for the link, shared by both directions.
	a3SIOGBps = 120.0
	// a3AIVUsPerTask and a3AICPUUsPerTask are the per-task latencies of HCCL's own
	// cost model (hicann/hccl src/ops/op_common/selector/cost_model.cc,
	// CalcLatencyParams: AIV 1 µs, AICPU 2 µs per task).
	a3AIVUsPerTask   = 1.0
	a3AICPUUsPerTask = 2.0
	// a3AICPULaunchUs is the AI-CPU expansion's fixed cost: no public constant was
	// found; it is the published A3 sweep's time at the first size past each AIV switch
	// (91–150 µs) less its transfer, so figures built on it are partly in-sample.
	a3AICPULaunchUs = 100.0
	// a3AIVUtilisation scales the mesh utilisation for the vector-core path, as HCCL's
	// cost model does (u/0.85·0.65).
	a3AIVUtilisation = 0.65 / 0.85
)

// a3MeshUtilisation is HCCL's link-utilisation table for a mesh by data size
// (cost_model.cc, the mesh table): the first bucket whose bound is at least the size.
var a3MeshUtilisation = []struct {
	upToBytes int64
	u         float64
}{
	{1 << 20, 0.7135}, {2 << 20, 0.7758}, {4 << 20, 0.8112}, {8 << 20, 0.8301}, {16 << 20, 0.84},
	{32 << 20, 0.8449}, {64 << 20, 0.8475}, {128 << 20, 0.8487},
}

func a3Utilisation(bytes int64) float64 {
	for _, b := range a3MeshUtilisation {
		if bytes <= b.upToBytes {
			return b.u
		}
	}
	return 0.8494
}

// Expansion modes of HCCL_OP_EXPANSION_MODE that the A3 model prices.
const (
	ExpansionAICPU = "AI_CPU"
	ExpansionAIV   = "AIV"
)

// normaliseExpansion returns HCCL_OP_EXPANSION_MODE's canonical spelling, "" for the
// product's default, or an error for a mode the A3 model does not price.
func normaliseExpansion(mode string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(mode)) {
	case "":
		return "", nil
	case "AI_CPU", "AICPU":
		return ExpansionAICPU, nil
	case "AIV":
		return ExpansionAIV, nil
	}
	return "", fmt.Errorf("HCCL_OP_EXPANSION_MODE %q: the model prices AI_CPU (A3's default) and AIV", mode)
}

// a3AIVEntry says whether HCCL takes its vector-core path for op on A3 in op-base
// mode (hccl_aiv.h entry sizes; *_operator.cc SelectAlgfor91093), and which rule
// decided. bytes is the model's n: the vector (AllReduce, Broadcast), the total
// (AllGather, ReduceScatter) or the per-rank send buffer (AlltoAll).
func a3AIVEntry(op string, pl, servers int, bytes int64) (bool, string) {
	p := pl * servers
	const kib, mib = int64(1) << 10, int64(1) << 20
	switch op {
	case "allreduce":
		if servers == 1 {
			return bytes/int64(pl) <= 1*mib, fmt.Sprintf("AllReduce per NPU %s vs AIV_ALL_REDUCE_A3_ENTRY_SIZE 1 MiB", sizeWords(bytes/int64(pl)))
		}
		if p > 8 {
			return bytes < 8*mib, "multi-server AllReduce under 8 MiB (AllReduceMeshAivFor91093)"
		}
		return bytes <= 512*kib, "multi-server AllReduce of ≤ 8 ranks up to 512 KiB"
	case "allgather":
		limit, name := 512*kib, "AIV_ALL_GATHER_A3_ENTRY_SIZE 512 KiB"
		if p > 16 {
			limit, name = 32*kib, "AIV_ALL_GATHER_A3_LARGE_RANKSIZE_ENTRY_SIZE 32 KiB"
		}
		per := bytes / int64(p)
		return per <= limit, fmt.Sprintf("AllGather input %s per rank vs %s", sizeWords(per), name)
	case "reducescatter":
		limit, name := 1*mib, "AIV_REDUCE_SCATTER_A3_ENTRY_SIZE 1 MiB"
		if p > 16 {
			limit, name = 128*kib, "AIV_REDUCE_SCATTER_A3_LARGE_RANKSIZE_ENTRY_SIZE 128 KiB"
		}
		per := bytes / int64(p)
		return per <= limit, fmt.Sprintf("ReduceScatter output %s per rank vs %s", sizeWords(per), name)
	case "alltoall":
		per := bytes / int64(p)
		return per <= 512*kib, fmt.Sprintf("AlltoAll %s per destination vs AIV_ALL_TO_ALL_A3_ENTRY_SIZE 512 KiB", sizeWords(per))
	case "broadcast":
		// No A3 Broadcast entry size in the sources read; the published sweep shows
		// vector-core times at every size up to 8 ranks and the AI-CPU floor at 16.
		return p <= 8, "Broadcast: no A3 entry size in HCCL's source; up to 8 ranks the published sweep runs it on the vector cores"
	}
	return false, "no vector-core path for " + op
}

func sizeWords(b int64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

// a3BusFactor is the bytes each die must inject per byte of n, for an op on p ranks
// of a mesh: AllReduce reduce-scatters and all-gathers, Broadcast scatters and
// all-gathers, AllGather, ReduceScatter and AlltoAll move (p−1)/p.
func a3BusFactor(op string, p int) (float64, error) {
	f := float64(p-1) / float64(p)
	switch op {
	case "allreduce", "broadcast":
		return 2 * f, nil
	case "allgather", "reducescatter", "alltoall":
		return f, nil
	}
	return 0, fmt.Errorf("no A3 model for %s", op)
}

// a3Steps is the mesh steps an op takes: a notify, a wait and a copy per peer each.
func a3Steps(op string) int {
	if op == "allreduce" || op == "broadcast" {
		return 2
	}
	return 1
}

// priceA3 prices q on an A3 super-node.
func priceA3(hw hardware.Profile, q ProductQuery, op string, pl int) (ProductPrice, error) {
	price := ProductPrice{Product: hw.Name, Servers: q.Servers}
	p := pl * q.Servers
	if p < 2 {
		return price, fmt.Errorf("a group of one rank")
	}
	factor, err := a3BusFactor(op, p)
	if err != nil {
		return price, err
	}
	mode, err := normaliseExpansion(q.Expansion)
	if err != nil {
		return price, err
	}
	if mode == "" {
		mode = ExpansionAICPU
	}
	aiv, rule := false, "HCCL_OP_EXPANSION_MODE=AI_CPU (A3's default): every op is expanded on the AI CPU"
	if mode == ExpansionAIV {
		aiv, rule = a3AIVEntry(op, pl, q.Servers, q.Bytes)
		if q.Deterministic && op != "allreduce" {
			aiv, rule = false, "HCCL_DETERMINISTIC takes priority over the vector-core path"
		}
	}
	inject := a3DieInjectionGBps
	link := "UB/HCCS, one die's 196 GB/s"
	if p == 2 {
		inject, link = a3SIOGBps, "SIO between the package's two dies, 120 GB/s each way"
	}
	u := a3Utilisation(q.Bytes) / a3Utilisation(1<<40)
	steps := a3Steps(op)
	c := Cost{Op: op, Ranks: p, Bytes: q.Bytes, Rounds: 1}
	if aiv {
		u *= a3AIVUtilisation
		// One kernel: a launch and a flag per peer.
		c.LatencyUs = a3AIVUsPerTask * float64(p+1)
		c.Algo = "aiv-mesh"
	} else {
		// The AI-CPU launch, then per step a notify record, a wait and a copy per peer.
		c.LatencyUs = a3AICPULaunchUs + a3AICPUUsPerTask*3*float64(p-1)*float64(steps)
		c.Algo = "aicpu-mesh"
	}
	c.BandwidthUs = factor * float64(q.Bytes) / (inject * u * 1e3)
	c.finish()
	price.Cost = c
	path := "AI CPU"
	if aiv {
		path = "vector cores (AIV)"
	}
	price.Choice = &Choice{Algo: c.Algo, Reason: rule}
	price.Notes = append(price.Notes,
		fmt.Sprintf("path: %s; %s", path, rule),
		fmt.Sprintf("A3 figures: %s, %.0f%% of it at this size (HCCL's mesh utilisation table%s); latency %.0f µs (HCCL's cost model: %g µs per %s task%s)",
			link, 100*u, map[bool]string{true: ", × 0.65/0.85 on the vector cores", false: ""}[aiv], c.LatencyUs, map[bool]float64{true: a3AIVUsPerTask, false: a3AICPUUsPerTask}[aiv], map[bool]string{true: "AIV", false: "AI-CPU"}[aiv],
			map[bool]string{true: "", false: fmt.Sprintf(", plus the AI-CPU launch of about %.0f µs", a3AICPULaunchUs)}[aiv]))
	if q.Servers > 1 {
		price.Notes = append(price.Notes, fmt.Sprintf("%d servers of one super-node: level 1 over HCCS, at the same per-die ceiling", q.Servers))
	}
	return price, nil
}
