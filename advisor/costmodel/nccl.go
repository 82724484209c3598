package costmodel

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/analysis/hardware"
)

// NCCL's own tuning model, as NCCL 2.26.2 computes it in src/graph/tuning.cc
// (ncclTopoTuneModel, ncclTopoGetAlgoTime): for every (algorithm, protocol) a
// latency lat (µs) and an algorithm bandwidth bw (GB/s), the op of n bytes taking
// lat + n/(1000·bw), and NCCL running the pair of least time. n is NCCL's nBytes: the
// vector for AllReduce, Broadcast and Reduce, the total for AllGather and
// ReduceScatter (docs/costmodel.md §3.3). The constants below are that version's;
// other versions differ (2.19 had ring LL at a quarter or a third of the bus
// bandwidth and a 2·nNodes inter-node step count).
//
// What NCCL reads from its topology search and hcclprof takes from the product
// instead: the bus bandwidth (nChannels × the channel's bandwidth) is, inside a
// node, the GPU's NVLink links × NCCL's own per-link figure (topo.h: 20.6 GB/s per
// NVLink4 link, 20 per NVLink3 link, against 25 GB/s on the wire: the only
// efficiency applied), and across nodes the node's NICs (one per GPU, at their line
// rate) when they are slower; a tree's intra-node bandwidth may be twice the
// inter-node one on two nodes (search.cc raises it so for trees). Not modelled:
// NVLS and NVLS-tree (NVLink SHARP needs the switch's multicast, which not every
// system enables), CollNet (InfiniBand SHARP), PAT (one GPU per node), the
// per-channel bandwidth caps (they need the search's channel count; on NVSwitch
// nodes they do not bind) and the user's NCCL_ALGO / NCCL_PROTO.

// ncclAlgos and ncclProtos are the pairs priced, in NCCL's order.
var (
	ncclAlgos  = []string{"tree", "ring"}
	ncclProtos = []string{"LL", "LL128", "Simple"}
)

// ncclBaseLatUs is tuning.cc's baseLat, µs: [tree, ring][LL, LL128, Simple].
var ncclBaseLatUs = [2][3]float64{{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}}

// ncclHwLatUs is tuning.cc's hwLat for NVLink and the network, µs:
// [NVLink, NET][tree, ring][LL, LL128, Simple].
var ncclHwLatUs = [2][2][3]float64{
	{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},
	{{5.0, 8.5, 14}, {2.7, 4.0, 14.0}},
}

// ncclTreeCorrection is tuning.cc's treeCorrectionFactor: the tree AllReduce's
// bandwidth at 64 B · 2^i, per protocol (LL, LL128, Simple).
var ncclTreeCorrection = [3][23]float64{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}

// ncclGPU is what NCCL's model reads of an NVIDIA product beyond its link figures.
type ncclGPU struct {
	compCap int
	// nvlinkPerLinkGBps is NCCL's bandwidth of one NVLink link (topo.h), against
	// nvlinkWireGBps on the wire, per direction.
	nvlinkPerLinkGBps, nvlinkWireGBps float64
	// llMaxBwGBps caps ring LL and tree LL (tuning.cc llMaxBws): inside one node by
	// GPU generation; across 2 and more than 2 nodes by CPU vendor.
	llMaxBwGBps [3]float64
	cpu         string // the reference node's CPU: NCCL's network overhead and LL caps depend on it
	netOverhead float64
	// channels is NCCL's usual channel count on the reference node; it only sets
	// where the multi-node ring plateau starts.
	channels int
	// plateau multiplies a multi-node ring/Simple AllReduce's latency (1.4 from
	// compute capability 8.0).
	plateau float64
}

// ncclGPUs are the products NCCL is modelled on: the DGX H100 (Intel Xeon) and DGX
// A100 (AMD EPYC) designs.
var ncclGPUs = map[string]ncclGPU{
	"H100": {compCap: 90, nvlinkPerLinkGBps: 20.6, nvlinkWireGBps: 25, llMaxBwGBps: [3]float64{141.0, 39.0, 20.4},
		cpu: "Intel", netOverhead: 1.0, channels: 32, plateau: 1.4},
	"A100": {compCap: 80, nvlinkPerLinkGBps: 20.0, nvlinkWireGBps: 25, llMaxBwGBps: [3]float64{87.7, 22.5, 19.0},
		cpu: "AMD", netOverhead: 2.0, channels: 24, plateau: 1.4},
}

// ncclProducts are the hardware profiles priced with NCCL's model.
func ncclProducts() []string { return []string{"H100", "A100"} }

// ncclCandidate is one (algorithm, protocol) priced.
type ncclCandidate struct {
	name           string
	latUs, bwGBps  float64
	timeUs, byteUs float64
}

