package costmodel

import (
	"fmt"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
)

// ProductQuery is one op to price on a product's cluster: HCCL's own level-1 choice
// and the cost of the two-level execution with the product's figures.
type ProductQuery struct {
	Op    string
	Bytes int64 // the op's n: the vector (AllReduce, Broadcast, Reduce) or the total
	// Servers and NPUsPerServer shape the cluster; NPUsPerServer 0 is the product's.
	Servers, NPUsPerServer int
	BufferBytes            int64   // HCCL_BUFFSIZE; 0 is HCCL's default
	GammaGBps              float64 // the reduction bandwidth behind γ (0: free)
	Deterministic          bool    // HCCL_DETERMINISTIC=true
	RDMALite               bool    // the NIC has RDMA-lite (it lowers HCCL's pipeline thresholds)
	// Expansion is HCCL_OP_EXPANSION_MODE (A3: AI_CPU, the default, or AIV).
	Expansion string
	// InterRoCE prices A3 servers joined by RoCE (different super-nodes, or
	// HCCL_INTER_HCCS_DISABLE=TRUE) instead of one super-node's HCCS.
	InterRoCE bool
}

// ProductPrice is HCCL's choice for the op and its cost, with notes on the figures
// used.
type ProductPrice struct {
	Product string
	Servers int
	Choice  *Choice
	Cost    Cost
	Notes   []string
}

// PriceOnProduct prices q as HCCL runs it on hw: level 1 by HCCL's own choice, level 0
// as the product's default (910A: the 8P ring; A2: the mesh), each level's α and
// bandwidth the product's priors.
func PriceOnProduct(hw hardware.Profile, q ProductQuery) (ProductPrice, error) {
	if hw.NCCL() { // NVIDIA: NCCL's own tuning model (nccl.go)
		return priceNCCL(hw, q)
	}
	if q.Servers < 1 {
		return ProductPrice{}, fmt.Errorf("%d servers: want at least one", q.Servers)
	}
	pl := q.NPUsPerServer
	if pl == 0 {
		pl = hw.ServerNPUs
	}
	buffer := q.BufferBytes
	if buffer == 0 {
		buffer = analysis.DefaultLimits.BuffsizeBytes(nil) // HCCL_BUFFSIZE's default
	}
	intra := Link{AlphaUs: hw.Level0LatencyUs, BWGBps: hw.PeakGBps["HCCS"], GammaBWGBps: q.GammaGBps}
	if sio := hw.PeakGBps["SIO"]; sio > 0 && pl == 2 && q.Servers == 1 {
		// Two ranks of one A3 package: its two dies, joined by SIO, not HCCS.
		intra.BWGBps = sio
	}
	inter := Link{AlphaUs: hw.Level1LatencyUs, BWGBps: hw.PeakGBps["RDMA"], GammaBWGBps: q.GammaGBps}
	op := NormaliseOp(q.Op)
	if hw.Name == "A3" && !q.InterRoCE {
		return priceA3(hw, q, op, pl)
	}
	price := ProductPrice{Product: hw.Name, Servers: q.Servers}
	// HCCL counts the per-rank piece for AllGather and ReduceScatter.
	curSize := q.Bytes
	if op == "allgather" || op == "reducescatter" {
		curSize = q.Bytes / int64(pl*q.Servers)
	}
	ch, err := SelectLevel1(hw.Name, op, pl, q.Servers, curSize, buffer, q.Deterministic, q.RDMALite)
	if err != nil {
		return price, err
	}
	price.Choice = &ch
	level1 := ch.Algo
	if level1 == "none" {
		level1 = "ring"
	}
	level0 := defaultLevel0(hw.Name, pl)
	topo := Topology{RanksPerServer: pl, Servers: q.Servers, Level1: level1, Level0: level0, Level0Source: "HCCL default", Intra: intra, Inter: inter, Product: hw.Name}
	price.Cost, err = topo.OpCost(op, curSize, buffer)
	if err != nil {
		return price, err
	}
	price.Notes = append(price.Notes, fmt.Sprintf("level 0 (in-server): HCCL's %s for %d NPUs on %s", level0, pl, hw.Name),
		fmt.Sprintf("%s figures: intra α %.0f µs, HCCS %.1f GB/s; inter α %.0f µs, RoCE %.1f GB/s (priors; hcclprof calibrate fits them on a run)",
			hw.Name, intra.AlphaUs, intra.BWGBps, inter.AlphaUs, inter.BWGBps))
	return price, nil
}
