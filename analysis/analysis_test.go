package analysis

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

func iv(a, b int64) profile.Interval { return profile.Interval{StartNs: a, EndNs: b} }

func TestUnionAndIntersect(t *testing.T) {
	tests := []struct {
		name string
		in   []profile.Interval
		want []profile.Interval
	}{
		{"empty", nil, nil},
		{"disjoint unsorted", []profile.Interval{iv(5, 6), iv(1, 2)}, []profile.Interval{iv(1, 2), iv(5, 6)}},
		{"touching merge", []profile.Interval{iv(1, 2), iv(2, 3)}, []profile.Interval{iv(1, 3)}},
		{"nested", []profile.Interval{iv(1, 10), iv(2, 3), iv(9, 12)}, []profile.Interval{iv(1, 12)}},
		{"zero length dropped", []profile.Interval{iv(4, 4), iv(1, 2)}, []profile.Interval{iv(1, 2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, union(tc.in)) })
	}
	a := []profile.Interval{iv(0, 10), iv(20, 30)}
	b := []profile.Interval{iv(5, 25), iv(28, 40)}
	assert.Equal(t, int64(5+5+2), intersectNs(a, b))
	assert.Equal(t, int64(40), totalNs(mergeSorted(a, b)))
}

func TestBreakdownSemantics(t *testing.T) {
	// compute [0,10) and [30,40); an AllReduce [5,20); a receive [45,50).
	compute := []profile.Interval{iv(0, 10), iv(30, 40)}
	ops := []profile.CommOp{
		{Name: "hcom_allReduce__1_0_1", Type: "allreduce", Interval: iv(5, 20)},
		{Name: "hcom_receive__1_1_1", Type: "receive", Interval: iv(45, 50)},
	}
	b := breakdown(compute, ops)
	assert.Equal(t, int64(20), b.ComputingNs)
	assert.Equal(t, int64(20), b.CommunicationNs)
	assert.Equal(t, int64(5), b.OverlappedNs)
	assert.Equal(t, int64(15), b.CommNotOverlappedNs)
	assert.Equal(t, int64(50-35), b.FreeNs, "span 50 minus busy 35")
	assert.Equal(t, int64(5), b.BubbleNs)
	assert.Equal(t, int64(45), b.StageNs, "span minus bubble")
	assert.Equal(t, int64(15), b.AllReduceNs)
	assert.Equal(t, b.StageNs+b.BubbleNs, b.ComputingNs+b.CommNotOverlappedNs+b.FreeNs)
}

func TestDeviceWindowsFollowFlows(t *testing.T) {
	steps := []profile.StepMarker{{Step: 1, Interval: iv(0, 100)}, {Step: 2, Interval: iv(100, 200)}}
	// The device lags the host by 50: step 1's first kernel runs at 60, step 2's at 160.
	flows := []profile.DeviceFlow{{DeviceNs: 60, HostNs: 10}, {DeviceNs: 90, HostNs: 40}, {DeviceNs: 160, HostNs: 110}, {DeviceNs: 230, HostNs: 150}}
	w := deviceWindows(steps, flows)
	require.Len(t, w, 2)
	assert.Equal(t, int64(60), w[0].startNs)
	assert.Equal(t, int64(160), w[0].endNs)
	assert.Equal(t, int64(160), w[1].startNs)
	assert.Equal(t, int64(231), w[1].endNs)
	// Without flows the host windows are used.
	w = deviceWindows(steps, nil)
	assert.Equal(t, int64(0), w[0].startNs)
	assert.Equal(t, int64(100), w[0].endNs)
	assert.Equal(t, int64(200), w[1].endNs)
}

