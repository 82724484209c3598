// Package report renders an analysis (package analysis) and its advice for people and
// for programs: terminal text, Markdown, HTML, JUnit and GitHub annotations, and the JSON
// contract that scripts and CI read, for analyze, advise, inspect, model, calibrate,
// whatif and diff (export/ writes tables and a trace). Its figures come from
// analysis.Result and advisor.Advice, whose verdict and gates it prints as the
// advisor decided them: it decides nothing.
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
	// Advice is the verdict, the gates, the findings and the recommendations; nil:
	// none (the report then has no verdict and no gates).
	Advice *advisor.Advice
	// TimelineRank, when set, is a rank whose timeline is kept, for the HTML report's
	// step timeline with compute lanes.
	TimelineRank *profile.Rank
	Notes        []string // discovery notes: ignored files, duplicates
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

// verdict is the advisor's verdict (advisor.Advice.Verdict); "" without advice.
func (d *Document) verdict() string {
	if d.Advice == nil {
		return ""
	}
	return d.Advice.Verdict
}

// gates are the gates as the advisor decided them (advisor.Advice.Gates).
func (d *Document) gates() []advisor.GateResult {
	if d.Advice == nil {
		return nil
	}
	return d.Advice.Gates
}
