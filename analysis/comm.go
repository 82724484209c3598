package analysis

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"unique"

	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// OpStat is one communication op on one rank, with msprof's split of its time
// (docs/formats.md §3.1): Transit (data tasks), Wait (notify waits), Synchronization (the
// waits before the first data task), Idle = Elapse − Transit − Wait.
type OpStat struct {
	Rank, Step int
	// OpIndex is the op's index in its rank's profile.Rank.CommOps, which its HCCL
	// tasks are attributed to.
	OpIndex           int
	Group, Name, Type string
	AlgType           string // HCCL's algorithm per level as the profile says: MESH-RING, ... ("" when absent)
	DataType          string // FP32, BFP16, ... as the profile says
	StartNs, ElapseNs int64
	TransitNs, WaitNs int64
	SyncNs, IdleNs    int64
	Bytes             int64
	Transports        Transports // HCCS, PCIE, SIO, SDMA (their sum), RDMA
	// BusBwGBps is Bytes over the op's Transit time × the nccl-tests factor of its
	// type and group size (0 when either is unknown). Utilisation is the bandwidth of
	// the op's busiest transport (its bytes over its transfers' time: a per-link
	// figure) over that transport's per-link peak; busbw is not compared with a link
	// peak because a mesh drives p−1 links at once.
	BusBwGBps, Utilisation float64
	// Source says where the split came from: "profiler" (communication.json or
	// analysis.db), "tasks" (recomputed from the HCCL plane tasks) or "none".
	Source string
	// CrossWaitNs is this rank's elapse minus the fastest rank's for the same op: the
	// time it waited for the others (the last to arrive waits least). When no other
	// profiled rank ran the op it is 0 and CrossWaitKnown is false: the rank is then
	// its own fastest, which is how the what-if and the slow-rank detector read it,
	// but its wait is not measured and the reports write null.
	CrossWaitNs    int64
	CrossWaitKnown bool
	// PeerRanks is one more than the highest group-local rank the op's HCCL
	// transfers name, 0 without them: its group has at least that many ranks.
	PeerRanks int32
	// MovingNs is the time the op moved data: for an op with RDMA tasks, the union of
	// its transfers over all planes (the profiler's Transit is one plane's, which on a
	// multi-server op misses the other level's transfers); otherwise TransitNs,
	// or for an op over both server levels the SDMA time over its in-server peers
	// plus the RDMA time (inServerLevel), or, where the
	// profiler's op-level Transit is 0 while its transports carry transit times (CANN
	// 8.3 at Level2), the busiest transport's; never above the elapse. MovingSource
	// says which ("planes", "transit", "transit+rdma", "transports", MovingCrossRank
	// for an NCCL kernel split by arrivalSplit, "" when nothing moved).
	MovingNs     int64
	MovingSource string
}

// WaitRatio is Wait/(Wait+Transit), rounded to 4 places as the profiler does.
func (o OpStat) WaitRatio() float64 { return ratio4(o.WaitNs, o.WaitNs+o.TransitNs) }

// SyncRatio is Sync/(Sync+Transit), rounded to 4 places.
func (o OpStat) SyncRatio() float64 { return ratio4(o.SyncNs, o.SyncNs+o.TransitNs) }

func ratio4(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return math.Round(float64(a)/float64(b)*1e4) / 1e4
}

// Transports is what an op moved over each transport, sorted by name. It is a slice
// rather than a map because every op of every rank keeps one until the cluster's
// figures are made: a map each was a sixth of what a 4096-rank cluster kept.
type Transports []TransportUse

// Get returns the op's use of the named transport; ok is false when the op has none.
func (ts Transports) Get(name string) (u TransportUse, ok bool) {
	for _, t := range ts {
		if t.Transport == name {
			return t, true
		}
	}
	return TransportUse{}, false
}

// moved returns the op's use of a transport it moved bytes over; ok is false when
// it moved none (what the small-message checks count).
func (ts Transports) moved(name string) (u TransportUse, ok bool) {
	u, ok = ts.Get(name)
	return u, ok && u.Bytes > 0
}

// Of returns the op's use of the named transport, zero when the op has none.
func (ts Transports) Of(name string) TransportUse {
	u, _ := ts.Get(name)
	return u
}

// sortedTransports turns a map of uses by name into Transports.
func sortedTransports(m map[string]TransportUse) Transports {
	if m == nil {
		return nil
	}
	out := make(Transports, 0, len(m))
	for name, u := range m {
		u.Transport = name
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b TransportUse) int { return strings.Compare(a.Transport, b.Transport) })
	return out
}

// TransportUse is what one op moved over one transport.
type TransportUse struct {
	Transport        string // HCCS, PCIE, SIO, SDMA (the SDMA links' sum) or RDMA
	Bytes, TimeNs    int64
	Packets          int
	LargePacketRatio float64 // share of packets above the transport's large-packet size
	// Sizes is the size distribution: packets per size, with their time (the
	// profiler's Size Distribution, or the transfers' exact sizes), by size.
	Sizes []profile.PacketBin
}

// BandwidthGBps is Bytes/Time in decimal GB/s.
func (t TransportUse) BandwidthGBps() float64 { return units.GBps(t.Bytes, t.TimeNs) }

// Link is the traffic of one directed link between two global ranks over one transport.
type Link struct {
	Src, Dst      int
	Transport     string
	Bytes, TimeNs int64
	Transfers     int
	// PeakGBps is the transport's peak in the hardware profile (0 when it has none);
	// Utilisation is the link's bandwidth over it.
	PeakGBps, Utilisation float64
}

// BandwidthGBps is Bytes/Time in decimal GB/s.
func (l Link) BandwidthGBps() float64 { return units.GBps(l.Bytes, l.TimeNs) }

// Group is one communicator as the ranks' metadata describe it.
type Group struct {
	Key   string // the @hash op keys use
	Name  string // the raw HCCL group name
	Kind  string // the framework's name: dp, tp, pp, ... ("" when unknown)
	Ranks []int  // global ranks by group-local rank
	// Inferred is set for a group no parallel_group_info describes: Ranks are the ranks
	// seen with its ops and Kind is a guess from the rank set (ending in "?").
	Inferred bool
	// Parallel is the group's parallel dimension (KindTP, KindSP, KindCP, KindDP,
	// KindPP, KindEP, KindFSDP or KindUnknown) and ParallelSource where it came from:
	// "profile (…)" when the profile's group info names it, else "inferred from …"
	// (its ranks and ops).
	Parallel, ParallelSource string
}

// NamedKind is the group's kind as its name gives it, lower case without the "?" of
// a guess: the framework's short name (dp, pp, dp_cp, … as torch_npu writes them),
// or, for Megatron's process group descriptions in Kineto's traces
// (DATA_PARALLEL_GROUP, PIPELINE_MODEL_PARALLEL_GROUP, …), the dimension read from
// that name (Parallel). A dimension only inferred from ranks and ops is not used:
// the name decides, as the short names did before Kineto.
func (g Group) NamedKind() string {
	k := strings.ToLower(strings.TrimSuffix(g.Kind, "?"))
	if strings.Contains(k, "_group") && strings.HasPrefix(g.ParallelSource, "profile") && g.Parallel != "" {
		return g.Parallel
	}
	return k
}

