package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// A slow NIC or inter-node link of an NCCL job whose every group crosses the nodes
// alike (data parallelism over all the ranks: one ring, one tree) slows every group
// to the same pace, and an NCCL kernel says nothing of its links: no peer, no group
// and no link shows it. What is left to hold the collectives against is the product:
// NCCL's own tuning model (costmodel.PriceOnProduct) gives the time each collective
// takes on the named GPU's NVLink and NICs. A job whose bandwidth-bound collectives
// between nodes take far longer than that has a slow link somewhere they cross (a NIC,
// a port, a cable, congestion, or an NVLink inside a node): the data cannot say where.

// ncclFabricMinOps is the fewest bandwidth-bound collectives between nodes the check
// needs: one op's time is its arrival's noise as much as the fabric.
const ncclFabricMinOps = 4

// ncclFabricFraction is the share of NCCL's model below which the fabric is slow:
// lower than a link's Fraction against its peers (0.6), as the model is a prior and
// not this cluster's own peers. The generator's healthy jobs run their AllReduces
// between nodes at 0.65–1.1 of the model (compute beside them, eight nodes' rings),
// its slow links and slow NICs (a quarter to a third of the bandwidth) at 0.28–0.46.
const ncclFabricFraction = 0.5

// ncclBandwidthBound is the least share of a collective's predicted time that its
// bandwidth term must be for it to measure the fabric's bandwidth: below half, the
// latency (kernel launch, protocol) decides. DDP's 25 MiB buckets on two H100 nodes
// are two thirds bandwidth.
const ncclBandwidthBound = 0.5

// ncclFabricBelowPeak holds the AllReduces of the groups that cross nodes against
// NCCL's model of the product, each timed as its fastest member's (the last to
// arrive waits for no one). Their summed predicted time over their summed measured
// time below ncclFabricFraction is a slow fabric: one SlowServer with Server −1.
// Only AllReduce: the op whose size every reader gives as NCCL's n (the vector).
//
// Only against a product the user named (--hardware H100 or A100: the DGX/HGX node,
// eight GPUs on NVSwitch and one NIC per GPU). A GPU's name in the trace does not say
// how many NICs its node has (some cloud nodes of the same GPU have a quarter of
// DGX's network), so the detected product, "NVIDIA", has no link figures and the
// check does not run.
func ncclFabricBelowPeak(c analysis.Communication) []SlowServer {
	hw := c.Hardware
	if hw.Assumed || !hw.NCCL() {
		return nil
	}
	colls := opaqueGroupCollectives(c.Ops, c.Groups)
	type shape struct {
		bytes        int64
		servers, ppn int
	}
	predicted := map[shape]float64{} // µs; 0: not bandwidth-bound or not priced
	var predUs, measUs float64
	ops, spanned := 0, 0
	for _, g := range c.Groups {
		servers, ppn := groupServers(g.Ranks, c.ServerOf)
		if servers < 2 || ppn == 0 {
			continue
		}
		counted := false
		for _, gc := range colls[g.Key] {
			if costmodel.NormaliseOp(gc.key.typ) != "allreduce" || gc.key.bytes <= 0 {
				continue
			}
			sh := shape{gc.key.bytes, servers, ppn}
			p, seen := predicted[sh]
			if !seen {
				price, err := costmodel.PriceOnProduct(hw, costmodel.ProductQuery{Op: "allreduce", Bytes: sh.bytes, Servers: servers, NPUsPerServer: ppn})
				if err == nil && price.Cost.TimeUs > 0 && price.Cost.BandwidthUs >= ncclBandwidthBound*price.Cost.TimeUs {
					p = price.Cost.TimeUs
				}
				predicted[sh] = p
			}
			if p == 0 {
				continue
			}
			predUs += p
			measUs += float64(gc.transferNs) / 1e3
			ops++
			counted = true
		}
		if counted {
			spanned = max(spanned, servers)
		}
	}
	if ops < ncclFabricMinOps || measUs <= 0 || predUs >= ncclFabricFraction*measUs {
		return nil
	}
	frac := predUs / measUs
	named := hw.Name
	if hw.Source != "" {
		named += " (" + hw.Source + ")"
	}
	return []SlowServer{{Server: -1, Transport: "NET", Fraction: frac, Reference: "NCCL's model of " + hw.Name,
		Evidence: fmt.Sprintf("%d bandwidth-bound AllReduces across %d servers took %.1f ms, each its fastest member's time, where NCCL's tuning model of %s gives %.1f ms: %.0f%%. "+
			"Every group crosses the servers alike, so none is a healthy peer, and NCCL's kernels do not say which link: a NIC, a port's speed, a cable, the fabric's congestion, or an NVLink inside a server. "+
			"Measure pairs of servers with nccl-tests (all_reduce_perf) and each NIC with ib_write_bw before tuning",
			ops, spanned, measUs/1e3, named, predUs/1e3, 100*frac)}}
}

// groupServers is how many servers a group's ranks are on and how many of its ranks
// each holds (0 when they differ, or a rank's server is unknown).
func groupServers(ranks []int, serverOf map[int]int) (servers, perServer int) {
	count := map[int]int{}
	for _, r := range ranks {
		s, ok := serverOf[r]
		if !ok {
			return 0, 0
		}
		count[s]++
	}
	for _, n := range count {
		if perServer == 0 {
			perServer = n
		} else if n != perServer {
			return len(count), 0
		}
	}
	return len(count), perServer
}
