package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/profile"
)

// Capability says whether a rank's data supports one analysis, from which input, and
// when it does not, the collection setting that would enable it.
type Capability struct {
	Name      string // step_breakdown, comm_ops, op_wait_transit, link_bandwidth, ...
	Available bool
	Source    string // what it is computed from when available
	Enable    string // how to collect the data when it is not
}

// Inspection is what `hcclprof inspect` reports of one rank.
type Inspection struct {
	Rank          int
	Dir           string
	Format        string // the format's name, for the report
	ProfilerLevel string
	ExportType    string
	Versions      string // torch_npu / CANN versions when recorded
	Steps         []int
	Ops           int
	Tasks         int
	FilesUsed     []string
	FilesIgnored  []string
	Problems      []string
	Capabilities  []Capability
}

const level1Advice = "collect with profiler_level Level1 (torch_npu: experimental_config=_ExperimentalConfig(profiler_level=ProfilerLevel.Level1))"

const ncclAdvice = "not in Kineto traces: NCCL kernels are opaque (no per-step task rows); use NCCL's own profiler plugin or nsys for per-link figures"

// NoTaskRows says why a rank without HCCL task rows has none, and what would give
// them: Level0 collects none, opaque ops (Kineto's NCCL kernels) have none, and at Level1 or above
// only the timeline holds them (a profile copied without its trace_view.json, as the
// real Megatron one was, has its summaries and no tasks).
func NoTaskRows(r *profile.Rank) string {
	switch {
	case r.OpaqueOps:
		return ncclAdvice
	case strings.EqualFold(r.Info.ProfilerLevel, "Level0"):
		return "Level0 has no HCCL task rows: " + level1Advice
	case !r.HasTimeline:
		return "no timeline was read (trace_view.json, or the profiler's db), and only the timeline holds the HCCL task rows: keep it with the profile"
	}
	return "the timeline has no HCCL task rows: the run may not communicate between devices"
}

// Inspect lists what was found for each rank and which analyses it supports.
func Inspect(c *profile.Cluster) []Inspection {
	out := make([]Inspection, 0, len(c.Ranks))
	for _, r := range c.Ranks {
		out = append(out, inspectRank(r))
	}
	return out
}

// WithAnalysis adds to each rank's inspection the problems the analysis found in it
// (a recomputation the profiler's own figures contradict, no step where other ranks
// have steps), so that inspect's table and the exit code it shares with analyze
// agree; a step breakdown so flagged is not claimed as measured.
func WithAnalysis(ins []Inspection, res *Result) []Inspection {
	if res == nil {
		return ins
	}
	byRank := map[int][]string{}
	for _, rr := range res.Ranks {
		byRank[rr.Rank] = append(byRank[rr.Rank], rr.Problems...)
	}
	for i := range ins {
		found := byRank[ins[i].Rank]
		if len(found) == 0 {
			continue
		}
		ins[i].Problems = append(slices.Clone(ins[i].Problems), found...)
		for j, c := range ins[i].Capabilities {
			if c.Name == "step_breakdown" {
				ins[i].Capabilities[j] = Capability{Name: c.Name, Enable: "not measured right: " + found[0]}
			}
		}
	}
	return ins
}

