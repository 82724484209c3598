package advisor

import (
	"sort"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// Severity grades a finding: high = act on it first (it costs a large share of the
// step or is a fault), medium = worth a change, low = a remark, info = context.
type Severity string

// Severities, most severe first.
const (
	High   Severity = "high"
	Medium Severity = "medium"
	Low    Severity = "low"
	Info   Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case High:
		return 0
	case Medium:
		return 1
	case Low:
		return 2
	}
	return 3
}

// Finding is what is wrong, with evidence a person can check in the timeline.
type Finding struct {
	ID       string // stable identifier: comm_share_over_budget, slow_rank, ...
	Severity Severity
	Title    string
	Evidence string
	Refs     []Ref // where to look
	// Saving is the share of the step that the change the finding names would save,
	// as the advisor estimates it; 0 when it names no change worth making now (a
	// symptom, a fact, a saving judged too small, or one that waits for a fault to be
	// fixed first). Findings with a saving come first, the largest first.
	Saving float64
}

// Actionable reports whether the finding names a change worth making now.
func (f Finding) Actionable() bool { return f.Saving > 0 }

// Ref points into the timeline: a rank, a step, an op, a time.
type Ref struct {
	Rank, Step int // -1 when not specific
	Op         string
	StartUs    float64 // the op's or step's start in the trace's clock; 0 when not specific
	// StartNs is the same start exactly (StartUs, a float64, keeps only about a
	// quarter µs of an epoch timestamp); 0 when not specific.
	StartNs int64
	DurUs   float64
}

// Options tune the advisor.
type Options struct {
	// CommBudget is the exposed-communication share above which communication is the
	// bottleneck (the field's 30% rule).
	CommBudget float64
	// Framework selects how recommendations are applied: pytorch-ddp, deepspeed,
	// megatron, mindspore; "" infers it from the data.
	Framework string
	// Accumulation is the profiled run's micro-batches per optimizer step; 0: not
	// known, inferred from the compute pattern (InferAccumulation).
	Accumulation int
	// Thresholds decide the findings; the zero value is DefaultThresholds.
	Thresholds Thresholds
	// Detect decides the slow ranks, links and nodes and the checks; the zero value
	// is DefaultDetectThresholds.
	Detect DetectThresholds
	// Calibration is the cluster's own benchmark (calibrate --bench); nil: none.
	Calibration *costmodel.BenchCalibration
	// Gates are the --fail-on conditions (ParseGate), decided in Advice.Gates.
	Gates []Gate
}

// defaultCommBudgetShare is the exposed-communication share of the step above which
// communication is the bottleneck: the field's 30% rule (docs/diagnosis.md §1), the
// default of Options.CommBudget and of the configuration's comm_budget.
const defaultCommBudgetShare = 0.30

// DefaultOptions are the advisor's defaults.
var DefaultOptions = Options{CommBudget: defaultCommBudgetShare, Thresholds: DefaultThresholds, Detect: DefaultDetectThresholds}

// withDefaults fills what opts leaves at zero with the defaults.
func (o Options) withDefaults() Options {
	if o.CommBudget == 0 {
		o.CommBudget = DefaultOptions.CommBudget
	}
	if o.Thresholds == (Thresholds{}) {
		o.Thresholds = DefaultThresholds
	}
	if o.Detect == (DetectThresholds{}) {
		o.Detect = DefaultDetectThresholds
	}
	return o
}

// findings reads the analysis for what is wrong. Each rule is small and named by its
// finding's ID; the order of the result is by severity, then by the size of the loss.
func findings(res *analysis.Result, det Detections, env Env, facts RunFacts, fit *costmodel.RunFit, opts Options) []Finding {
	var out []Finding
	th := opts.Thresholds
	out = append(out, budgetFindings(res, opts)...)
	out = append(out, waitFindings(res, th.Waiting)...)
	out = append(out, warmupFindings(res, th.Steps)...)
	out = append(out, slowFindings(det, res.Communication.Retransmissions, th.Stake)...)
	out = append(out, checkFindings(det.Checks, stageSumNs(res), th.SmallMessages)...)
	out = append(out, linkUseFindings(res.Communication, th.LinkUse)...)
	out = append(out, latencyBoundFindings(res.Communication, fit.Links, th.LatencyBound)...)
	out = append(out, algorithmFindings(res, det, facts, fit, th.Algorithm)...)
	out = append(out, pipelineFindings(res.Communication, th.Bubble)...)
	out = append(out, envFindings(env)...)
	sortFindings(out)
	return out
}

// sortFindings orders findings: those that name a change worth making now first, the
// largest saving first, then the others by severity, keeping the order within one.
// A report that folds its later findings thus never folds a change to make under
// remarks it calls not worth changing.
func sortFindings(out []Finding) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Actionable() != b.Actionable() {
			return a.Actionable()
		}
		if a.Actionable() && a.Saving != b.Saving {
			return a.Saving > b.Saving
		}
		return a.Severity.rank() < b.Severity.rank()
	})
}