// Communication is the per-op and per-link analysis of a cluster's communication.
type Communication struct {
	Ops    []OpStat
	Links  []Link
	Groups []Group
	// UnmappedLinkBytes counts data whose group-local ranks could not be mapped to
	// global ranks (no parallel_group_info for the group).
	UnmappedLinkBytes int64
	// Retransmissions are RDMA transfers longer than the retransmission limit; they
	// are left out of the links' bandwidth.
	Retransmissions []Retransmission
	// PeerRatios are, per link, how fast its transfers ran against their peers' (the
	// same ops' transfers over the same transport and size, latency taken off): the
	// measure the advisor's slow-link and slow-node detectors read. A link with no
	// group of peers to compare with has none.
	PeerRatios map[LinkID]float64
	// ServerOf numbers each rank's server, from the rank directories' host names (Hosts,
	// by server number); a rank whose host is unknown has none.
	ServerOf map[int]int
	Hosts    []string
	// GroupSteps is each communicator's communication per step; Pipelines the
	// pipeline-parallel groups with their bubble against theory.
	GroupSteps []GroupStep
	Pipelines  []Pipeline
	// TransferSamples are the typical transfer times per transport and size.
	TransferSamples []TransferSample
	// CheckSamples are the cluster's counts for msprof-analyze's communication checks
	// and the HCCL_BUFFSIZE one, taken at Limits' sizes; the advisor decides which fire.
	CheckSamples CheckSamples
	// Limits are where the measurements were cut (Options.Limits, else DefaultLimits).
	Limits Limits
	// Hardware is the product whose link peaks the utilisations use.
	Hardware hardware.Profile
}

// Large-packet sizes, decimal, strict ">": msprof's analyzer (32 MB for SDMA-class
// links, 0.5 MB for RDMA).
const (
	largePacketSDMABytes = 32_000_000
	largePacketRDMABytes = 500_000
)

// rankComm is what the communication analysis keeps of one rank once its tasks are
// dropped: its ops' statistics and its transfers, aggregated per op and link.
type rankComm struct {
	rank            int
	ops             []OpStat
	transfers       []transfer
	retransmissions []Retransmission
	// rdmaSuspects are the ops (indices in ops) of a rank without task rows whose
	// RDMA time passes the retransmission limit; mergeCommunication keeps those that
	// took the limit on every profiled rank.
	rdmaSuspects  []int
	unmappedBytes int64
	// localTransfers and localRetransmissions are those of groups without
	// parallel_group_info, in group-local ranks; selfIndex is the rank's own index in
	// such groups, from its communication matrix (see groupLocalIndex).
	localTransfers       []transfer
	localRetransmissions []localRetransmission
	selfIndex            map[string]int
	// samples are the rank's transfer times per transport and size (the median of
	// its transfers), for calibrating the links; kept whether or not the group's
	// global ranks are known. A slice: a map each was 8 MB of a 4096-rank cluster.
	samples []rankSample
}

type sampleKey struct {
	transport string
	sizeBytes int64
	reduce    bool
	// fromSizeDistribution: the times are the profiler's per-size means (see
	// sizeDistributionSamples), kept apart from those of tasks.
	fromSizeDistribution bool
}

type rankSample struct {
	sampleKey
	medianNs float64
	count    int
}

// TransferSample is the typical time of one transfer size over one transport across
// the cluster: the median over ranks of each rank's median, so a slow link or rank
// does not move it. It is what the cost model's calibration fits.
type TransferSample struct {
	Transport string
	SizeBytes int64
	// Reduce is set for transfers that reduce into the destination (Reduce_Inline):
	// they separate γ, the reduction's cost per byte, from β.
	Reduce bool
	// FromSizeDistribution says the times are the profiler's Size Distribution
	// (communication.json, analysis.db) of ranks without HCCL task rows: each
	// size's mean time per op, copies and reductions together (Reduce is false).
	FromSizeDistribution bool
	MedianNs             float64
	Count                int // transfers
	Ranks                int // ranks that had this size
}

// transfer is the data one op moved over one link (the sum of its tasks there), kept
// with its peer key so slow links can be judged against the same op's other links.
// Every rank's transfers are kept until the cluster's figures are made, so a transfer
// is small: ranks as int32 and the peer key (which holds the link's transport)
// interned, since every rank repeats the same few keys. Three strings per transfer
// made them half of what a 4096-rank cluster kept.
type transfer struct {
	peer          unique.Handle[peerKey]
	bytes, timeNs int64
	src, dst      int32
	count         int32
}

func (t transfer) link() linkKey {
	return linkKey{int(t.src), int(t.dst), t.peer.Value().transport}
}

// wideTransfer is a transfer while its op's tasks are summed, before it is kept.
type wideTransfer struct {
	link          linkKey
	peer          peerKey
	bytes, timeNs int64
	count         int
	// local is set while link's ranks are group-local ones of peer.group, which the
	// rank's metadata cannot map (no parallel_group_info): the merge maps them from
	// every rank's own index in the group (selfIndex).
	local bool
}

// keepIn appends w to the rank's transfers, or to its group-local ones (local).
func (w wideTransfer) keepIn(out *rankComm) {
	if w.local {
		out.localTransfers = w.keep(out.localTransfers, &out.unmappedBytes)
	} else {
		out.transfers = w.keep(out.transfers, &out.unmappedBytes)
	}
}

// keep appends w to kept as a transfer; a rank beyond int32 (no real cluster has
// one) is left out with the unmapped bytes.
func (w wideTransfer) keep(kept []transfer, unmappedBytes *int64) []transfer {
	if int(int32(w.link.src)) != w.link.src || int(int32(w.link.dst)) != w.link.dst || w.count > math.MaxInt32 {
		*unmappedBytes += w.bytes
		return kept
	}
	return append(kept, transfer{peer: unique.Make(w.peer), bytes: w.bytes, timeNs: w.timeNs,
		src: int32(w.link.src), dst: int32(w.link.dst), count: int32(w.count)})
}

// rankIndex is what the per-rank passes over tasks share, computed once: each op's
// step and the tasks by op row.
type rankIndex struct {
	steps []int
	tasks []profile.CommTask // the rank's
	byRow map[string][]int32 // each row's tasks by start, as indices into tasks
}

func indexRank(r *profile.Rank) rankIndex {
	return rankIndex{steps: opSteps(r), tasks: r.CommTasks, byRow: tasksByRow(r.CommTasks)}
}

