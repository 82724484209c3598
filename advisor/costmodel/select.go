package costmodel

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/internal/units"
)

// hierarchicalAllReduce is HCCL's AllReduceMeshExecutor on m servers of pl NPUs
// (docs/costmodel.md §3.6): a mesh reduce-scatter inside each server, an AllReduce of n/pl
// between servers with level1 (ring, nhr, rhd), a mesh all-gather inside. Every NPU
// uses its own NIC at once. bufferBytes bounds each round (§3.7).
func hierarchicalAllReduce(pl, m int, n int64, intra, inter Link, level1 string, bufferBytes int64) (Cost, error) {
	return hierarchicalAllReduceOn("mesh", pl, m, n, intra, inter, level1, bufferBytes)
}

// hierarchicalAllReduceOn is the two-level AllReduce with the in-server algorithm
// level0: "mesh" (A2's full mesh: one step each way, p_l − 1 links at once) or "ring"
// (910A's 8P ring, docs/costmodel.md §1.3: p_l − 1 steps each way over one link).
func hierarchicalAllReduceOn(level0 string, pl, m int, n int64, intra, inter Link, level1 string, bufferBytes int64) (Cost, error) {
	if pl < 1 || m < 1 {
		return Cost{}, fmt.Errorf("servers = %d, NPUs per server = %d: want ≥ 1", m, pl)
	}
	if level0 != "mesh" && level0 != "ring" {
		return Cost{}, fmt.Errorf("level-0 algorithm %q: want mesh or ring", level0)
	}
	rounds := Rounds(n, bufferBytes)
	out := Cost{Op: "allreduce", Algo: "hierarchical-" + NormaliseAlgo(level1), Ranks: pl * m, Bytes: n, Rounds: rounds}
	if level0 == "ring" {
		out.Algo = "hierarchical-ring-" + NormaliseAlgo(level1)
	}
	nb := float64(n)
	if pl > 1 {
		f := float64(pl)
		if level0 == "ring" {
			// RS and AG each: (pl−1)·α_l + (pl−1)/pl·n·β_l (+ (pl−1)/pl·n·γ for RS).
			out.LatencyUs += 2 * float64(rounds) * (f - 1) * intra.AlphaUs
			out.BandwidthUs += 2 * (f - 1) / f * nb * intra.betaUsPerByte()
		} else {
			// RS: α_l + n/pl·β_l + (pl−1)/pl·n·γ; AG: α_l + n/pl·β_l.
			out.LatencyUs += 2 * float64(rounds) * intra.AlphaUs
			out.BandwidthUs += 2 * nb / f * intra.betaUsPerByte()
		}
		out.ReduceUs += (f - 1) / f * nb * intra.gammaUsPerByte()
	}
	if m > 1 {
		c, err := coefficientsOf("allreduce", level1, m)
		if err != nil {
			return Cost{}, err
		}
		piece := nb / float64(pl)
		out.LatencyUs += float64(rounds) * c.A * inter.AlphaUs
		out.BandwidthUs += c.B * piece * inter.betaUsPerByte()
		out.ReduceUs += c.C * piece * inter.gammaUsPerByte()
	}
	out.finish()
	return out, nil
}

// pipelineAllReduce is HCCL's Pipeline algorithm (docs/costmodel.md §3.2): intra- and
// inter-server steps overlap, each step costing the slower of the two:
// T = 2·[(m−1)·max(n/p·β_r + α_r, n/p·β_l + α_l) + n/p·β_l + α_l], p = pl·m.
func pipelineAllReduce(pl, m int, n int64, intra, inter Link) (Cost, error) {
	if pl < 1 || m < 2 {
		return Cost{}, fmt.Errorf("pipeline needs several servers (m = %d) of NPUs (pl = %d)", m, pl)
	}
	p := float64(pl * m)
	slice := float64(n) / p
	stepInter := slice*inter.betaUsPerByte() + inter.AlphaUs
	stepIntra := slice*intra.betaUsPerByte() + intra.AlphaUs
	out := Cost{Op: "allreduce", Algo: "pipeline", Ranks: pl * m, Bytes: n, Rounds: 1}
	total := 2 * (float64(m-1)*math.Max(stepInter, stepIntra) + stepIntra)
	// Split for the report: the α terms of the dominant path, the rest bandwidth.
	alpha := inter.AlphaUs
	if stepIntra > stepInter {
		alpha = intra.AlphaUs
	}
	out.LatencyUs = 2 * (float64(m-1)*alpha + intra.AlphaUs)
	out.BandwidthUs = total - out.LatencyUs
	out.finish()
	return out, nil
}

