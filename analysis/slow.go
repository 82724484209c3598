package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/profile"
)

// Thresholds are the limits of the slow-rank and slow-link detectors, in one place.
type Thresholds struct {
	// A rank is slow when the wait it causes others is an outlier: modified z-score
	// (median/MAD) above SlowRankZ, the wait above SlowRankMinShare of its step, in at
	// least SlowRankPersist of the steps.
	SlowRankZ        float64
	SlowRankMinShare float64
	SlowRankPersist  float64
	// SlowRankMethod is "mad" (the default: modified z-score) or "dixon" (msprof-
	// analyze's choice: Dixon's test at 99.5% up to 100 ranks, 3σ beyond; the score is
	// then the statistic over its critical value).
	SlowRankMethod string
	// A link is slow when its transfers run below SlowLinkFraction of the upper
	// quartile of the same ops' transfers over the same transport and size.
	SlowLinkFraction float64
	// A transfer longer than RetransmissionNs is an RDMA retransmission (packet loss).
	RetransmissionNs int64
}

// DefaultThresholds are msprof-analyze's where it has one (4 s retransmission), and
// conservative robust-statistics choices otherwise.
var DefaultThresholds = Thresholds{SlowRankZ: 3.5, SlowRankMinShare: 0.02, SlowRankPersist: 0.5,
	SlowLinkFraction: 0.6, RetransmissionNs: 4_000_000_000}

// SlowRank is a rank the others wait for.
type SlowRank struct {
	Rank     int
	Score    float64 // modified z-score of the wait it causes
	Steps    []int   // steps in which it was an outlier
	Cause    string  // compute, host, link or unknown
	Evidence string
	// ShareOfStep is what it costs the flagged steps (stepStake: how much shorter
	// they would be if it were like the others) over its Stage there: what is at
	// stake. StepsSeen counts the steps in which waits could be compared at all.
	ShareOfStep float64
	StepsSeen   int
}

// SlowLink is a link well below the bandwidth of its peers.
type SlowLink struct {
	Src, Dst       int
	Transport      string
	BandwidthGBps  float64
	PeerMedianGBps float64 // the link's bandwidth at its peers' reference (upper quartile) ratio
	Node           int     // the server of Src; -1 when unknown
	Evidence       string
}

// Retransmission is an RDMA transfer that took longer than the retransmission limit.
type Retransmission struct {
	Src, Dst int
	Step     int
	Op       string
	TimeNs   int64
	LimitNs  int64 // the retransmission limit it exceeded (Thresholds.RetransmissionNs)
}