// rankCommunication computes one rank's per-op statistics and transfers. With the
// peer checks, it is the only part of the communication analysis that reads tasks.
func rankCommunication(r *profile.Rank, idx rankIndex, th Limits, skipSteps map[int]bool) rankComm {
	out := rankComm{rank: r.Rank}
	ops := r.CommOps
	if len(ops) == 0 {
		return out
	}
	steps := idx.steps
	profilerStats := map[string]profile.CommOpStats{}
	for _, s := range r.CommStats {
		profilerStats[s.Name+"@"+s.Group] = s
	}
	groupRanks := globalRanksByGroup(r)
	// In a group without parallel_group_info, a transfer can be placed only if this
	// rank says which member it is: the others are dropped here, not kept to the merge.
	out.selfIndex = groupLocalIndex(r.CommMatrix, groupRanks)
	times := map[sampleKey][]float64{}
	binTimes := map[sampleKey][]stats.Counted{} // a rank without task rows: the profiler's bins
	var splitter planeSplitter
	var opTransfers []wideTransfer
	for i, op := range ops {
		if skipSteps[steps[i]] {
			continue
		}
		// The strings every op repeats are shared across ranks: a rank's ops outlive
		// its parse, and thousands of ranks would each keep a copy.
		st := OpStat{Rank: r.Rank, Step: steps[i], OpIndex: i, Group: intern(op.Group), Name: op.Name, Type: intern(op.Type),
			StartNs: op.StartNs, ElapseNs: op.DurNs(), Bytes: op.Bytes(), Source: "none", AlgType: intern(op.AlgType), DataType: intern(op.DataType)}
		opTasks := idx.tasksOf(op)
		planes := splitter.split(idx.tasks, opTasks)
		if ps, ok := profilerStats[op.Name+"@"+op.Group]; ok {
			splitFromProfiler(&st, ps)
			if len(r.CommTasks) == 0 {
				sizeDistributionSamples(binTimes, ps.Transports, th.RetransmissionNs)
			}
		} else if len(opTasks) > 0 {
			st.Source = "tasks"
			st.TransitNs, st.WaitNs, st.SyncNs = timeSplit(planes)
			st.IdleNs = st.ElapseNs - st.TransitNs - st.WaitNs
			st.Transports = transportUse(planes)
		}
		st.MovingNs, st.MovingSource = movingTime(st)
		if union, rdma := transferUnionNs(planes); rdma && union > 0 {
			// The profiler's Transit is one plane's: on a multi-server op it misses
			// the RoCE transfers, or the in-server ones, that other planes carry.
			// (Within a server the planes' mesh transfers run side by side, and one
			// plane stands for them.)
			st.MovingNs, st.MovingSource = min(union, max(st.ElapseNs, 0)), "planes"
		}
		st.PeerRanks = peerRanks(planes)
		out.ops = append(out.ops, st)
		members, known := groupRanks[op.Group]
		_, placeable := out.selfIndex[op.Group]
		sink := opTransferSink{out: &out, times: times, th: th, members: members, known: known, placeable: placeable,
			step: steps[i], group: op.Group, name: op.Name, transfers: opTransfers[:0]}
		eachTransfer(planes, sink.add)
		opTransfers = sink.transfers
		for _, w := range opTransfers {
			w.keepIn(&out)
		}
	}
	if len(r.CommTasks) == 0 {
		matrixTransfers(&out, r, groupRanks, skipSteps)
		for i, o := range out.ops {
			if o.Transports.Of("RDMA").TimeNs > th.RetransmissionNs {
				out.rdmaSuspects = append(out.rdmaSuspects, i)
			}
		}
	}
	out.samples = rankSamples(times, binTimes)
	// What a rank keeps until the cluster's figures are made is copied to its length:
	// grown by append, a quarter of it on average was spare capacity, held for every
	// rank of the cluster.
	if cap(out.transfers) > len(out.transfers)+len(out.transfers)/8 {
		out.transfers = slices.Clone(out.transfers)
	}
	if cap(out.ops) > len(out.ops)+len(out.ops)/8 {
		out.ops = slices.Clone(out.ops)
	}
	return out
}

// splitFromProfiler takes an op's split and transports from the profiler's own
// figures (communication.json).
func splitFromProfiler(st *OpStat, ps profile.CommOpStats) {
	st.Source = "profiler"
	st.TransitNs, st.WaitNs, st.SyncNs, st.IdleNs = ps.TransitNs, ps.WaitNs, ps.SyncNs, ps.IdleNs
	uses := make(map[string]TransportUse, len(ps.Transports))
	for name, t := range ps.Transports {
		if t.Bytes == 0 && t.TimeNs == 0 {
			continue
		}
		var n int64
		for _, b := range t.SizeDistribution {
			n += b.Count
		}
		uses[name] = TransportUse{Bytes: t.Bytes, TimeNs: t.TimeNs, Packets: int(n), LargePacketRatio: t.LargePacketRatio,
			Sizes: t.SizeDistribution}
	}
	st.Transports = sortedTransports(uses)
}

// opTransferSink takes one op's transfers on one rank: each one's time as a sample
// of its transport and size, a retransmission when an RDMA one is too slow, else a
// transfer on its link (global ranks when the group's are known), summed per link
// and size; what cannot be placed is counted as unmapped bytes.
type opTransferSink struct {
	out              *rankComm
	times            map[sampleKey][]float64
	th               Limits
	members          []int // the group's global ranks, when known
	known, placeable bool
	step             int
	group, name      string // the op's
	transfers        []wideTransfer
}

func (s *opTransferSink) add(src, dst int, transport string, bytes, ns int64, reduce bool) {
	out, th, members, known := s.out, s.th, s.members, s.known
	if transport != "RDMA" || ns <= th.RetransmissionNs {
		k := sampleKey{transport: transport, sizeBytes: bytes, reduce: reduce}
		s.times[k] = append(s.times[k], float64(ns))
	}
	if src < 0 || dst < 0 || known && (src >= len(members) || dst >= len(members)) {
		out.unmappedBytes += bytes
		return
	}
	k := linkKey{src, dst, transport}
	if known {
		k.src, k.dst = members[src], members[dst]
	}
	if transport == "RDMA" && ns > th.RetransmissionNs {
		rt := Retransmission{Src: k.src, Dst: k.dst, Step: s.step, Op: s.name, TimeNs: ns, LimitNs: th.RetransmissionNs}
		if known {
			out.retransmissions = append(out.retransmissions, rt)
		} else {
			// mapped at the merge, if the group's ranks say who they are
			out.localRetransmissions = append(out.localRetransmissions, localRetransmission{group: s.group, Retransmission: rt})
		}
		return
	}
	if !known && !s.placeable {
		out.unmappedBytes += bytes
		return
	}
	pk := peerKey{s.group, s.name, transport, bytes}
	// Transfers of one op over one link and size are summed; the bandwidth of
	// the sum is the byte-weighted mean of theirs.
	for j := range s.transfers {
		if t := &s.transfers[j]; t.link == k && t.peer == pk {
			t.bytes += bytes
			t.timeNs += ns
			t.count++
			return
		}
	}
	s.transfers = append(s.transfers, wideTransfer{link: k, peer: pk, bytes: bytes, timeNs: ns, count: 1, local: !known})
}

