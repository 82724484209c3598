package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The parallel dimensions a group is named by (Group.Parallel).
const (
	KindTP      = "tp"   // tensor parallel (its AllReduces per layer)
	KindSP      = "sp"   // tensor parallel with sequence parallelism (AllGather/ReduceScatter per layer)
	KindCP      = "cp"   // context parallel
	KindDP      = "dp"   // data parallel, a distributed optimizer's ReduceScatter/AllGather included
	KindPP      = "pp"   // pipeline parallel
	KindEP      = "ep"   // expert parallel (AlltoAll(v))
	KindFSDP    = "fsdp" // fully sharded data parallel / ZeRO-3 (per-layer AllGather and ReduceScatter)
	KindUnknown = "unknown"
)

// KindNames are the parallel dimensions in the order reports list them.
var KindNames = []string{KindTP, KindSP, KindCP, KindEP, KindFSDP, KindDP, KindPP, KindUnknown}

// KindTitle is a dimension's name in prose.
func KindTitle(kind string) string {
	switch kind {
	case KindTP:
		return "tensor parallel"
	case KindSP:
		return "tensor/sequence parallel"
	case KindCP:
		return "context parallel"
	case KindDP:
		return "data parallel"
	case KindPP:
		return "pipeline parallel"
	case KindEP:
		return "expert parallel"
	case KindFSDP:
		return "fully sharded data parallel"
	}
	return "other groups"
}

// profileKind maps a framework's group name (torch_npu's parallel_group_info
// group_name, which is Megatron's group_desc, or msprof-analyze's pg_name) to a
// dimension; "" when the name is not one dimension (default_group, mp, embd, …).
func profileKind(name string) string {
	// Megatron's process group descriptions, as Kineto records them:
	// TENSOR_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP_WITH_CP, ... (parallel_state.py);
	// torch_npu's parallel_group_info names them tp, dp, dp_cp, ...
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimSuffix(strings.ReplaceAll(n, "_group", ""), "_gloo")
	switch n {
	case "tp", "tensor", "tensor_model_parallel", "tensor_parallel", "expert_tensor_parallel":
		return KindTP
	case "sp", "sequence_parallel":
		return KindSP
	case "cp", "context", "context_parallel":
		return KindCP
	case "dp", "dp_cp", "data", "data_parallel", "expt_dp", "ep_dp", "dp_modulo_exp", "intra_dp_cp", "inter_dp_cp",
		"data_parallel_with_cp", "data_parallel_with_cp_ag", "intra_partial_data_parallel_with_cp", "expert_data_parallel",
		"expert_data_parallel_ag", "intra_distributed_optimizer_instance":
		return KindDP
	case "pp", "pipeline", "pipeline_model_parallel", "pipeline_parallel":
		return KindPP
	case "ep", "exp", "expert", "expert_model_parallel", "expert_parallel", "tp_ep", "expt_tp_ep":
		return KindEP
	case "fsdp", "zero", "zero3", "shard", "fsdp_shard":
		return KindFSDP
	}
	return ""
}

// groupOps is what the ops of one group show: counts and time per op family, and the
// rank-steps they ran in.
type groupOps struct {
	count    map[string]int   // by family: allreduce, allgather, reducescatter, alltoall, p2p, other
	ns       map[string]int64 // elapse by family
	rankStep map[[2]int]bool
	p2pOf    map[int]int // send/receive ops per rank
	// gatherRun is the longest run of AllGathers, or of ReduceScatters, one after the
	// other in a rank's step among the group's AllGather/ReduceScatter ops.
	gatherRun int
	// innerOfStrided says another group's collectives join ranks this group's size
	// apart: this group is the layout's innermost dimension, as TP is in Megatron's
	// tp-cp-ep-dp-pp order, with data parallelism across its copies.
	innerOfStrided bool
	// overlap is the group's op time overlapped by compute over its op time, where a
	// timeline shows it (overlapKnown).
	overlap      float64
	overlapKnown bool
}