// HCCL's legacy level-1 model constants (docs/costmodel.md §1.3).
const (
	legacyLatencyUs   = 60.0 // δ per step
	legacyBWGiBps     = 20.0 // GetBandWidthPerNPU(level 1) on A2/A3: 25 × 0.8, in GiB/s
	pipelineSliceLite = 1 << 20
	pipelineSlice     = 2 << 20
	pipelineMinLite   = 32 << 10
	pipelineMin       = 2 << 20
	// fftsCapacity is HCCL_FFTS_CAPACITY: a pipeline needing more FFTS+ contexts is
	// not chosen (CalcContextNumForPipeline).
	fftsCapacity = 65535
)

// pipelineContexts is the FFTS+ context count HCCL's pipeline needs for op on m
// servers of pl NPUs (docs/costmodel.md §1.3): m·(5(pl−1) + 7 + 1 [+ (pl−1) if
// deterministic]) + 4 + 1, doubled for AllReduce.
func pipelineContexts(op string, pl, m int, deterministic bool) int {
	per := 5*(pl-1) + 7 + 1
	if deterministic {
		per += pl - 1
	}
	ctx := m*per + 4 + 1
	if NormaliseOp(op) == "allreduce" {
		ctx *= 2
	}
	return ctx
}

// pipelineFits reports whether the pipeline's FFTS+ contexts fit HCCL's capacity.
func pipelineFits(op string, pl, m int, deterministic bool) bool {
	return pipelineContexts(op, pl, m, deterministic) <= fftsCapacity
}

// defaultLevel0 is HCCL's in-server algorithm for pl NPUs per server on the product
// (docs/costmodel.md §1.3, GetDefaultAlgoLevel0Module): 910A's 8 NPUs form an 8P ring, 4 a
// mesh, 2 a single ring; A2's HCCS full mesh (p(p−1) pair links) is a mesh. A3's in-server level is a
// double ring in HCCL, which the model prices as the mesh its HCCS switch offers (an
// approximation).
func defaultLevel0(product string, pl int) string {
	switch strings.ToUpper(product) {
	case "910A":
		if pl == 4 {
			return "mesh"
		}
		return "ring"
	}
	return "mesh"
}

// pipelineAvailable says whether HCCL has its level-1 pipeline for op on the shape:
// only A2 has it (docs/costmodel.md §1.2), over a level-0 mesh of several NPUs on several
// servers, with its FFTS+ contexts within HCCL's capacity; the advice also keeps it
// off under HCCL_DETERMINISTIC (A2's pipeline does not work with it, §1.2). reason
// says why not.
func pipelineAvailable(product, level0, op string, pl, m int, deterministic bool) (ok bool, reason string) {
	switch {
	case !strings.EqualFold(product, "A2") && !strings.EqualFold(product, "910B") && product != "":
		return false, fmt.Sprintf("HCCL has no level-1 pipeline on %s", product)
	case level0 != "mesh":
		return false, fmt.Sprintf("HCCL's pipeline needs a level-0 mesh; this level 0 is a %s", level0)
	case pl < 2 || m < 2:
		return false, fmt.Sprintf("the pipeline needs several servers of several NPUs (here %d × %d)", m, pl)
	case deterministic:
		return false, "A2's pipeline does not work with HCCL_DETERMINISTIC"
	case !pipelineFits(op, pl, m, deterministic):
		return false, fmt.Sprintf("the pipeline needs %d FFTS+ contexts on %d servers, beyond HCCL's %d", pipelineContexts(op, pl, m, deterministic), m, fftsCapacity)
	}
	return true, ""
}

