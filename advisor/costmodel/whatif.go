package costmodel

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// Bucketing is the run's data-parallel gradient synchronisation as the what-if sees
// it (docs/costmodel.md §6.1): per step, k AllReduce buckets of the gradient of G bytes on
// one stream, each taking t(b) = rounds(b)·α + b·β, ready evenly over an overlap
// window T at the end of the backward pass and run one after another as a queue.
// α and β are fitted on the run's own AllReduces (the fastest rank's elapse: the op's
// time without the wait for others); T is solved from the measured exposed
// communication of the group.
type Bucketing struct {
	Group                 string
	Buckets               []int64 // the sizes of one step, in launch order
	GradientBytes         int64
	ElementBytes          int // of the gradients' data type (0 when the profile does not say)
	AlphaUs, BetaUsPerB   float64
	AlphaSEUs, BetaSEUsPB float64
	// FitMinBytes and FitMaxBytes are the range of per-round sizes the line was
	// fitted on: a plan far outside it is an extrapolation.
	FitMinBytes, FitMaxBytes int64
	BufferBytes              int64
	WindowUs                 float64 // T
	WindowBound              bool    // T is only a lower bound (the run is compute-bound)
	// SpreadUs and SpreadLastUs are how much later than the mean rank the last rank
	// reaches the first and the last bucket: a bucket can only start when every rank
	// has it, and the ranks drift apart over the backward pass. The first is the
	// first bucket's mean cross-rank wait; the last is solved from the exposure when
	// the window can be read from the launches, else it is the ranks' drift in
	// computation (the slowest rank's compute before the optimizer over the mean).
	// Buckets in between are interpolated. SpreadKnown is false when no first bucket
	// was run by another profiled rank: SpreadUs is then taken as 0, and a note says so.
	SpreadUs, SpreadLastUs float64
	SpreadKnown            bool
	// StepUs and ExposedUs are measured: the mean Stage and exposed communication
	// (analysis.StepBreakdown.ExposedCommNs: without the receive time counted as
	// Bubble, outside Stage). GroupExposedUs is the group's own part of ExposedUs;
	// the rest, other groups' exposed communication, is left as it is, but for the
	// part PerMicroShare says runs once per micro-batch (tensor, sequence, context,
	// expert and pipeline parallel traffic), which more micro-batches repeat.
	StepUs, ExposedUs, GroupExposedUs float64
	PerMicroShare                     float64
	// TailUs is the computation after the last collective (the optimizer): gradient
	// accumulation does not repeat it.
	TailUs float64
	// BackwardShare is the share of a micro-batch's computation that is the backward
	// pass (2/3 by default: backward costs about twice forward); the overlap what-if
	// needs the backward pass's length, which the profile does not mark.
	BackwardShare float64
	Accumulation  int
	// AccumulationSpan is the range the run's micro-batches per step may lie in when
	// the profile does not settle it ([0, 0]: known): each prediction's interval is
	// widened to hold the predictions at both ends.
	AccumulationSpan [2]int
	// bench is the cluster's own AllReduce sweep on the group's rank count
	// (UseCalibration); nil: the fitted line prices every size.
	bench *BenchFamily
	// Storm is the group's small collectives that are not gradient buckets (nil:
	// none); they are left out of Buckets and their exposure out of GroupExposedUs.
	Storm *SmallCollectives
	// measuredWindowUs is the window read from the launches (0: not seen).
	measuredWindowUs float64
	// Topology prices the structural what-ifs (algorithm, data-parallel size).
	Topology Topology
	// HCCLAlgoForced is set when HCCL_ALGO names the AllReduce's level 1 (the caller
	// reads the environment): HCCL's selector then does not run. Deterministic is
	// HCCL_DETERMINISTIC on (no pipeline in the advice, deterministic thresholds).
	HCCLAlgoForced, Deterministic bool
	// OpErrorP90 is the 90th percentile of the fitted line's relative error on the
	// run's own AllReduces (per round); StepNoiseUs the standard error of the
	// measured mean step (the spread of the steps' means over √steps). Both widen
	// the predictions' intervals.
	OpErrorP90, StepNoiseUs float64
	// fitSizes and fitMeanUs are the distinct per-round sizes fitted and their mean
	// measured time, for the structural model's back-test.
	fitSizes   []int64
	fitMeanUs  []float64
	structErr  *float64
	Confidence string
	Notes      []string
}

// Prediction is a what-if's outcome.
type Prediction struct {
	Knob, Value string
	StepTimeUs  float64
	CommShare   float64
	Low, High   float64 // the step time's interval from the fit's uncertainty
	// Span says StepTimeUs is a pipeline's span, its Stage and its Bubble (the time
	// its ranks wait in receives), not the Stage alone: a pipeline cure's step.
	Span        bool
	ExposedUs   float64
	Assumptions []string
	Confidence  string
}

// FitBucketing reads the run's DP AllReduces: a group the metadata calls dp, else
// the group with the most AllReduce bytes, is taken as the gradient
// synchronisation. accumulation is the run's micro-batches per step (1 when
// unknown); bufferBytes its HCCL_BUFFSIZE.
func FitBucketing(res *analysis.Result, accumulation int, bufferBytes int64) (*Bucketing, error) {
	return fitBucketing(res, accumulation, bufferBytes, func() clusterShape {
		return newClusterShape(res, Calibrate(res.Communication.TransferSamples))
	})
}

// fitBucketing is FitBucketing on the cluster's shape, which shape gives when the
// fit needs it.
func fitBucketing(res *analysis.Result, accumulation int, bufferBytes int64, shape func() clusterShape) (*Bucketing, error) {
	bucketings.Add(1)
	bytesBy, steps := allReducesByGroupStep(res)
	group, err := gradientGroup(res, bytesBy)
	if err != nil {
		return nil, err
	}
	bk := &Bucketing{Group: group, Accumulation: max(accumulation, 1), BufferBytes: bufferBytes, BackwardShare: 2.0 / 3}
	// The group's steps in order, so that every sum below runs in one order and the
	// output does not change from run to run.
	var groupSteps []int
	for k := range steps {
		if k.group == group {
			groupSteps = append(groupSteps, k.step)
		}
	}
	sort.Ints(groupSteps)
	storm := bk.readBuckets(steps[groupStep{group, groupSteps[0]}])
	pts := collectFitPoints(res, steps, group, groupSteps, bufferBytes)
	bk.measuredWindowUs = measuredWindow(steps, group, groupSteps, storm)
	bk.Topology = shape().topology(res, group, pts.groupOps)
	thin, err := bk.fitRoundLine(pts)
	if err != nil {
		return nil, err
	}
	if pts.spreadN > 0 {
		bk.SpreadUs, bk.SpreadKnown = pts.spread/pts.spreadN, true
	} else {
		bk.Notes = append(bk.Notes, "the what-if takes the ranks' drift before the first gradient bucket as 0: no other profiled rank ran it, so the drift is not measured")
	}
	if err := bk.measureStep(res); err != nil {
		return nil, err
	}
	if bk.Storm != nil {
		stepOps := make([][]*analysis.OpStat, 0, len(groupSteps))
		for _, step := range groupSteps {
			stepOps = append(stepOps, steps[groupStep{group, step}])
		}
		bk.measureStorm(stepOps, storm)
	}
	bk.solveWindow()
	bk.Confidence = "medium"
	if thin {
		bk.Confidence = "low"
	}
	if len(res.Communication.Pipelines) > 0 {
		bk.Confidence = "low"
		bk.Notes = append(bk.Notes, "the run is pipeline-parallel: its gradient synchronisation follows the pipeline schedule, which the bucket model does not represent; predictions are hypotheses")
	}
	return bk, nil
}