// ncclBandwidths are a shape's bus bandwidths: inside one node, and across nodes
// per algorithm.
type ncclBandwidths struct{ intra, nic float64 }

// priceNCCL prices q as NCCL's tuning model does on hw (H100 or A100).
func priceNCCL(hw hardware.Profile, q ProductQuery) (ProductPrice, error) {
	g, ok := ncclGPUs[hw.Name]
	if !ok {
		return ProductPrice{}, fmt.Errorf("%s has no link figures for NCCL's model: name the GPU, %s", hw.Name, strings.Join(ncclProducts(), " or "))
	}
	if q.Servers < 1 {
		return ProductPrice{}, fmt.Errorf("%d servers: want at least one", q.Servers)
	}
	ppn := q.NPUsPerServer
	if ppn == 0 {
		ppn = hw.ServerNPUs
	}
	nNodes, nRanks := q.Servers, q.Servers*ppn
	if nRanks < 2 {
		return ProductPrice{}, fmt.Errorf("one GPU: nothing to communicate")
	}
	if q.Bytes < 0 {
		return ProductPrice{}, fmt.Errorf("size %d: want ≥ 0 bytes", q.Bytes)
	}
	op := NormaliseOp(q.Op)
	nsteps, algos, err := ncclSteps(op, nRanks)
	if err != nil {
		return ProductPrice{}, err
	}
	nvlink, net := hw.PeakGBps["NVLINK"], hw.PeakGBps["NET"]
	if nvlink <= 0 || nNodes > 1 && net <= 0 {
		return ProductPrice{}, fmt.Errorf("%s has no NVLink or NIC figure", hw.Name)
	}
	bw := ncclBandwidths{intra: nvlink * g.nvlinkPerLinkGBps / g.nvlinkWireGBps, nic: float64(ppn) * net}
	index2 := min(nNodes, 3) - 1 // tuning.cc: 1, 2, more nodes
	sh := ncclShape{g: g, op: op, bytes: q.Bytes, nNodes: nNodes, nRanks: nRanks, ppn: ppn, nsteps: nsteps, bw: bw, llMax: g.llMaxBwGBps[index2]}

	var cands []ncclCandidate
	for _, a := range algos {
		for pi, p := range ncclProtos {
			cands = append(cands, sh.candidate(a, pi, p))
		}
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if c.timeUs < best.timeUs {
			best = c
		}
	}
	ch := Choice{Algo: best.name, Library: "NCCL", CostUs: map[string]float64{},
		Reason: fmt.Sprintf("NCCL 2.26 tuning model: the least predicted time of %s × LL, LL128, Simple", strings.Join(algos, ", "))}
	for _, c := range cands {
		ch.CostUs[c.name] = c.timeUs
	}
	cost := Cost{Op: op, Algo: best.name, Ranks: nRanks, Bytes: q.Bytes, Rounds: 1, LatencyUs: best.latUs, BandwidthUs: best.byteUs}
	cost.finish()
	price := ProductPrice{Product: hw.Name, Servers: nNodes, Choice: &ch, Cost: cost}
	link := fmt.Sprintf("NVLink %.0f GB/s per GPU one way × NCCL's %.1f/%.0f GB/s per link = %.1f GB/s (%s)", nvlink, g.nvlinkPerLinkGBps, g.nvlinkWireGBps, bw.intra, hw.Sources["NVLINK"])
	price.Notes = append(price.Notes, fmt.Sprintf("%s: %d node(s) × %d GPUs; %s", hw.Name, nNodes, ppn, link))
	if nNodes > 1 {
		price.Notes = append(price.Notes, fmt.Sprintf("network: %d NICs per node × %.0f GB/s = %.0f GB/s, the bus bandwidth where below NVLink's (%s)", ppn, net, bw.nic, hw.Sources["NET"]))
	}
	price.Notes = append(price.Notes,
		fmt.Sprintf("%s: algorithm bandwidth %.1f GB/s, latency %.1f µs (%s; %s CPU, as on the reference node)", best.name, best.bwGBps, best.latUs, hw.Sources["latency"], g.cpu),
		"not modelled: NVLS, CollNet (SHARP), PAT, per-channel caps, NCCL_ALGO/NCCL_PROTO; priors, not a fit: hcclprof calibrate --bench fits a cluster's own sweep")
	return price, nil
}

// ncclSteps is an op's step count on nRanks and the algorithms NCCL's model prices
// it with.
func ncclSteps(op string, nRanks int) (int, []string, error) {
	var nsteps int
	algos := []string{"ring"}
	switch op {
	case "allreduce":
		nsteps = 2 * (nRanks - 1)
		algos = ncclAlgos
	case "allgather", "reducescatter":
		nsteps = nRanks - 1
	case "broadcast", "reduce":
		nsteps = nRanks
	default:
		return 0, nil, fmt.Errorf("%s: NCCL's tuning model prices AllReduce, AllGather, ReduceScatter, Broadcast and Reduce (AlltoAll is point-to-point sends)", op)
	}
	return nsteps, algos, nil
}

