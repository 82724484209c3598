package profile

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Values a profile cannot hold are dropped with a problem that names the file, the
// item, the field and the value; the values it can hold pass untouched.
func TestValidateStepRows(t *testing.T) {
	good := StepTraceRow{Step: 7, HasStep: true, ComputingNs: 60_000, CommNotOverlappedNs: 30_000, OverlappedNs: 10_000,
		CommunicationNs: 40_000, FreeNs: 10_000, StageNs: 100_000}
	cases := []struct {
		name string
		edit func(*StepTraceRow)
		want string // "" when the row is kept
	}{
		{"good", func(*StepTraceRow) {}, ""},
		{"negative Stage", func(r *StepTraceRow) { r.StageNs = -5000 }, "Stage = -5 us is out of range"},
		{"zero Stage", func(r *StepTraceRow) { r.StageNs = 0 }, "Stage = 0 us: a step has a length"},
		// The parsers saturate a figure int64 ns cannot hold (1e300 µs; NaN to the
		// lowest), so that it is dropped here.
		{"Stage 1e300", func(r *StepTraceRow) { r.StageNs = math.MaxInt64 }, "Stage = 9.223372036854776e+15 us is out of range"},
		{"NaN", func(r *StepTraceRow) { r.FreeNs = math.MinInt64 }, "Free = -9.223372036854776e+15 us is out of range"},
		{"communication above the step", func(r *StepTraceRow) { r.CommunicationNs, r.CommNotOverlappedNs = 491_000, 491_000 },
			"Communication = 491 us exceeds the step (Stage 100 + Bubble 0 us)"},
		{"not overlapped above communication", func(r *StepTraceRow) { r.CommNotOverlappedNs = 45_000 },
			"Communication(Not Overlapped) = 45 us exceeds Communication = 40 us"},
		{"a pipeline's receive is outside Stage", func(r *StepTraceRow) {
			r.BubbleNs, r.CommunicationNs, r.CommNotOverlappedNs = 50_000, 120_000, 110_000
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := good
			c.edit(&row)
			r := &Rank{FilesUsed: []string{"ASCEND_PROFILER_OUTPUT/step_trace_time.csv"}, Reported: Reported{StepTrace: []StepTraceRow{row}}}
			r.Normalize()
			if c.want == "" {
				assert.Empty(t, r.Problems)
				assert.Len(t, r.StepTrace, 1)
				return
			}
			assert.Empty(t, r.StepTrace)
			require.Len(t, r.Problems, 1)
			assert.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv: step 7: "+c.want+": row dropped", r.Problems[0])
		})
	}
	r := &Rank{Reported: Reported{StepTrace: []StepTraceRow{good, good}}}
	r.Normalize()
	assert.Len(t, r.StepTrace, 1)
	assert.Equal(t, []string{"step_trace_time.csv: step 7 appears twice: the second row dropped"}, r.Problems)
}

