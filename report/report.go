// Package report renders an analysis (package analysis) for people and for programs:
// a terminal text report and the JSON contract that scripts and CI read. It computes
// nothing new: every figure comes from analysis.Result.
package report

import (
	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
)

// SchemaVersion is the version of the JSON report. It changes only when a field is
// removed or changes meaning; new fields may be added within a version.
const SchemaVersion = 1

// Document is what a report shows: the analysis, the gates and the inputs' notes.
type Document struct {
	Result  *analysis.Result
	Advice  *advisor.Advice // findings and recommendations; nil when not asked for
	Gates   []analysis.GateResult
	Notes   []string // discovery notes: ignored files, duplicates
	Command string   // the command line that produced the report
	Version string   // hcclprof's version
}

// FailedGates returns the gates that did not hold.
func (d *Document) FailedGates() []analysis.GateResult {
	var out []analysis.GateResult
	for _, g := range d.Gates {
		if !g.Passed {
			out = append(out, g)
		}
	}
	return out
}

// CommBudget is the exposed-communication share above which communication is called
// the bottleneck: the 30% rule of the field (docs/seed-notes.md).
const CommBudget = 0.30

// Verdict is a one-line reading of the shares.
func Verdict(s analysis.Summary) string {
	switch {
	case s.Ranks == 0:
		return "no step breakdown could be computed"
	case s.CommTotalShare == 0:
		return "no communication in the profiled steps"
	case s.CommShare > CommBudget:
		return "communication is the bottleneck: exposed communication is above the 30% budget"
	case s.CommShare > 0.10:
		return "communication is a significant cost, within the 30% budget"
	default:
		return "communication is a minor cost"
	}
}