func inspectRank(r *profile.Rank) Inspection {
	in := Inspection{Rank: r.Rank, Dir: r.Dir, Format: string(r.Format), ProfilerLevel: r.Info.ProfilerLevel,
		ExportType: r.Info.ExportType, FilesUsed: r.FilesUsed, FilesIgnored: r.FilesIgnored, Problems: r.Problems,
		Ops: len(r.CommOps), Tasks: len(r.CommTasks)}
	switch {
	case r.Info.TorchNPUVersion != "" && r.Info.CANNVersion != "":
		in.Versions = "torch_npu " + r.Info.TorchNPUVersion + ", CANN " + r.Info.CANNVersion
	case r.Info.TorchNPUVersion != "":
		in.Versions = "torch_npu " + r.Info.TorchNPUVersion
	case r.Info.CANNVersion != "":
		in.Versions = "CANN " + r.Info.CANNVersion
	}
	if in.Ops == 0 {
		in.Ops = len(r.KernelCommOps)
	}
	in.Steps = stepNumbers(r)
	hasTimeline := r.HasTimeline && (len(r.Compute) > 0 || len(r.CommOps) > 0)
	add := func(name string, ok bool, source, enable string) {
		c := Capability{Name: name, Available: ok}
		if ok {
			c.Source = source
		} else {
			c.Enable = enable
		}
		in.Capabilities = append(in.Capabilities, c)
	}

	// Step breakdown: recomputed from the timeline, else the profiler's own figures.
	switch {
	case hasTimeline:
		add("step_breakdown", true, "recomputed from the device timeline", "")
	case len(r.StepTrace) > 0:
		add("step_breakdown", true, "the profiler's step_trace_time.csv (no timeline to recompute it from)", "")
	default:
		add("step_breakdown", false, "", "export the timeline (trace_view.json) or step_trace_time.csv: any profiler level with the NPU activity")
	}
	add("step_markers", len(r.Steps) > 0 || hasStepRows(r.StepTrace), r.StepMarkers, r.MarkSteps)
	switch {
	case hasTimeline && r.ClipToStepWindows:
		add("host_device_mapping", true, "one clock for host and device (Kineto): device work clipped to the ProfilerStep#N windows", "")
	case hasTimeline && len(r.Steps) > 0: // the mapping only concerns a recomputation with steps
		add("host_device_mapping", len(r.Flows) > 0, "host→device launch links (torch_to_npu flows, or PYTORCH_API connection ids in a db)",
			"flows come with the Python (CPU) activity: profile with activities CPU and NPU; without them the host step windows are used as they are")
	}
	ok, source, enable := commOpsCapability(r)
	add("comm_ops", ok, source, enable)
	switch {
	case len(r.CommStats) > 0:
		add("op_wait_transit", true, "the profiler's communication analysis (communication.json / analysis.db)", "")
	case len(r.CommTasks) > 0:
		add("op_wait_transit", true, "recomputed from the HCCL plane tasks", "")
	default:
		add("op_wait_transit", false, "", NoTaskRows(r))
	}
	switch {
	case len(r.CommTasks) > 0:
		add("link_bandwidth", true, "HCCL plane tasks (size, transport, link type)", "")
	case len(r.CommMatrix) > 0:
		add("link_bandwidth", true, "communication_matrix.json (aggregated per op type)", "")
	default:
		add("link_bandwidth", false, "", NoTaskRows(r))
	}
	add("group_names", len(r.Metadata.ParallelGroups) > 0, r.GroupsFrom,
		"group names (dp, tp, pp) come from profiler_metadata.json's parallel_group_info, which newer torch_npu writes (seen in 2.7.1); without it groups are known by hash and size only")
	if hasTimeline && r.OwnBreakdown { // Kineto writes no breakdown of its own to check against
		add("cross_check", len(r.StepTrace) > 0 || r.Overlap.Present(),
			crossCheckSource(r), "export step_trace_time.csv beside the timeline to check hcclprof's recomputation against the profiler's figures")
	}
	return in
}

// stepNumbers are the rank's step numbers, from its step markers and its
// step_trace_time.csv rows, sorted.
func stepNumbers(r *profile.Rank) []int {
	steps := map[int]bool{}
	for _, s := range r.Steps {
		steps[s.Step] = true
	}
	for _, s := range r.StepTrace {
		if s.HasStep {
			steps[s.Step] = true
		}
	}
	var out []int
	for s := range steps {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

// commOpsCapability says whether the rank's collectives are known and from what,
// or how to get them.
func commOpsCapability(r *profile.Rank) (ok bool, source, enable string) {
	switch {
	case len(r.CommOps) > 0 && r.NCCL:
		sized := 0
		for _, op := range r.CommOps {
			if op.Bytes() > 0 {
				sized++
			}
		}
		switch sized {
		case len(r.CommOps):
			return true, "NCCL kernels of the GPU timeline, sized from their collective's arguments", ""
		case 0:
			return true, "NCCL kernels of the GPU timeline; their sizes are not in the trace (no message size or data type in the collectives' arguments), so no bandwidth", ""
		default:
			return true, fmt.Sprintf("NCCL kernels of the GPU timeline, %d of %d sized from their collective's arguments", sized, len(r.CommOps)), ""
		}
	case len(r.CommOps) > 0 && r.CommOpsSource != "" && r.CommOpsSource != "timeline":
		return true, "the profiler's per-op list (" + r.CommOpsSource + "; no timeline ops)", ""
	case len(r.CommOps) > 0:
		return true, "HCCL op rows of the timeline", ""
	case len(r.KernelCommOps) > 0:
		return true, "communication rows of kernel_details.csv (no timeline)", ""
	default:
		return false, "", "no HCCL op found: the run may not communicate, or the NPU activity was not collected"
	}
}

func hasStepRows(rows []profile.StepTraceRow) bool {
	for _, r := range rows {
		if r.HasStep {
			return true
		}
	}
	return false
}

func crossCheckSource(r *profile.Rank) string {
	if len(r.StepTrace) > 0 {
		return "recomputation checked against the profiler's step figures (step_trace_time.csv or analysis.db StepTraceTime)"
	}
	return "recomputation checked against the trace's Overlap Analysis rows"
}

// String is a one-line form of a capability for logs and tests.
func (c Capability) String() string {
	if c.Available {
		return fmt.Sprintf("%s: yes (%s)", c.Name, c.Source)
	}
	return fmt.Sprintf("%s: no (%s)", c.Name, c.Enable)
}