// ncclShape is one op on one cluster shape, as NCCL's tuning model prices it.
type ncclShape struct {
	g                           ncclGPU
	op                          string
	bytes                       int64
	nNodes, nRanks, ppn, nsteps int
	bw                          ncclBandwidths
	llMax                       float64 // the LL protocols' bandwidth cap for the node count
}

// candidate prices the op with algorithm a and protocol p (the pi-th).
func (sh ncclShape) candidate(a string, pi int, p string) ncclCandidate {
	ai := 1 // ring
	if a == "tree" {
		ai = 0
	}
	busBw := sh.busBandwidth(a, p)
	lat := sh.latency(a, ai, pi, p)
	// ncclTopoGetAlgoTime's corrections for this size.
	algBw := busBw
	if a == "tree" && sh.bytes>>6 > 0 {
		if i := int(math.Floor(math.Log2(float64(sh.bytes >> 6)))); i < 23 {
			algBw *= ncclTreeCorrection[pi][i]
		}
	}
	if a == "ring" && p == "Simple" && sh.nNodes > 1 && sh.op == "allreduce" && sh.bytes/int64(sh.g.channels*sh.nRanks) >= 64 {
		lat *= sh.g.plateau
	}
	byteUs := float64(sh.bytes) / (1000 * algBw)
	return ncclCandidate{name: a + "/" + p, latUs: lat, bwGBps: algBw, timeUs: lat + byteUs, byteUs: byteUs}
}

// busBandwidth is algorithm a's bandwidth with protocol p, as an algorithm
// bandwidth: the node's or the NICs', with tuning.cc's refinements.
func (sh ncclShape) busBandwidth(a, p string) float64 {
	busBw := sh.bw.intra
	if sh.nNodes > 1 {
		nic := sh.bw.nic
		if a == "tree" && sh.nNodes == 2 {
			nic *= 2 // search.cc raises a tree's intra bandwidth to twice the inter
		}
		busBw = min(busBw, nic)
	}
	// tuning.cc's refinements per algorithm and protocol.
	switch {
	case a == "ring" && p == "LL":
		busBw = min(sh.llMax, busBw*0.5)
	case a == "ring" && p == "LL128":
		busBw *= 0.92
	}
	if a == "tree" {
		busBw *= 0.92
		switch p {
		case "LL":
			busBw = min(busBw/3.8, sh.llMax)
		case "LL128":
			if sh.nNodes == 1 {
				busBw *= 7.0 / 9.0
			} else {
				busBw *= 120.0 / 128.0
			}
		}
	}
	// Bus to algorithm bandwidth.
	if a == "ring" {
		busBw *= float64(sh.nRanks) / float64(sh.nsteps)
	} else {
		busBw *= 0.5
	}
	return busBw
}

// latency is algorithm a's (the ai-th) latency with protocol p (the pi-th): the
// base latency and each step's, within and between nodes.
func (sh ncclShape) latency(a string, ai, pi int, p string) float64 {
	nNodes, nsteps, op := sh.nNodes, sh.nsteps, sh.op
	lat := ncclBaseLatUs[ai][pi]
	intraLat := ncclHwLatUs[0][ai][pi]
	interLat := ncclHwLatUs[1][ai][pi]
	if sh.ppn == 1 {
		interLat = ncclHwLatUs[1][0][pi] // one GPU per node: the tree's network latency
	}
	switch {
	case a == "ring" && (op == "broadcast" || op == "reduce"):
		// Rings on NVSwitch nodes do not share one order, so every step pays
		// (Simple: with the tree's chunk latency).
		l := ncclHwLatUs[0][ai][pi]
		if nNodes > 1 {
			l = ncclHwLatUs[1][ai][pi]
		}
		if p == "Simple" {
			l = ncclHwLatUs[min(nNodes-1, 1)][0][pi]
		}
		lat += float64(nsteps) * l
	case a == "ring":
		overhead := 0.0
		if nNodes > 1 {
			overhead = sh.g.netOverhead
			if p == "Simple" {
				overhead *= 3
			}
		}
		intraLat = max(intraLat, overhead)
		nInter := 0
		if nNodes > 1 {
			nInter = nNodes - 1
			if op == "allreduce" {
				nInter = 2 * (nNodes - 1)
			}
		}
		lat += float64(nsteps-nInter)*intraLat + float64(nInter)*interLat
	default: // tree AllReduce
		lat += 2 * (float64(sh.nRanks/nNodes-1)*intraLat + math.Floor(math.Log2(float64(nNodes)))*interLat)
	}
	return lat
}
