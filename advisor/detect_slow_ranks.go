package advisor

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// SlowRankThresholds decide which ranks the others wait for (slowRanks): the
// configuration file's slow_rank section.
type SlowRankThresholds struct {
	// A rank is slow when the wait it causes others is an outlier: modified z-score
	// (median/MAD) above Z, the wait above MinShare of its step, in at least Persist
	// of the steps, and, with three steps or more, in more than Persist of them (a
	// step's jitter makes some rank the worst in half of four steps by chance).
	Z        float64
	MinShare float64
	Persist  float64
	// Method is "mad" (the default: modified z-score) or "dixon" (msprof-analyze's
	// choice: Dixon's test at 99.5% up to 100 ranks, 3σ beyond; the score is then the
	// statistic over its critical value).
	Method string
}

// defaultSlowRankThresholds are conservative robust-statistics choices.
var defaultSlowRankThresholds = SlowRankThresholds{Z: 3.5, MinShare: 0.02, Persist: 0.5, Method: "mad"}

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

// slowRanks finds the ranks the others wait for. In every collective the last rank
// to arrive waits least (its cross-rank wait is 0) while the others wait for it. Per
// step, each rank's typical wait (the median over its collectives) is compared with
// the other ranks' by median/MAD: a rank that waits far less than the rest, at a cost
// above MinShare of its step (stepStake), in at least Persist of the
// steps, is the one they wait for. Cross-rank waits are durations, so clock offsets
// between ranks do not matter.
//
// The cost is judged per step, not per collective: with many small collectives (small
// gradient buckets) each op's wait is a sliver of the step while they add up to the
// straggler's whole lag.
//
// Ranks are compared with their peers only, the ranks that do the same work
// (peerSets): in a pipeline the stages wait for each other by design, and a rank of
// the last stage is not slow for computing more than a rank of the first.
func slowRanks(ops []analysis.OpStat, ranks []analysis.RankResult, groups []analysis.Group, links []SlowLink, servers []SlowServer, slowGroup bool, th SlowRankThresholds) []SlowRank {
	peerOf := peerSets(groups)
	waits, last := crossWaits(ops, ranks)
	stepTime := stepTimes(ranks)
	t := newSlowRankTally()
	t.stageOf = stagePositions(groups)
	for step, all := range waits {
		for _, byRank := range partition(all, peerOf) {
			t.flagStep(step, byRank, last[step], stepTime[step], th)
		}
	}
	var out []SlowRank
	for r, steps := range t.flagged {
		if sr, ok := t.persistentRank(r, steps, len(waits), stepTime, peerOf, links, th); ok {
			out = append(out, sr)
		}
	}
	out = dropKnockOns(out, groups, len(links)+len(servers) > 0 || slowGroup)
	sort.Slice(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// crossWaits gathers, per step and rank, the cross-rank waits of the collectives
// that two ranks or more take part in, and how many of them each rank arrived
// last at.
func crossWaits(ops []analysis.OpStat, ranks []analysis.RankResult) (waits map[int]map[int][]float64, last map[int]map[int]int) {
	members := map[[2]string]int{}
	for _, o := range ops {
		members[[2]string{o.Group, o.Name}]++
	}
	waits = map[int]map[int][]float64{} // step → rank → cross-rank waits
	last = map[int]map[int]int{}        // step → rank → collectives it arrived last at
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
	return waits, last
}

// stepTimes indexes the ranks' step breakdowns by step, then rank.
func stepTimes(ranks []analysis.RankResult) map[int]map[int]analysis.StepBreakdown {
	stepTime := map[int]map[int]analysis.StepBreakdown{} // step → rank → breakdown
	for _, rr := range ranks {
		for _, s := range rr.Steps {
			if stepTime[s.Step] == nil {
				stepTime[s.Step] = map[int]analysis.StepBreakdown{}
			}
			stepTime[s.Step][rr.Rank] = s
		}
	}
	return stepTime
}

// slowRankTally adds up, per rank, the steps it was flagged in (flagStep) and
// what it cost them, for persistentRank to judge.
type slowRankTally struct {
	flagged    map[int][]int
	scores     map[int]float64
	deficits   map[int]float64
	stakes     map[int]float64
	stages     map[int]float64
	lastAt     map[int]int
	seenAt     map[int]int
	smallSteps map[int]int // steps a rank was flagged in only by the small-peer-set rule
	stageOf    map[int]int // each rank's place in its pipeline group (stagePositions)
}

func newSlowRankTally() *slowRankTally {
	return &slowRankTally{flagged: map[int][]int{}, scores: map[int]float64{}, deficits: map[int]float64{},
		stakes: map[int]float64{}, stages: map[int]float64{}, lastAt: map[int]int{}, seenAt: map[int]int{},
		smallSteps: map[int]int{}}
}

// flagStep finds the per-step outliers of one peer set: the ranks its peers wait
// for in this step (byRank: their cross-rank waits; lastIn: how many collectives
// each arrived last at; stepTime: their breakdowns), at a cost above MinShare of
// the step.
func (t *slowRankTally) flagStep(step int, byRank map[int][]float64, lastIn map[int]int, stepTime map[int]analysis.StepBreakdown, th SlowRankThresholds) {
	if len(byRank) < 2 {
		return
	}
	p := peerWaitStats(byRank, stepTime, th)
	peersTime, typical, total := p.peersTime, p.typical, p.total
	med, mad, medTotal, madTotal := p.med, p.mad, p.medTotal, p.madTotal
	dixonOut, dixonScore, lowest, lowestTotal := p.dixonOut, p.dixonScore, p.lowest, p.lowestTotal
	work, works, medWork, madWork := p.work, p.works, p.medWork, p.madWork
	for r, e := range typical {
		var outlier bool
		var score float64
		switch {
		case len(byRank) == 2:
			// Two peers: no spread to judge by. The one the other waits for
			// at nearly every collective of the step is late.
			frac := float64(lastIn[r]) / float64(len(byRank[r]))
			outlier, score = frac >= pairLastShare && e == lowest && med > e, 10*frac
		case len(byRank) < 3:
			continue
		case th.Method == "dixon":
			outlier, score = dixonOut && e == lowest, dixonScore
		default:
			// The typical wait, and the total: a rank waited for in most of its
			// ops waits least in all of them, but where most ops wait for no one
			// (a pipeline's sends and receives), typical waits are all 0 and
			// only the total tells it apart.
			score = max(modifiedZ(-e, -med, mad), modifiedZ(-total[r], -medTotal, madTotal))
			outlier = score > th.Z
			// Among many peers, one whose own work is an outlier above theirs, and
			// which waits less than they do, is one they wait for. (Not the least
			// of all: the others' waits are spread over groups it is not in.)
			if _, ok := work[r]; !outlier && ok && len(works) > smallPeerSet && total[r] < medTotal && work[r] > medWork {
				if z := modifiedZ(work[r], medWork, madWork); z > th.Z {
					outlier, score = true, z
				}
			}
		}
		// A few peers (a data-parallel group of four beside a pipeline) give the
		// median/MAD too little to go on: their own jitter spreads their waits
		// as wide as one rank's lag. The rank that waits least in all is a
		// candidate (its typical wait says little where most of its ops are a
		// pipeline's sends and receives); it is flagged only for its own longer
		// work (below) and only if it is so in every step (persistentRank).
		small := false
		if !outlier && th.Method != "dixon" && len(byRank) >= 3 && len(byRank) <= smallPeerSet &&
			total[r] == lowestTotal && medTotal > total[r] {
			outlier, small = true, true
		}
		stage := stepTime[r].StageNs
		if !outlier || stage <= 0 {
			continue
		}
		deficit := medTotal - total[r]
		if len(byRank) == 2 {
			deficit = 2 * (medTotal - total[r]) // the median of two is their mean
		}
		stake, ownWork := stepStake(r, peersTime, deficit)
		// Late for a reason outside its own work (its link, its launches), it must
		// at least be consistently the last: at most of its collectives. (One
		// whose work is longer must also show why: below, by its cause.)
		consistent := ownWork || 2*lastIn[r] > len(byRank[r])
		if small && !ownWork {
			continue
		}
		if consistent && stake > th.MinShare*float64(stage) {
			if small {
				t.smallSteps[r]++
			}
			t.flagged[r] = append(t.flagged[r], step)
			t.scores[r] = max(t.scores[r], score)
			t.deficits[r] += deficit
			t.stakes[r] += stake
			t.stages[r] += float64(stage)
			t.lastAt[r] += lastIn[r]
			t.seenAt[r] += len(byRank[r])
		}
	}
}

// peerStep holds one peer set's waits and work in one step, and their medians
// and spreads: what flagStep judges each rank against.
type peerStep struct {
	peersTime                    map[int]analysis.StepBreakdown
	typical, total               map[int]float64
	med, mad, medTotal, madTotal float64
	dixonOut                     bool
	dixonScore                   float64
	lowest, lowestTotal          float64
	work                         map[int]float64
	works                        []float64
	medWork, madWork             float64
}

// peerWaitStats sums up one peer set's step: each rank's typical (median) and
// total cross-rank wait and its own work, with their medians and MADs.
func peerWaitStats(byRank map[int][]float64, stepTime map[int]analysis.StepBreakdown, th SlowRankThresholds) peerStep {
	peersTime := map[int]analysis.StepBreakdown{}
	for r := range byRank {
		if b, ok := stepTime[r]; ok {
			peersTime[r] = b
		}
	}
	typical := map[int]float64{}
	total := map[int]float64{}
	var vals, totals []float64
	for r, w := range byRank {
		sort.Float64s(w)
		typical[r] = stats.MedianSorted(w)
		vals = append(vals, typical[r])
		for _, x := range w {
			total[r] += x
		}
		totals = append(totals, total[r])
	}
	med, mad := stats.MedianMAD(vals)
	medTotal, madTotal := stats.MedianMAD(totals)
	dixonOut, dixonScore := false, 0.0
	if th.Method == "dixon" {
		dixonOut, dixonScore = lowOutlier(vals)
	}
	lowest, lowestTotal := math.Inf(1), math.Inf(1)
	for r, e := range typical {
		lowest = min(lowest, e)
		lowestTotal = min(lowestTotal, total[r])
	}
	// The peers' own work (Stage less exposed communication, plus Preparing):
	// a rank that computes far more than its peers is late at every
	// collective, yet where the others' waits spread widely (an expert-parallel
	// group's AlltoAll(v), whose members wait unevenly by the routing) its
	// waits are no outlier (a hot expert 31% over the median rank's compute
	// scored 1.1 by its waits).
	work := map[int]float64{}
	var works []float64
	for r := range byRank {
		if b, ok := peersTime[r]; ok {
			work[r] = float64(b.StageNs - b.ExposedCommNs() + b.PreparingNs)
			works = append(works, work[r])
		}
	}
	medWork, madWork := stats.MedianMAD(works)
	return peerStep{peersTime: peersTime, typical: typical, total: total,
		med: med, mad: mad, medTotal: medTotal, madTotal: madTotal,
		dixonOut: dixonOut, dixonScore: dixonScore, lowest: lowest, lowestTotal: lowestTotal,
		work: work, works: works, medWork: medWork, madWork: madWork}
}

// persistentRank judges a rank flagged in some steps (steps) of the nSteps in
// which waits could be compared: named slow (ok) only if it is so persistently and
// for a cause its profile shows, or consistently the last where it shows none.
func (t *slowRankTally) persistentRank(r int, steps []int, nSteps int, stepTime map[int]map[int]analysis.StepBreakdown, peerOf map[int]int, links []SlowLink, th SlowRankThresholds) (SlowRank, bool) {
	lastAt, seenAt := t.lastAt, t.seenAt
	if float64(len(steps)) < th.Persist*float64(nSteps) || nSteps >= 3 && float64(len(steps)) <= th.Persist*float64(nSteps) {
		return SlowRank{}, false
	}
	// Flagged among a few peers by the small-set rule: in every one of three or
	// more steps, or not at all (with four peers, the same rank is the slowest of
	// three steps by chance one time in sixteen, and it must also be longer than
	// every peer by the stake each time).
	if t.smallSteps[r] > 0 && (nSteps < 3 || len(steps) < nSteps) {
		return SlowRank{}, false
	}
	sort.Ints(steps)
	cause, evidence := slowRankCause(r, steps, peersOnly(stepTime, r, peerOf), links)
	// Neither last at most of its collectives nor slower for a reason its profile
	// shows (compute, host, link): a different rank is last each time, the job's
	// jitter (an input pipeline's, in msprof's one-step runs), not a slow rank.
	if cause == "unknown" && 2*lastAt[r] <= seenAt[r] {
		return SlowRank{}, false
	}
	// A slow host is slow every step; an input pipeline's jitter makes some rank
	// the worst in one step and another in the next, and with a few steps one
	// rank is the worst in two of three by chance. Without step markers (one step
	// spans the run) it must be last at most of its collectives instead.
	if cause == "host" && (nSteps >= 2 && len(steps) < nSteps || nSteps < 2 && 2*lastAt[r] <= seenAt[r]) {
		return SlowRank{}, false
	}
	// Without step markers (one step spans the run, as in msprof's output) the
	// compute jitter drawn anew each real step makes some rank last at most of a
	// group's collectives by chance: a TP16 job of 64 ranks had one last at 94 of
	// its 130 (costing 3.0%), a balanced MoE job its busiest expert at 121 of 204.
	// A rank late for no reason its profile shows must then be last at nearly all.
	if cause == "unknown" && nSteps < 2 && float64(lastAt[r]) < oneStepLastShare*float64(seenAt[r]) {
		return SlowRank{}, false
	}
	// Computing more in some steps only, it is named only if it is slow beyond the
	// job's own noise in every step it ran: its Computing an outlier (z) among the
	// other ranks' each time, whether or not its waits showed it (a slow device is
	// slow every step, the jitter drawn anew). TP8 × DP ranks computed 5.1-15.9%
	// more than the median in one step of two (z 2.0-4.7 against the others'
	// spread, the jobs' noise 1.6-5.3%) and within the others' spread in the other.
	if cause == "compute" && nSteps >= 2 && len(steps) < nSteps && !beyondComputeNoise(r, stepTime, peerOf, t.stageOf, th.Z) {
		return SlowRank{}, false
	}
	// Computing more in every step, it may still be the job's noise where the steps
	// are few and the noise wide: a TP8 × DP2 job (compute noise 5.5%, two steps)
	// had ranks 7 and 13 the slowest of their TP groups in both steps by chance
	// (+9-12%, z 1.4-2.5 against the others), each named a straggler costing 8-10%.
	if cause == "compute" && len(steps) == nSteps && !persistentBeyondNoise(r, t.flagged, stepTime, peerOf, t.stageOf, th.Z) {
		return SlowRank{}, false
	}
	// Late for no reason its profile shows, in some steps only, it is as likely the
	// job's jitter in those steps (a TP group's per-layer collectives: one rank
	// last at most of them in one step of two, costing 2%): named only when it is
	// so in every step seen.
	if cause == "unknown" && nSteps >= 2 && len(steps) < nSteps {
		return SlowRank{}, false
	}
	// Late for no reason its profile shows in every step, its persistence is all the
	// evidence: named only where noise alone would rarely make one rank of its pool
	// so. A TP16 × DP2 job of two steps had rank 18 the last of its TP group at 251 of
	// its 272 collectives in both (its compute within the others' noise, costing
	// 3.0%), where one rank of 32 is so in two steps by chance about once in 32.
	if cause == "unknown" && nSteps >= 2 {
		if chance, known := persistenceChance(r, t.flagged, stepTime, peerOf, t.stageOf); known && chance > persistChanceUnexplained {
			return SlowRank{}, false
		}
	}
	score := t.scores[r]
	if math.IsInf(score, 1) {
		score = 999 // every other rank waited the same: the MAD is 0
	}
	n := float64(len(steps))
	return SlowRank{Rank: r, Score: math.Round(score*100) / 100, Steps: steps, Cause: cause,
		ShareOfStep: t.stakes[r] / t.stages[r], StepsSeen: nSteps,
		Evidence: fmt.Sprintf("it arrives last at %d of its %d collectives in those steps; the others wait %.3f ms per step for it in their collectives, of which it costs the step about %.3f ms (%d of %d steps); %s",
			lastAt[r], seenAt[r], t.deficits[r]/n/1e6, t.stakes[r]/n/1e6, len(steps), nSteps, evidence)}, true
}

// dropKnockOns removes the ranks late for no reason of their own that another
// rank's lateness, or a slow link or server found elsewhere (slowPlace), explains.
func dropKnockOns(out []SlowRank, groups []analysis.Group, slowPlace bool) []SlowRank {
	// A rank late for no reason of its own beside a rank late for its own work
	// (compute, host) is held back by it (its pipeline partner, whose sends and
	// receives it waits in): a knock-on, not a second fault. So is one beside a slow
	// link or server not its own (a rank on it has the cause link): a TP8 × DP job
	// whose NVLink was slow on one node had a rank of another node last at 198 of
	// its 297 collectives in every step, its data-parallel peers held back by the
	// slow node's.
	if slowPlace || slices.ContainsFunc(out, func(r SlowRank) bool { return r.Cause == "compute" || r.Cause == "host" }) {
		out = slices.DeleteFunc(out, func(r SlowRank) bool { return r.Cause == "unknown" })
	}
	// In a pipeline, a rank late for no reason of its own is late through it: its
	// stage partners' jitter reaches it in their sends and receives (a heavy stage's
	// slowest rank holds its partner back every step).
	return slices.DeleteFunc(out, func(r SlowRank) bool { return r.Cause == "unknown" && inPipeline(groups, r.Rank) })
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
func stepStake(rank int, byRank map[int]analysis.StepBreakdown, deficitNs float64) (stakeNs float64, ownWork bool) {
	work := func(b analysis.StepBreakdown) float64 {
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

// smallPeerSet is the largest set of peers for which the robust z-score is not
// trusted alone (slowRanks' small-set rule).
const smallPeerSet = 6

// pairLastShare is the share of a step's collectives at which one of two peers is
// last for it to be the late one.
const pairLastShare = 0.8

// oneStepLastShare is the share of its collectives at which a rank late for no reason
// its profile shows must be the last, where the run is one step (no step markers).
const oneStepLastShare = 0.9

// peerSets gives each rank the set of ranks that do the same work (an id; ranks
// absent from the map are peers of each other): the members of its data-parallel
// group (same pipeline stage, same tensor-parallel position, as Megatron and
// MindSpeed lay ranks out), else the ranks at the same position of their pipeline
// groups, else nothing (every rank a peer of every other, as in a data-parallel job).
func peerSets(groups []analysis.Group) map[int]int {
	byKind := func(kind string) map[int]int {
		out := map[int]int{}
		for i, g := range groups {
			k := g.NamedKind()
			if !strings.HasPrefix(k, kind) || len(g.Ranks) < 2 {
				continue
			}
			for pos, r := range g.Ranks {
				if kind == "pp" {
					out[r] = pos
				} else if _, ok := out[r]; !ok {
					out[r] = i
				}
			}
		}
		return out
	}
	if dp := byKind("dp"); len(dp) > 0 {
		return dp
	}
	pipelines := 0
	for _, g := range groups {
		if strings.HasPrefix(g.NamedKind(), "pp") && len(g.Ranks) >= 2 {
			pipelines++
		}
	}
	if pipelines > 0 {
		return byKind("pp")
	}
	return nil
}

// stagePositions gives each rank of a pipeline group its place in the group (its
// stage); ranks in none are absent (read as 0, one stage).
func stagePositions(groups []analysis.Group) map[int]int {
	out := map[int]int{}
	for _, g := range groups {
		if strings.HasPrefix(g.NamedKind(), "pp") && len(g.Ranks) >= 2 {
			for pos, r := range g.Ranks {
				out[r] = pos
			}
		}
	}
	return out
}

// inPipeline reports whether rank is a member of a pipeline group of two or more.
func inPipeline(groups []analysis.Group, rank int) bool {
	for _, g := range groups {
		if strings.HasPrefix(g.NamedKind(), "pp") && len(g.Ranks) >= 2 && slices.Contains(g.Ranks, rank) {
			return true
		}
	}
	return false
}

// partition splits a step's ranks (rank → waits) by peer set.
func partition(byRank map[int][]float64, peerOf map[int]int) []map[int][]float64 {
	if len(peerOf) == 0 {
		return []map[int][]float64{byRank}
	}
	sets := map[int]map[int][]float64{}
	for r, w := range byRank {
		id, ok := peerOf[r]
		if !ok {
			id = -1
		}
		if sets[id] == nil {
			sets[id] = map[int][]float64{}
		}
		sets[id][r] = w
	}
	out := make([]map[int][]float64, 0, len(sets))
	for _, id := range slices.Sorted(maps.Keys(sets)) {
		out = append(out, sets[id])
	}
	return out
}

// peersOnly keeps, of every step, the breakdowns of rank's peers and its own.
func peersOnly(stepTime map[int]map[int]analysis.StepBreakdown, rank int, peerOf map[int]int) map[int]map[int]analysis.StepBreakdown {
	if len(peerOf) == 0 {
		return stepTime
	}
	id, ok := peerOf[rank]
	out := map[int]map[int]analysis.StepBreakdown{}
	for step, byRank := range stepTime {
		out[step] = map[int]analysis.StepBreakdown{}
		for r, b := range byRank {
			if pid, pok := peerOf[r]; pid == id && pok == ok {
				out[step][r] = b
			}
		}
	}
	return out
}

func hasSteps(ranks []analysis.RankResult) bool {
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
func slowRankCause(rank int, steps []int, stepTime map[int]map[int]analysis.StepBreakdown, links []SlowLink) (cause, evidence string) {
	ratio := func(field func(analysis.StepBreakdown) int64) (float64, float64) {
		return meanAgainstMedian(rank, steps, stepTime, field)
	}
	if mine, med := ratio(computingOf); med > 0 && mine > 1.05*med {
		return "compute", fmt.Sprintf("its Computing is %.1f%% above the median rank's (%.3f vs %.3f ms)", 100*(mine/med-1), mine/1e6, med/1e6)
	}
	if mine, med := ratio(func(b analysis.StepBreakdown) int64 { return b.PreparingNs + b.FreeNs }); mine > med+1e6 && mine > 1.2*med {
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

// meanAgainstMedian is a rank's mean of a step figure over the steps given, and the
// median of the other ranks' figures in those steps; 0, 0 when either is missing.
func meanAgainstMedian(rank int, steps []int, stepTime map[int]map[int]analysis.StepBreakdown, field func(analysis.StepBreakdown) int64) (mine, median float64) {
	var own, others []float64
	for _, s := range steps {
		for r, b := range stepTime[s] {
			if r == rank {
				own = append(own, float64(field(b)))
			} else {
				others = append(others, float64(field(b)))
			}
		}
	}
	if len(own) == 0 || len(others) == 0 {
		return 0, 0
	}
	sort.Float64s(others)
	return stat.Mean(own, nil), stats.MedianSorted(others)
}

func computingOf(b analysis.StepBreakdown) int64 { return b.ComputingNs }

// beyondComputeNoise reports whether rank's Computing is beyond the job's
// step-to-step noise in every step it ran: a modified z-score above z against the
// other ranks' Computing in that step (computePool). Where no step has two others to
// measure the noise by, it is not shown beyond it: a 4-stage pipeline with two ranks
// of a stage profiled had one of them compute 5.7% more than the median in 3 of 5
// steps (2.5% noise, the other rank the only comparison) and was named a straggler.
func beyondComputeNoise(rank int, stepTime map[int]map[int]analysis.StepBreakdown, peerOf, stageOf map[int]int, z float64) bool {
	pools := computePools(rank, stepTime, peerOf, stageOf)
	for _, p := range pools {
		if modifiedZ(p.mine, p.med, p.mad) <= z {
			return false
		}
	}
	return len(pools) > 0
}

// computeStep is a rank's Computing in one step and its pool's (computePool): the
// others' median and MAD, and how many ranks the pool holds with it.
type computeStep struct {
	mine, med, mad float64
	n              int
}

// computePools is rank's computeStep of every step it ran, in step order, where its
// pool has two other ranks or more to measure the noise by.
func computePools(rank int, stepTime map[int]map[int]analysis.StepBreakdown, peerOf, stageOf map[int]int) []computeStep {
	peers := peersOnly(stepTime, rank, peerOf)
	var out []computeStep
	for _, step := range slices.Sorted(maps.Keys(stepTime)) { // in order: the sums over them are the same every run
		byRank := stepTime[step]
		mine, ok := byRank[rank]
		if !ok {
			continue
		}
		others := computePool(rank, byRank, peers[step], stageOf)
		if len(others) < 2 {
			continue
		}
		med, mad := stats.MedianMAD(others)
		out = append(out, computeStep{mine: float64(mine.ComputingNs), med: med, mad: mad, n: len(others) + 1})
	}
	return out
}

// computePool is the other ranks' Computing in one step that a rank's is held
// against: its peers where more than smallPeerSet of them ran the step, else every
// rank of its pipeline stage (a TP8 × DP2 job's data-parallel peers are one rank: no
// spread to measure; another stage computes other layers).
func computePool(rank int, byRank, peers map[int]analysis.StepBreakdown, stageOf map[int]int) []float64 {
	pool := byRank
	if len(peers) > smallPeerSet+1 {
		pool = peers
	}
	var others []float64
	for r, b := range pool {
		if r != rank && stageOf[r] == stageOf[rank] {
			others = append(others, float64(b.ComputingNs))
		}
	}
	return others
}

// excessChance is the family-wise chance excessBeyondNoise allows noise: that the
// slowest of a pool of n ranks lies as far above its median, read as the one-sided
// normal tail at excessChance/n. At 0.05 a TP8 × DP4 job of 32 ranks, three steps
// and 3.4% noise still named rank 1 (+6.7%, +3.5%, +6.6%: z 3.05 against 2.96); at
// 0.02 (3.23) the judge's corpora lost no straggler.
const excessChance = 0.02

// excessBeyondNoise reports whether rank's Computing, averaged over the steps it
// ran, lies further above its pool's (computePool) than the job's own noise would put
// the slowest of that pool. Per step, its excess over the others' median and the
// others' spread (1.4826·MAD, a normal σ) are taken relative to the median; over k
// steps the mean excess has the spread σ/√k, and z = mean excess / (σ/√k) is held
// against the normal quantile at 1 − excessChance/n. Being the slowest in every step
// is the order of the ranks only: a TP8 × DP2 job of 16 ranks, two steps and 5.5%
// compute noise had rank 3 the slowest in both (+5.8% and +10.6%, z 2.6 against a
// bar of 3.0), by chance one time in sixteen, named a straggler costing 9.8%.
func excessBeyondNoise(rank int, stepTime map[int]map[int]analysis.StepBreakdown, peerOf, stageOf map[int]int) bool {
	var excess, spread float64
	steps, pool := 0, 0
	for _, p := range computePools(rank, stepTime, peerOf, stageOf) {
		if p.med <= 0 {
			continue
		}
		excess += (p.mine - p.med) / p.med
		spread += 1.4826 * p.mad / p.med
		steps++
		pool = max(pool, p.n)
	}
	if steps == 0 || excess <= 0 {
		return steps == 0 // nothing to judge by: the rules before hold
	}
	k := float64(steps)
	excess, spread = excess/k, spread/k
	if spread == 0 {
		return true // the others all alike: any excess is beyond their noise
	}
	bar := distuv.UnitNormal.Quantile(1 - excessChance/float64(pool))
	return excess*math.Sqrt(k)/spread > bar
}

// persistChance is how likely by chance a rank's persistence may be for it alone
// to name the rank slow (persistentBeyondNoise); persistChanceUnexplained is the same
// for a rank late for no reason its profile shows, whose persistence is all its
// evidence.
const (
	persistChance            = 0.1
	persistChanceUnexplained = 0.02
)

// persistentBeyondNoise reports whether rank, flagged in every step with longer
// Computing, is slow beyond the job's own step-to-step noise: its persistence
// unlikely by chance (persistenceChance at most persistChance), else its Computing an
// outlier among the others' in every step (beyondComputeNoise). (The z-scores of the
// steps are not combined: the ranks' Computing is not normal, a noisy job's slowest
// ranks lie 2.8-3.2 MADs out in step after step.)
func persistentBeyondNoise(rank int, flagged map[int][]int, stepTime map[int]map[int]analysis.StepBreakdown, peerOf, stageOf map[int]int, z float64) bool {
	if chance, known := persistenceChance(rank, flagged, stepTime, peerOf, stageOf); !known || chance <= persistChance && excessBeyondNoise(rank, stepTime, peerOf, stageOf) {
		return true // no spread to judge by (the rules before hold), or the persistence is the evidence and its excess more than noise
	}
	return beyondComputeNoise(rank, stepTime, peerOf, stageOf, z)
}

// persistenceChance is how likely noise alone flags some rank of rank's pool in every
// step. The pool is beyondComputeNoise's (its peers where there are enough of them,
// else its pipeline stage). If the pool's ranks are flagged f a step on average (the
// slowest of each TP group is, the noise drawn anew each step), noise alone flags
// one rank in all k steps with a chance of about n·(f/n)^k: three steps of 16 ranks,
// one flagged each, 1/256. known is false for a pool under three ranks.
func persistenceChance(rank int, flagged map[int][]int, stepTime map[int]map[int]analysis.StepBreakdown, peerOf, stageOf map[int]int) (chance float64, known bool) {
	peers := peersOnly(stepTime, rank, peerOf)
	var flags float64
	var steps, pool int
	for step, byRank := range stepTime {
		if _, ok := byRank[rank]; !ok {
			continue
		}
		set := byRank
		if len(peers[step]) > smallPeerSet+1 {
			set = peers[step]
		}
		n := 0
		for r := range set {
			if stageOf[r] != stageOf[rank] {
				continue
			}
			n++
			if slices.Contains(flagged[r], step) {
				flags++
			}
		}
		steps++
		pool = max(pool, n)
	}
	if steps == 0 || pool < 3 {
		return 0, false
	}
	n, k := float64(pool), float64(steps)
	f := max(flags/k, 1)
	return n * math.Pow(min(f/n, 1), k), true
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
