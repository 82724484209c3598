package advisor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
)

// BubbleThresholds decide pipeline_bubble: a measured bubble above OverTheory × the
// theory's (p−1)/(m+p−1) plus Margin (a share of the step).
type BubbleThresholds struct {
	OverTheory float64
	Margin     float64
}

// defaultBubbleThresholds are pipeline_bubble's defaults.
var defaultBubbleThresholds = BubbleThresholds{OverTheory: 1.2, Margin: 0.02}

func (t *BubbleThresholds) keys() []thresholdKey {
	return []thresholdKey{{"over_theory", &t.OverTheory, 1, 100}, {"margin_share", &t.Margin, 0, 1}}
}

func pipelineFindings(c analysis.Communication, th BubbleThresholds) []Finding {
	var out []Finding
	var over []analysis.Pipeline
	for _, p := range c.Pipelines {
		if p.Microbatches > 0 && p.BubbleKnown() && p.MeasuredBubble > p.TheoryBubble*th.OverTheory+th.Margin {
			over = append(over, p)
		}
	}
	if len(over) > 0 {
		sort.Slice(over, func(i, j int) bool { return over[i].MeasuredBubble > over[j].MeasuredBubble })
		p := over[0]
		imbalance := fmt.Sprintf("stage compute imbalance %.1f%%", 100*p.Imbalance)
		if !p.ImbalanceKnown {
			imbalance = fmt.Sprintf("stage compute imbalance unknown: %d of its %d stages profiled", p.ProfiledStages, p.Stages)
		}
		out = append(out, Finding{ID: "pipeline_bubble", Severity: Medium,
			Title: fmt.Sprintf("Pipeline bubble %.1f%% of the step against %.1f%% in theory", 100*p.MeasuredBubble, 100*p.TheoryBubble),
			Evidence: fmt.Sprintf("%d of %d pipelines above theory; worst ranks %v (p=%d, m=%d, %s)",
				len(over), len(c.Pipelines), p.Ranks, p.Stages, p.Microbatches, imbalance)})
	}
	for _, p := range c.Pipelines {
		if strings.Contains(p.Note, "batchSendRecv") {
			out = append(out, Finding{ID: "pipeline_bubble_unmeasured", Severity: Info,
				Title: "The pipeline bubble cannot be measured", Evidence: p.Note})
			break
		}
	}
	return out
}
