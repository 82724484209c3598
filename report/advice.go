package report

import (
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
