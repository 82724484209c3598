package report

import (
	"encoding/json"
	"io"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/report/contract"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// maxFindingsShown bounds the "what is wrong" block of the terminal report; the JSON
// report and `hcclprof advise` list them all.
const maxFindingsShown = 8

// writeAdvice prints the advisor's findings, most severe first, then what to do.
func writeAdvice(p *printer, a *advisor.Advice, all bool) {
	if a == nil {
		return
	}
	defer writeRecommendations(p, a)
	if len(a.Findings) == 0 {
		p.printf("\nFindings: none.\n")
		return
	}
	order := "most severe first"
	if a.Findings[0].Actionable() {
		order = "changes worth making first, the largest saving first; then the rest, most severe first"
	}
	p.printf("\nFindings (%s)\n", order)
	shown := foldAfter(a.Findings, maxFindingsShown)
	for i, f := range a.Findings {
		if !all && i == shown {
			p.printf("  … %d more (hcclprof advise, or --format json)\n", len(a.Findings)-i)
			break
		}
		p.printf("  [%s] %s\n", strings.ToUpper(string(f.Severity)), f.Title)
		if f.Evidence != "" {
			p.printf("         %s\n", f.Evidence)
		}
	}
}

// foldAfter is how many findings a report shows before folding the rest: at least
// n, and every finding that names a change worth making (they come first), so that
// none is folded under remarks.
func foldAfter(fs []advisor.Finding, n int) int {
	k := 0
	for k < len(fs) && fs[k].Actionable() {
		k++
	}
	return max(n, k)
}

// writeAdviceText writes the advice alone (hcclprof advise): every finding.
func writeAdviceText(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	p := newPrinter(w, d.Width)
	s := d.Result.Summary
	p.printf("hcclprof advise: %s rank(s), %d step(s); comm_share %.2f%%, step %.3f ms\n", ranksOfExpected(s), s.Steps, 100*s.CommShare, float64(s.StepTimeNs)/1e6)
	if d.LeftOut != "" {
		p.printf("(%s)\n", d.LeftOut)
	}
	if d.Advice != nil && d.Advice.Diagnosis.Title != "" {
		cause := d.Advice.Diagnosis.Cause
		if c := d.Advice.Diagnosis.Candidates; len(c) > 0 {
			cause += ": " + strings.Join(c, " or ")
		}
		p.printf("Diagnosis (%s): %s.\n", cause, d.Advice.Diagnosis.Title)
	}
	writeAdvice(p, d.Advice, true)
	return p.done()
}

func adviceFindings(a *advisor.Advice) []contract.Finding {
	out := []contract.Finding{}
	if a == nil {
		return out
	}
	for _, f := range a.Findings {
		refs := make([]contract.Ref, 0, len(f.Refs))
		for _, r := range f.Refs {
			refs = append(refs, contract.Ref{Rank: r.Rank, Step: r.Step, Op: r.Op, StartUs: r.StartUs, DurUs: r.DurUs})
		}
		out = append(out, contract.Finding{ID: f.ID, Severity: string(f.Severity), Title: f.Title, Evidence: f.Evidence, Refs: refs})
	}
	return out
}

// writeAdviceJSON writes the advice alone as JSON: {"schema_version", "findings"}.
func writeAdviceJSON(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	var diag *contract.Diagnosis
	if d.Advice != nil {
		dg := d.Advice.Diagnosis
		diag = &contract.Diagnosis{Cause: dg.Cause, Share: share(dg.Share), Title: dg.Title, Evidence: dg.Evidence, Candidates: dg.Candidates}
	}
	out := contract.Advice{SchemaVersion: SchemaVersion, Diagnosis: diag, Findings: adviceFindings(d.Advice),
		Recommendations: adviceRecommendations(d.Advice)}
	return namedJSONError(out, enc.Encode(out))
}

// writeRecommendations prints the "what to do" block: each change with how to apply it
// and its predicted effect; hypotheses are marked as such.
func writeRecommendations(p *printer, a *advisor.Advice) {
	if len(a.Recommendations) == 0 {
		for _, n := range a.Notes {
			p.printf("  (%s)\n", n)
		}
		return
	}
	p.printf("\nWhat to do (ranked by predicted gain; from the cost model calibrated on this run)\n")
	for i, r := range a.Recommendations {
		label := "predicted"
		if r.Hypothesis {
			label = "hypothesis, not backed by the model"
		}
		if k := r.SamplesScale; k > 0 && math.Abs(k-1) > 1e-9 && r.TodayUs > 0 {
			// The step holds k times today's samples: its time alone reads as a
			// regression; today's samples' time is what changes.
			p.printf("  %d. %s = %s: today's step's samples in %.3f ms (%.3f–%.3f) for %.3f ms now, saves %.3f ms (%.1f%%); a step then holds %.3g× the samples: %.3f ms, comm_share %.1f%% [%s, confidence %s]\n",
				i+1, r.Knob, r.Value, r.Predicted.StepTimeUs/k/1e3, r.Predicted.Low/k/1e3, r.Predicted.High/k/1e3, r.TodayUs/1e3,
				r.GainUs/1e3, 100*r.GainUs/r.TodayUs, k, r.Predicted.StepTimeUs/1e3, 100*r.Predicted.CommShare, label, r.Confidence)
		} else {
			p.printf("  %d. %s = %s: step %.3f ms (%.3f–%.3f), comm_share %.1f%%, saves %.3f ms per step's samples [%s, confidence %s]\n",
				i+1, r.Knob, r.Value, r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3,
				100*r.Predicted.CommShare, r.GainUs/1e3, label, r.Confidence)
		}
		for _, line := range strings.Split(r.Apply, "\n") {
			// A code line too long for the terminal would wrap its trailing comment
			// into code: the comment goes on its own line above it.
			if code, comment, ok := strings.Cut(line, "   # "); ok && p.width > 0 && 7+len(line) > p.width {
				p.printf("       # %s\n", comment)
				line = strings.TrimRight(code, " ")
			}
			p.printf("       %s\n", line)
		}
		for _, risk := range r.Risks {
			p.printf("       risk: %s\n", risk)
		}
	}
}

func adviceRecommendations(a *advisor.Advice) []contract.Recommendation {
	out := []contract.Recommendation{}
	if a == nil {
		return out
	}
	for _, r := range a.Recommendations {
		out = append(out, contract.Recommendation{ID: r.ID, Knob: r.Knob, Value: r.Value, Apply: r.Apply,
			Predicted: contract.Predicted{StepTimeUs: round(r.Predicted.StepTimeUs, 3), CommShare: share(r.Predicted.CommShare),
				Low: round(r.Predicted.Low, 3), High: round(r.Predicted.High, 3)},
			GainUs: round(r.GainUs, 3), Confidence: r.Confidence, Hypothesis: r.Hypothesis,
			Assumptions: nonNil(r.Assumptions), Risks: nonNil(r.Risks)})
	}
	return out
}
