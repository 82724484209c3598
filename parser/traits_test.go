package parser

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/profile"
)

// Every format a rank can carry has its traits, and what downstream relies on holds:
// Kineto's ops are NCCL's, opaque, with no breakdown of the profiler's own; the
// Ascend exports' are HCCL's with one; torch_npu's and MindSpore's clocks are epoch
// time and MindSpore's output names its framework.
func TestFormatTraits(t *testing.T) {
	for _, in := range inputFormats {
		for _, f := range in.formats {
			tr, ok := formatTraits[f]
			if assert.True(t, ok, "%s has no traits", f) {
				assert.NotEmpty(t, tr.StepMarkers, f)
				assert.NotEmpty(t, tr.MarkSteps, f)
				assert.NotEmpty(t, tr.GroupsFrom, f)
			}
		}
	}
	kineto := formatTraits[profile.FormatKineto]
	assert.True(t, kineto.NCCL && kineto.OpaqueOps && !kineto.OwnBreakdown && !kineto.EpochClock)
	for f, tr := range formatTraits {
		if f != profile.FormatKineto {
			assert.False(t, tr.NCCL || tr.OpaqueOps, f)
		}
		epoch := f == profile.FormatTorchNPUText || f == profile.FormatTorchNPUDB || f == profile.FormatMindSporeText || f == profile.FormatMindSporeDB
		assert.Equal(t, epoch, tr.EpochClock, f)
		mindspore := f == profile.FormatMindSporeText || f == profile.FormatMindSporeDB
		assert.Equal(t, mindspore, tr.Framework == profile.FrameworkMindSpore, f)
		assert.Equal(t, f == profile.FormatMsprofAnalyze, tr.ClusterOutput, f)
	}
	assert.Contains(t, formatTraits[profile.FormatMsprof].MarkSteps, "msprof marks no steps")
	assert.Equal(t, "STEP_TIME rows", formatTraits[profile.FormatMsprofDB].StepMarkers)
}