func TestTimelineStepsSplitByStep(t *testing.T) {
	r := &profile.Rank{
		HasTimeline: true,
		Timeline: profile.Timeline{
			Steps:   []profile.StepMarker{{Step: 1, Interval: iv(0, 100)}, {Step: 2, Interval: iv(100, 200)}},
			Compute: []profile.Interval{iv(10, 40), iv(110, 150)},
			CommOps: []profile.CommOp{{Name: "hcom_allReduce__1_0_1", Type: "allreduce", Interval: iv(30, 60)}},
		},
	}
	steps, overlapRows := timelineSteps(r)
	assert.Empty(t, overlapRows, "no Overlap Analysis layer in this trace")
	require.Len(t, steps, 2)
	assert.Equal(t, StepBreakdown{Step: 1, HasStep: true, StageNs: 50, ComputingNs: 30, CommunicationNs: 30,
		CommNotOverlappedNs: 20, OverlappedNs: 10, PreparingNs: 10, HasPreparing: true, AllReduceNs: 30,
		ExposedNs: 20, HasExposed: true,
		Groups: []GroupComm{{Group: "", CommunicationNs: 30, CommNotOverlappedNs: 20, ExposedNs: 20, ExposedMinNs: 20, ExposedMaxNs: 20}}}, steps[0])
	assert.Equal(t, StepBreakdown{Step: 2, HasStep: true, StageNs: 40, ComputingNs: 40, PreparingNs: 10, HasPreparing: true, HasExposed: true}, steps[1])
}

// The exposed communication is measured on the timeline: the time an op runs while
// no compute kernel and no receive does. Where receives do not overlap computation
// (a pipeline stage waiting for its input) that is the profiler's arithmetic,
// Not Overlapped − Bubble; where they do (a context-parallel ring receiving beside the
// attention) the arithmetic subtracts receive time that was never exposed.
func TestExposedCommMeasuredNotSubtracted(t *testing.T) {
	recv := func(a, b int64) profile.CommOp {
		return profile.CommOp{Name: "hcom_receive__1_0_1", Type: "receive", Group: "cp", Interval: iv(a, b)}
	}
	gather := func(a, b int64) profile.CommOp {
		return profile.CommOp{Name: "hcom_allGather__2_0_1", Type: "allgather", Group: "tp", Interval: iv(a, b)}
	}
	for _, c := range []struct {
		name                    string
		compute                 []profile.Interval
		ops                     []profile.CommOp
		wantExposed, arithmetic int64
	}{
		// Pipeline: the receive waits alone, then a gather runs 20 ns exposed.
		{"receive alone", []profile.Interval{iv(0, 100), iv(200, 300)}, []profile.CommOp{recv(100, 180), gather(180, 200)}, 20, 20},
		// Ring attention: the receive runs beside compute; the gather's 20 ns are exposed.
		{"receive beside compute", []profile.Interval{iv(0, 300)}, []profile.CommOp{recv(50, 250), gather(300, 320)}, 20, 20 - 200},
		// Half of the receive beside compute, a gather exposed while it receives.
		{"gather under a receive", []profile.Interval{iv(0, 100)}, []profile.CommOp{recv(50, 150), gather(120, 200)}, 50, 100 - 100},
		// Two receives at once: Bubble counts both, the union once.
		{"receives at once", []profile.Interval{iv(0, 10), iv(90, 300)}, []profile.CommOp{recv(10, 60), recv(10, 60), gather(60, 90)}, 30, 80 - 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := breakdown(c.compute, c.ops).StepBreakdown
			assert.True(t, b.HasExposed)
			assert.Equal(t, c.wantExposed, b.ExposedNs)
			assert.Equal(t, min(c.wantExposed, b.StageNs), b.ExposedCommNs())
			assert.Equal(t, c.arithmetic, b.CommNotOverlappedNs-b.BubbleNs, "the profiler's arithmetic")
			// Without a timeline the profiler's arithmetic is all there is.
			b.HasExposed = false
			assert.Equal(t, min(max(c.arithmetic, 0), b.StageNs), b.ExposedCommNs())
		})
	}
}