// Choice is what HCCL's selector picks for an op, with the costs it compared.
type Choice struct {
	Algo   string             // pipeline, ring, nhr or rhd (H-D_R)
	Reason string             // which rule decided
	CostUs map[string]float64 // the α-β model's cost per candidate (empty when a pipeline rule decided)
	// Library is whose choice it is: "" for HCCL, "NCCL" for NCCL's tuning model
	// (Algo then names the algorithm and protocol, "ring/LL128").
	Library string
}

// SelectA2Level1 reproduces HCCL's automatic level-1 choice on A2 (910B) in op-base
// mode (docs/costmodel.md §1.3, GetDefaultAlgoLevel1V2): the pipeline rules first (mesh
// level0, more than one NPU per server), then the α-β model with δ = 60 µs and
// BW = 20 GiB/s on D = min(size, CCL buffer), ties going to Ring, then NHR, then HD.
// size is the op's total bytes (AllReduce, Broadcast, Reduce) or the per-rank piece
// (AllGather, ReduceScatter), as HCCL counts curSize. rdmaLite is the RDMA-lite
// capability that lowers the pipeline thresholds.
func SelectA2Level1(op string, pl, m int, size, bufferBytes int64, deterministic, rdmaLite bool) (Choice, error) {
	return selectA2Level1(op, pl, m, size, bufferBytes, deterministic, rdmaLite, true)
}

// selectA2Level1 is SelectA2Level1 with level 0 said: the pipeline rules apply only
// over a level-0 mesh.
func selectA2Level1(op string, pl, m int, size, bufferBytes int64, deterministic, rdmaLite, level0Mesh bool) (Choice, error) {
	o := NormaliseOp(op)
	if m < 2 {
		return Choice{Algo: "none", Reason: "a single server has no level 1"}, nil
	}
	if pl > 1 && level0Mesh && pipelineFits(o, pl, m, deterministic) {
		switch o {
		case "allreduce":
			slice := size / int64(m*pl)
			min := int64(pipelineSlice)
			if rdmaLite || deterministic {
				min = pipelineSliceLite
			}
			if slice >= min {
				return Choice{Algo: "pipeline", Reason: fmt.Sprintf("slice = size/(m·p_l) = %s ≥ %s", units.FormatBytes(slice), units.FormatBytes(min))}, nil
			}
		case "reducescatter", "allgather":
			min := int64(pipelineMin)
			if rdmaLite {
				min = pipelineMinLite
			}
			if o == "reducescatter" && deterministic {
				min = max(min, 256<<10)
			}
			if size >= min && !(o == "reducescatter" && deterministic && m <= 1) {
				return Choice{Algo: "pipeline", Reason: fmt.Sprintf("size %s ≥ %s", units.FormatBytes(size), units.FormatBytes(min))}, nil
			}
		}
	}
	note := ""
	if pl > 1 && !pipelineFits(o, pl, m, deterministic) {
		note = fmt.Sprintf("; no pipeline: it would need %d FFTS+ contexts, beyond HCCL's %d", pipelineContexts(o, pl, m, deterministic), fftsCapacity)
	}
	if o == "alltoall" {
		return alltoallChoice(m), nil
	}
	d := float64(size)
	if bufferBytes > 0 {
		d = math.Min(d, float64(bufferBytes))
	}
	bwBytesPerUs := legacyBWGiBps * (1 << 30) / 1e6
	mf := float64(m)
	lg := math.Ceil(math.Log2(mf))
	pow2 := isPow2(m)
	cost := map[string]float64{}
	switch o {
	case "allreduce":
		data := d / float64(pl) / bwBytesPerUs
		cost["ring"] = 2*(mf-1)*legacyLatencyUs + 2*(mf-1)/mf*data
		cost["nhr"] = 2*lg*legacyLatencyUs + 2*(mf-1)/mf*data
		if pow2 {
			cost["rhd"] = 2*math.Log2(mf)*legacyLatencyUs + 2*(mf-1)/mf*data
		} else {
			cost["rhd"] = 2*lg*legacyLatencyUs + 2*(2*mf-1)/mf*data
		}
	case "reducescatter", "allgather":
		data := d * float64(pl*m) / bwBytesPerUs
		cost["ring"] = (mf-1)*legacyLatencyUs + (mf-1)/mf*data
		cost["nhr"] = lg*legacyLatencyUs + (mf-1)/mf*data
		if pow2 {
			cost["rhd"] = math.Log2(mf)*legacyLatencyUs + (mf-1)/mf*data
		} else {
			cost["rhd"] = lg*legacyLatencyUs + (2*mf-1)/mf*data
		}
	case "broadcast", "reduce":
		data := d / float64(pl) / bwBytesPerUs
		cost["ring"] = 2*(mf-1)*legacyLatencyUs + 2*(mf-1)/mf*data
		if pow2 {
			cost["rhd"] = 2*math.Log2(mf)*legacyLatencyUs + 2*(mf-1)/mf*data
		} else {
			cost["rhd"] = (1+2*math.Floor(math.Log2(mf)))*legacyLatencyUs + (1+2*(mf-1)/mf)*data
		}
	default:
		return Choice{}, fmt.Errorf("no legacy level-1 model for %q", op)
	}
	best := ""
	for _, a := range []string{"ring", "nhr", "rhd"} { // strict <: ties keep the earlier
		if c, ok := cost[a]; ok && (best == "" || c < cost[best]) {
			best = a
		}
	}
	return Choice{Algo: best, Reason: "α-β model, δ = 60 µs, BW = 20 GiB/s; ties: Ring, then NHR, then HD" + note, CostUs: cost}, nil
}

