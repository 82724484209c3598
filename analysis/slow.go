package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

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
	opsIn := map[int]int{}               // step → collectives (op, rank) compared
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
		opsIn[o.Step]++
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
			typical[r] = stat.Quantile(0.5, stat.Empirical, w, nil)
			vals = append(vals, typical[r])
			for _, x := range w {
				total[r] += x
			}
			totals = append(totals, total[r])
		}
		med, mad := medianMAD(vals)
		medTotal, _ := medianMAD(totals)
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
			stake := stepStake(r, stepTime[step], deficit)
			if stake > th.SlowRankMinShare*float64(stage) {
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
// total wait for it in their collectives (deficitNs), under the same cap.
func stepStake(rank int, byRank map[int]StepBreakdown, deficitNs float64) float64 {
	work := func(b StepBreakdown) float64 {
		return float64(b.StageNs - b.ExposedCommNs() + b.PreparingNs)
	}
	mine, ok := byRank[rank]
	if !ok {
		return 0
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
		return 0
	}
	medExposed, _ := medianMAD(othersExposed)
	capNs := medExposed - float64(mine.ExposedCommNs())
	est := work(mine) - nextSlowest
	if est <= 0 {
		est = deficitNs
	}
	return max(0, min(est, capNs))
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
		m := stat.Quantile(0.5, stat.Empirical, others, nil)
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

func medianMAD(vals []float64) (median, mad float64) {
	if len(vals) == 0 {
		return 0, 0
	}
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	median = stat.Quantile(0.5, stat.Empirical, s, nil)
	dev := make([]float64, len(s))
	for i, v := range s {
		dev[i] = math.Abs(v - median)
	}
	sort.Float64s(dev)
	return median, stat.Quantile(0.5, stat.Empirical, dev, nil)
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

// peerSamples holds each transfer's bandwidth beside its peers': the transfers of the
// same op (group and name) over the same transport with the same size, which cross
// the same kind of link at the same time, so that latency and message size cancel out.
type peerSamples map[peerKey][]peerSample

type peerKey struct {
	group, op, transport string
	bytes                int64
}

type peerSample struct {
	link  linkKey
	bytes int64 // what the op moved over the link at this size (its weight)
	gbps  float64
}

func (p peerSamples) addTransfer(t transfer) {
	p[t.peer] = append(p[t.peer], peerSample{t.link, t.bytes, gbps(t.bytes, t.timeNs)})
}

// linkRatios returns, per link, how fast its transfers ran against their peers': the
// mean of bandwidth / peers' reference over its transfers, weighted by bytes, so that
// latency-bound small transfers (which barely show a slow link) weigh little. The
// reference is the peers' upper quartile, not their median, because one slow server
// can touch half the transfers of a phase (a 4-server NHR pairs every server with it
// once), and the median would then sit between the slow and the healthy links. Only
// groups of 3 or more transfers count.
func (p peerSamples) linkRatios() map[linkKey]float64 {
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
		bws := make([]float64, len(samples))
		for i, s := range samples {
			bws[i] = s.gbps
		}
		sort.Float64s(bws)
		ref := stat.Quantile(0.75, stat.Empirical, bws, nil)
		if ref <= 0 {
			continue
		}
		for _, s := range samples {
			weighted[s.link] += float64(s.bytes) * s.gbps / ref
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
			Evidence: fmt.Sprintf("%d→%d %s runs at %.0f%% of the same ops' other %s transfers (%.2f GB/s over %d transfers)",
				l.Src, l.Dst, l.Transport, 100*r, l.Transport, bw, l.Transfers)})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].BandwidthGBps/out[i].PeerMedianGBps < out[j].BandwidthGBps/out[j].PeerMedianGBps
	})
	return out
}

// SlowNode is a server whose links of one transport are all slow: its NIC (RDMA) or
// its fabric, rather than one cable.
type SlowNode struct {
	Node      int
	Host      string
	Transport string
	Fraction  float64 // the median peer ratio of the node's links
	Evidence  string
}

// slowNodes rolls slow links up to servers: a server all of whose links of a
// transport to other servers run slow has a slow NIC (or fabric), not a bad cable.
func slowNodes(links []Link, ratios map[linkKey]float64, nodeOf map[int]int, hosts []string, th Thresholds) []SlowNode {
	type nodeT struct {
		node      int
		transport string
	}
	touching := map[nodeT][]float64{}
	for _, l := range links {
		r, ok := ratios[linkKey{l.Src, l.Dst, l.Transport}]
		ns, okS := nodeOf[l.Src]
		nd, okD := nodeOf[l.Dst]
		if !ok || !okS || !okD || ns == nd {
			continue
		}
		touching[nodeT{ns, l.Transport}] = append(touching[nodeT{ns, l.Transport}], r)
		touching[nodeT{nd, l.Transport}] = append(touching[nodeT{nd, l.Transport}], r)
	}
	var out []SlowNode
	for k, rs := range touching {
		if len(rs) < 2 {
			continue
		}
		sort.Float64s(rs)
		if rs[len(rs)-1] >= th.SlowLinkFraction { // some link of the node is fine
			continue
		}
		frac := stat.Quantile(0.5, stat.Empirical, rs, nil)
		host := ""
		if k.node < len(hosts) {
			host = hosts[k.node]
		}
		out = append(out, SlowNode{Node: k.node, Host: host, Transport: k.transport, Fraction: frac,
			Evidence: fmt.Sprintf("node %d (%s) %s at %.0f%% of its peers: all %d of its %s links to other servers are slow",
				k.node, host, k.transport, 100*frac, len(rs), k.transport)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fraction < out[j].Fraction })
	return out
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