// groupStep keys a group's AllReduces of one step.
type groupStep struct {
	group string
	step  int
}

// allReducesByGroupStep collects the AllReduces with a known size in marked steps:
// their bytes per group, and the ops per group and step.
func allReducesByGroupStep(res *analysis.Result) (map[string]int64, map[groupStep][]*analysis.OpStat) {
	bytesBy := map[string]int64{}
	steps := map[groupStep][]*analysis.OpStat{} // pointers: copies were the advice's largest allocation
	for i := range res.Communication.Ops {
		o := &res.Communication.Ops[i]
		if o.Type != "allreduce" || o.Bytes <= 0 || o.Step < 0 {
			continue
		}
		bytesBy[o.Group] += o.Bytes
		steps[groupStep{o.Group, o.Step}] = append(steps[groupStep{o.Group, o.Step}], o)
	}
	return bytesBy, steps
}

// gradientGroup picks the gradient synchronisation's group: the data-parallel group
// when the metadata names one (a TP group can move more AllReduce bytes), else the
// group with the most AllReduce bytes. With none, the error says why.
func gradientGroup(res *analysis.Result, bytesBy map[string]int64) (string, error) {
	isDP := map[string]bool{}
	for _, g := range res.Communication.Groups {
		isDP[g.Key] = g.NamedKind() == analysis.KindDP
	}
	group := ""
	better := func(g string) bool {
		if group == "" || isDP[g] != isDP[group] {
			return group == "" || isDP[g]
		}
		return bytesBy[g] > bytesBy[group] || (bytesBy[g] == bytesBy[group] && g < group)
	}
	for g := range bytesBy {
		if better(g) {
			group = g
		}
	}
	if group == "" {
		for _, o := range res.Communication.Ops {
			if o.Type == "reducescatter" {
				return "", fmt.Errorf("the gradients are synchronised by ReduceScatter and AllGather (ZeRO or a distributed optimizer), which the what-if does not model: it models AllReduce buckets")
			}
		}
		return "", fmt.Errorf("no AllReduce with a known size in marked steps: nothing to model")
	}
	return group, nil
}

// readBuckets reads one rank's buckets of one step, in launch order (every rank has
// the same), from the ops of the group's first step: the storm of small AllReduces
// apart (bk.Storm, and the storm's sizes returned), the buckets and the gradient bytes.
func (bk *Bucketing) readBuckets(firstStepOps []*analysis.OpStat) map[int64]bool {
	rank0 := firstStepOps[0].Rank
	var rank0Ops []*analysis.OpStat
	for _, o := range firstStepOps {
		if o.Rank == rank0 {
			rank0Ops = append(rank0Ops, o)
		}
	}
	storm := stormSizes(rank0Ops)
	if storm != nil {
		bk.Storm = &SmallCollectives{Type: "allreduce", AfterBuckets: true}
		lastBucket := int64(math.MinInt64)
		for _, o := range rank0Ops {
			if !storm[o.Bytes] {
				lastBucket = max(lastBucket, o.StartNs)
			}
		}
		for _, o := range rank0Ops {
			if !storm[o.Bytes] {
				continue
			}
			if bk.Storm.PerStep == 0 {
				bk.Storm.FirstName = o.Name
			}
			bk.Storm.LastName = o.Name
			bk.Storm.PerStep++
			bk.Storm.BytesPerStep += o.Bytes
			bk.Storm.AfterBuckets = bk.Storm.AfterBuckets && o.StartNs > lastBucket
		}
	}
	for _, o := range rank0Ops {
		if !storm[o.Bytes] {
			bk.Buckets = append(bk.Buckets, o.Bytes)
			bk.GradientBytes += o.Bytes
			if n := profile.DataTypeSize(o.DataType); n > 0 {
				bk.ElementBytes = n
			}
		}
	}
	return storm
}

// linePoints are the line's points (per round: bytes, µs; the op's rounds; each
// point's alg_type), the summed first-bucket waits and the group's ops.
type linePoints struct {
	xs, ys, rs      []float64
	algs            []string
	spread, spreadN float64
	groupOps        []*analysis.OpStat
}

// collectFitPoints reads the fit's points: per op instance, the fastest rank's
// elapse against its bytes. The spread: the mean cross-rank wait of each step's
// first bucket.
func collectFitPoints(res *analysis.Result, steps map[groupStep][]*analysis.OpStat, group string, groupSteps []int, bufferBytes int64) linePoints {
	groupRanks := 0 // the group's ranks, for the pipeline executor's rounds
	for _, g := range res.Communication.Groups {
		if g.Key == group {
			groupRanks = len(g.Ranks)
		}
	}
	var p linePoints
	for _, step := range groupSteps {
		ops := steps[groupStep{group, step}]
		p.groupOps = append(p.groupOps, ops...)
		firstStart := map[int]int64{}
		for _, o := range ops {
			if s, ok := firstStart[o.Rank]; !ok || o.StartNs < s {
				firstStart[o.Rank] = o.StartNs
			}
		}
		for _, o := range ops {
			if o.CrossWaitNs == 0 {
				round, known := analysis.BufferRoundBytes(o.Type, o.AlgType, bufferBytes, groupRanks)
				if !known {
					round = bufferBytes
				}
				rounds := float64(Rounds(o.Bytes, round))
				p.xs = append(p.xs, float64(o.Bytes)/rounds) // per round
				p.ys = append(p.ys, float64(o.ElapseNs)/1e3/rounds)
				p.rs = append(p.rs, rounds)
				p.algs = append(p.algs, o.AlgType)
			}
			if o.StartNs == firstStart[o.Rank] && o.CrossWaitKnown {
				p.spread += float64(o.CrossWaitNs) / 1e3
				p.spreadN++
			}
		}
	}
	return p
}

// measuredWindow reads the window where the timeline shows it: on the rank that
// launched a step's last bucket last, when that bucket did not queue behind the one
// before, the buckets' launches span (k−1)/k of the window. The mean over steps, 0
// when no step shows it.
func measuredWindow(steps map[groupStep][]*analysis.OpStat, group string, groupSteps []int, storm map[int64]bool) float64 {
	var windows []float64
	for _, step := range groupSteps {
		byRank := map[int][]*analysis.OpStat{}
		for _, o := range steps[groupStep{group, step}] {
			if !storm[o.Bytes] { // the buckets' launches set the window
				byRank[o.Rank] = append(byRank[o.Rank], o)
			}
		}
		for _, rank := range slices.Sorted(maps.Keys(byRank)) {
			mine := byRank[rank]
			sort.Slice(mine, func(i, j int) bool { return mine[i].StartNs < mine[j].StartNs })
			nb := len(mine)
			if nb < 2 || mine[nb-1].CrossWaitNs != 0 {
				continue
			}
			prevEnd := mine[nb-2].StartNs + mine[nb-2].ElapseNs
			if mine[nb-1].StartNs-prevEnd > 1000 { // not queued: launched when ready
				span := float64(mine[nb-1].StartNs-mine[0].StartNs) / 1e3
				windows = append(windows, span*float64(nb)/float64(nb-1))
			}
			break
		}
	}
	if len(windows) > 0 {
		return sumOf(windows) / float64(len(windows))
	}
	return 0
}