// rankSamples are a rank's transfer samples: the median time per transport, size and
// kind, from the task rows' times or the profiler's size bins.
func rankSamples(times map[sampleKey][]float64, binTimes map[sampleKey][]stats.Counted) []rankSample {
	samples := make([]rankSample, 0, len(times)+len(binTimes))
	for k, v := range times {
		sort.Float64s(v)
		samples = append(samples, rankSample{sampleKey: k, medianNs: stats.MedianSorted(v), count: len(v)})
	}
	for k, bins := range binTimes {
		n := 0
		for _, b := range bins {
			n += int(b.Count)
		}
		samples = append(samples, rankSample{sampleKey: k, medianNs: stats.MedianCounted(bins), count: n})
	}
	return samples
}

// peerRanks is one more than the highest group-local rank an op's data tasks name
// (OpStat.PeerRanks), 0 when they name none.
func peerRanks(planes [][]profile.CommTask) int32 {
	n := 0
	for _, plane := range planes {
		for i := range plane {
			if t := &plane[i]; t.SizeBytes > 0 && min(t.SrcRank, t.DstRank) >= 0 && isDataTask(t) {
				n = max(n, t.SrcRank+1, t.DstRank+1)
			}
		}
	}
	return int32(min(n, math.MaxInt32))
}

// taskGroupSizes is each group's least size by the ranks its ops' transfers name
// (OpStat.PeerRanks), for the groups whose ops have transfers.
func taskGroupSizes(ranks []rankComm) map[string]int {
	out := map[string]int{}
	for _, rc := range ranks {
		for i := range rc.ops {
			if o := &rc.ops[i]; o.PeerRanks > 0 {
				out[o.Group] = max(out[o.Group], int(o.PeerRanks))
			}
		}
	}
	return out
}

// sizeDistributionSamples adds one op's transfer times, for a rank without HCCL task
// rows, from the profiler's Size Distribution: each bin is Count transfers of its
// size, counted at their mean time. It is what lets a run whose timeline was not kept
// (the real Megatron run) calibrate its links, and a summary keeps the bins. The profiler's
// bins hold copies and reductions together, so these samples are never Reduce. The
// SDMA entry sums the SDMA links' (HCCS, PCIE, SIO) packets and is read only when
// none of them has bins; an RDMA bin slower on average than a retransmission is left
// out, as such a task is.
func sizeDistributionSamples(into map[sampleKey][]stats.Counted, transports map[string]profile.TransportStats, retransmissionNs int64) {
	sdmaSum := readSDMASumBins(func(name string) bool { return len(transports[name].SizeDistribution) > 0 })
	for name, t := range transports {
		if name == "SDMA" && !sdmaSum {
			continue
		}
		for _, b := range t.SizeDistribution {
			if b.Count <= 0 || b.TimeNs <= 0 || b.SizeBytes <= 0 {
				continue
			}
			meanNs := float64(b.TimeNs) / float64(b.Count)
			if name == "RDMA" && meanNs > float64(retransmissionNs) {
				continue
			}
			k := sampleKey{transport: name, sizeBytes: b.SizeBytes, fromSizeDistribution: true}
			into[k] = append(into[k], stats.Counted{Value: meanNs, Count: b.Count})
		}
	}
}

// matrixTransfers adds the links of a rank without HCCL tasks from the profiler's
// communication matrix (communication_matrix.json, analysis.db's CommAnalyzerMatrix):
// its per-link totals of each op type and group (the "-total" entries, or the raw op
// entries of the older layout, as msprof-analyze sums them), less the on-chip LOCAL
// copies, with group-local ranks mapped to global ones through parallel_group_info.
func matrixTransfers(out *rankComm, r *profile.Rank, groupRanks map[string][]int, skipSteps map[int]bool) {
	for _, l := range r.CommMatrix {
		if skipSteps[l.Step] || strings.EqualFold(l.Transport, "LOCAL") || l.SrcLocal == l.DstLocal || !matrixTotal(l.OpKey) {
			continue
		}
		members, known := groupRanks[l.Group]
		if l.SrcLocal < 0 || l.DstLocal < 0 || known && (l.SrcLocal >= len(members) || l.DstLocal >= len(members)) {
			out.unmappedBytes += l.Bytes
			continue
		}
		transport := strings.ToUpper(l.Transport)
		w := wideTransfer{
			link: linkKey{l.SrcLocal, l.DstLocal, transport},
			// Peers are the op's links that moved as many bytes: an algorithm's steps
			// move different sizes (NHR's and RHD's halving), and a smaller one runs at a
			// lower bandwidth on a healthy link.
			peer:  peerKey{l.Group, l.OpKey, transport, l.Bytes},
			bytes: l.Bytes, timeNs: l.TimeNs, count: 1}
		if known {
			w.link.src, w.link.dst = members[l.SrcLocal], members[l.DstLocal]
		} else if _, placeable := out.selfIndex[l.Group]; placeable {
			w.local = true
		} else {
			out.unmappedBytes += l.Bytes
			continue
		}
		w.keepIn(out)
	}
}

// matrixTotal reports whether a matrix entry is one to sum: an aggregated "-total"
// entry, or a raw op entry of the older layout (no top/middle/bottom statistic).
func matrixTotal(opKey string) bool {
	k := strings.ToLower(opKey)
	if strings.Contains(k, "total") {
		return true
	}
	return !strings.Contains(k, "top") && !strings.Contains(k, "middle") && !strings.Contains(k, "bottom")
}

// movingTime is the time an op moved data (OpStat.MovingNs) and where it was read,
// when its tasks are not at hand (with them, transferUnionNs is exact). The op-level
// Transit is one plane's data tasks (docs/formats.md §3.1); the transports' times sum every
// plane's, so they are used only where the op-level figure is missing (0), and then
// the busiest transport's (SDMA is already the sum of the SDMA links), capped at the
// elapse since planes run at once. An op that moved data over RDMA and over SDMA-class
// links runs its server levels one after the other, and one plane shows one level
// only: where that plane was an in-server one, its RDMA time is added to the Transit.
// A Transit equal to the RDMA time is the RDMA plane's; the in-server level it misses
// cannot be told from the SDMA sum over planes, and is taken from the same op's other
// ranks (inServerLevel).
func movingTime(o OpStat) (int64, string) {
	if o.TransitNs > 0 {
		rdma, sdma := o.Transports.Of("RDMA"), o.Transports.Of("SDMA")
		if rdma.TimeNs > 0 && sdma.Bytes > 0 {
			if math.Abs(float64(o.TransitNs-rdma.TimeNs)) <= 0.01*float64(rdma.TimeNs) {
				return min(o.TransitNs, o.ElapseNs), movingRDMAPlane
			}
			return min(o.TransitNs+rdma.TimeNs, max(o.ElapseNs, 0)), "transit+rdma"
		}
		if rdma.TimeNs > o.TransitNs && sdma.Bytes == 0 {
			// RDMA only: a ring sends one transfer at a time, on the plane of the peer
			// it sends to, which need not be the profiler's.
			return min(rdma.TimeNs, max(o.ElapseNs, 0)), "transports"
		}
		return min(o.TransitNs, o.ElapseNs), "transit"
	}
	var busiest int64
	for _, t := range o.Transports {
		switch t.Transport {
		case "HCCS", "PCIE", "SIO":
			if _, summed := o.Transports.Get("SDMA"); summed {
				continue
			}
		}
		busiest = max(busiest, t.TimeNs)
	}
	if busiest <= 0 {
		return 0, ""
	}
	return min(busiest, max(o.ElapseNs, 0)), "transports"
}