func TestValidateOps(t *testing.T) {
	ms := int64(1e6)
	stats := func(edit func(*CommOpStats)) CommOpStats {
		s := CommOpStats{Step: 50, Name: "hcom_allReduce__586_0_1", Group: "17522688603477080586", StartNs: 1e18,
			ElapseNs: 79 * ms, TransitNs: ms / 4, WaitNs: 5 * ms, SyncNs: 5 * ms, IdleNs: 73*ms + 3*ms/4,
			Transports: map[string]TransportStats{"HCCS": {Bytes: 1 << 20, TimeNs: ms / 4, LargePacketRatio: 0.5}}}
		edit(&s)
		return s
	}
	cases := []struct {
		name string
		s    CommOpStats
		want string
	}{
		{"good", stats(func(*CommOpStats) {}), ""},
		{"wait -5 ms", stats(func(s *CommOpStats) { s.WaitNs = -5 * ms }), "a negative time (Transit 0.25, Wait -5, Synchronization 5 ms)"},
		{"wait 100 s in a 79 ms op", stats(func(s *CommOpStats) { s.WaitNs = 100_000 * ms }), "Transit 0.25 ms + Wait 100000 ms exceed the Elapse Time 79 ms"},
		{"sync above wait", stats(func(s *CommOpStats) { s.SyncNs = 6 * ms }), "Synchronization 6 ms exceeds Wait 5 ms"},
		{"negative elapse", stats(func(s *CommOpStats) { s.ElapseNs = -ms; s.TransitNs, s.WaitNs, s.SyncNs = 0, 0, 0 }), "Elapse Time -1 ms is out of range"},
		// Found by setting each figure of the real communication.json to -5 in turn:
		// each was read with exit 0.
		{"idle -5 ms", stats(func(s *CommOpStats) { s.IdleNs = -5 * ms }), "Idle Time -5 ms is not Elapse − Transit − Wait (73.75 ms)"},
		{"idle 0 (a layout without it)", stats(func(s *CommOpStats) { s.IdleNs = 0 }), ""},
		{"negative start", stats(func(s *CommOpStats) { s.StartNs = -5000 }), "Start Timestamp -5000 ns is negative"},
		{"large packet ratio -5", stats(func(s *CommOpStats) { s.Transports = map[string]TransportStats{"SDMA": {LargePacketRatio: -5}} }),
			"transport SDMA: Large Packet Ratio -5 is not a fraction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Rank{FilesUsed: []string{"ASCEND_PROFILER_OUTPUT/communication.json"}, Reported: Reported{CommStats: []CommOpStats{c.s}}}
			r.Normalize()
			if c.want == "" {
				assert.Empty(t, r.Problems)
				return
			}
			assert.Empty(t, r.CommStats)
			require.Len(t, r.Problems, 1)
			assert.Equal(t, "ASCEND_PROFILER_OUTPUT/communication.json: op hcom_allReduce__586_0_1@17522688603477080586 step 50: "+c.want+": dropped", r.Problems[0])
		})
	}
	r := &Rank{
		Timeline: Timeline{
			CommOps: []CommOp{{Name: "hcom_allReduce__1_0_1", Interval: Interval{StartNs: 100, EndNs: 50}}},
			Compute: []Interval{{StartNs: 10, EndNs: 5}, {StartNs: 20, EndNs: 30}, {StartNs: 40, EndNs: 35}},
		},
	}
	r.Normalize()
	assert.Empty(t, r.CommOps)
	assert.Equal(t, []Interval{{StartNs: 20, EndNs: 30}}, r.Compute)
	assert.Len(t, r.Problems, 2, "one problem for the op, one for the compute tasks: %v", r.Problems)

	// A negative count read as an unknown size, with exit 0.
	r = &Rank{HasTimeline: true, Timeline: Timeline{CommOps: []CommOp{
		{Name: "hcom_allReduce__1_0_1", Interval: Interval{StartNs: 10, EndNs: 50}, Count: -5, DataType: "FP32"},
		{Name: "hcom_allReduce__1_1_1", Interval: Interval{StartNs: 60, EndNs: 90}, Count: 5, DataType: "FP32"},
	}}}
	r.Normalize()
	require.Len(t, r.CommOps, 1)
	assert.Equal(t, int64(5), r.CommOps[0].Count)
	require.Len(t, r.Problems, 1)
	assert.Contains(t, r.Problems[0], "op hcom_allReduce__1_0_1 at 10 ns: count -5 is negative: dropped")

	// Before the clock's zero: a Kineto kernel at ts -5 µs fell out of every step.
	r = &Rank{HasTimeline: true, Timeline: Timeline{Compute: []Interval{{StartNs: -5000, EndNs: 1000}, {StartNs: 2000, EndNs: 3000}}}}
	r.Normalize()
	assert.Equal(t, []Interval{{StartNs: 2000, EndNs: 3000}}, r.Compute)
	require.Len(t, r.Problems, 1)
	assert.Contains(t, r.Problems[0], "a compute task at -5000 ns")

	// The same for kernel_details.csv's comm rows: an op at -5 µs was read, exit 0.
	r = &Rank{Reported: Reported{KernelCommOps: []CommOp{{Name: "hcom_allReduce__1_0_1", Interval: Interval{StartNs: -5000, EndNs: -2000}}}}}
	r.Normalize()
	assert.Empty(t, r.KernelCommOps)
	require.Len(t, r.Problems, 1)
	assert.Equal(t, "kernel_details.csv: op hcom_allReduce__1_0_1 at -5000 ns: a start before the clock, or a duration 3000 ns out of range: dropped", r.Problems[0])
}

// Normalize puts a list a parser left out of order in start order, and leaves the
// order of a sorted list's ties as the parser gave it.
func TestNormalizeSortsTheTimeline(t *testing.T) {
	r := &Rank{Timeline: Timeline{
		Compute: []Interval{{StartNs: 30, EndNs: 40}, {StartNs: 10, EndNs: 20}},
		CommOps: []CommOp{{Name: "b", Interval: Interval{StartNs: 5, EndNs: 6}}, {Name: "a", Interval: Interval{StartNs: 5, EndNs: 9}}},
		Flows:   []DeviceFlow{{DeviceNs: 9, HostNs: 1}, {DeviceNs: 3, HostNs: 2}},
	}}
	r.Normalize()
	assert.Equal(t, []Interval{{StartNs: 10, EndNs: 20}, {StartNs: 30, EndNs: 40}}, r.Compute)
	assert.Equal(t, "b", r.CommOps[0].Name, "a tie keeps the parser's order")
	assert.Equal(t, []DeviceFlow{{DeviceNs: 3, HostNs: 2}, {DeviceNs: 9, HostNs: 1}}, r.Flows)
	assert.Empty(t, r.Problems)
}

// A step marker twice (a trace written twice, or two runs in one file) makes the rank
// incomplete: each figure of the step would count both copies.
func TestNormalizeDuplicateStepMarker(t *testing.T) {
	r := &Rank{HasTimeline: true, FilesUsed: []string{"ASCEND_PROFILER_OUTPUT/trace_view.json"}, Timeline: Timeline{Steps: []StepMarker{
		{Step: 50, Interval: Interval{StartNs: 1000, EndNs: 2000}},
		{Step: 51, Interval: Interval{StartNs: 2000, EndNs: 3000}},
		{Step: 50, Interval: Interval{StartNs: 5000, EndNs: 6000}},
	}}}
	r.Normalize()
	require.Len(t, r.Steps, 2)
	assert.Equal(t, []int{50, 51}, []int{r.Steps[0].Step, r.Steps[1].Step})
	assert.Equal(t, []string{"ASCEND_PROFILER_OUTPUT/trace_view.json: ProfilerStep#50 appears twice (at 1000 ns and 5000 ns): the second dropped"}, r.Problems)
}