// opFamily names an op's family from its type or name (HCCL's hcom_allGather_…,
// NCCL's ncclDevKernel_AllGather_…).
func opFamily(typ, name string) string {
	s := strings.ToLower(typ + " " + name)
	switch {
	case strings.Contains(s, "alltoall"):
		return "alltoall"
	case strings.Contains(s, "allgather"):
		return "allgather"
	case strings.Contains(s, "reducescatter") || strings.Contains(s, "reduce_scatter"):
		return "reducescatter"
	case strings.Contains(s, "allreduce"):
		return "allreduce"
	case strings.Contains(s, "send") || strings.Contains(s, "recv") || strings.Contains(s, "receive"):
		return "p2p"
	}
	return "other"
}

func collectGroupOps(ops []OpStat) map[string]*groupOps {
	out := map[string]*groupOps{}
	gathers := map[string][]gatherOp{}
	for _, o := range ops {
		g := out[o.Group]
		if g == nil {
			g = &groupOps{count: map[string]int{}, ns: map[string]int64{}, rankStep: map[[2]int]bool{}, p2pOf: map[int]int{}}
			out[o.Group] = g
		}
		f := opFamily(o.Type, o.Name)
		if f == "p2p" {
			g.p2pOf[o.Rank]++
		}
		g.count[f]++
		g.ns[f] += o.ElapseNs
		g.rankStep[[2]int{o.Rank, o.Step}] = true
		if f == "allgather" || f == "reducescatter" {
			gathers[o.Group] = append(gathers[o.Group], gatherOp{o.Rank, o.Step, o.StartNs, o.OpIndex, f})
		}
	}
	for key, gs := range gathers {
		out[key].gatherRun = longestRun(gs)
	}
	return out
}

// gatherOp is an AllGather or ReduceScatter of a group, where it ran.
type gatherOp struct {
	rank, step int
	startNs    int64
	opIndex    int
	family     string
}

// longestRun is the longest run of one family among ops in a rank's step, in the
// order they started. Sequence parallelism wraps each block in an AllGather and a
// ReduceScatter (runs of one, two in Megatron's backward, which gathers the input
// again for the weight gradient); FSDP gathers every layer in the forward before
// it reduce-scatters anything, and a distributed optimizer reduce-scatters all its
// buckets before it gathers them.
func longestRun(ops []gatherOp) int {
	slices.SortFunc(ops, func(a, b gatherOp) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.step, b.step),
			cmp.Compare(a.startNs, b.startNs), cmp.Compare(a.opIndex, b.opIndex))
	})
	best, run := 0, 0
	for i, o := range ops {
		if i > 0 && o.rank == ops[i-1].rank && o.step == ops[i-1].step && o.family == ops[i-1].family {
			run++
		} else {
			run = 1
		}
		best = max(best, run)
	}
	return best
}

// sequenceParallelRunMax is the longest run of AllGathers or ReduceScatters a
// sequence-parallel group shows (see longestRun); FSDP's and a distributed
// optimizer's runs are as long as the model's layers or buckets.
const sequenceParallelRunMax = 3

// strideOf is the constant gap between a group's sorted ranks, 0 when they are not
// evenly spaced.
func strideOf(ranks []int) int {
	rs := slices.Clone(ranks)
	sort.Ints(rs)
	if len(rs) < 2 {
		return 0
	}
	d := rs[1] - rs[0]
	for i := 2; i < len(rs); i++ {
		if rs[i]-rs[i-1] != d {
			return 0
		}
	}
	return d
}

// perRankStep is the family's ops per rank and step.
func (g *groupOps) perRankStep(f string) float64 {
	if len(g.rankStep) == 0 {
		return 0
	}
	return float64(g.count[f]) / float64(len(g.rankStep))
}

// dominant is the family taking most of the group's op time.
func (g *groupOps) dominant() string {
	best, bestNs := "", int64(-1)
	for _, f := range []string{"alltoall", "allgather", "reducescatter", "allreduce", "p2p", "other"} {
		if g.count[f] > 0 && g.ns[f] > bestNs {
			best, bestNs = f, g.ns[f]
		}
	}
	return best
}

