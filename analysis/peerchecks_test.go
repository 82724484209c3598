package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/profile"
)

// TestCheckSamplesAtTheirLimits builds one rank whose single op copies over SDMA
// while a kernel runs, and moves the limits across its values: what each check
// counts, and its worst case (advisor's TestChecksAtTheirThresholds decides on them).
func TestCheckSamplesAtTheirLimits(t *testing.T) {
	op := profile.CommOp{Name: "hcom_allReduce__1_0_1", Type: "allreduce", Group: "g", GroupRow: "row", Interval: iv(0, 1_000_000),
		DataType: "FP32", Count: 100 << 20 / 4} // 100 MiB
	task := func(start, end, size int64) profile.CommTask {
		return profile.CommTask{Plane: 0, TaskLabels: &profile.TaskLabels{GroupRow: "row", Name: "Memcpy", TransportType: "SDMA", LinkType: "HCCS"}, Interval: iv(start, end), SrcRank: 0, DstRank: 1, SizeBytes: size}
	}
	r := &profile.Rank{Rank: 0, HasTimeline: true,
		// The first copy (2 MiB) runs under the kernel at 10.5 GB/s, the second alone;
		// the second's size is not a multiple of 512.
		Metadata: profile.Metadata{Env: map[string]string{"HCCL_BUFFSIZE": "64"}},
		Timeline: profile.Timeline{
			CommOps:   []profile.CommOp{op},
			Compute:   []profile.Interval{iv(0, 400_000)},
			CommTasks: []profile.CommTask{task(100_000, 300_000, 2_097_152), task(500_000, 700_000, 2_097_252)},
		},
	}
	ops := []OpStat{{Rank: 0, Step: -1, Name: op.Name, Type: "allreduce", Bytes: op.Bytes(),
		Transports: Transports{{Transport: "HCCS", Bytes: 4_194_404}, {Transport: "SDMA", Bytes: 4_194_404}}}}
	th := DefaultLimits
	got := mergeCheckSamples([]CheckSamples{rankCheckSamples(r, indexRank(r), ops, th, nil)})

	assert.Equal(t, [2]int{1, 1}, [2]int{got.SmallSDMA, got.SDMAOps}, "4 MB < 16 MB in 1 of 1 ops")
	assert.Equal(t, [2]int{0, 0}, [2]int{got.SmallRDMA, got.RDMAOps}, "no RDMA")
	assert.Equal(t, 1, got.ContendedTransfers, "the 2 MiB copy runs under the kernel")
	assert.InDelta(t, 10.49, float64(got.ContendedBytes)/float64(got.ContendedNs), 0.01, "2 MiB in 200 µs")
	assert.Equal(t, int64(100_000), got.ContentionEx.Ref.StartNs)
	assert.Equal(t, [2]int{1, 2}, [2]int{got.Misaligned, got.SDMATransfers})
	assert.Contains(t, got.AlignmentEx.Text, "2097252 bytes (100 mod 512)")
	assert.Equal(t, [2]int{1, 1}, [2]int{got.OverBuffer, got.SizedOps}, "100 MiB > HCCL_BUFFSIZE=64")
	assert.Contains(t, got.BufferEx.Text, "HCCL_BUFFSIZE=64: 2 rounds")

	// At the other side of each limit.
	th.SmallSDMABytes = 4_000_000
	th.AlignmentBytes = 4
	th.ContentionMinBytes = 3_000_000
	r.Metadata.Env["HCCL_BUFFSIZE"] = "100"
	got = mergeCheckSamples([]CheckSamples{rankCheckSamples(r, indexRank(r), ops, th, nil)})
	assert.Equal(t, 0, got.SmallSDMA, "4.19 MB is not < 4 MB")
	assert.Equal(t, 0, got.ContendedTransfers, "2 MiB is under the 3 MB the contention check looks at")
	assert.Equal(t, 0, got.Misaligned, "both sizes are multiples of 4")
	assert.Equal(t, 0, got.OverBuffer, "100 MiB is not above 100 MiB")
	assert.False(t, got.BufferEx.Set)

	// The small ops' cost is the time they moved data; their elapse where unknown.
	// It is summed over the cluster's ops, under each transport's limit.
	ops[0].ElapseNs, ops[0].WaitNs, ops[0].MovingNs, ops[0].MovingSource = 1_000_000, 300_000, 400_000, "transit"
	th.SmallSDMABytes = DefaultLimits.SmallSDMABytes
	sdmaNs, rdmaNs := smallMessageCosts([]OpStat{ops[0], ops[0]}, th)
	assert.Equal(t, [2]int64{800_000, 0}, [2]int64{sdmaNs, rdmaNs}, "two ranks' 400 µs of moving, over SDMA only")
	ops[0].MovingSource = ""
	sdmaNs, _ = smallMessageCosts(ops, th)
	assert.Equal(t, int64(700_000), sdmaNs, "elapse less wait")
	th.SmallSDMABytes = 4_000_000
	sdmaNs, _ = smallMessageCosts(ops, th)
	assert.Zero(t, sdmaNs, "4.19 MB is not < 4 MB")
	th.SmallSDMABytes = DefaultLimits.SmallSDMABytes

	// An NCCL (Kineto) rank is not checked against HCCL_BUFFSIZE at all.
	r.NCCL = true
	r.Metadata.Env["HCCL_BUFFSIZE"] = "64"
	got = rankCheckSamples(r, indexRank(r), ops, th, nil)
	assert.Equal(t, [2]int{0, 0}, [2]int{got.OverBuffer, got.SizedOps})
}