// Within 0.5% nothing is said; from 0.5% to 1% a warning; above 1% a problem, unless
// only the fields the profiler's op records decide differ (issue 36: its step table
// and its own op rows disagree, which no user can fix): then a warning, the step
// table reported.
func TestCompareWithStepTraceBands(t *testing.T) {
	tests := []struct {
		name                       string
		communicationUs, computeUs int64
		warnings, problems         int
		self                       bool
		want                       string
	}{
		{"agrees within 0.5%", 50_200, 10_000, 0, 0, false, ""},
		{"0.8% off: a warning", 50_400, 10_000, 1, 0, false, "rank 4 step 3: Communication recomputed from the timeline is 50000.000 us, step_trace_time.csv says 50400.000 us (-0.79%)"},
		{"3.8% off in Communication alone: the profiler disagrees with itself", 52_000, 10_000, 1, 0, true,
			"rank 4 step 3: Communication from the profiler's own op records is 50000.000 us, its step table (step_trace_time.csv) says 52000.000 us (-3.85%): the profiler disagrees with itself; its step table is reported, as the profiler and msprof-analyze report it (Computing and Stage agree)"},
		{"3.8% off in Computing: a problem", 50_000, 10_400, 0, 1, false,
			"step_trace_time.csv, step 3: Computing recomputed from the timeline is 10000.000 us, the profiler's is 10400.000 us (-3.85%): the profiler's step figures are reported for this rank"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := []StepBreakdown{{Step: 3, StageNs: 100_000_000, ComputingNs: 10_000_000, CommunicationNs: 50_000_000}}
			rows := []profile.StepTraceRow{{Step: 3, HasStep: true, StageNs: 100_000_000, ComputingNs: tc.computeUs * 1000, CommunicationNs: tc.communicationUs * 1000}}
			c := compareWithStepTrace(4, got, rows, "step_trace_time.csv")
			require.Len(t, c.warnings, tc.warnings, "%v", c.warnings)
			require.Len(t, c.problems, tc.problems, "%v", c.problems)
			assert.Equal(t, tc.self, c.selfDisagreement)
			for _, m := range append(c.warnings, c.problems...) {
				assert.Equal(t, tc.want, m)
			}
		})
	}
}

// Steps the profiler measured that the timeline has no marker for are named: the
// report's mean covers only the marked ones.
func TestCompareWithStepTraceNamesUnmarkedSteps(t *testing.T) {
	step := func(n int) profile.StepTraceRow {
		return profile.StepTraceRow{Step: n, HasStep: true, StageNs: 100_000_000, ComputingNs: 10_000_000}
	}
	got := []StepBreakdown{{Step: 3, StageNs: 100_000_000, ComputingNs: 10_000_000}}
	c := compareWithStepTrace(4, got, []profile.StepTraceRow{step(2), step(3), step(4), step(5)}, "step_trace_time.csv")
	assert.Empty(t, c.problems)
	assert.Equal(t, []string{"rank 4: step_trace_time.csv lists step(s) 2, 4-5, which the timeline has no ProfilerStep marker for: not measured"}, c.warnings)
	c = compareWithStepTrace(4, got, []profile.StepTraceRow{step(3)}, "step_trace_time.csv")
	assert.Empty(t, c.warnings)
}

// A recomputation more than 1% off step_trace_time.csv is not reported: the profiler's
// figures are, the rank says so and is incomplete.
func TestStepTraceDisagreementIsAProblem(t *testing.T) {
	r := &profile.Rank{
		Rank: 2, Dir: "run/rank2", HasTimeline: true,
		FilesUsed: []string{"ASCEND_PROFILER_OUTPUT/step_trace_time.csv", "ASCEND_PROFILER_OUTPUT/trace_view.json"},
		// The profiler: 200 us of computing, 700 us of communication, 600 us exposed.
		Timeline: profile.Timeline{
			Steps:   []profile.StepMarker{{Step: 1, Interval: iv(0, 1_000_000)}},
			Compute: []profile.Interval{iv(100_000, 600_000)},
			CommOps: []profile.CommOp{{Name: "hcom_allReduce__1_0_1", Type: "allreduce", Interval: iv(500_000, 900_000)}},
		}, Reported: profile.Reported{
			StepTrace: []profile.StepTraceRow{{Step: 1, HasStep: true, ComputingNs: 200_000, CommNotOverlappedNs: 600_000, OverlappedNs: 100_000,
				CommunicationNs: 700_000, FreeNs: 0, StageNs: 800_000, PreparingNs: 100_000, HasPreparing: true}},
		},
	}
	rr, warnings := analyzeRank(r)
	assert.Equal(t, SourceStepTrace, rr.Source)
	assert.True(t, rr.Incomplete)
	require.Len(t, rr.Steps, 1)
	s := rr.Steps[0]
	assert.Equal(t, int64(600_000), s.CommNotOverlappedNs)
	assert.Equal(t, int64(800_000), s.StageNs)
	assert.InDelta(t, 0.75, s.CommShare(), 1e-12, "the profiler's share")
	assert.Equal(t, int64(400_000), s.AllReduceNs, "the op union, from the timeline")
	assert.Nil(t, s.Groups)
	file := filepath.Join("run/rank2", "ASCEND_PROFILER_OUTPUT/step_trace_time.csv")
	assert.Equal(t, []string{
		file + ", step 1: Computing recomputed from the timeline is 500.000 us, the profiler's is 200.000 us (+150.00%): the profiler's step figures are reported for this rank",
		file + ", step 1: Communication recomputed from the timeline is 400.000 us, the profiler's is 700.000 us (-42.86%): the profiler's step figures are reported for this rank",
		file + ", step 1: Communication(Not Overlapped) recomputed from the timeline is 300.000 us, the profiler's is 600.000 us (-50.00%): the profiler's step figures are reported for this rank",
	}, rr.Problems)
	require.Len(t, warnings, 3)
	assert.Equal(t, "rank 2: "+rr.Problems[0], warnings[0])
	res := analyzeSummaries(&profile.Cluster{Ranks: []*profile.Rank{r}}, []*RankSummary{{result: rr}}, Options{})
	assert.True(t, res.Summary.Incomplete)
}

