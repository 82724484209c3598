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
				Steps:       []profile.StepMarker{{Step: 1, Interval: iv(0, tc.hostStep1End)}, {Step: 2, Interval: iv(100, 200)}},
				Compute:     compute, Flows: flows, Overlap: tc.overlap,
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
