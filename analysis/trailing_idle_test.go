package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// The idle time after a step's last task belongs to the step when torch_npu's window
// for the step (up to the later of its last task and the host step's end) holds the
// start of the Free row covering it; Stage then reaches to the next step's first task.
func TestTrailingIdleFollowsHostStepEnd(t *testing.T) {
	// Device work: step 1 at [10,40), step 2 at [110,150). Flows tie them to the steps.
	flows := []profile.DeviceFlow{{DeviceNs: 10, HostNs: 5}, {DeviceNs: 110, HostNs: 105}}
	compute := []profile.Interval{iv(10, 40), iv(110, 150)}
	// The profiler's layer drawn over every gap, as CANN 9.1 draws it.
	freeEverywhere := profile.OverlapLayer{Computing: compute, Free: []profile.Interval{iv(40, 110)}}
	// A layer drawn step by step: no Free row between the steps.
	freePerStep := profile.OverlapLayer{Computing: compute}
	tests := []struct {
		name         string
		hostStep1End int64
		overlap      profile.OverlapLayer
		stage1, free int64
	}{
		{"host step outlasts the device: gap is Free of step 1", 80, freeEverywhere, 100, 70},
		{"host step ended before the last task: window closes at the task", 30, freeEverywhere, 30, 0},
		{"host step ends exactly at the last task", 40, freeEverywhere, 30, 0},
		{"no Free row between the steps", 80, freePerStep, 30, 0},
		{"no Overlap Analysis layer", 80, profile.OverlapLayer{}, 30, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &profile.Rank{
				HasTimeline: true,

				Timeline: profile.Timeline{
					Steps:   []profile.StepMarker{{Step: 1, Interval: iv(0, tc.hostStep1End)}, {Step: 2, Interval: iv(100, 200)}},
					Compute: compute,
					Flows:   flows,
				}, Reported: profile.Reported{Overlap: tc.overlap},
			}
			steps, _ := timelineSteps(r)
			require.Len(t, steps, 2)
			assert.Equal(t, tc.stage1, steps[0].StageNs)
			assert.Equal(t, tc.free, steps[0].FreeNs)
			assert.Equal(t, int64(30), steps[0].ComputingNs)
			assert.Equal(t, int64(40), steps[1].StageNs, "the last step ends at its last task")
			assert.Equal(t, int64(0), steps[1].FreeNs)
		})
	}
}

// A run without step markers is one range, the collection: when the profiler draws a
// Free row from the last task onwards (msprof 25.5 draws it to the device's last task
// of the collection, which is no computation), the range reaches that row's end, and
// the recomputation agrees with the profiler's own rows. Free rows starting after the
// last task's end, or before the first task, are not the range's.
func TestClosingIdleWithoutStepMarkers(t *testing.T) {
	compute := []profile.Interval{iv(1000, 1100), iv(1200, 1300)}
	tests := []struct {
		name        string
		freeRows    []profile.Interval
		stage, free int64
		rowsAgree   bool // the profiler's rows in the range sum to the same Stage and Free
	}{
		{"Free row from the last task to the end of the collection", []profile.Interval{iv(1100, 1200), iv(1300, 5000)}, 4000, 3800, true},
		{"Free rows between tasks only", []profile.Interval{iv(1100, 1200)}, 300, 100, true},
		{"a Free row after a gap is not the range's", []profile.Interval{iv(1100, 1200), iv(1400, 5000)}, 300, 100, true},
		{"a leading Free row is not the range's", []profile.Interval{iv(0, 1000), iv(1100, 1200)}, 300, 100, true},
		{"no Overlap Analysis layer", nil, 300, 100, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ov := profile.OverlapLayer{Free: tc.freeRows}
			if tc.freeRows != nil {
				ov.Computing = compute
			}
			r := &profile.Rank{HasTimeline: true, Timeline: profile.Timeline{Compute: compute}, Reported: profile.Reported{Overlap: ov}}
			steps, rows := timelineSteps(r)
			require.Len(t, steps, 1)
			assert.False(t, steps[0].HasStep)
			assert.Equal(t, tc.stage, steps[0].StageNs)
			assert.Equal(t, tc.free, steps[0].FreeNs)
			assert.Equal(t, int64(200), steps[0].ComputingNs)
			if !tc.rowsAgree {
				assert.Empty(t, rows)
				return
			}
			require.Len(t, rows, 1)
			assert.Equal(t, tc.stage, rows[0].StageNs, "the profiler's rows agree")
			assert.Equal(t, tc.free, rows[0].FreeNs)
		})
	}
}