// ringOverlapMin is the share of a send/receive group's op time overlapped by compute
// from which it is a context-parallel ring, not a pipeline. A pipeline stage's
// receives wait for its input with nothing to compute (the generator's pipelines: 0%);
// a ring's exchange runs beside the attention of the block already held (its CP rings:
// 20–28% from msprof's timeline, where the attention is shorter than the exchange).
// A ring of three or more is told by its members' equal traffic (groupOps.ring); this
// tells a ring of two from a two-stage pipeline. A pipeline whose receives overlap the
// compute (Megatron-LM's p2p overlap, in its interleaved schedule) reads as a ring: its Bubble, the
// receive time, is not its stages' idle time either.
const ringOverlapMin = 0.1

// groupOverlap is each group's op time overlapped by compute over its op time, from
// the ranks with a timeline (absent for a group no timeline shows).
func groupOverlap(ranks []RankResult) map[string]float64 {
	comm, notOv := map[string]int64{}, map[string]int64{}
	for _, r := range ranks {
		if r.Source != SourceTimeline {
			continue
		}
		for _, st := range r.Steps {
			for _, g := range st.Groups {
				comm[g.Group] += g.CommunicationNs
				notOv[g.Group] += g.CommNotOverlappedNs
			}
		}
	}
	out := map[string]float64{}
	for g, c := range comm {
		if c > 0 {
			out[g] = 1 - float64(notOv[g])/float64(c)
		}
	}
	return out
}

// perLayer is how many collectives a rank-step must hold for a group's ops to be read
// as per layer (a model's forward and backward over its layers) rather than once a
// step per bucket.
const perLayer = 16

// setParallelKinds names each group's parallel dimension (Group.Parallel) and says
// where it came from (Group.ParallelSource): the profile's own name for the group
// where it names one dimension (a tp group whose ops are AllGather/ReduceScatter is
// sequence parallel), else inferred from its ranks and ops.
func setParallelKinds(groups []Group, ops []OpStat, serverOf map[int]int, world int, overlapOf map[string]float64) {
	byGroup := collectGroupOps(ops)
	for key, g := range byGroup {
		if f, ok := overlapOf[key]; ok {
			g.overlap, g.overlapKnown = f, true
		}
	}
	// The strides of the groups moving data collectively (not send/receive, not
	// AlltoAll): a consecutive group as large as one of them is the dimension inside.
	collectiveStrides := map[int]bool{}
	for _, g := range groups {
		if gops := byGroup[g.Key]; gops != nil && len(g.Ranks) >= 2 {
			if d := gops.dominant(); d == "allreduce" || d == "allgather" || d == "reducescatter" {
				if st := strideOf(g.Ranks); st > 1 {
					collectiveStrides[st] = true
				}
			}
		}
	}
	for i := range groups {
		g := &groups[i]
		gops := byGroup[g.Key]
		if gops == nil {
			gops = &groupOps{count: map[string]int{}, ns: map[string]int64{}, rankStep: map[[2]int]bool{}}
		}
		gops.innerOfStrided = strideOf(g.Ranks) == 1 && collectiveStrides[len(g.Ranks)]
		if !g.Inferred {
			if k := profileKind(g.Kind); k != "" {
				g.Parallel, g.ParallelSource = k, fmt.Sprintf("profile (%q)", g.Kind)
				if k == KindTP && gops.count["allreduce"] < gops.count["allgather"]+gops.count["reducescatter"] &&
					gops.perRankStep("allgather")+gops.perRankStep("reducescatter") >= perLayer {
					g.Parallel = KindSP
					g.ParallelSource = fmt.Sprintf("profile (%q), sequence parallel from its per-layer AllGather/ReduceScatter", g.Kind)
				}
				continue
			}
		}
		g.Parallel, g.ParallelSource = inferKind(g.Ranks, gops, serverOf, world)
		if !g.Inferred && g.Kind != "" {
			g.ParallelSource += fmt.Sprintf(" (the profile names it %q)", g.Kind)
		}
	}
}