// fitRoundLine fits the per-round line α + n·β to the points (bk.Topology set) and
// its error per op and per size. thin says the fit rests on too few points or sizes
// for more than low confidence.
func (bk *Bucketing) fitRoundLine(p linePoints) (thin bool, err error) {
	xs, ys, rs := bk.oneAlgorithm(p.xs, p.ys, p.rs, p.algs)
	// The line is fitted per round without the handshakes that open the rounds after
	// the first, which bucketTimes adds back for the new round counts.
	for i, r := range rs {
		ys[i] -= bk.roundHandshakeUs() * (r - 1) / r
	}
	a, b, sa, sb, n := fitLine(xs, ys)
	oneSize := false
	switch {
	case len(xs) == 0:
		return false, fmt.Errorf("no AllReduce instance with its fastest rank: nothing to fit")
	case n < 2:
		// One size cannot separate α from β: α comes from the calibrated links through
		// HCCL's two-level formula, β from the ops' measured time at that size.
		var err error
		if a, b, err = bk.structuralLine(xs[0], sumOf(ys)/float64(len(ys))); err != nil {
			return false, fmt.Errorf("the AllReduces have one size and the links cannot price them: %w", err)
		}
		oneSize = true
		bk.Notes = append(bk.Notes, fmt.Sprintf("the AllReduces have one size (%s): α %.1f µs is the calibrated links' through HCCL's two-level formula (%s, %s), β from the ops' time at that size; predictions are hypotheses",
			units.FormatBytes(int64(xs[0])), a, bk.Topology.IntraSource, bk.Topology.InterSource))
	case b <= 0:
		return false, fmt.Errorf("the AllReduces' time does not grow with their size (they mostly wait, not move data): the model cannot price them")
	}
	bk.AlphaUs, bk.BetaUsPerB, bk.AlphaSEUs, bk.BetaSEUsPB = a, b, sa, sb
	bk.FitMinBytes, bk.FitMaxBytes = int64(slices.Min(xs)), int64(slices.Max(xs))
	var rel []float64
	sumBy, nBy := map[int64]float64{}, map[int64]float64{}
	for i, x := range xs {
		if ys[i] > 0 {
			rel = append(rel, math.Abs(ys[i]-(a+b*x))/ys[i])
		}
		sumBy[int64(x)] += ys[i]
		nBy[int64(x)]++
	}
	bk.OpErrorP90 = stats.Quantile(rel, 0.9)
	for _, x := range slices.Sorted(maps.Keys(sumBy)) {
		bk.fitSizes = append(bk.fitSizes, x)
		bk.fitMeanUs = append(bk.fitMeanUs, sumBy[x]/nBy[x])
	}
	return n < 4 || len(uniq(xs)) < 2 || oneSize, nil
}

// measureStep reads the measured step, means over ranks and steps (the step, its
// exposed communication and tail, the group's own exposed part), its noise and drift.
func (bk *Bucketing) measureStep(res *analysis.Result) error {
	var stage, exposed, tail, cnt float64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			stage += float64(st.StageNs) / 1e3
			exposed += float64(st.ExposedCommNs()) / 1e3
			tail += float64(st.TailComputeNs) / 1e3
			cnt++
		}
	}
	if cnt == 0 {
		return fmt.Errorf("no step breakdown")
	}
	bk.StepUs, bk.ExposedUs, bk.TailUs = stage/cnt, exposed/cnt, tail/cnt
	bk.StepNoiseUs = stepNoise(res)
	bk.SpreadLastUs = computeDrift(res)
	bk.GroupExposedUs = bk.ExposedUs
	var gExposed, gN float64
	for _, gs := range res.Communication.GroupSteps {
		if gs.Group == bk.Group {
			gExposed += float64(gs.CommNotOverlappedNs) / 1e3
			gN++
		}
	}
	if gN > 0 {
		bk.GroupExposedUs = math.Min(gExposed/gN, bk.ExposedUs)
	}
	bk.PerMicroShare = perMicroShare(res.Summary.Kinds)
	return nil
}

// structuralLine is the per-round line t = α + n·β when the ops have one size:
// α from the two-level cost of the group with its links, β so that the line passes
// through the measured time at that size (the structural β when that is not positive).
func (bk *Bucketing) structuralLine(sizeBytes, measuredUs float64) (alphaUs, betaUsPerB float64, err error) {
	c, err := bk.Topology.allReduceCost(int64(sizeBytes), bk.Topology.Level1, 0)
	if err != nil {
		return 0, 0, err
	}
	alphaUs = c.LatencyUs
	betaUsPerB = (measuredUs - alphaUs) / sizeBytes
	if betaUsPerB <= 0 {
		betaUsPerB = (c.BandwidthUs + c.ReduceUs) / sizeBytes
	}
	if betaUsPerB <= 0 {
		return 0, 0, fmt.Errorf("no bandwidth for the group's links")
	}
	return alphaUs, betaUsPerB, nil
}

// solveWindow finds the overlap window T whose queue exposes what the run measured.
// The exposure falls as T grows, from spread + Σt (no overlap) to spread + t_last
// (only the last bucket exposed: the run is compute-bound, and T is then only a
// lower bound).
func (bk *Bucketing) solveWindow() {
	times := bk.bucketTimes(bk.Buckets, bk.AlphaUs, bk.BetaUsPerB, bk.BufferBytes)
	target := bk.GroupExposedUs
	k := len(times)
	noOverlap := bk.queueExposure(times, 0)
	floor := bk.SpreadLastUs + times[k-1]
	switch {
	case k < 2:
		bk.WindowUs, bk.WindowBound = 0, true
		bk.Notes = append(bk.Notes, "one bucket: no overlap window to solve")
		return
	case bk.measuredWindowUs > 0:
		// The window is known: what is exposed beyond the queue is the ranks' drift,
		// solved as the spread at the last bucket.
		bk.WindowUs = bk.measuredWindowUs
		lo, hi := 0.0, math.Max(target, 1)
		for i := 0; i < 100 && hi-lo > 1e-3; i++ {
			bk.SpreadLastUs = (lo + hi) / 2
			if bk.queueExposure(times, bk.WindowUs) > target {
				hi = bk.SpreadLastUs
			} else {
				lo = bk.SpreadLastUs
			}
		}
		bk.SpreadLastUs = lo
		return
	case target >= noOverlap:
		bk.WindowUs = 0
		if target > 1.05*noOverlap {
			bk.Notes = append(bk.Notes, fmt.Sprintf("the group exposes %.0f µs, more than its buckets take end to end (%.0f µs): the extra is kept as it is", target, noOverlap))
		}
		return
	case target <= floor*1.05:
		target, bk.WindowBound = floor*1.0001, true
		bk.Notes = append(bk.Notes, "the run is compute-bound: only the last bucket is exposed, the overlap window is a lower bound")
	}
	lo, hi := 0.0, sumOf(times)*float64(k)+1
	for bk.queueExposure(times, hi) > target && hi < 1e12 {
		hi *= 2
	}
	for i := 0; i < 100 && hi-lo > 1e-3; i++ {
		mid := (lo + hi) / 2
		if bk.queueExposure(times, mid) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	bk.WindowUs = hi
}

// stepNoise is the standard error of the mean step: the standard deviation of the
// steps' mean Stage (over ranks) divided by √steps; 0 with fewer than two steps.
func stepNoise(res *analysis.Result) float64 {
	sum, n := map[int]float64{}, map[int]float64{}
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			sum[st.Step] += float64(st.StageNs) / 1e3
			n[st.Step]++
		}
	}
	var means []float64
	for _, step := range slices.Sorted(maps.Keys(sum)) {
		means = append(means, sum[step]/n[step])
	}
	if len(means) < 2 {
		return 0
	}
	mean := sumOf(means) / float64(len(means))
	var ss float64
	for _, m := range means {
		ss += (m - mean) * (m - mean)
	}
	return math.Sqrt(ss/float64(len(means)-1)) / math.Sqrt(float64(len(means)))
}