func TestOverlapLayerCrossCheck(t *testing.T) {
	r := &profile.Rank{
		HasTimeline: true,
		// The profiler's rows say Computing lasted 600 us: 20% more than the tasks show.
		Timeline: profile.Timeline{
			Steps:   []profile.StepMarker{{Step: 1, Interval: iv(0, 1_000_000)}},
			Compute: []profile.Interval{iv(0, 500_000)},
			CommOps: []profile.CommOp{{Name: "hcom_allReduce__1_0_1", Type: "allreduce", Interval: iv(400_000, 900_000)}},
		}, Reported: profile.Reported{
			Overlap: profile.OverlapLayer{Computing: []profile.Interval{iv(0, 600_000)},
				Communication: []profile.Interval{iv(400_000, 900_000)}, CommNotOverlapped: []profile.Interval{iv(500_000, 900_000)}},
		},
	}
	rr, warnings := analyzeRank(r)
	require.Len(t, warnings, 1, "%v", warnings)
	assert.Equal(t, "rank 0: the trace, step 1: Computing recomputed from the timeline is 500.000 us, the profiler's is 600.000 us (-16.67%): the profiler's step figures are reported for this rank", warnings[0])
	assert.Equal(t, SourceOverlapRows, rr.Source)
	assert.True(t, rr.Incomplete)
	require.Len(t, rr.Steps, 1)
	assert.Equal(t, StepBreakdown{Step: 1, HasStep: true, StageNs: 900_000, ComputingNs: 600_000, CommunicationNs: 500_000,
		CommNotOverlappedNs: 400_000, OverlappedNs: 100_000, PreparingNs: 0, HasPreparing: true, AllReduceNs: 500_000}, rr.Steps[0],
		"Preparing from the rows: the first Computing row starts with the host step, a known 0")
}

func TestMetricNamesMatchMetrics(t *testing.T) {
	x := 0.0
	m := Summary{ExposedTransferShare: &x, ExposedWaitShare: &x, OverlapRatio: &x, AllReduceShare: &x}.Metrics()
	assert.NotContains(t, Summary{}.Metrics(), "overlap_ratio", "absent without communication")
	assert.NotContains(t, Summary{}.Metrics(), "allreduce_share", "absent where no op record names a step")
	assert.Len(t, m, len(MetricNames))
	for _, n := range MetricNames {
		assert.Contains(t, m, n)
	}
}

// Preparing is known from a step_trace_time.csv with the column and from the
// timeline; a csv without the column leaves it unknown, not 0.
func TestPreparingKnownOrAbsent(t *testing.T) {
	steps := stepTraceSteps([]profile.StepTraceRow{
		{Step: 1, HasStep: true, StageNs: 10_000, PreparingNs: 0, HasPreparing: true},
		{Step: 2, HasStep: true, StageNs: 10_000},
	})
	require.Len(t, steps, 2)
	assert.True(t, steps[0].HasPreparing)
	assert.Equal(t, int64(0), steps[0].PreparingNs)
	assert.False(t, steps[1].HasPreparing)
	// A run without step markers has no host step to prepare.
	r := &profile.Rank{HasTimeline: true, Timeline: profile.Timeline{Compute: []profile.Interval{iv(10, 40)}}}
	tl, _ := timelineSteps(r)
	require.Len(t, tl, 1)
	assert.False(t, tl[0].HasPreparing)
}