// sdmaLinks are the transports whose copies the profiler's SDMA entry sums.
var sdmaLinks = []string{"HCCS", "PCIE", "SIO"}

// readSDMASumBins reports whether an op's Size Distribution is read from its SDMA
// entry, the SDMA links' sum: only when none of the links (hasBins) has bins of its
// own, lest the same copies count twice.
func readSDMASumBins(hasBins func(transport string) bool) bool {
	for _, name := range sdmaLinks {
		if hasBins(name) {
			return false
		}
	}
	return true
}

// movingRDMAPlane marks an op whose one-plane Transit is its RDMA level's only, until
// inServerLevel adds the in-server level.
const movingRDMAPlane = "transit (RDMA plane)"

// inServerLevel re-estimates, without tasks, the moving time of the ops that used
// both server levels: the in-server planes run side by side, one per peer on the
// server, so that level lasts the SDMA time (a sum over planes) over the rank's
// group members on its server less one; the RoCE level sends one transfer at a time,
// so it lasts the RDMA time. Where the group's members or the servers are unknown,
// an op whose profiler's plane was the RDMA one takes its in-server level from the
// same op's other ranks (their Transit, the median).
func inServerLevel(ops []OpStat, groups []Group, serverOf map[int]int) {
	// Per group, its members on each server and how often each rank is a member:
	// counting a world group's thousands of members anew for each op was most of a
	// large cluster's analysis.
	type groupServers struct {
		onServer map[int]int
		member   map[int]int
	}
	servers := map[string]*groupServers{}
	for _, g := range groups {
		gs := &groupServers{onServer: map[int]int{}, member: map[int]int{}}
		for _, r := range g.Ranks {
			if n, ok := serverOf[r]; ok {
				gs.onServer[n]++
				gs.member[r]++
			}
		}
		servers[g.Key] = gs
	}
	type opKey struct {
		group, name string
		step        int
	}
	level0 := map[opKey][]float64{}
	for _, o := range ops {
		if o.MovingSource == "transit+rdma" {
			k := opKey{o.Group, o.Name, o.Step}
			level0[k] = append(level0[k], float64(o.TransitNs))
		}
	}
	for i := range ops {
		o := &ops[i]
		if o.MovingSource != movingRDMAPlane && o.MovingSource != "transit+rdma" {
			continue
		}
		server, known := serverOf[o.Rank]
		peers := 0
		if gs := servers[o.Group]; known && gs != nil {
			peers = gs.onServer[server] - gs.member[o.Rank] // the group's other ranks on this server
		}
		if peers > 0 {
			o.MovingNs = min(o.Transports.Of("SDMA").TimeNs/int64(peers)+o.Transports.Of("RDMA").TimeNs, max(o.ElapseNs, 0))
			o.MovingSource = "transports"
			continue
		}
		if o.MovingSource == "transit+rdma" {
			continue
		}
		o.MovingSource = "transit"
		if v := level0[opKey{o.Group, o.Name, o.Step}]; len(v) > 0 {
			sort.Float64s(v)
			o.MovingNs = min(o.MovingNs+int64(stats.MedianSorted(v)), max(o.ElapseNs, 0))
			o.MovingSource = "transit+rdma"
		}
	}
}

// mergeCommunication joins the ranks' communication into the cluster's: cross-rank
// waits, links and their peer ratios, groups, servers. limitNs is the retransmission
// limit.
func mergeCommunication(c *profile.Cluster, ranks []rankComm, limitNs int64) Communication {
	var out Communication
	links := map[linkKey]int{} // index in out.Links
	nOps := 0
	for _, rc := range ranks {
		nOps += len(rc.ops)
	}
	if nOps > 0 {
		out.Ops = make([]OpStat, 0, nOps) // at its length: grown by append, the ops were copied several times over
	}
	mapGroupLocalRanks(ranks)
	var suspects []int // in out.Ops
	for _, rc := range ranks {
		for _, i := range rc.rdmaSuspects {
			suspects = append(suspects, len(out.Ops)+i)
		}
		out.Ops = append(out.Ops, rc.ops...)
		out.Retransmissions = append(out.Retransmissions, rc.retransmissions...)
		out.UnmappedLinkBytes += rc.unmappedBytes
		for _, t := range rc.transfers {
			k := t.link()
			i, ok := links[k]
			if !ok {
				i = len(out.Links)
				links[k] = i
				out.Links = append(out.Links, Link{Src: k.src, Dst: k.dst, Transport: k.transport})
			}
			l := &out.Links[i]
			l.Bytes += t.bytes
			l.TimeNs += t.timeNs
			l.Transfers += int(t.count)
		}
	}
	crossRankWait(out.Ops)
	for _, i := range suspects {
		o := &out.Ops[i]
		// The fastest profiled rank's elapse (its own when no other rank ran the op).
		if o.ElapseNs-o.CrossWaitNs < limitNs {
			continue
		}
		rdma := o.Transports.Of("RDMA")
		out.Retransmissions = append(out.Retransmissions, Retransmission{Src: o.Rank, Dst: -1, Step: o.Step, Op: o.Name,
			TimeNs: rdma.TimeNs, LimitNs: limitNs, FromOpTotal: true, Bytes: rdma.Bytes})
	}
	out.TransferSamples = transferSamples(ranks)
	out.Groups = clusterGroups(c)
	out.ServerOf, out.Hosts = serversOf(c)
	inServerLevel(out.Ops, out.Groups, out.ServerOf)
	if cap(out.Links) > len(out.Links)+len(out.Links)/8 {
		out.Links = slices.Clone(out.Links) // at its length: the result is kept to the end
	}
	sort.Slice(out.Links, func(i, j int) bool {
		a, b := out.Links[i], out.Links[j]
		if a.Src != b.Src {
			return a.Src < b.Src
		}
		if a.Dst != b.Dst {
			return a.Dst < b.Dst
		}
		return a.Transport < b.Transport
	})
	out.PeerRatios = groupPeers(ranks).linkRatios(transferLatencyNs(out.TransferSamples))
	return out
}

type linkKey struct {
	src, dst  int
	transport string
}

// opSteps gives each of a rank's ops its step: the one the profiler assigned it to
// (ops read from its per-op analysis), else the step whose device window it starts in
// (-1 when none), with the windows the step breakdown uses.
func opSteps(r *profile.Rank) []int {
	out := make([]int, len(r.CommOps))
	assigned := false
	for i, op := range r.CommOps {
		out[i] = op.Step
		assigned = assigned || op.Step >= 0
	}
	if len(r.Steps) == 0 || assigned {
		return out
	}
	flows := r.Flows
	if r.ClipToStepWindows {
		flows = nil
	}
	for _, w := range deviceWindows(r.Steps, flows) {
		lo := sort.Search(len(r.CommOps), func(i int) bool { return r.CommOps[i].StartNs >= w.startNs })
		for i := lo; i < len(r.CommOps) && r.CommOps[i].StartNs < w.endNs; i++ {
			out[i] = w.step.Step
		}
	}
	return out
}