// inferKind guesses a group's dimension from its ranks and ops, with the reason.
func inferKind(ranks []int, g *groupOps, serverOf map[int]int, world int) (kind, source string) {
	if len(g.rankStep) == 0 {
		return KindUnknown, "inferred: no ops"
	}
	dom := g.dominant()
	rs := slices.Clone(ranks)
	sort.Ints(rs)
	consecutive, oneServer := len(rs) >= 2, len(rs) >= 2
	for i := 1; i < len(rs); i++ {
		if rs[i] != rs[i-1]+1 {
			consecutive = false
		}
	}
	if len(serverOf) > 0 {
		s0, ok := serverOf[rs[0]]
		for _, r := range rs {
			if s, ok2 := serverOf[r]; !ok || !ok2 || s != s0 {
				oneServer = false
				break
			}
		}
	} else {
		oneServer = consecutive && len(rs) <= 8 && rs[0]%len(rs) == 0
	}
	agrs := g.perRankStep("allgather") + g.perRankStep("reducescatter")
	// A group over every rank of the job is its only dimension, and a job with one
	// dimension is data parallel: a DDP job on one server has the layout of a TP group
	// (seed-8card-bert's 16 MiB buckets, 246 AllReduces a step, read as TP). Only a
	// group beside another dimension is read as TP from its layout.
	beside := len(rs) < world
	switch {
	case dom == "p2p" && g.ring():
		return KindCP, fmt.Sprintf("inferred from its ops: send/receive alike on each of its %d ranks, a ring (a pipeline's first and last stages exchange half what the others do)", len(g.p2pOf))
	case dom == "p2p" && g.overlapKnown && g.overlap >= ringOverlapMin:
		// A pipeline stage waits for its input in its receives; a ring of two
		// exchanges as a two-stage pipeline does, but beside the compute.
		return KindCP, fmt.Sprintf("inferred from its ops: send/receive, %.0f%% of their time beside the compute: a ring exchanging while it computes, not a pipeline's stage waiting for its input", 100*g.overlap)
	case dom == "p2p":
		return KindPP, "inferred from its ops: send/receive only"
	case dom == "alltoall":
		return KindEP, "inferred from its ops: AlltoAll(v)"
	case beside && consecutive && oneServer && (dom == "allgather" || dom == "reducescatter") && agrs >= perLayer:
		return KindSP, fmt.Sprintf("inferred from consecutive ranks inside a server with %.0f AllGather/ReduceScatter per rank and step", agrs)
	case beside && consecutive && oneServer && dom == "allreduce" && g.perRankStep("allreduce") >= perLayer:
		return KindTP, fmt.Sprintf("inferred from consecutive ranks inside a server with %.0f AllReduces per rank and step", g.perRankStep("allreduce"))
	// Across servers, consecutive ranks are also a pipelined job's data parallelism
	// (Megatron's layout with TP 1): TP is told by the wrapping of each block (an
	// AllGather, then a ReduceScatter) or by a data-parallel dimension across its
	// copies.
	case beside && consecutive && (dom == "allgather" || dom == "reducescatter") && agrs >= perLayer &&
		g.gatherRun <= sequenceParallelRunMax:
		return KindSP, fmt.Sprintf("inferred from consecutive ranks across servers with %.0f AllGather/ReduceScatter per rank and step, each block's AllGather followed by its ReduceScatter", agrs)
	case beside && consecutive && dom == "allreduce" && g.perRankStep("allreduce") >= perLayer && g.innerOfStrided:
		return KindTP, fmt.Sprintf("inferred from consecutive ranks across servers with %.0f AllReduces per rank and step, with collectives across its copies (ranks %d apart)",
			g.perRankStep("allreduce"), len(rs))
	case (dom == "allgather" || dom == "reducescatter") && agrs >= perLayer && g.count["reducescatter"] > 0 &&
		2*g.count["allgather"] >= 3*g.count["reducescatter"]:
		// FSDP's FULL_SHARD and ZeRO-3 gather each layer's parameters in the forward
		// and again in the backward pass, and reduce-scatter its gradients once; a
		// distributed optimizer (or ZeRO-1/2) gathers and reduce-scatters each bucket
		// once a step.
		return KindFSDP, fmt.Sprintf("inferred from %.0f AllGather/ReduceScatter per rank and step across %s, about two gathers per reduce-scatter",
			agrs, spanWord(consecutive, oneServer, len(rs), world))
	case dom == "allreduce" || dom == "allgather" || dom == "reducescatter":
		return KindDP, fmt.Sprintf("inferred from %s with %s per gradient bucket", spanWord(consecutive, oneServer, len(rs), world), familyTitle(dom))
	}
	return KindUnknown, "inferred: no rule fits its ops"
}