// TestMergeCheckSamplesKeepsTheWorst: counts add up; the worst case is the smallest
// message, the slowest contended copy, the most rounds.
func TestMergeCheckSamplesKeepsTheWorst(t *testing.T) {
	ex := func(rank int, v float64) CheckExample {
		return CheckExample{Ref: CheckRef{Rank: rank}, Value: v, Set: true}
	}
	got := mergeCheckSamples([]CheckSamples{
		{SDMAOps: 2, SmallSDMA: 1, SmallSDMAEx: ex(0, 5), OverBuffer: 1, BufferEx: ex(0, 3)},
		{SDMAOps: 3, SmallSDMA: 2, SmallSDMAEx: ex(1, 4), OverBuffer: 1, BufferEx: ex(1, 2)},
		{SDMAOps: 1},
	})
	assert.Equal(t, [2]int{3, 6}, [2]int{got.SmallSDMA, got.SDMAOps})
	assert.Equal(t, 1, got.SmallSDMAEx.Ref.Rank, "the smaller message")
	assert.Equal(t, 0, got.BufferEx.Ref.Rank, "the more rounds")
	assert.Equal(t, 2, got.OverBuffer)
}

// HCCL_BUFFSIZE is what HCCL takes: a whole number of MB ≥ 1. Anything else read as
// unset without a word (a run with HCCL_BUFFSIZE=abc was checked against 200 MB as if
// it set nothing); it still does, and the analysis now says so.
func TestBuffsizeMB(t *testing.T) {
	cases := []struct {
		value string
		set   bool
		mb    int
		ok    bool
		bad   string
	}{
		{set: false},
		{value: "", set: true},
		{value: " 64 ", set: true, mb: 64, ok: true},
		{value: "abc", set: true, bad: "abc"},
		{value: "0", set: true, bad: "0"},
		{value: "-5", set: true, bad: "-5"},
		{value: "1.5", set: true, bad: "1.5"},
	}
	for _, c := range cases {
		env := map[string]string{}
		if c.set {
			env["HCCL_BUFFSIZE"] = c.value
		}
		mb, ok, bad := BuffsizeMB(env)
		assert.Equal(t, []any{c.mb, c.ok, c.bad}, []any{mb, ok, bad}, "%q", c.value)
	}
	r := &profile.Rank{Rank: 3, Metadata: profile.Metadata{Env: map[string]string{"HCCL_BUFFSIZE": "abc"}}}
	s := summarizeRank(r, Options{})
	assert.Contains(t, s.warnings, `rank 3: HCCL_BUFFSIZE="abc" in its environment is not a whole number of MB ≥ 1: the checks use the default, 200 MB`)
}

// A data type hcclprof has no element size for leaves the op's size unknown; a newer
// HCCL's type would do so without a word. The rank's warnings now name it.
func TestUnknownDataTypesAreSaid(t *testing.T) {
	r := &profile.Rank{Rank: 2, HasTimeline: true, Timeline: profile.Timeline{CommOps: []profile.CommOp{
		{Name: "hcom_allReduce__1_0_1", DataType: "FP4E2M1", Count: 8, Interval: profile.Interval{StartNs: 1, EndNs: 2}},
		{Name: "hcom_allReduce__1_1_1", DataType: "FP4E2M1", Count: 8, Interval: profile.Interval{StartNs: 3, EndNs: 4}},
		{Name: "hcom_allReduce__1_2_1", DataType: "FP32", Count: 8, Interval: profile.Interval{StartNs: 5, EndNs: 6}},
		{Name: "hcom_allReduce__1_3_1", Interval: profile.Interval{StartNs: 7, EndNs: 8}}, // no type: nothing to say
	}}}
	s := summarizeRank(r, Options{})
	assert.Contains(t, s.warnings, `rank 2: data type "FP4E2M1" (2 ops) has no element size hcclprof knows: those ops' sizes and bandwidths are unknown`)
	assert.Empty(t, unknownDataTypes(&profile.Rank{}))
}

// Only Memcpy, Reduce_Inline and RDMASend carry bytes in every real profile. A task
// type that carries bytes under another name (a newer HCCL's, or a damaged label: the
// real msprof trace with one task's type set to "x") dropped out of the links and
// the split without a word; the rank's warnings now name it.
func TestUnreadDataTasksAreSaid(t *testing.T) {
	var labels profile.TaskLabelSet
	task := func(name string, size int64) profile.CommTask {
		return profile.CommTask{TaskLabels: labels.Of(profile.TaskLabels{Name: name, TransportType: "SDMA"}), SizeBytes: size,
			Interval: profile.Interval{StartNs: 1, EndNs: 2}}
	}
	r := &profile.Rank{Rank: 1, HasTimeline: true, Timeline: profile.Timeline{CommTasks: []profile.CommTask{
		task("Memcpy", 1024), task("Notify_Wait", 0), task("Write_With_Notify", 512), task("Write_With_Notify", 512), task("x", 8),
	}}}
	assert.Equal(t, []string{`rank 1: HCCL tasks "Write_With_Notify" (2 tasks, 1024 bytes), "x" (1 tasks, 8 bytes) carry bytes but are not a type hcclprof reads as moving data (Memcpy, Reduce_Inline, RDMASend): they are not in the links or the time split`},
		dataTaskWarnings(r))
	r.CommTasks = r.CommTasks[:2]
	assert.Empty(t, dataTaskWarnings(r))
}
