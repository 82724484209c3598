package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// With ClipToStepWindows a step is its host window: device intervals are clipped to
// it (work straddling two steps is split between them), flows are not consulted, and
// Stage is the window's length.
func TestClipToStepWindows(t *testing.T) {
	r := &profile.Rank{
		HasTimeline:       true,
		ClipToStepWindows: true,
		// A long kernel from before step 3 into it, one straddling 3→4, one after step 4.
		// Flows that would move the windows if they were used.
		Timeline: profile.Timeline{
			Steps:   []profile.StepMarker{{Step: 3, Interval: iv(100, 200)}, {Step: 4, Interval: iv(200, 300)}},
			Compute: []profile.Interval{iv(0, 130), iv(150, 250), iv(260, 270), iv(400, 500)},
			CommOps: []profile.CommOp{
				{Name: "ncclKernel_AllReduce_RING_LL_Sum_float", Type: "allreduce", Interval: iv(120, 160)},
				{Name: "ncclKernel_Broadcast_RING_LL_Sum_int8_t", Type: "broadcast", Interval: iv(190, 230)},
			},
			Flows: []profile.DeviceFlow{{DeviceNs: 1000, HostNs: 150}},
		},
	}
	steps, overlapRows := timelineSteps(r)
	assert.Nil(t, overlapRows)
	require.Len(t, steps, 2)

	s := steps[0] // compute [100,130) [150,200); comm [120,160) [190,200)
	assert.Equal(t, 3, s.Step)
	assert.True(t, s.HasStep)
	assert.Equal(t, int64(100), s.StageNs, "the window's length")
	assert.Equal(t, int64(30+50), s.ComputingNs)
	assert.Equal(t, int64(40+10), s.CommunicationNs)
	assert.Equal(t, int64(10+10+10), s.OverlappedNs)
	assert.Equal(t, int64(20), s.CommNotOverlappedNs)
	assert.Equal(t, int64(100-100), s.FreeNs, "busy [100,200)")
	assert.Equal(t, int64(0), s.PreparingNs)
	assert.Equal(t, int64(40), s.AllReduceNs)

	s = steps[1] // compute [200,250) [260,270); comm [200,230)
	assert.Equal(t, 4, s.Step)
	assert.Equal(t, int64(100), s.StageNs)
	assert.Equal(t, int64(60), s.ComputingNs)
	assert.Equal(t, int64(30), s.CommunicationNs)
	assert.Equal(t, int64(0), s.CommNotOverlappedNs)
	assert.Equal(t, int64(100-60), s.FreeNs)
	assert.Equal(t, int64(0), s.AllReduceNs)
	assert.Equal(t, s.StageNs+s.BubbleNs, s.ComputingNs+s.CommNotOverlappedNs+s.FreeNs)

	// An empty step keeps its length, all of it free; preparing needs device work.
	r.Steps = append(r.Steps, profile.StepMarker{Step: 5, Interval: iv(300, 350)})
	steps, _ = timelineSteps(r)
	require.Len(t, steps, 3)
	assert.Equal(t, StepBreakdown{Step: 5, HasStep: true, StageNs: 50, FreeNs: 50}, steps[2])

	// Without the option the same rank is mapped through its flows, unclipped.
	r.ClipToStepWindows = false
	steps, _ = timelineSteps(r)
	assert.NotEqual(t, int64(100), steps[0].StageNs)
}

func TestClipIntervalsLongIntervals(t *testing.T) {
	ivs := []profile.Interval{iv(0, 1000), iv(10, 20), iv(500, 510), iv(990, 1100)}
	assert.Equal(t, []profile.Interval{iv(400, 600), iv(500, 510)}, clipIntervals(ivs, 400, 600, maxDur(ivs)))
	assert.Equal(t, []profile.Interval{iv(995, 1000), iv(995, 1005)}, clipIntervals(ivs, 995, 1005, maxDur(ivs)))
	assert.Empty(t, clipIntervals(ivs, 2000, 3000, maxDur(ivs)))
	assert.Empty(t, clipIntervals(nil, 0, 10, 0))
}

// Kineto groups are keyed by the process group name and carry their own size source.
func TestCollectivesKeyedGroups(t *testing.T) {
	r := &profile.Rank{HasTimeline: true,
		Timeline: profile.Timeline{
			CommOps: []profile.CommOp{
				{Type: "allreduce", Group: "0", DataType: "FP32", Count: 1000, Interval: iv(0, 1000)},
				{Type: "allgather", Group: "1", DataType: "BF16", Count: 800, Interval: iv(0, 400)},
			},
		},
	}
	r.Metadata.ParallelGroups = []profile.ParallelGroup{
		{Key: "0", Name: "default_pg", GlobalRanks: []int{0, 1, 2, 3}, Source: "distributedInfo.pg_config"},
		{Key: "1", Size: 8, Source: "process group args of the NCCL ops"}, // ranks unknown, size known
	}
	colls, warnings := mergeCollectives(&profile.Cluster{Ranks: []*profile.Rank{r}}, [][]collPart{rankCollectives(r, nil)}, nil)
	assert.Empty(t, warnings)
	require.Len(t, colls, 2)
	assert.Equal(t, "allreduce", colls[0].Op)
	assert.Equal(t, "default_pg", colls[0].GroupName)
	assert.Equal(t, 4, colls[0].GroupSize)
	assert.Equal(t, "distributedInfo.pg_config", colls[0].GroupSizeSource)
	assert.InDelta(t, 4.0*2*3/4, colls[0].BusBwGBps, 1e-12)
	assert.Equal(t, 8, colls[1].GroupSize)
	assert.Equal(t, "", colls[1].GroupName)
	assert.InDelta(t, 1600.0/400*7/8, colls[1].BusBwGBps, 1e-12)
}

func TestInspectClipRank(t *testing.T) {
	r := &profile.Rank{HasTimeline: true, ClipToStepWindows: true, Traits: profile.Traits{NCCL: true, OpaqueOps: true},
		Timeline: profile.Timeline{
			Steps:   []profile.StepMarker{{Step: 1, Interval: iv(0, 10)}},
			Compute: []profile.Interval{iv(1, 2)},
		},
	}
	c := capabilityMap(Inspect(&profile.Cluster{Ranks: []*profile.Rank{r}})[0])
	assert.True(t, c["host_device_mapping"].Available, "no flows needed with one clock")
}

// Groups without a stated size are each warned about once, in the same order every
// run: the warnings were once listed in map order, and a report of the same input
// differed between runs (torchnpu-1rank-kernels in ../shared/realdata).
func TestCollectiveWarningsInOrder(t *testing.T) {
	r := &profile.Rank{HasTimeline: true}
	for g := range 12 {
		r.CommOps = append(r.CommOps, profile.CommOp{Type: "allreduce", Group: fmt.Sprint(100 + g), DataType: "FP32", Count: 10, Interval: iv(int64(g)*10, int64(g)*10+5)})
	}
	c := &profile.Cluster{Ranks: []*profile.Rank{r}}
	_, first := mergeCollectives(c, [][]collPart{rankCollectives(r, nil)}, nil)
	require.Len(t, first, 12)
	assert.True(t, strings.HasPrefix(first[0], "group 100:"), first[0])
	for range 20 {
		_, again := mergeCollectives(c, [][]collPart{rankCollectives(r, nil)}, nil)
		require.Equal(t, first, again)
	}
}