func spanWord(consecutive, oneServer bool, n, world int) string {
	switch {
	case n == world:
		return "the whole job"
	case consecutive && oneServer:
		return "consecutive ranks inside a server"
	case consecutive:
		return "consecutive ranks across servers"
	}
	return "strided ranks"
}

func familyTitle(f string) string {
	switch f {
	case "allreduce":
		return "AllReduce"
	case "allgather":
		return "AllGather"
	case "reducescatter":
		return "ReduceScatter"
	case "alltoall":
		return "AlltoAll"
	}
	return f
}

// KindShare is one parallel dimension's communication over the run: like Summary's
// shares, time-weighted over ranks and steps. Where ops of two dimensions run at once
// the time counts for both, so the dimensions' shares can add up to more than
// CommShare.
type KindShare struct {
	Kind   string
	Groups int // groups of the kind
	// CommNs and ExposedNs are the sums over ranks and steps of the kind's op union
	// and of its part while no compute kernel and no receive runs.
	CommNs, ExposedNs int64
	// CommShare is ExposedNs / Σ Stage; CommTotalShare CommNs / Σ (Stage + Bubble).
	CommShare, CommTotalShare float64
	// ExposedMinNs and ExposedMaxNs bound ExposedNs (GroupComm's bounds, summed);
	// CommShareMin and CommShareMax are their shares of Σ Stage. They are equal, and
	// ExposedNs a measurement, when every rank has a timeline (Measured); else
	// ExposedNs is the profiler's exposed time shared out in proportion to the ops.
	ExposedMinNs, ExposedMaxNs int64
	CommShareMin, CommShareMax float64
	// Sources say where the groups' kinds came from (distinct Group.ParallelSource).
	Sources []string
}

// Measured reports whether the dimension's exposed time is measured (ExposedNs),
// not bounded: every rank's steps had a timeline, or the bounds meet to within
// measuredBoundsGap of the step (a job of one dimension, whose op records cover the
// profiler's communication but for their rounding: 67.39% either way on a real
// Level0 run, 42.001-42.012% on seed-8card-bert's summaries).
func (k KindShare) Measured() bool { return k.CommShareMax-k.CommShareMin <= measuredBoundsGap }

// measuredBoundsGap is the width of a dimension's exposure bounds, as a share of the
// step, within which they are one figure: the op records' rounding.
const measuredBoundsGap = 5e-4

// KindSharesOf is Summary.Kinds over some of the ranks: the dimensions' exposure
// measured on the ranks with a timeline, where the others have none.
func KindSharesOf(ranks []RankResult, groups []Group) []KindShare { return kindShares(ranks, groups) }

// kindShares sums each dimension's communication over the ranks' steps.
func kindShares(ranks []RankResult, groups []Group) []KindShare {
	kindOf := map[string]string{}
	nGroups := map[string]int{}
	sources := map[string][]string{}
	for _, g := range groups {
		k := g.Parallel
		if k == "" {
			k = KindUnknown
		}
		kindOf[g.Key] = k
		nGroups[k]++
		if !slices.Contains(sources[k], g.ParallelSource) {
			sources[k] = append(sources[k], g.ParallelSource)
		}
	}
	comm, exp, lo, hi := map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
	var stage, bubble int64
	for _, r := range ranks {
		for _, st := range r.Steps {
			stage += st.StageNs
			bubble += st.BubbleNs
			for _, gc := range st.Groups {
				k, ok := kindOf[gc.Group]
				if !ok {
					k = KindUnknown
				}
				comm[k] += gc.CommunicationNs
				exp[k] += gc.ExposedNs
				lo[k] += gc.ExposedMinNs
				hi[k] += gc.ExposedMaxNs
			}
		}
	}
	var out []KindShare
	for _, k := range KindNames {
		if comm[k] == 0 {
			continue
		}
		out = append(out, KindShare{Kind: k, Groups: nGroups[k], CommNs: comm[k], ExposedNs: exp[k],
			CommShare: ratio(exp[k], stage), CommTotalShare: ratio(comm[k], stage+bubble), Sources: sources[k],
			ExposedMinNs: lo[k], ExposedMaxNs: hi[k], CommShareMin: ratio(lo[k], stage), CommShareMax: ratio(hi[k], stage)})
	}
	return out
}

