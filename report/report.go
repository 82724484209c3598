// Package report renders an analysis (package analysis) and its advice for people and
// for programs: terminal text, Markdown, HTML, JUnit and GitHub annotations, and the JSON
// contract that scripts and CI read, for analyze, advise, inspect, model, calibrate,
// whatif and diff (export/ writes tables and a trace). Its figures come from
// analysis.Result and advisor.Advice, its verdict from advisor.Verdict: it decides
// nothing.
package report

import (
	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/contract"
)

// SchemaVersion is the version of the JSON report (contract.SchemaVersion).
const SchemaVersion = contract.SchemaVersion

// Document is what a report shows: the analysis, the gates and the inputs' notes.
type Document struct {
	Result *analysis.Result
	Advice *advisor.Advice // findings and recommendations; nil when not asked for
	// TimelineRank, when set, is a rank whose timeline is kept, for the HTML report's
	// step timeline with compute lanes.
	TimelineRank *profile.Rank
	// CommBudget is the exposed share above which the verdict calls communication
	// the bottleneck; 0 means the field's 30% (DefaultCommBudget).
	CommBudget float64
	Gates      []analysis.GateResult
	Notes      []string // discovery notes: ignored files, duplicates
	// LeftOut says, at the top of the report, which steps were left out of every
	// figure as warm-up ("" when none).
	LeftOut string
	Command string // the command line that produced the report
	Version string // hcclprof's version
	// Width is the text output's width in display columns (the terminal's); 0 is no
	// limit. Other formats ignore it.
	Width int

	cached    *reportView // see view()
	cachedKey viewKey
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

// DefaultCommBudget is the exposed-communication share above which communication is
// called the bottleneck: the advisor's, the 30% rule of the field (docs/diagnosis.md §1).
var DefaultCommBudget = advisor.DefaultOptions.CommBudget

// Verdict is a one-line reading of the shares against the default budget.
func Verdict(s analysis.Summary) string { return VerdictWithin(s, DefaultCommBudget) }

// VerdictWithin reads the shares against a budget (advisor.SharesVerdict).
func VerdictWithin(s analysis.Summary, budget float64) string {
	return advisor.SharesVerdict(s, budget)
}

// verdict is the document's verdict (advisor.Verdict): the diagnosis' title when the
// advice was computed, else the shares against the budget.
func (d *Document) verdict() string {
	return advisor.Verdict(d.Advice, d.Result.Summary, d.CommBudget)
}