// computeDrift is the mean over steps of how much longer the slowest rank computes
// than the mean rank, optimizer excluded.
func computeDrift(res *analysis.Result) float64 {
	type acc struct{ sum, maxUs, n float64 }
	by := map[int]*acc{}
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			a := by[st.Step]
			if a == nil {
				a = &acc{}
				by[st.Step] = a
			}
			c := float64(st.ComputingNs-st.TailComputeNs) / 1e3
			a.sum += c
			a.maxUs = math.Max(a.maxUs, c)
			a.n++
		}
	}
	var drift, n float64
	for _, step := range slices.Sorted(maps.Keys(by)) {
		a := by[step]
		if a.n > 1 {
			drift += a.maxUs - a.sum/a.n
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return drift / n
}

// queueExposure runs the buckets as a queue on one stream: bucket i (of k) is ready
// at −T + (i+1)·T/k + spread_i relative to the mean rank's end of backward, starts
// when it is ready and the previous one is done; what runs past the end of backward
// is exposed.
func (bk *Bucketing) queueExposure(times []float64, windowUs float64) float64 {
	k := float64(len(times))
	end := math.Inf(-1)
	for i, t := range times {
		spread := bk.SpreadLastUs
		if k > 1 {
			spread = bk.SpreadUs + (bk.SpreadLastUs-bk.SpreadUs)*float64(i)/(k-1)
		}
		ready := -windowUs + float64(i+1)*windowUs/k + spread
		end = math.Max(ready, end) + t
	}
	return math.Max(end, 0)
}

func (bk *Bucketing) bucketTimes(buckets []int64, a, b float64, bufferBytes int64) []float64 {
	out := make([]float64, len(buckets))
	line := func(n int64) float64 {
		r := float64(bk.Topology.AllReduceRounds(n, bk.Topology.Level1, bufferBytes))
		return r*a + (r-1)*bk.roundHandshakeUs() + float64(n)*b
	}
	// With the cluster's own sweep, a size is priced by the sweep's shape anchored at
	// the run's largest bucket: the run sets the level, the benchmark how time grows
	// with size (HCCL's path switches, which one line misses). The sweep ran with
	// the run's buffer as far as anyone knows: a changed buffer keeps the line.
	ref := int64(0)
	for _, n := range bk.Buckets {
		ref = max(ref, n)
	}
	anchored := bk.bench != nil && bufferBytes == bk.BufferBytes && ref > 0
	for i, n := range buckets {
		out[i] = line(n)
		if anchored {
			if c := interpolate(bk.bench.Bytes, bk.bench.TimeUs, ref); c > 0 {
				out[i] = line(ref) * interpolate(bk.bench.Bytes, bk.bench.TimeUs, n) / c
			}
		}
	}
	return out
}

// UseCalibration prices bucket sizes with the calibration's AllReduce sweep on the
// gradient group's rank count, when it has one; a note says which.
func (bk *Bucketing) UseCalibration(cal *BenchCalibration) {
	if cal == nil {
		return
	}
	ranks := bk.Topology.RanksPerServer * max(bk.Topology.Servers, 1)
	f := cal.Family("allreduce", ranks)
	if f == nil || len(f.Bytes) < 2 {
		bk.Notes = append(bk.Notes, fmt.Sprintf("the calibration has no AllReduce sweep of two sizes or more on %d ranks: the run's own line prices every size", ranks))
		return
	}
	bk.bench = f
	bk.Notes = append(bk.Notes, fmt.Sprintf("bucket sizes priced with the benchmark's AllReduce sweep on %d ranks (%d sizes, %s to %s), anchored at the run's largest bucket; its error out of sample widens the intervals",
		ranks, len(f.Bytes), units.FormatBytes(f.Bytes[0]), units.FormatBytes(f.Bytes[len(f.Bytes)-1])))
}

// roundHandshakeUs is what each HCCL_BUFFSIZE round after the first costs on top of
// the algorithm: before a peer writes into a CCL buffer again, its owner notifies that
// the buffer is free, a round trip over the slowest level (rounds: docs/costmodel.md §3.7).
func (bk *Bucketing) roundHandshakeUs() float64 {
	t := bk.Topology
	alpha := t.Intra.AlphaUs
	if t.Servers > 1 {
		alpha = math.Max(alpha, t.Inter.AlphaUs)
	}
	return 2 * alpha
}

// BackwardUs is the estimated backward pass of one micro-batch: BackwardShare of the
// computation outside the optimizer, and never shorter than the overlap window.
func (bk *Bucketing) BackwardUs() float64 {
	micro := (bk.StepUs - bk.ExposedUs - bk.TailUs) / float64(bk.Accumulation)
	return math.Max(bk.BackwardShare*micro, bk.WindowUs)
}

// otherExposedUs splits the exposed communication of the groups other than the
// modelled one into what runs once a step and what runs once per micro-batch.
func (bk *Bucketing) otherExposedUs() (perStep, perMicro float64) {
	other := math.Max(bk.ExposedUs-bk.GroupExposedUs, 0)
	return other * (1 - bk.PerMicroShare), other * bk.PerMicroShare
}

// perMicroShare is the part of the exposed communication of the dimensions other
// than data parallel that runs once per micro-batch: tensor, sequence, context,
// expert and pipeline parallel traffic, and FSDP's gathers, all in the forward and
// backward passes. Their exposed times overlap each other (where two run at once the
// time counts for both), so this is a share of their sum. 0 without dimensions: a
// data-parallel job's other groups are taken to run once a step, as before.
func perMicroShare(kinds []analysis.KindShare) float64 {
	var perMicro, all float64
	for _, k := range kinds {
		if k.Kind == analysis.KindDP {
			continue
		}
		all += float64(k.ExposedNs)
		switch k.Kind {
		case analysis.KindTP, analysis.KindSP, analysis.KindCP, analysis.KindEP, analysis.KindPP, analysis.KindFSDP:
			perMicro += float64(k.ExposedNs)
		}
	}
	if all <= 0 {
		return 0
	}
	return perMicro / all
}

// OverlapFraction is the share of the backward pass over which buckets are launched.
func (bk *Bucketing) OverlapFraction() float64 {
	if b := bk.BackwardUs(); b > 0 {
		return bk.WindowUs / b
	}
	return 0
}

// extrapolation is how far beyond the fitted sizes a prediction still counts as
// backed by the fit.
const extrapolation = 8

// split cuts the gradient into buckets of at most size bytes, DDP's way.
func split(total, size int64) []int64 {
	var out []int64
	for total > 0 {
		n := min(total, size)
		out = append(out, n)
		total -= n
	}
	return out
}

// Setting is one knob's new value. Value holds bytes for "bucket" and "buffsize"
// (HCCL_BUFFSIZE), a count for "accumulation" (micro-batches per optimizer step)
// and "dp" (data-parallel ranks), and a fraction in [0, 1] for "overlap" (the share
// of the backward pass buckets are launched over). "algo" sets Algo, the level-1
// algorithm (ring, nhr, rhd, nb, pipeline).
type Setting struct {
	Knob  string
	Value float64
	Algo  string
}

// ParseSetting reads KNOB=VALUE: bucket=64MiB, buffsize=400MB, accumulation=4,
// overlap=0.9, dp=64, algo=nhr, grad_bytes=2 (the gradients reduced in 2 bytes per
// element).
func ParseSetting(s string) (Setting, error) {
	k, v, ok := strings.Cut(s, "=")
	k, v = strings.TrimSpace(strings.ToLower(k)), strings.TrimSpace(v)
	if !ok || v == "" {
		return Setting{}, fmt.Errorf("%q: want KNOB=VALUE", s)
	}
	switch k {
	case "bucket", "buffsize":
		n, err := units.ParseSize(v)
		if err != nil {
			return Setting{}, fmt.Errorf("%s: %w", k, err)
		}
		return Setting{Knob: k, Value: float64(n)}, nil
	case "accumulation", "dp", "grad_bytes":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Setting{}, fmt.Errorf("%s=%q: want a whole number ≥ 1", k, v)
		}
		return Setting{Knob: k, Value: float64(n)}, nil
	case "overlap":
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if strings.HasSuffix(v, "%") {
			f /= 100
		}
		if err != nil || !(f >= 0 && f <= 1) { // NaN fails both
			return Setting{}, fmt.Errorf("overlap=%q: want a fraction from 0 to 1 (or a percentage)", v)
		}
		return Setting{Knob: k, Value: f}, nil
	case "algo", "algorithm":
		a := NormaliseAlgo(v)
		switch a {
		case "ring", "nhr", "rhd", "nb", "pipeline", "auto":
			return Setting{Knob: "algo", Algo: a}, nil
		case "unset", "default":
			return Setting{Knob: "algo", Algo: "auto"}, nil
		}
		return Setting{}, fmt.Errorf("algo=%q: want ring, nhr, rhd (H-D_R), nb, pipeline or auto (HCCL's own choice: HCCL_ALGO unset)", v)
	}
	return Setting{}, fmt.Errorf("what-if %q is not modelled: bucket, accumulation, buffsize, overlap, algo, dp and grad_bytes are", k)
}