// TestMicroBatches counts backward passes from where the backward kernels fall among
// the compute kernels: a forward pass (a long stretch without them) separates two.
func TestMicroBatches(t *testing.T) {
	// kernels builds compute from a pattern: F a forward kernel, B a backward one.
	kernels := func(pattern string) (compute, backward []profile.Interval) {
		for i, c := range pattern {
			iv := profile.Interval{StartNs: int64(10 * i), EndNs: int64(10*i + 5)}
			compute = append(compute, iv)
			if c == 'B' {
				backward = append(backward, iv)
			}
		}
		return compute, backward
	}
	for _, tc := range []struct {
		pattern string
		want    int
	}{
		{"FFFFFFFF", 0},
		{"FFFFFFFFBBFBBFBFFBBFF", 1},
		{"FFFFFFFFBBFBBFBFFBBFFFFFFFFFBBFBBFBBFBFFFFFFFFFFFBBBFBBBB", 3},
		// A gradient clip after the last pass is no micro-batch.
		{"FFFFFFFFBBFBBFBFFBBFFFFFFFFFFFFFB", 1},
	} {
		c, b := kernels(tc.pattern)
		assert.Equal(t, tc.want, microBatches(c, b), tc.pattern)
	}
}

// A rank whose timeline lost the marker of a step the other ranks have, between two of
// its own, is incomplete: its step before took in that step's work. Steps at either end
// of a rank's range, profiler-sourced steps and Kineto's host windows are not flagged.
func TestFlagRanksMissingSteps(t *testing.T) {
	steps := func(ns ...int) []StepBreakdown {
		out := make([]StepBreakdown, len(ns))
		for i, n := range ns {
			out[i] = StepBreakdown{Step: n, StageNs: 1}
		}
		return out
	}
	ranks := []RankResult{
		{Rank: 0, Dir: "r0", Source: SourceTimeline, Steps: steps(10, 11, 12, 13)},
		{Rank: 1, Dir: "r1", Source: SourceTimeline, Steps: steps(10, 12)},                          // lost 11
		{Rank: 2, Dir: "r2", Source: SourceTimeline, Steps: steps(11, 12)},                          // began later: fine
		{Rank: 3, Dir: "r3", Source: SourceStepTrace, Steps: steps(10, 13)},                         // the profiler's own rows
		{Rank: 4, Dir: "r4", Source: SourceTimeline, ClipToStepWindows: true, Steps: steps(10, 12)}, // Kineto's host windows
		{Rank: 5, Dir: "r5", Source: SourceTimeline, Steps: steps(10, 13)},                          // lost 11 and 12
	}
	flagRanksMissingSteps(ranks)
	for _, rr := range ranks {
		switch rr.Rank {
		case 1:
			assert.Equal(t, []string{"r1: no ProfilerStep marker for step(s) 11, which other ranks have, between steps of its own: the step before each took in its work"}, rr.Problems)
		case 5:
			assert.Equal(t, []string{"r5: no ProfilerStep marker for step(s) 11-12, which other ranks have, between steps of its own: the step before each took in its work"}, rr.Problems)
		default:
			assert.Empty(t, rr.Problems, "rank %d", rr.Rank)
			assert.False(t, rr.Incomplete, "rank %d", rr.Rank)
			continue
		}
		assert.True(t, rr.Incomplete, "rank %d", rr.Rank)
	}
	// The reports point to the warnings for what made the input incomplete: the
	// problems the analysis found itself are listed there once.
	already := []string{"rank 1: r1: no ProfilerStep marker for step(s) 11, which other ranks have, between steps of its own: the step before each took in its work"}
	assert.Equal(t, []string{"rank 5: r5: no ProfilerStep marker for step(s) 11-12, which other ranks have, between steps of its own: the step before each took in its work"},
		unlistedProblems(ranks, already))
}