// alltoallChoice is HCCL's AlltoAll between servers: the staged hierarchical path
// (an AlltoAll inside each server, then one of the aggregated blocks between servers,
// RunAlltoAllVStaged); the A2 pipeline is never chosen by itself (docs/costmodel.md §1.3:
// only HCCL_ALGO "alltoall=level0:NA;level1:pipeline" with HCCL_BUFFSIZE ≥ 80 turns it on).
func alltoallChoice(m int) Choice {
	return Choice{Algo: "staged", Reason: fmt.Sprintf("AlltoAll on %d servers: HCCL's staged hierarchical path (in-server AlltoAll, then server blocks pairwise); the pipeline only when HCCL_ALGO asks for it", m)}
}

// SelectLevel1 is HCCL's default level-1 algorithm for an op on a product with
// HCCL_ALGO unset (docs/costmodel.md §1.3). A2 chooses per op (SelectA2Level1). 910A and
// A3 use the fixed rule of GetDefaultAlgoLevel1V1: H-D_R from 8 servers or on a power
// of two above 1, else Ring; A3 then rewrites H-D_R to NHR.
func SelectLevel1(product, op string, pl, m int, size, bufferBytes int64, deterministic, rdmaLite bool) (Choice, error) {
	return selectLevel1(product, op, pl, m, size, bufferBytes, deterministic, rdmaLite, defaultLevel0(product, pl) == "mesh")
}

func selectLevel1(product, op string, pl, m int, size, bufferBytes int64, deterministic, rdmaLite, level0Mesh bool) (Choice, error) {
	switch strings.ToUpper(product) {
	case "A2", "910B", "":
		return selectA2Level1(op, pl, m, size, bufferBytes, deterministic, rdmaLite, level0Mesh)
	case "910A", "A3":
	default:
		return Choice{}, fmt.Errorf("no level-1 selector for product %q: want 910A, A2 or A3", product)
	}
	if m < 2 {
		return Choice{Algo: "none", Reason: "a single server has no level 1"}, nil
	}
	if NormaliseOp(op) == "alltoall" {
		return alltoallChoice(m), nil
	}
	c := Choice{Algo: "ring", Reason: fmt.Sprintf("GetDefaultAlgoLevel1V1: %d servers, neither ≥ 8 nor a power of two → Ring", m)}
	if m >= 8 || isPow2(m) {
		c = Choice{Algo: "rhd", Reason: fmt.Sprintf("GetDefaultAlgoLevel1V1: %d servers (≥ 8 or a power of two) → H-D_R", m)}
		if strings.ToUpper(product) == "A3" {
			c = Choice{Algo: "nhr", Reason: c.Reason + ", which A3 (910_93) rewrites to NHR"}
		}
	}
	return c, nil
}