// WhatIf predicts the step time and exposed share when one knob changes.
func (bk *Bucketing) WhatIf(s Setting) (Prediction, error) {
	return bk.WhatIfPlan([]Setting{s})
}

// scenarioOf is the changed run a plan describes.
type scenarioOf struct {
	buckets    []int64
	buffer     int64
	acc        int
	windowUs   float64
	level1     string
	auto       bool // level 1 is HCCL's own choice per op: re-run its selector on the new sizes
	dp         int
	structural bool // the algorithm or the scale changes: reprice with the topology
	sizes      bool // the AllReduces' sizes, the buffer or the servers change
	fused      bool // the small collectives run as one op
}

// SelectorAgrees reports whether the profile's level-1 algorithm is what HCCL's own
// selector picks for every bucket the run measured (HCCL_ALGO unset), and if not,
// what the selector picks for the first bucket that disagrees.
func (bk *Bucketing) SelectorAgrees() (bool, Choice) {
	t := bk.Topology
	if t.NCCL || t.Servers < 2 {
		return false, Choice{}
	}
	for _, n := range bk.Buckets {
		c, err := t.HCCLChoice("allreduce", n, bk.BufferBytes, bk.Deterministic)
		if err != nil {
			return false, Choice{}
		}
		if c.Algo != t.Level1 {
			return false, c
		}
	}
	return true, Choice{}
}

// AutoLevel1 reports whether the run's level 1 is HCCL's automatic choice: HCCL_ALGO
// does not force it and the selector agrees with the profile on the measured sizes.
// The what-ifs then re-run the selector after every change.
func (bk *Bucketing) AutoLevel1() bool {
	ok, _ := bk.SelectorAgrees()
	return ok && !bk.HCCLAlgoForced
}

// WhatIfPlan predicts the step time and exposed share when the settings change
// together. With an AccumulationSpan, the interval also holds the predictions made
// with the run's micro-batches at either end of it.
func (bk *Bucketing) WhatIfPlan(plan []Setting) (Prediction, error) {
	p, err := bk.whatIfPlan(plan)
	lo, hi := bk.AccumulationSpan[0], bk.AccumulationSpan[1]
	if err != nil || lo < 1 || hi < 1 || lo == hi {
		return p, err
	}
	for _, acc := range []int{lo, hi} {
		if acc == bk.Accumulation {
			continue
		}
		alt := *bk
		alt.Accumulation, alt.AccumulationSpan = acc, [2]int{}
		q, err := alt.whatIfPlan(plan)
		if err != nil {
			continue
		}
		p.Low, p.High = math.Min(p.Low, q.Low), math.Max(p.High, q.High)
	}
	p.Assumptions = append(p.Assumptions, fmt.Sprintf("the run's micro-batches per step are not settled by its profile (%d taken, %d to %d possible): the interval holds the predictions at both ends", bk.Accumulation, lo, hi))
	if p.Confidence == "high" {
		p.Confidence = "medium"
	}
	return p, nil
}

func (bk *Bucketing) whatIfPlan(plan []Setting) (Prediction, error) {
	t := bk.Topology
	sc := scenarioOf{buckets: bk.Buckets, buffer: bk.BufferBytes, acc: bk.Accumulation, windowUs: bk.WindowUs,
		level1: t.Level1, auto: bk.AutoLevel1()}
	p := Prediction{Confidence: bk.Confidence, Assumptions: []string{
		"gradient buckets run one after another on one stream and become ready evenly over the backward window solved from the measured exposure",
		"everything but the exposed gradient communication is unchanged",
	}}
	var names, values []string
	gradientBytes := bk.GradientBytes
	for _, s := range plan {
		value, err := bk.applySetting(s, &sc, &p, &gradientBytes)
		if err != nil {
			return Prediction{}, err
		}
		names, values = append(names, s.Knob), append(values, value)
	}
	topo := scaledTopology(t, &sc)
	algos, err := bk.level1PerBucket(&sc, topo, &p)
	if err != nil {
		return Prediction{}, err
	}
	bk.noteModelLimits(sc, topo, &p)
	// scale stretches every bucket's time by the model's own per-op error.
	pred := func(a, b, scale float64) (step, exposed float64, err error) {
		return bk.predictStep(sc, topo, algos, a, b, scale)
	}
	step, e, err := pred(bk.AlphaUs, bk.BetaUsPerB, 1)
	if err != nil {
		return Prediction{}, err
	}
	q := bk.intervalOpError(sc, topo)
	lo, _, _ := pred(math.Max(bk.AlphaUs-bk.AlphaSEUs, 0), math.Max(bk.BetaUsPerB-bk.BetaSEUsPB, 0), 1-q)
	hi, _, _ := pred(bk.AlphaUs+bk.AlphaSEUs, bk.BetaUsPerB+bk.BetaSEUsPB, 1+q)
	lo, hi = math.Min(lo, hi), math.Max(lo, hi)
	noise := bk.intervalNoise(sc, e)
	down := math.Max(math.Hypot(math.Max(step-lo, 0), noise), minIntervalShare*step)
	up := math.Max(math.Hypot(math.Max(hi-step, 0), noise), minIntervalShare*step)
	p.Knob, p.Value = strings.Join(names, "+"), strings.Join(values, "+")
	p.StepTimeUs, p.ExposedUs, p.CommShare = step, e, e/step
	p.Low, p.High = step-down, step+up
	p.Assumptions = append(p.Assumptions, fmt.Sprintf("the interval holds the fit's standard errors, the model's per-op error (90th percentile %.1f%%), the step's noise and what the model leaves out (±%.2f ms together)",
		100*q, noise/1e3))
	if bk.WindowBound {
		p.Assumptions = append(p.Assumptions, "the overlap window is a lower bound (the run is compute-bound)")
	}
	return p, nil
}