// slowRanks finds the ranks the others wait for. In every collective the last rank
// to arrive waits least (its cross-rank wait is 0) while the others wait for it. Per
// step, each rank's typical wait (the median over its collectives) is compared with
// the other ranks' by median/MAD: a rank that waits far less than the rest, at a cost
// above SlowRankMinShare of its step (stepStake), in at least SlowRankPersist of the
// steps, is the one they wait for. Cross-rank waits are durations, so clock offsets
// between ranks do not matter.
//
// The cost is judged per step, not per collective: with many small collectives (small
// gradient buckets) each op's wait is a sliver of the step while they add up to the
// straggler's whole lag.
func slowRanks(ops []OpStat, ranks []RankResult, links []SlowLink, th Thresholds) []SlowRank {
	members := map[[2]string]int{}
	for _, o := range ops {
		members[[2]string{o.Group, o.Name}]++
	}
	waits := map[int]map[int][]float64{} // step → rank → cross-rank waits
	last := map[int]map[int]int{}        // step → rank → collectives it arrived last at
	for _, o := range ops {
		if members[[2]string{o.Group, o.Name}] < 2 || o.Step < 0 && len(ranks) > 0 && hasSteps(ranks) {
			continue
		}
		if waits[o.Step] == nil {
			waits[o.Step] = map[int][]float64{}
			last[o.Step] = map[int]int{}
		}
		waits[o.Step][o.Rank] = append(waits[o.Step][o.Rank], float64(o.CrossWaitNs))
		if o.CrossWaitNs == 0 {
			last[o.Step][o.Rank]++
		}
	}
	stepTime := map[int]map[int]StepBreakdown{} // step → rank → breakdown
	for _, rr := range ranks {
		for _, s := range rr.Steps {
			if stepTime[s.Step] == nil {
				stepTime[s.Step] = map[int]StepBreakdown{}
			}
			stepTime[s.Step][rr.Rank] = s
		}
	}
	flagged := map[int][]int{}
	scores := map[int]float64{}
	deficits := map[int]float64{}
	stakes := map[int]float64{}
	stages := map[int]float64{}
	lastAt, seenAt := map[int]int{}, map[int]int{}
	for step, byRank := range waits {
		if len(byRank) < 3 {
			continue
		}
		typical := map[int]float64{}
		total := map[int]float64{}
		var vals, totals []float64
		for r, w := range byRank {
			sort.Float64s(w)
			typical[r] = stats.LowerMedianSorted(w)
			vals = append(vals, typical[r])
			for _, x := range w {
				total[r] += x
			}
			totals = append(totals, total[r])
		}
		med, mad := stats.MedianMAD(vals)
		medTotal, _ := stats.MedianMAD(totals)
		dixonOut, dixonScore := false, 0.0
		if th.SlowRankMethod == "dixon" {
			dixonOut, dixonScore = lowOutlier(vals)
		}
		lowest := math.Inf(1)
		for _, e := range typical {
			lowest = min(lowest, e)
		}
		for r, e := range typical {
			var outlier bool
			var score float64
			if th.SlowRankMethod == "dixon" {
				outlier, score = dixonOut && e == lowest, dixonScore
			} else {
				score = modifiedZ(-e, -med, mad)
				outlier = score > th.SlowRankZ
			}
			stage := stepTime[step][r].StageNs
			if !outlier || stage <= 0 {
				continue
			}
			deficit := medTotal - total[r]
			stake, ownWork := stepStake(r, stepTime[step], deficit)
			// Late for a reason outside its own work (its link, its launches), it must
			// at least be consistently the last: at most of its collectives.
			consistent := ownWork || 2*last[step][r] > len(byRank[r])
			if consistent && stake > th.SlowRankMinShare*float64(stage) {
				flagged[r] = append(flagged[r], step)
				scores[r] = max(scores[r], score)
				deficits[r] += deficit
				stakes[r] += stake
				stages[r] += float64(stage)
				lastAt[r] += last[step][r]
				seenAt[r] += len(byRank[r])
			}
		}
	}
	var out []SlowRank
	for r, steps := range flagged {
		if float64(len(steps)) < th.SlowRankPersist*float64(len(waits)) {
			continue
		}
		sort.Ints(steps)
		cause, evidence := slowRankCause(r, steps, stepTime, links)
		score := scores[r]
		if math.IsInf(score, 1) {
			score = 999 // every other rank waited the same: the MAD is 0
		}
		n := float64(len(steps))
		out = append(out, SlowRank{Rank: r, Score: math.Round(score*100) / 100, Steps: steps, Cause: cause,
			ShareOfStep: stakes[r] / stages[r], StepsSeen: len(waits),
			Evidence: fmt.Sprintf("it arrives last at %d of its %d collectives in those steps; the others wait %.3f ms per step for it in their collectives, of which it costs the step about %.3f ms (%d of %d steps); %s",
				lastAt[r], seenAt[r], deficits[r]/n/1e6, stakes[r]/n/1e6, len(steps), len(waits), evidence)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// stepStake is what a rank the others wait for costs one step: how much shorter the
// step would be if it were like the others. The step waits for its slowest rank, so
// without this one it would wait for the next slowest: the rank's own work (Stage
// less its exposed communication, plus Preparing) over the largest of the others'.
// That is capped by what the others actually wait in the open (their median exposed
// communication over its own), for work they overlap costs nothing. When its work is
// not longer (it is late for another reason: a slow link of its own), the others'
// total wait for it in their collectives (deficitNs), under the same cap; ownWork
// reports which.
func stepStake(rank int, byRank map[int]StepBreakdown, deficitNs float64) (stakeNs float64, ownWork bool) {
	work := func(b StepBreakdown) float64 {
		return float64(b.StageNs - b.ExposedCommNs() + b.PreparingNs)
	}
	mine, ok := byRank[rank]
	if !ok {
		return 0, false
	}
	var othersExposed []float64
	nextSlowest := math.Inf(-1)
	for r, b := range byRank {
		if r == rank {
			continue
		}
		othersExposed = append(othersExposed, float64(b.ExposedCommNs()))
		nextSlowest = max(nextSlowest, work(b))
	}
	if len(othersExposed) == 0 {
		return 0, false
	}
	medExposed, _ := stats.MedianMAD(othersExposed)
	capNs := medExposed - float64(mine.ExposedCommNs())
	est := work(mine) - nextSlowest
	ownWork = est > 0
	if !ownWork {
		est = deficitNs
	}
	return max(0, min(est, capNs)), ownWork
}

func hasSteps(ranks []RankResult) bool {
	for _, r := range ranks {
		for _, s := range r.Steps {
			if s.HasStep {
				return true
			}
		}
	}
	return false
}

// slowRankCause compares the slow rank's steps with the other ranks': longer
// Computing is a compute cause, longer Preparing or Free a host cause, and a slow link
// of its own (sending or receiving) a link cause.
func slowRankCause(rank int, steps []int, stepTime map[int]map[int]StepBreakdown, links []SlowLink) (cause, evidence string) {
	ratio := func(field func(StepBreakdown) int64) (float64, float64) {
		var mine, others []float64
		for _, s := range steps {
			for r, b := range stepTime[s] {
				if r == rank {
					mine = append(mine, float64(field(b)))
				} else {
					others = append(others, float64(field(b)))
				}
			}
		}
		if len(mine) == 0 || len(others) == 0 {
			return 0, 0
		}
		sort.Float64s(others)
		m := stats.LowerMedianSorted(others)
		return stat.Mean(mine, nil), m
	}
	if mine, med := ratio(func(b StepBreakdown) int64 { return b.ComputingNs }); med > 0 && mine > 1.05*med {
		return "compute", fmt.Sprintf("its Computing is %.1f%% above the median rank's (%.3f vs %.3f ms)", 100*(mine/med-1), mine/1e6, med/1e6)
	}
	if mine, med := ratio(func(b StepBreakdown) int64 { return b.PreparingNs + b.FreeNs }); mine > med+1e6 && mine > 1.2*med {
		return "host", fmt.Sprintf("its Preparing+Free is %.3f ms against the median rank's %.3f ms", mine/1e6, med/1e6)
	}
	for _, l := range links {
		if l.Src == rank || l.Dst == rank {
			return "link", fmt.Sprintf("its link %d→%d %s runs at %.0f%% of its peers' (%.2f vs %.2f GB/s)",
				l.Src, l.Dst, l.Transport, 100*l.BandwidthGBps/l.PeerMedianGBps, l.BandwidthGBps, l.PeerMedianGBps)
		}
	}
	return "unknown", "its Computing, Preparing and Free are like the others', and its links are not slow"
}

// modifiedZ is Iglewicz and Hoaglin's robust z-score; a MAD of 0 (most ranks charged
// nothing) makes any value above the median an outlier.
func modifiedZ(v, median, mad float64) float64 {
	if mad == 0 {
		if v > median {
			return math.Inf(1)
		}
		return 0
	}
	return 0.6745 * (v - median) / mad
}

// peerSamples holds each transfer beside its peers': the transfers of the same op
// (group and name) over the same transport with the same size, which cross the same
// kind of link at the same time, so that message size cancels out.
type peerSamples map[peerKey][]peerSample

type peerKey struct {
	group, op, transport string
	bytes                int64
}

type peerSample struct {
	link   linkKey
	bytes  int64 // what the op moved over the link at this size (its weight)
	timeNs int64
	count  int // transfers summed in it
}

func (p peerSamples) addTransfer(t transfer) {
	p[t.peer] = append(p[t.peer], peerSample{t.link, t.bytes, t.timeNs, t.count})
}

// minPayloadShare bounds the latency taken off a transfer's time: at least this share
// of it is left as payload time, so a transfer the fit says is all latency neither
// divides by zero nor swings the ratio.
const minPayloadShare = 0.1

// linkRatios returns, per link, how fast its transfers ran against their peers': the
// mean of bandwidth / peers' reference over its transfers, weighted by bytes. The
// bandwidth is the payload's, with the transport's fitted latency taken off each
// transfer (bytes / (time − α)): a link at half the bandwidth takes twice the payload
// time, but with α left in, a transfer of a few n½ looks only a third slower (0.63
// where it is 0.5). The reference is the peers' upper quartile, not their median,
// because one slow server can touch half the transfers of a phase (a 4-server ring
// passes through it twice), and the median would then sit between the slow and the
// healthy links. Only groups of 3 or more transfers count.
func (p peerSamples) linkRatios(alphaNs map[string]float64) map[linkKey]float64 {
	weighted := map[linkKey]float64{}
	bytes := map[linkKey]float64{}
	// Sum in a fixed order: float sums must not depend on map iteration.
	keys := make([]peerKey, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.op != b.op {
			return a.op < b.op
		}
		if a.transport != b.transport {
			return a.transport < b.transport
		}
		return a.bytes < b.bytes
	})
	for _, k := range keys {
		samples := p[k]
		if len(samples) < 3 {
			continue
		}
		alpha := alphaNs[k.transport]
		bw := make([]float64, len(samples))
		for i, s := range samples {
			t := float64(s.timeNs)
			if s.timeNs <= 0 {
				continue
			}
			bw[i] = float64(s.bytes) / max(t-float64(s.count)*alpha, minPayloadShare*t)
		}
		sorted := append([]float64(nil), bw...)
		sort.Float64s(sorted)
		ref := stats.QuantileSorted(sorted, 0.75)
		if ref <= 0 {
			continue
		}
		for i, s := range samples {
			weighted[s.link] += float64(s.bytes) * bw[i] / ref
			bytes[s.link] += float64(s.bytes)
		}
	}
	out := map[linkKey]float64{}
	for k, b := range bytes {
		if b > 0 {
			out[k] = weighted[k] / b
		}
	}
	return out
}

// transferLatencyNs fits each transport's per-transfer latency α from the typical
// transfer times per size (TransferSamples: medians over ranks, which a slow link does
// not move): the intercept of time = α + bytes/BW, weighted by transfers, over copies
// (reductions add a per-byte cost of their own) where at least two sizes were seen. No
// fit (one size, a non-positive slope) leaves α at 0: times are then compared whole,
// as before the fit.
func transferLatencyNs(samples []TransferSample) map[string]float64 {
	by := map[string][]TransferSample{}
	for _, s := range samples {
		if !s.Reduce && s.SizeBytes > 0 && s.MedianNs > 0 && s.Count > 0 {
			by[s.Transport] = append(by[s.Transport], s)
		}
	}
	out := map[string]float64{}
	for transport, pts := range by {
		x := make([]float64, len(pts))
		y := make([]float64, len(pts))
		w := make([]float64, len(pts))
		sizes := map[int64]bool{}
		smallest := math.Inf(1)
		for i, p := range pts {
			x[i], y[i], w[i] = float64(p.SizeBytes), p.MedianNs, float64(p.Count)
			sizes[p.SizeBytes] = true
			smallest = min(smallest, p.MedianNs)
		}
		if len(sizes) < 2 {
			continue
		}
		alpha, beta := stat.LinearRegression(x, y, w, false)
		if beta <= 0 || alpha <= 0 {
			continue
		}
		out[transport] = min(alpha, smallest)
	}
	return out
}

// slowLinks are the links whose transfers run below SlowLinkFraction of their
// peers' in the same ops.
func slowLinks(links []Link, ratios map[linkKey]float64, nodeOf map[int]int, th Thresholds) []SlowLink {
	var out []SlowLink
	for _, l := range links {
		r, ok := ratios[linkKey{l.Src, l.Dst, l.Transport}]
		if !ok || r >= th.SlowLinkFraction {
			continue
		}
		bw := l.BandwidthGBps()
		node, known := nodeOf[l.Src]
		if !known {
			node = -1
		}
		out = append(out, SlowLink{Src: l.Src, Dst: l.Dst, Transport: l.Transport, BandwidthGBps: bw, PeerMedianGBps: bw / r, Node: node,
			Evidence: fmt.Sprintf("%d→%d %s moves data at %.0f%% of the bandwidth of the same ops' other %s transfers of its size, latency taken off (%.2f GB/s over %d transfers)",
				l.Src, l.Dst, l.Transport, 100*r, l.Transport, bw, l.Transfers)})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].BandwidthGBps/out[i].PeerMedianGBps < out[j].BandwidthGBps/out[j].PeerMedianGBps
	})
	return out
}

// SlowNode is a server whose links of one transport are slow while the same
// transport's links elsewhere are not: its NICs (RDMA) or its fabric, rather than one
// cable.
type SlowNode struct {
	Node      int
	Host      string
	Transport string
	Fraction  float64 // the median peer ratio of the node's slow links
	Evidence  string
}

// slowNodes rolls slow links up to servers. A server all of whose links of a
// transport to other servers run slow, or which every slow link of the transport
// touches (two or more, with no other server common to them all), has a slow NIC or
// fabric, not a bad cable; when the slow links also share one rank, it is that rank's
// NIC. Either way some link of the transport elsewhere must be fine: with every link
// slow (two servers, one slow NIC) the data cannot say whose NIC it is. The links a
// node explains are returned apart, to be left out of the slow links.
func slowNodes(links []Link, slow []SlowLink, ratios map[linkKey]float64, nodeOf map[int]int, hosts []string, th Thresholds) ([]SlowNode, map[linkKey]bool) {
	type nodeT struct {
		node      int
		transport string
	}
	touching := map[nodeT][]float64{}
	healthy := map[string]bool{} // a transport with some fine link between servers
	for _, l := range links {
		r, ok := ratios[linkKey{l.Src, l.Dst, l.Transport}]
		ns, okS := nodeOf[l.Src]
		nd, okD := nodeOf[l.Dst]
		if !ok || !okS || !okD || ns == nd {
			continue
		}
		touching[nodeT{ns, l.Transport}] = append(touching[nodeT{ns, l.Transport}], r)
		touching[nodeT{nd, l.Transport}] = append(touching[nodeT{nd, l.Transport}], r)
		healthy[l.Transport] = healthy[l.Transport] || r >= th.SlowLinkFraction
	}
	// The servers every slow link of a transport touches, and the ranks.
	slowBy := map[string][]SlowLink{}
	for _, l := range slow {
		ns, okS := nodeOf[l.Src]
		nd, okD := nodeOf[l.Dst]
		if okS && okD && ns != nd {
			slowBy[l.Transport] = append(slowBy[l.Transport], l)
		}
	}
	common := map[nodeT]int{} // → the rank all of them share, or -1
	for transport, ls := range slowBy {
		if len(ls) < 2 {
			continue
		}
		nodes := map[int]int{}
		ranks := map[int]int{}
		for _, l := range ls {
			nodes[nodeOf[l.Src]]++
			nodes[nodeOf[l.Dst]]++
			ranks[l.Src]++
			ranks[l.Dst]++
		}
		var all []int
		for n, c := range nodes {
			if c == len(ls) {
				all = append(all, n)
			}
		}
		if len(all) != 1 {
			continue
		}
		rank := -1
		for r, c := range ranks {
			if c == len(ls) {
				rank = r
			}
		}
		common[nodeT{all[0], transport}] = rank
	}
	var out []SlowNode
	explained := map[linkKey]bool{}
	for k, rs := range touching {
		if !healthy[k.transport] || len(rs) < 2 {
			continue
		}
		sort.Float64s(rs)
		rank, shared := common[k]
		if !shared && rs[len(rs)-1] >= th.SlowLinkFraction { // some link of the node is fine
			continue
		}
		var mine []float64
		for _, l := range slowBy[k.transport] {
			if nodeOf[l.Src] == k.node || nodeOf[l.Dst] == k.node {
				explained[linkKey{l.Src, l.Dst, l.Transport}] = true
				mine = append(mine, l.BandwidthGBps/l.PeerMedianGBps)
			}
		}
		if len(mine) == 0 {
			continue
		}
		sort.Float64s(mine)
		frac := stats.LowerMedianSorted(mine)
		host := ""
		if k.node < len(hosts) {
			host = hosts[k.node]
		}
		what := fmt.Sprintf("all %d of its %s links to other servers are slow", len(rs), k.transport)
		if shared {
			what = fmt.Sprintf("every slow %s link (%d) has an end on it, while its other links and the %s links elsewhere are fine", k.transport, len(mine), k.transport)
			if rank >= 0 {
				what += fmt.Sprintf("; they all run to or from rank %d: its NIC", rank)
			}
		}
		out = append(out, SlowNode{Node: k.node, Host: host, Transport: k.transport, Fraction: frac,
			Evidence: fmt.Sprintf("node %d (%s) %s at %.0f%% of its peers' bandwidth: %s",
				k.node, host, k.transport, 100*frac, what)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fraction < out[j].Fraction })
	return out, explained
}

// nodesOf numbers the servers from the rank directories' host names
// ({host}_{pid}_{timestamp}_ascend_pt), in order of their lowest rank.
func nodesOf(c *profile.Cluster) (map[int]int, []string) {
	nodeOf := map[int]int{}
	var hosts []string
	index := map[string]int{}
	for _, r := range c.Ranks {
		host := hostOfDir(r.Dir)
		if host == "" {
			continue
		}
		i, ok := index[host]
		if !ok {
			i = len(hosts)
			index[host] = i
			hosts = append(hosts, host)
		}
		nodeOf[r.Rank] = i
	}
	return nodeOf, hosts
}

func hostOfDir(dir string) string {
	base := dir
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if !strings.HasSuffix(base, "_ascend_pt") && !strings.HasSuffix(base, "_ascend_ms") {
		return ""
	}
	parts := strings.Split(base, "_")
	if len(parts) < 5 { // host, pid, timestamp, ascend, pt
		return ""
	}
	return strings.Join(parts[:len(parts)-4], "_")
}