// KindCollective is one op type over every group of one parallel dimension: the
// collectives table rolled up for a large cluster (a TP8 × PP4 × DP8 job on 256 ranks
// has one row per group), with the group whose ops took longest named.
type KindCollective struct {
	Kind, Op  string
	Groups    int
	GroupSize int // the groups' size when they all have one; 0 otherwise
	Count     int
	Bytes     int64 // 0 when some group's sizes are unknown
	TotalNs   int64
	MeanNs    float64 // over all the ops
	MaxNs     int64
	// MedianGroupMeanNs is the median of the groups' mean op times; WorstGroup the
	// group with the longest mean (its key and name) and WorstMeanNs that mean.
	MedianGroupMeanNs      float64
	WorstGroup, WorstName  string
	WorstMeanNs            float64
	WorstBusBwGBps         float64 // the worst group's bus bandwidth; 0 when unknown
	MedianGroupBusBwGBps   float64 // 0 when unknown
	groupMeans, groupBusBw []float64
	bytesUnknown           bool
}

// CollectiveKinds rolls the collectives table up by parallel dimension and op type,
// in KindNames' order and then by total time.
func CollectiveKinds(colls []Collective, groups []Group) []KindCollective {
	kindOf := map[string]string{}
	for _, g := range groups {
		kindOf[g.Key] = g.Parallel
	}
	type key struct{ kind, op string }
	acc := map[key]*KindCollective{}
	var order []key
	for _, c := range colls {
		k := kindOf[c.Group]
		if k == "" {
			k = KindUnknown
		}
		kk := key{k, c.Op}
		a := acc[kk]
		if a == nil {
			a = &KindCollective{Kind: k, Op: c.Op, GroupSize: c.GroupSize}
			acc[kk] = a
			order = append(order, kk)
		}
		if a.Groups > 0 && (a.GroupSize != c.GroupSize) {
			a.GroupSize = 0
		}
		if c.Bytes <= 0 {
			a.bytesUnknown = true
		}
		a.Bytes += c.Bytes
		a.Groups++
		a.Count += c.Count
		a.TotalNs += c.TotalNs
		a.MaxNs = max(a.MaxNs, c.MaxNs)
		a.groupMeans = append(a.groupMeans, c.MeanNs)
		if c.BusBwGBps > 0 {
			a.groupBusBw = append(a.groupBusBw, c.BusBwGBps)
		}
		if c.MeanNs > a.WorstMeanNs || a.WorstGroup == "" {
			a.WorstGroup, a.WorstName, a.WorstMeanNs, a.WorstBusBwGBps = c.Group, c.GroupName, c.MeanNs, c.BusBwGBps
		}
	}
	rank := map[string]int{}
	for i, k := range KindNames {
		rank[k] = i
	}
	out := make([]KindCollective, 0, len(order))
	for _, kk := range order {
		a := acc[kk]
		if a.bytesUnknown {
			a.Bytes = 0
		}
		if a.Count > 0 {
			a.MeanNs = float64(a.TotalNs) / float64(a.Count)
		}
		a.MedianGroupMeanNs = median(a.groupMeans)
		if len(a.groupBusBw) == a.Groups {
			a.MedianGroupBusBwGBps = median(a.groupBusBw)
		}
		a.groupMeans, a.groupBusBw = nil, nil
		out = append(out, *a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Kind] != rank[out[j].Kind] {
			return rank[out[i].Kind] < rank[out[j].Kind]
		}
		return out[i].TotalNs > out[j].TotalNs
	})
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ring says a point-to-point group's members all send and receive alike (within
// 10%), as a context-parallel ring's do, over at least three members: in a pipeline
// the first and last stages exchange half what the middle ones do (one neighbour
// each). Two members cannot be told apart; they are read as a pipeline.
func (g *groupOps) ring() bool {
	if len(g.p2pOf) < 3 {
		return false
	}
	lo, hi := -1, 0
	for _, n := range g.p2pOf {
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	return lo > 0 && float64(hi) <= 1.1*float64(lo)
}