// applySetting applies one knob of a plan to the scenario, with its assumptions on
// p, and returns the knob's value as the prediction names it. gradientBytes is the
// gradients' size as the plan's knobs so far leave it.
func (bk *Bucketing) applySetting(s Setting, sc *scenarioOf, p *Prediction, gradientBytes *int64) (string, error) {
	switch s.Knob {
	case "bucket":
		if s.Value < 1 {
			return "", fmt.Errorf("bucket must be positive")
		}
		sc.buckets = split(*gradientBytes, int64(s.Value))
		sc.sizes = true
		return units.FormatBytes(int64(s.Value)), nil
	case "buffsize":
		if s.Value < 1 {
			return "", fmt.Errorf("buffsize must be positive")
		}
		sc.buffer = int64(s.Value)
		sc.sizes = true
		p.Assumptions = append(p.Assumptions, "each buffer round pays the fitted latency again")
		return units.FormatBytes(sc.buffer), nil
	case "accumulation":
		if s.Value < 1 {
			return "", fmt.Errorf("accumulation must be ≥ 1")
		}
		sc.acc = int(s.Value)
		p.Assumptions = append(p.Assumptions, "gradients are synchronised once per optimizer step (no_sync on the other micro-batches); a micro-batch costs (Stage − exposed − optimizer)/A, the optimizer (the compute after the last collective) runs once")
		return fmt.Sprint(sc.acc), nil
	case "overlap":
		if s.Value < 0 || s.Value > 1 {
			return "", fmt.Errorf("overlap must be a fraction from 0 to 1")
		}
		sc.windowUs = s.Value * bk.BackwardUs()
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("the backward pass is %.0f%% of a micro-batch's computation (%.1f ms); the run launches its buckets over %.0f%% of it", 100*bk.BackwardShare, bk.BackwardUs()/1e3, 100*bk.OverlapFraction()))
		if bk.WindowBound {
			p.Confidence = "low"
		}
		return fmt.Sprintf("%.0f%%", 100*s.Value), nil
	case "algo":
		return bk.setLevel1(s, sc)
	case "fuse":
		if bk.Storm == nil {
			return "", fmt.Errorf("no storm of small collectives in the gradient group: nothing to fuse")
		}
		sc.fused = true
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("the %d small collectives of a step become one of %s priced on the fitted line (%.1f µs + %.3g µs/KiB), after the same wait for the other ranks as the first of them; their exposed part shrinks with their time",
			bk.Storm.PerStep, units.FormatBytes(bk.Storm.BytesPerStep), bk.AlphaUs, bk.BetaUsPerB*1024))
		return fmt.Sprintf("%d × %s → 1 × %s", bk.Storm.PerStep, units.FormatBytes(bk.Storm.BytesPerStep/int64(bk.Storm.PerStep)), units.FormatBytes(bk.Storm.BytesPerStep)), nil
	case "grad_bytes":
		return bk.setGradientBytes(s, sc, p, gradientBytes)
	case "dp":
		return bk.setDataParallel(s, sc, p)
	default:
		return "", fmt.Errorf("what-if %q is not modelled: bucket, accumulation, buffsize, overlap, algo, dp and grad_bytes are", s.Knob)
	}
}

// setLevel1 is the algo knob: HCCL's level-1 algorithm forced, or left to its
// selector (auto).
func (bk *Bucketing) setLevel1(s Setting, sc *scenarioOf) (string, error) {
	t := bk.Topology
	if t.NCCL {
		return "", fmt.Errorf("an NVIDIA (NCCL) run: HCCL's level-1 algorithms do not apply (NCCL chooses its algorithm itself)")
	}
	if t.Servers < 2 {
		return "", fmt.Errorf("the gradient group is on one server: the level-1 algorithm is not used")
	}
	a := NormaliseAlgo(s.Algo)
	if a == "auto" {
		// HCCL_ALGO unset: HCCL's selector chooses per op.
		sc.auto, sc.structural = true, true
		return "HCCL's choice (unset)", nil
	}
	sc.level1, sc.auto, sc.structural = a, false, true
	return HCCLAlgoName(sc.level1), nil
}

// setGradientBytes is the grad_bytes knob: the gradients reduced in a narrower type,
// the same elements in fewer bytes, in buckets of the same capacity (in bytes, as
// DDP's bucket_cap_mb is).
func (bk *Bucketing) setGradientBytes(s Setting, sc *scenarioOf, p *Prediction, gradientBytes *int64) (string, error) {
	if bk.ElementBytes <= 0 {
		return "", fmt.Errorf("grad_bytes: the gradients' data type is not known")
	}
	if s.Value < 1 || int(s.Value) >= bk.ElementBytes {
		return "", fmt.Errorf("grad_bytes=%v: want fewer bytes per element than today's %d", s.Value, bk.ElementBytes)
	}
	*gradientBytes = *gradientBytes * int64(s.Value) / int64(bk.ElementBytes)
	sc.buckets = split(*gradientBytes, slices.Max(sc.buckets))
	sc.sizes = true
	p.Assumptions = append(p.Assumptions, fmt.Sprintf("the gradients are reduced in %d bytes per element instead of %d: %s in buckets of the same capacity; the casts cost nothing measurable",
		int(s.Value), bk.ElementBytes, units.FormatBytes(*gradientBytes)))
	return fmt.Sprintf("%d bytes per element", int(s.Value)), nil
}

// setDataParallel is the dp knob: the data-parallel ranks, weak scaling.
func (bk *Bucketing) setDataParallel(s Setting, sc *scenarioOf, p *Prediction) (string, error) {
	t := bk.Topology
	n := int(s.Value)
	per := t.RanksPerServer
	if n < 2 || (n > per && n%per != 0) || (n < per && per%n != 0) {
		return "", fmt.Errorf("dp=%d: want a multiple of the %d NPUs per server (or a divisor of it)", n, per)
	}
	sc.dp, sc.structural, sc.sizes = n, true, true
	if t.NCCL {
		p.Confidence = "low"
		p.Assumptions = append(p.Assumptions, "an NVIDIA (NCCL) run priced with HCCL's two-level AllReduce: a rough guide only")
	}
	p.Assumptions = append(p.Assumptions, "weak scaling: the per-rank batch and computation stay the same (the global batch changes with the ranks)")
	return fmt.Sprint(n), nil
}

