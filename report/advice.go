package report

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
)

// maxFindingsShown bounds the "what is wrong" block of the terminal report; the JSON
// report and `hcclprof advise` list them all.
const maxFindingsShown = 8

// writeAdvice prints the advisor's findings, most severe first.
func writeAdvice(p *printer, a *advisor.Advice, all bool) {
	if a == nil {
		return
	}
	if len(a.Findings) == 0 {
		p.printf("\nFindings: none.\n")
		return
	}
	p.printf("\nFindings (most severe first)\n")
	for i, f := range a.Findings {
		if !all && i == maxFindingsShown {
			p.printf("  … %d more (hcclprof advise, or --format json)\n", len(a.Findings)-i)
			break
		}
		p.printf("  [%s] %s\n", strings.ToUpper(string(f.Severity)), f.Title)
		if f.Evidence != "" {
			p.printf("         %s\n", f.Evidence)
		}
	}
}

// WriteAdviceText writes the advice alone (hcclprof advise): every finding.
func WriteAdviceText(w io.Writer, d *Document) error {
	p := &printer{w: w}
	s := d.Result.Summary
	p.printf("hcclprof advise: %d rank(s), %d step(s); comm_share %.2f%%, step %.3f ms\n", s.Ranks, s.Steps, 100*s.CommShare, float64(s.StepTimeNs)/1e6)
	writeAdvice(p, d.Advice, true)
	return p.firstErr
}

// jsonFinding is a finding in the JSON contract.
type jsonFinding struct {
	ID       string    `json:"id"`
	Severity string    `json:"severity"`
	Title    string    `json:"title"`
	Evidence string    `json:"evidence"`
	Refs     []jsonRef `json:"refs"`
}

type jsonRef struct {
	Rank    int     `json:"rank"`
	Step    int     `json:"step"`
	Op      string  `json:"op,omitempty"`
	StartUs float64 `json:"start_us,omitempty"`
	DurUs   float64 `json:"dur_us,omitempty"`
}

func adviceFindings(a *advisor.Advice) []jsonFinding {
	out := []jsonFinding{}
	if a == nil {
		return out
	}
	for _, f := range a.Findings {
		refs := make([]jsonRef, 0, len(f.Refs))
		for _, r := range f.Refs {
			refs = append(refs, jsonRef{Rank: r.Rank, Step: r.Step, Op: r.Op, StartUs: r.StartUs, DurUs: r.DurUs})
		}
		out = append(out, jsonFinding{ID: f.ID, Severity: string(f.Severity), Title: f.Title, Evidence: f.Evidence, Refs: refs})
	}
	return out
}

// WriteAdviceJSON writes the advice alone as JSON: {"schema_version", "findings"}.
func WriteAdviceJSON(w io.Writer, d *Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		SchemaVersion int           `json:"schema_version"`
		Findings      []jsonFinding `json:"findings"`
	}{SchemaVersion, adviceFindings(d.Advice)})
}