// tasksByRow lists each row's tasks by start, as indices into tasks: a copy of the
// tasks sorted by row was a fifth of what a cluster's analysis allocated. Tasks come
// sorted by start (profile.Rank.Normalize); a row that is not is sorted here, stably.
func tasksByRow(tasks []profile.CommTask) map[string][]int32 {
	counts := map[string]int{}
	for i := range tasks {
		counts[tasks[i].GroupRow]++
	}
	all := make([]int32, len(tasks))
	out := make(map[string][]int32, len(counts))
	at := 0
	for row, n := range counts {
		out[row] = all[at : at : at+n]
		at += n
	}
	for i := range tasks {
		row := tasks[i].GroupRow
		out[row] = append(out[row], int32(i))
	}
	for _, ids := range out {
		byStart := func(a, b int32) int { return cmp.Compare(tasks[a].StartNs, tasks[b].StartNs) }
		if !slices.IsSortedFunc(ids, byStart) {
			slices.SortStableFunc(ids, byStart)
		}
	}
	return out
}

// tasksOf returns an op's tasks, as indices into x.tasks: those of its row that start
// within the op, as msprof-analyze's compare tool attributes them (docs/formats.md
// §2.5).
func (x rankIndex) tasksOf(op profile.CommOp) []int32 {
	ids := x.byRow[op.GroupRow]
	lo := sort.Search(len(ids), func(i int) bool { return x.tasks[ids[i]].StartNs >= op.StartNs })
	hi := sort.Search(len(ids), func(i int) bool { return x.tasks[ids[i]].StartNs > op.EndNs })
	return ids[lo:hi]
}

func isDataTask(t *profile.CommTask) bool {
	switch taskKindOf(t.Name) {
	case kindMemcpy, kindReduceInline:
		return true
	case kindRDMASend:
		return t.SizeBytes != 4 // a 4-byte RDMASend is a notify
	}
	return false
}

// taskKind is a task name that the time split reads, whatever its case.
type taskKind uint8

const (
	kindOther taskKind = iota
	kindMemcpy
	kindReduceInline
	kindRDMASend
	kindNotifyWait
)

// taskKindOf compares without lowering the name: strings.ToLower allocated a copy of
// every task name three times per op, the largest allocation of a cluster's analysis.
// The length picks the one name to compare: EqualFold against each of the four took
// 1.3% of a 4096-rank analyze's CPU.
func taskKindOf(name string) taskKind {
	switch len(name) {
	case len("notify_wait"):
		if strings.EqualFold(name, "notify_wait") {
			return kindNotifyWait
		}
	case len("memcpy"):
		if strings.EqualFold(name, "memcpy") {
			return kindMemcpy
		}
	case len("rdmasend"):
		if strings.EqualFold(name, "rdmasend") {
			return kindRDMASend
		}
	case len("reduce_inline"):
		if strings.EqualFold(name, "reduce_inline") {
			return kindReduceInline
		}
	}
	return kindOther
}

// classifyPlane walks one plane's tasks in time order with msprof-analyze's RDMA rule
// (docs/formats.md §2.5): a Notify_Wait is a wait unless the previous four tasks were
// "RRNR" or ended in "RR" (a full four-task history: Python's last4[2:]); then it is
// the RDMA transfer itself.
func classifyPlane(tasks []profile.CommTask, fn func(t *profile.CommTask, transfer, wait bool)) {
	var hist []byte
	for i := range tasks {
		t := &tasks[i]
		kind := taskKindOf(t.Name)
		switch {
		case kind == kindNotifyWait:
			h := string(hist)
			tail := ""
			if len(h) > 2 {
				tail = h[2:]
			}
			wait := h == "" || (h != "RRNR" && tail != "RR")
			fn(t, !wait, wait)
		case isDataTask(t):
			fn(t, true, false)
		default:
			fn(t, false, false)
		}
		c := byte('O')
		switch kind {
		case kindRDMASend:
			c = 'R'
		case kindNotifyWait:
			c = 'N'
		}
		hist = append(hist, c)
		if len(hist) > 4 {
			hist = hist[1:]
		}
	}
}

// planeSplitter splits an op's tasks by plane, planes in order, each plane's tasks in
// their order, with its buffers kept from op to op of a rank: what it returns is valid
// until its next split. An op has a few planes: the tasks are counted into place (a
// stable counting sort) rather than sorted, and sorting (and allocating) them for each
// op was the costliest step of a cluster's analysis.
type planeSplitter struct {
	ids    []int // the distinct planes, in order
	next   []int // where each plane's next task goes
	buf    []profile.CommTask
	planes [][]profile.CommTask
}

func (s *planeSplitter) split(all []profile.CommTask, ids []int32) [][]profile.CommTask {
	s.ids = s.ids[:0]
	for _, k := range ids {
		if p := all[k].Plane; len(s.ids) == 0 || s.ids[len(s.ids)-1] != p {
			if j, found := slices.BinarySearch(s.ids, p); !found {
				s.ids = slices.Insert(s.ids, j, p)
			}
		}
	}
	s.buf = slices.Grow(s.buf[:0], len(ids))[:len(ids)]
	if len(s.ids) > 64 {
		for i, k := range ids {
			s.buf[i] = all[k]
		}
		slices.SortStableFunc(s.buf, func(a, b profile.CommTask) int { return cmp.Compare(a.Plane, b.Plane) })
	} else {
		s.next = append(s.next[:0], make([]int, len(s.ids))...)
		for _, k := range ids {
			j, _ := slices.BinarySearch(s.ids, all[k].Plane)
			s.next[j]++
		}
		at := 0
		for j, n := range s.next {
			s.next[j], at = at, at+n
		}
		for _, k := range ids {
			j, _ := slices.BinarySearch(s.ids, all[k].Plane)
			s.buf[s.next[j]] = all[k]
			s.next[j]++
		}
	}
	s.planes = s.planes[:0]
	for i := 0; i < len(s.buf); {
		j := i + 1
		for j < len(s.buf) && s.buf[j].Plane == s.buf[i].Plane {
			j++
		}
		s.planes = append(s.planes, s.buf[i:j:j])
		i = j
	}
	return s.planes
}

// timeSplit computes Transit, Wait and Synchronization from the first plane that
// talks to another rank (Plane 1 in the profiler's own figures on
// imagenet-2rank-level1; CANN uses the master plane).
func timeSplit(planes [][]profile.CommTask) (transitNs, waitNs, syncNs int64) {
	for _, plane := range planes {
		if plane[0].Plane == 0 {
			continue
		}
		seenData := false
		classifyPlane(plane, func(t *profile.CommTask, transfer, wait bool) {
			switch {
			case transfer:
				transitNs += t.DurNs()
				seenData = true
			case wait:
				waitNs += t.DurNs()
				if !seenData {
					syncNs += t.DurNs()
				}
			}
		})
		break
	}
	return
}