// scaledTopology is the run's topology at the scenario's data-parallel ranks (t
// itself when dp is not set); an algorithm HCCL chose by itself follows its rule at
// the new scale.
func scaledTopology(t Topology, sc *scenarioOf) Topology {
	topo := t
	if sc.dp > 0 {
		if sc.dp < t.RanksPerServer {
			topo.RanksPerServer, topo.Servers = sc.dp, 1
		} else {
			topo.Servers = sc.dp / t.RanksPerServer
		}
		// An algorithm HCCL chose by itself follows its rule at the new scale.
		if sc.level1 == t.Level1 && t.Level1 == defaultLevel1(t.Product, t.Servers) {
			sc.level1 = defaultLevel1(t.Product, topo.Servers)
		}
	}
	return topo
}

// level1PerBucket is level 1 per bucket: HCCL's selector on the new sizes when it
// chooses, else the forced (or kept) algorithm. A bucket on another algorithm than
// the run's makes the scenario structural.
func (bk *Bucketing) level1PerBucket(sc *scenarioOf, topo Topology, p *Prediction) ([]string, error) {
	t := bk.Topology
	algos := make([]string, len(sc.buckets))
	var switched []string
	for i, n := range sc.buckets {
		algos[i] = sc.level1
		if sc.auto && topo.Servers > 1 {
			c, err := topo.HCCLChoice("allreduce", n, sc.buffer, bk.Deterministic)
			if err != nil {
				return nil, err
			}
			algos[i] = c.Algo
			if c.Algo != t.Level1 && !slices.Contains(switched, c.Algo) {
				switched = append(switched, c.Algo)
				p.Assumptions = append(p.Assumptions, fmt.Sprintf("HCCL's selector picks %s between servers for the %s AllReduces (%s) where the run had %s",
					HCCLAlgoName(c.Algo), units.FormatBytes(n), c.Reason, HCCLAlgoName(t.Level1)))
			}
		}
		if algos[i] != t.Level1 {
			sc.structural = true
		}
	}
	return algos, nil
}

// noteModelLimits says, on p, where the scenario leaves what the run measured: an
// algorithm kept against HCCL's selector, the two-level model and an uncalibrated
// inter link for a structural change, sizes outside the fitted ones.
func (bk *Bucketing) noteModelLimits(sc scenarioOf, topo Topology, p *Prediction) {
	t := bk.Topology
	if sc.sizes && !sc.auto && !bk.HCCLAlgoForced && t.Servers > 1 && !t.NCCL {
		if ok, c := bk.SelectorAgrees(); !ok && c.Algo != "" {
			p.Assumptions = append(p.Assumptions, fmt.Sprintf("the run's between-server algorithm (%s) is not what HCCL's selector picks for its sizes (%s) and HCCL_ALGO is not known to be set: %s is kept at the new sizes",
				HCCLAlgoName(t.Level1), HCCLAlgoName(c.Algo), HCCLAlgoName(t.Level1)))
		}
	}
	if sc.structural {
		if (topo.Servers > 1 && sc.level1 != t.Level1) || topo.Servers != t.Servers {
			p.Assumptions = append(p.Assumptions, fmt.Sprintf("the AllReduce is HCCL's two-level one (%d servers × %d NPUs, %s between servers) priced with the intra link (%s) and the inter link (%s), scaled to the run's own fit",
				topo.Servers, topo.RanksPerServer, HCCLAlgoName(sc.level1), t.IntraSource, t.InterSource))
		}
		if topo.Servers > 1 && strings.HasPrefix(t.InterSource, "hardware") {
			p.Confidence = "low"
			p.Assumptions = append(p.Assumptions, "the run has no inter-server transfers to calibrate on: the inter link is the hardware prior")
		}
	}
	// Sizes more than 8× outside the fitted ones are an extrapolation of the line.
	for _, n := range sc.buckets {
		round := n / int64(topo.AllReduceRounds(n, sc.level1, sc.buffer))
		if round > extrapolation*bk.FitMaxBytes || round*extrapolation < bk.FitMinBytes {
			p.Confidence = "low"
			p.Assumptions = append(p.Assumptions, fmt.Sprintf("%s per round is outside the sizes the run was fitted on (%s–%s): an extrapolation",
				units.FormatBytes(round), units.FormatBytes(bk.FitMinBytes), units.FormatBytes(bk.FitMaxBytes)))
			break
		}
	}
}

// predictStep prices the scenario's step and its exposed communication on the line
// a + n·b; scale stretches every bucket's time by the model's own per-op error.
func (bk *Bucketing) predictStep(sc scenarioOf, topo Topology, algos []string, a, b, scale float64) (step, exposed float64, err error) {
	times := bk.bucketTimes(sc.buckets, a, b, sc.buffer)
	if sc.structural {
		if times, err = bk.reprice(sc.buckets, a, b, sc.buffer, topo, algos); err != nil {
			return 0, 0, err
		}
	}
	for i := range times {
		times[i] *= scale
	}
	e := bk.queueExposure(times, sc.windowUs)
	// The rest of the step is unchanged; more micro-batches repeat the compute of
	// one, and the other dimensions' traffic of one, the optimizer runs once.
	perStep, perMicroUs := bk.otherExposedUs()
	micro := (bk.StepUs - bk.ExposedUs - bk.TailUs) / float64(bk.Accumulation)
	repeated := float64(sc.acc) / float64(bk.Accumulation)
	exposedAll := perStep + perMicroUs*repeated + e
	if sc.fused {
		exposedAll -= bk.fusionSavingUs(a, b)
	}
	return micro*float64(sc.acc) + bk.TailUs + exposedAll, exposedAll, nil
}

// intervalOpError is the model's own per-op error the interval carries (the 90th
// percentile of its relative residuals on the run's ops: the fitted line's, and for a
// structural change the structural model's too, and the priors' for a level the run
// does not calibrate).
func (bk *Bucketing) intervalOpError(sc scenarioOf, topo Topology) float64 {
	t := bk.Topology
	q := bk.OpErrorP90
	if sc.structural {
		q = math.Max(q, bk.structuralError())
		if topo.Servers > 1 && strings.HasPrefix(t.InterSource, "hardware") || topo.RanksPerServer > 1 && strings.HasPrefix(t.IntraSource, "hardware") {
			// A level the run does not calibrate is priced from the product's figures.
			q = math.Max(q, priorError)
		}
	}
	return q
}

// intervalNoise is the interval's part beside the fit: the measured step's noise, for
// the run it is computed from and the run it predicts, and what the model does not
// represent; e is the predicted exposed communication.
func (bk *Bucketing) intervalNoise(sc scenarioOf, e float64) float64 {
	noise := math.Sqrt2 * bk.StepNoiseUs * float64(sc.acc) / float64(bk.Accumulation)
	// What the model does not represent grows with the change: the ranks' drift per
	// added micro-batch (the mean rank's micro-batch is repeated, the slowest rank's
	// extra compute is not), and a share of the change in exposed communication
	// (the queue and overlap model's own error).
	_, perMicroUs := bk.otherExposedUs()
	unmodelled := math.Abs(float64(sc.acc)/float64(bk.Accumulation)-1)*(bk.SpreadLastUs+exposureChangeError*perMicroUs) +
		exposureChangeError*math.Abs(e-bk.ExposedUs)
	if bk.bench != nil && sc.sizes && sc.buffer == bk.BufferBytes {
		// The sweep's own error out of sample at the new sizes, on the exposed part.
		largest := slices.Max(sc.buckets)
		if est, err := (&BenchCalibration{Families: []BenchFamily{*bk.bench}}).Price("allreduce", bk.bench.Ranks, largest); err == nil {
			unmodelled += est.ErrorAbs * e
		}
	}
	return math.Hypot(noise, unmodelled)
}

