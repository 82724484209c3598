package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

func capabilityMap(in Inspection) map[string]Capability {
	m := map[string]Capability{}
	for _, c := range in.Capabilities {
		m[c.Name] = c
	}
	return m
}

func TestInspectLevel0(t *testing.T) {
	r := &profile.Rank{Rank: 3, Format: profile.FormatTorchNPUText, Info: profile.Info{ProfilerLevel: "Level0", RankID: 3},
		Reported: profile.Reported{
			StepTrace:     []profile.StepTraceRow{{Step: 50, HasStep: true}, {Step: 51, HasStep: true}},
			KernelCommOps: []profile.CommOp{{Name: "hcom_allReduce__586_0_1", Type: "allreduce"}},
		},
	}
	in := Inspect(&profile.Cluster{Ranks: []*profile.Rank{r}})[0]
	assert.Equal(t, []int{50, 51}, in.Steps)
	assert.Equal(t, 1, in.Ops)
	c := capabilityMap(in)
	assert.True(t, c["step_breakdown"].Available)
	assert.Contains(t, c["step_breakdown"].Source, "step_trace_time.csv")
	assert.True(t, c["comm_ops"].Available)
	require.False(t, c["link_bandwidth"].Available)
	assert.Contains(t, c["link_bandwidth"].Enable, "Level0 has no HCCL task rows")
	assert.Contains(t, c["link_bandwidth"].Enable, "Level1")
	assert.False(t, c["op_wait_transit"].Available)
	assert.NotContains(t, c, "host_device_mapping", "no timeline: nothing to map")
	assert.False(t, c["group_names"].Available)
}

func TestInspectTimeline(t *testing.T) {
	r := &profile.Rank{Rank: 0, HasTimeline: true, Traits: profile.Traits{OwnBreakdown: true},
		Metadata: profile.Metadata{ParallelGroups: []profile.ParallelGroup{{Name: "dp"}}},
		Timeline: profile.Timeline{
			Steps:     []profile.StepMarker{{Step: 7}},
			Compute:   []profile.Interval{{StartNs: 0, EndNs: 10}},
			CommOps:   []profile.CommOp{{Name: "hcom_allReduce__586_0_1"}},
			CommTasks: []profile.CommTask{{TaskLabels: &profile.TaskLabels{Name: "Memcpy"}}, {TaskLabels: &profile.TaskLabels{Name: "Notify_Wait"}}},
		}, Reported: profile.Reported{
			Overlap: profile.OverlapLayer{Computing: []profile.Interval{{StartNs: 0, EndNs: 10}}},
		},
	}
	in := Inspect(&profile.Cluster{Ranks: []*profile.Rank{r}})[0]
	assert.Equal(t, 2, in.Tasks)
	c := capabilityMap(in)
	for _, name := range []string{"step_breakdown", "step_markers", "comm_ops", "op_wait_transit", "link_bandwidth", "group_names", "cross_check"} {
		assert.True(t, c[name].Available, name)
	}
	assert.Contains(t, c["op_wait_transit"].Source, "recomputed from the HCCL plane tasks")
	assert.Contains(t, c["cross_check"].Source, "Overlap Analysis")
	assert.False(t, c["host_device_mapping"].Available)
	assert.Contains(t, c["host_device_mapping"].Enable, "CPU and NPU")
}

func TestInspectOtherFormats(t *testing.T) {
	gpu := &profile.Rank{Format: profile.FormatKineto, HasTimeline: true, ClipToStepWindows: true,
		Traits: profile.Traits{NCCL: true, OpaqueOps: true, GroupsFrom: "distributedInfo's process groups"},
		Timeline: profile.Timeline{
			Steps:   []profile.StepMarker{{Step: 4}},
			Compute: []profile.Interval{{StartNs: 0, EndNs: 10}},
			CommOps: []profile.CommOp{{Name: "ncclKernel_AllReduce_RING_LL_Sum_float"}},
		},
	}
	c := capabilityMap(Inspect(&profile.Cluster{Ranks: []*profile.Rank{gpu}})[0])
	assert.Contains(t, c["comm_ops"].Source, "NCCL kernels")
	assert.Contains(t, c["link_bandwidth"].Enable, "not in Kineto traces")
	assert.NotContains(t, c, "cross_check", "Kineto has no figures of its own to check against")
	assert.True(t, c["host_device_mapping"].Available)

	prof := &profile.Rank{Format: profile.FormatMsprof, HasTimeline: true,
		Traits:   profile.Traits{OwnBreakdown: true, MarkSteps: "msprof marks no steps in an op-based run"},
		Timeline: profile.Timeline{Compute: []profile.Interval{{StartNs: 0, EndNs: 10}}},
	}
	c = capabilityMap(Inspect(&profile.Cluster{Ranks: []*profile.Rank{prof}})[0])
	assert.False(t, c["step_markers"].Available)
	assert.Contains(t, c["step_markers"].Enable, "msprof marks no steps")
	assert.NotContains(t, c, "host_device_mapping", "no steps: nothing to map")
}