// transferUnionNs is the time an op moved data between ranks on any plane: the union
// of its transfers' intervals (SDMA copies other than on-chip ones, and RDMA sends
// with the waits that complete them). Planes run at once, so the union, not the sum,
// is the op's moving time; 0 without tasks. rdma reports an RDMA transfer among them.
func transferUnionNs(planes [][]profile.CommTask) (unionNs int64, rdma bool) {
	var ivs []profile.Interval
	for _, plane := range planes {
		classifyPlane(plane, func(t *profile.CommTask, transfer, _ bool) {
			if transfer && t.LinkType != "ON_CHIP" && t.DurNs() > 0 {
				ivs = append(ivs, t.Interval)
				rdma = rdma || t.TransportType == "RDMA"
			}
		})
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].StartNs < ivs[j].StartNs })
	var end int64
	for i, iv := range ivs {
		if i == 0 || iv.StartNs > end {
			unionNs += iv.EndNs - iv.StartNs
			end = iv.EndNs
			continue
		}
		if iv.EndNs > end {
			unionNs += iv.EndNs - end
			end = iv.EndNs
		}
	}
	return unionNs, rdma
}

// eachTransfer calls fn for each data transfer of an op between two ranks (on-chip
// copies excluded), over all planes: SDMA copies by link type, and RDMA sends timed
// from the post to the end of the wait that completes them. A task without a size
// (dataTaskWarnings warns of it) is no transfer: read as 0 bytes it made links of
// 0 GB/s.
func eachTransfer(planes [][]profile.CommTask, fn func(src, dst int, transport string, bytes, ns int64, reduce bool)) {
	for _, plane := range planes {
		var pending *profile.CommTask
		classifyPlane(plane, func(t *profile.CommTask, transfer, wait bool) {
			if !transfer {
				return
			}
			switch {
			case t.SizeBytes <= 0 && isDataTask(t):
			case t.TransportType == "SDMA" && isDataTask(t) && t.LinkType != "ON_CHIP":
				fn(t.SrcRank, t.DstRank, sdmaLink(t.LinkType), t.SizeBytes, t.DurNs(), strings.EqualFold(t.Name, "reduce_inline"))
			case t.TransportType == "RDMA" && isDataTask(t):
				pending = t
			case strings.EqualFold(t.Name, "notify_wait") && pending != nil:
				fn(pending.SrcRank, pending.DstRank, "RDMA", pending.SizeBytes, pending.DurNs()+t.DurNs(), false)
				pending = nil
			}
		})
	}
}

// sdmaLink buckets an SDMA task's link type as msprof does (HCCS_SW is HCCS).
func sdmaLink(linkType string) string {
	switch linkType {
	case "HCCS", "HCCS_SW":
		return "HCCS"
	case "PCIE", "SIO":
		return linkType
	}
	return "SDMA"
}

// transportUse sums an op's transfers per transport; SDMA is the sum of the SDMA
// links (never added to them again).
func transportUse(planes [][]profile.CommTask) Transports {
	out := map[string]TransportUse{}
	large := map[string]int{}
	bins := map[string]map[int64]profile.PacketBin{}
	addBin := func(transport string, bytes, ns int64) {
		if bins[transport] == nil {
			bins[transport] = map[int64]profile.PacketBin{}
		}
		b := bins[transport][bytes]
		b.SizeBytes = bytes
		b.Count++
		b.TimeNs += ns
		bins[transport][bytes] = b
	}
	eachTransfer(planes, func(_, _ int, transport string, bytes, ns int64, _ bool) {
		u := out[transport]
		u.Bytes += bytes
		u.TimeNs += ns
		u.Packets++
		out[transport] = u
		addBin(transport, bytes, ns)
		if transport != "RDMA" {
			addBin("SDMA", bytes, ns) // SDMA is the sum of the SDMA links
		}
		limit := int64(largePacketSDMABytes)
		if transport == "RDMA" {
			limit = largePacketRDMABytes
		}
		if bytes > limit {
			large[transport]++
		}
	})
	var sdma TransportUse
	for name, u := range out {
		u.LargePacketRatio = math.Round(float64(large[name])/float64(u.Packets)*1e4) / 1e4
		u.Sizes = sortedBins(bins[name])
		out[name] = u
		if name != "RDMA" && name != "SDMA" {
			sdma.Bytes += u.Bytes
			sdma.TimeNs += u.TimeNs
			sdma.Packets += u.Packets
		}
	}
	if sdma.Bytes > 0 {
		sdma.Sizes = sortedBins(bins["SDMA"])
		var largeSDMA int
		for _, b := range sdma.Sizes {
			if b.SizeBytes > largePacketSDMABytes {
				largeSDMA += int(b.Count)
			}
		}
		sdma.LargePacketRatio = math.Round(float64(largeSDMA)/float64(sdma.Packets)*1e4) / 1e4
		out["SDMA"] = sdma
	}
	if len(out) == 0 {
		return nil
	}
	return sortedTransports(out)
}

func sortedBins(m map[int64]profile.PacketBin) []profile.PacketBin {
	out := make([]profile.PacketBin, 0, len(m))
	for _, b := range m {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SizeBytes < out[j].SizeBytes })
	return out
}

// globalRanksByGroup maps a rank's group keys (the @hash) to the global ranks of the
// group, indexed by group-local rank, from parallel_group_info.
func globalRanksByGroup(r *profile.Rank) map[string][]int {
	out := map[string][]int{}
	for _, g := range r.Metadata.ParallelGroups {
		out[g.OpsKey()] = g.GlobalRanks
	}
	return out
}

// matchName is the name under which an op meets its peers: the name itself, except
// that a send and a receive of one communicator pair by their sequence number
// (hcom_send__503_4_1 on one rank is hcom_receive__503_4_1 on the other: HCCL numbers
// a communicator's ops in the order both ranks issue them).
func matchName(name string) string {
	for _, prefix := range []string{"hcom_send_", "hcom_receive_"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			return "hcom_p2p_" + rest
		}
	}
	return name
}