// minIntervalShare is the narrowest interval half-width, as a share of the step: a
// prediction is never exact, even where the run shows no noise.
const minIntervalShare = 0.002

// priorError is the per-op error assumed for a level priced from the product's
// figures rather than calibrated on the run (docs/costmodel.md §5.4 calls a fit with up
// to 20% error usable; the priors are taken as a little worse). exposureChangeError
// is the share of a predicted change in exposed communication the interval allows
// for the queue and overlap model itself, which no single run can test.
const (
	priorError          = 0.25
	exposureChangeError = 0.05
)

// structuralError is the 90th percentile of the structural model's relative error
// on the run's own AllReduces: each measured size priced by the scaled two-level
// model (reprice, the run's algorithm) against its mean measured time per round.
func (bk *Bucketing) structuralError() float64 {
	if bk.structErr != nil {
		return *bk.structErr
	}
	var errs []float64
	algos := []string{bk.Topology.Level1}
	for i, x := range bk.fitSizes {
		times, err := bk.reprice([]int64{x}, bk.AlphaUs, bk.BetaUsPerB, 0, bk.Topology, algos)
		if err != nil || bk.fitMeanUs[i] <= 0 {
			continue
		}
		errs = append(errs, math.Abs(times[0]-bk.fitMeanUs[i])/bk.fitMeanUs[i])
	}
	q := stats.Quantile(errs, 0.9)
	bk.structErr = &q
	return q
}

// reprice prices buckets under a changed topology or algorithm with HCCL's two-level
// AllReduce. The links of the levels the run uses are scaled so that, for the run as
// measured, the structural model gives the fitted α per round and β per byte (the
// structure sets the ratios, the run the scale); a level the run does not use keeps
// its own figures (calibrated transfers or the hardware prior).
func (bk *Bucketing) reprice(buckets []int64, a, b float64, buffer int64, topo Topology, level1 []string) ([]float64, error) {
	cur := bk.Topology
	// A level the run uses but no figure describes is taken from the fit alone: a
	// unit link, scaled below to the fitted α and β.
	unit := Link{AlphaUs: 1, BWGBps: 1}
	if cur.RanksPerServer > 1 && cur.Intra.BWGBps <= 0 {
		cur.Intra, topo.Intra = unit, unit
	}
	if cur.Servers > 1 && cur.Inter.BWGBps <= 0 {
		cur.Inter, topo.Inter = unit, unit
	}
	ref := bk.Buckets[0]
	refRound := ref / int64(cur.AllReduceRounds(ref, cur.Level1, bk.BufferBytes))
	base, err := cur.allReduceCost(refRound, cur.Level1, 0)
	if err != nil {
		return nil, err
	}
	latScale, bwScale := 1.0, 1.0
	if base.LatencyUs > 0 {
		latScale = a / base.LatencyUs
	}
	if w := base.BandwidthUs + base.ReduceUs; w > 0 {
		bwScale = b * float64(refRound) / w
	}
	scale := func(l Link) Link {
		l.AlphaUs *= latScale
		if bwScale > 0 {
			l.BWGBps /= bwScale
			l.GammaBWGBps /= bwScale
		}
		return l
	}
	if cur.RanksPerServer > 1 {
		topo.Intra = scale(topo.Intra)
	}
	if cur.Servers > 1 {
		topo.Inter = scale(topo.Inter)
	}
	if topo.Servers > 1 && topo.Inter.BWGBps <= 0 {
		return nil, fmt.Errorf("the run has no inter-server transfers and the %s profile no inter-server figure (%s): give one with --peak RDMA=GBPS", topo.Product, topo.InterSource)
	}
	out := make([]float64, len(buckets))
	for i, n := range buckets {
		c, err := topo.allReduceCost(n, level1[i], buffer)
		if err != nil {
			return nil, err
		}
		out[i] = c.TimeUs
	}
	return out, nil
}

// fitLine is least squares y = a + b·x with standard errors, a held at 0 if the
// free fit makes it negative; n is the number of points fitted, or of distinct x
// when there are too few (under 2) to fit.
func fitLine(xs, ys []float64) (a, b, sa, sb float64, n int) {
	if d := len(uniq(xs)); d < 2 {
		return 0, 0, 0, 0, d
	}
	x := make([][]float64, len(xs))
	w := make([]float64, len(xs))
	for i, v := range xs {
		x[i], w[i] = []float64{1, v}, 1
	}
	coef, se, ok := nonNegativeLS(x, ys, w, []bool{true, true}, 1)
	if !ok {
		return 0, 0, 0, 0, 0
	}
	return coef[0], coef[1], zeroIfNaN(se[0]), zeroIfNaN(se[1]), len(xs)
}

func uniq(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func sumOf(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}

// oneAlgorithm keeps the fit's points of one HCCL algorithm: where the profile says
// HCCL ran the buckets with one (25 MiB buckets on MESH-PIPELINE) and a smaller op
// with another (the remainder bucket on MESH-RING), one line through both has the
// wrong latency (α 222 µs where the pipeline's is about 80) and credits bigger
// buckets with savings three times the real ones. The algorithm that carried the
// most bytes is kept; the others are said.
func (bk *Bucketing) oneAlgorithm(xs, ys, rs []float64, algs []string) ([]float64, []float64, []float64) {
	bytesOf := map[string]float64{}
	for i, a := range algs {
		bytesOf[a] += xs[i] * rs[i]
	}
	if len(bytesOf) < 2 {
		return xs, ys, rs
	}
	keep := ""
	for _, a := range slices.Sorted(maps.Keys(bytesOf)) {
		if keep == "" || bytesOf[a] > bytesOf[keep] {
			keep = a
		}
	}
	var kx, ky, kr []float64
	left := map[string][]float64{}
	for i, a := range algs {
		if a == keep {
			kx, ky, kr = append(kx, xs[i]), append(ky, ys[i]), append(kr, rs[i])
		} else if !slices.Contains(left[a], xs[i]) {
			left[a] = append(left[a], xs[i])
		}
	}
	for _, a := range slices.Sorted(maps.Keys(left)) {
		sizes := make([]string, 0, len(left[a]))
		slices.Sort(left[a])
		for _, x := range left[a] {
			sizes = append(sizes, units.FormatBytes(int64(x)))
		}
		bk.Notes = append(bk.Notes, fmt.Sprintf("the fit uses the AllReduces HCCL ran as %s; those it ran as %s (%s) are left out of it: one line cannot hold two algorithms",
			orUnknownAlg(keep), orUnknownAlg(a), strings.Join(sizes, ", ")))
	}
	return kx, ky, kr
}

func orUnknownAlg(a string) string {
	if a == "" {
		return "an unrecorded algorithm"
	}
	return a
}
