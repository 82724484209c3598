package parser

import "github.com/hcclprof/hcclprof/profile"

// Inspect's words for how the formats mark steps and name their communicators.
const (
	profilerStepMarkers = "ProfilerStep#N markers"
	stepTimeRows        = "STEP_TIME rows"
	markProfilerSteps   = "call prof.step() once per training step inside the profiler's schedule, so steps are marked"
	markMsprofSteps     = "msprof marks no steps in an op-based (PyTorch) run, so the whole collection is one step: profile with torch_npu's profiler (ProfilerStep#N markers), or mark iterations in graph mode"
	groupsFromMetadata  = "parallel_group_info of profiler_metadata.json"
)

// formatTraits is what each format makes true of its ranks (profile.Traits), whatever
// their files hold. LoadRank gives a rank those of the format it was read as; a rank
// summary's are those of the format it was summarised from, so that it reads as the
// rank did.
var formatTraits = map[profile.Format]profile.Traits{
	profile.FormatTorchNPUText: {EpochClock: true, OwnBreakdown: true,
		StepMarkers: profilerStepMarkers, MarkSteps: markProfilerSteps, GroupsFrom: groupsFromMetadata},
	profile.FormatTorchNPUDB: {EpochClock: true, OwnBreakdown: true,
		StepMarkers: stepTimeRows, MarkSteps: markProfilerSteps, GroupsFrom: groupsFromMetadata},
	profile.FormatMindSporeText: {Framework: profile.FrameworkMindSpore, EpochClock: true, OwnBreakdown: true,
		StepMarkers: profilerStepMarkers, MarkSteps: markProfilerSteps, GroupsFrom: groupsFromMetadata},
	profile.FormatMindSporeDB: {Framework: profile.FrameworkMindSpore, EpochClock: true, OwnBreakdown: true,
		StepMarkers: stepTimeRows, MarkSteps: markProfilerSteps, GroupsFrom: groupsFromMetadata},
	// msprof's older timelines are on each device's monotonic clock.
	profile.FormatMsprof: {OwnBreakdown: true,
		StepMarkers: "the step trace's Iteration markers", MarkSteps: markMsprofSteps, GroupsFrom: groupsFromMetadata},
	profile.FormatMsprofDB: {OwnBreakdown: true,
		StepMarkers: stepTimeRows, MarkSteps: markMsprofSteps, GroupsFrom: groupsFromMetadata},
	profile.FormatMsprofAnalyze: {OwnBreakdown: true, ClusterOutput: true,
		StepMarkers: profilerStepMarkers, MarkSteps: markProfilerSteps, GroupsFrom: groupsFromMetadata},
	// NCCL's kernels on the GPU timeline: opaque, and no breakdown of the profiler's own.
	profile.FormatKineto: {NCCL: true, OpaqueOps: true,
		StepMarkers: profilerStepMarkers, MarkSteps: markProfilerSteps, GroupsFrom: "distributedInfo's process groups"},
	// A summary that could not be read: a rank of no known format.
	profile.FormatSummary: {StepMarkers: profilerStepMarkers, MarkSteps: markProfilerSteps, GroupsFrom: groupsFromMetadata},
}