// crossRankWait sets each op's CrossWaitNs: its elapse minus the fastest rank's for
// the same op, where the same op is the same (group, name with its sequence number,
// step) on at least two distinct ranks (msprof-analyze's cluster time summary). Where
// a name repeats on a rank within a step (NCCL's kernels are named by what they do,
// not numbered: Kineto's ncclDevKernel_AllReduce_... every bucket), the n-th op of
// that name in the communicator and step on one rank is the n-th on the others, as
// every member issues a communicator's collectives in the same order; that holds only
// if every rank has as many of them, else the name is no identity and the op waits
// for nobody measurable: 0, and not CrossWaitKnown. An op seen on one rank only is
// the same.
func crossRankWait(ops []OpStat) {
	type opKey struct {
		group, name string
		step        int
	}
	type match struct {
		fastestNs int64
		ranks     int
		repeated  bool
		lastRank  int
	}
	seen := map[opKey]*match{}
	for _, o := range ops {
		k := opKey{o.Group, matchName(o.Name), o.Step}
		m := seen[k]
		if m == nil {
			seen[k] = &match{fastestNs: o.ElapseNs, ranks: 1, lastRank: o.Rank}
			continue
		}
		m.fastestNs = min(m.fastestNs, o.ElapseNs)
		if o.Rank == m.lastRank {
			m.repeated = true // ops arrive rank by rank: a repeat is on the same rank
		} else {
			m.ranks++
			m.lastRank = o.Rank
		}
	}
	anyRepeated := false
	for _, m := range seen {
		if m.repeated {
			anyRepeated = true
			break
		}
	}
	var repeats map[int]int64
	if anyRepeated { // NCCL's kernels; HCCL's ops are numbered
		repeats = crossRankWaitByOrder(ops, func(o OpStat) bool {
			return seen[opKey{o.Group, matchName(o.Name), o.Step}].repeated
		})
	}
	for i := range ops {
		m := seen[opKey{ops[i].Group, matchName(ops[i].Name), ops[i].Step}]
		ops[i].CrossWaitNs, ops[i].CrossWaitKnown = 0, false
		switch {
		case m.repeated:
			if w, ok := repeats[i]; ok {
				ops[i].CrossWaitNs, ops[i].CrossWaitKnown = w, true
			}
		case m.ranks >= 2:
			ops[i].CrossWaitNs, ops[i].CrossWaitKnown = ops[i].ElapseNs-m.fastestNs, true
		}
	}
}

// crossRankWaitByOrder matches the ops whose name repeats on a rank within a step
// (repeated) by their order: the n-th of a (group, name, step) on each rank, where
// every rank that has the name has as many. It returns the cross-rank wait of each
// op matched on two ranks or more, by index in ops; ops are in start order within a
// rank.
func crossRankWaitByOrder(ops []OpStat, repeated func(OpStat) bool) map[int]int64 {
	type nameKey struct {
		group, name string
		step        int
	}
	type rankKey struct {
		nameKey
		rank int
	}
	type nthKey struct {
		nameKey
		nth int
	}
	nth := map[int]int{} // op index → its order among its rank's ops of the name
	count := map[rankKey]int{}
	for i, o := range ops {
		if !repeated(o) {
			continue
		}
		k := rankKey{nameKey{o.Group, matchName(o.Name), o.Step}, o.Rank}
		nth[i] = count[k]
		count[k]++
	}
	if len(nth) == 0 {
		return nil
	}
	agreed := map[nameKey]int{} // the count every rank has, -1 when they differ
	for k, n := range count {
		if c, ok := agreed[k.nameKey]; !ok {
			agreed[k.nameKey] = n
		} else if c != n {
			agreed[k.nameKey] = -1
		}
	}
	fastest := map[nthKey]int64{}
	ranks := map[nthKey]int{}
	for i, n := range nth {
		o := ops[i]
		nk := nameKey{o.Group, matchName(o.Name), o.Step}
		if agreed[nk] < 0 {
			continue
		}
		k := nthKey{nk, n}
		if f, ok := fastest[k]; !ok || o.ElapseNs < f {
			fastest[k] = o.ElapseNs
		}
		ranks[k]++
	}
	out := map[int]int64{}
	for i, n := range nth {
		o := ops[i]
		k := nthKey{nameKey{o.Group, matchName(o.Name), o.Step}, n}
		if ranks[k] >= 2 {
			out[i] = o.ElapseNs - fastest[k]
		}
	}
	return out
}

// clusterGroups lists the communicators named in any rank's parallel_group_info.
func clusterGroups(c *profile.Cluster) []Group {
	seen := map[string]bool{}
	var out []Group
	for _, r := range c.Ranks {
		for _, g := range r.Metadata.ParallelGroups {
			key := g.OpsKey()
			if seen[key] || IsLowerBound(g.Source) {
				// A group known only by the ranks seen using it (msprof-analyze's
				// rank sets) is inferred from the ops, as one no file names.
				continue
			}
			seen[key] = true
			out = append(out, Group{Key: key, Name: g.HCCLName, Kind: g.Name, Ranks: g.GlobalRanks})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// transportsSeen lists the transports of the links, for hardware detection.
func transportsSeen(links []Link) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range links {
		if !seen[l.Transport] {
			seen[l.Transport] = true
			out = append(out, l.Transport)
		}
	}
	sort.Strings(out)
	return out
}

// applyPeaks fills the links' and ops' utilisation against the hardware profile, and
// the ops' bus bandwidth (group sizes from the collectives table).
func applyPeaks(c *Communication, colls []Collective) {
	hw := c.Hardware
	for i := range c.Links {
		l := &c.Links[i]
		if peak, ok := hw.Peak(l.Transport); ok {
			l.PeakGBps = peak
			l.Utilisation = l.BandwidthGBps() / peak
		}
	}
	size := map[[2]string]int{}
	for _, col := range colls {
		size[[2]string{col.Op, col.Group}] = col.GroupSize
	}
	for i := range c.Ops {
		o := &c.Ops[i]
		if p := size[[2]string{o.Type, o.Group}]; o.Bytes > 0 && o.TransitNs > 0 && p >= 2 {
			o.BusBwGBps = units.GBps(o.Bytes, o.TransitNs) * profile.BusBandwidthFactor(o.Type, p)
		}
		busiest, most := "", int64(-1)
		for _, t := range o.Transports {
			if t.Transport == "SDMA" { // the sum of the SDMA links, not a link of its own
				continue
			}
			if t.Bytes > most {
				busiest, most = t.Transport, t.Bytes
			}
		}
		if peak, ok := hw.Peak(busiest); ok {
			o.Utilisation = o.Transports.Of(busiest).BandwidthGBps() / peak
		}
	}
}

// transferSamples joins the ranks' per-size medians: the median over ranks.
func transferSamples(ranks []rankComm) []TransferSample {
	medians := map[sampleKey][]float64{}
	counts := map[sampleKey]int{}
	for _, rc := range ranks {
		for _, s := range rc.samples {
			k := s.sampleKey
			medians[k] = append(medians[k], s.medianNs)
			counts[k] += s.count
		}
	}
	out := make([]TransferSample, 0, len(medians))
	for k, v := range medians {
		sort.Float64s(v)
		out = append(out, TransferSample{Transport: k.transport, SizeBytes: k.sizeBytes, Reduce: k.reduce, FromSizeDistribution: k.fromSizeDistribution,
			MedianNs: stats.MedianSorted(v), Count: counts[k], Ranks: len(v)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Transport != out[j].Transport {
			return out[i].Transport < out[j].Transport
		}
		if out[i].SizeBytes != out[j].SizeBytes {
			return out[i].SizeBytes < out[j].SizeBytes
		}
		if out[i].Reduce != out[j].Reduce {
			return !out[i].Reduce
		}
		return !out[i].FromSizeDistribution && out[j].FromSizeDistribution
	})
	return out
}

// intern returns the canonical copy of s.
func intern(s string) string { return unique.Make(s).Value() }
