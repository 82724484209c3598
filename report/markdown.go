package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// writeMarkdown writes the ticket-ready report (GitHub and GitLab Markdown): the
// verdict, top findings and recommendations first; tables after; details folded in
// <details> blocks; the command and version last. Every string from the input is
// escaped: op and group names are untrusted.
func writeMarkdown(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	p := &printer{w: w}
	r := d.Result
	v := d.view()
	mdHeadline(p, d, v)
	if a := v.Advice; a != nil {
		mdFindings(p, a.Findings)
		mdRecommendations(p, a)
	}
	mdGates(p, v.Gates)

	p.printf("<details><summary>Steps (ms)</summary>\n\n")
	mdSteps(p, r, v)
	p.printf("\n</details>\n\n")
	mdCollectives(p, r, v)
	mdLinks(p, r.Communication.Hardware, v.Links)
	mdChecksAndWarnings(p, d, v)
	p.printf("<sub>`%s` · hcclprof %s</sub>\n", mdCode(d.Command), mdText(d.Version))
	return p.firstErr
}

// mdHeadline writes the verdict, what the input lacks and the table of headline
// metrics.
func mdHeadline(p *printer, d *Document, v *reportView) {
	r := d.Result
	s := v.Summary
	p.printf("## hcclprof: %s\n\n", mdText(v.Verdict))
	if s.Incomplete {
		p.printf("> **Incomplete input:** some rank could not be read in full; see the warnings.\n\n")
	}
	if d.LeftOut != "" {
		p.printf("_(%s)_\n\n", mdText(d.LeftOut))
	}
	p.printf("| metric | value |\n|---|---:|\n")
	p.printf("| exposed communication (`comm_share`) | **%.2f%%** |\n", 100*s.CommShare)
	if s.ExposedTransferShare != nil {
		p.printf("| exposed and moving data, share of the step (`exposed_transfer_share`) | %.2f%% |\n", 100**s.ExposedTransferShare)
		p.printf("| exposed and waiting for a peer, share of the step (`exposed_wait_share`) | %.2f%% |\n", 100**s.ExposedWaitShare)
	}
	p.printf("| all communication (`comm_total_share`) | %.2f%% |\n", 100*s.CommTotalShare)
	for _, k := range s.Kinds {
		exposed, bounded := kindExposed(k)
		if bounded {
			exposed += ", " + kindBoundsNote
		}
		p.printf("| %s groups (`%s`): all (exposed) | %.2f%% (%s) |\n", analysis.KindTitle(k.Kind), k.Kind, 100*k.CommTotalShare, exposed)
	}
	for _, e := range expertLines(r) {
		p.printf("| AlltoAll(v) per rank | %s |\n", mdText(e))
	}
	if s.OverlapRatio != nil {
		p.printf("| overlapped with compute (`overlap_ratio`) | %.2f%% |\n", 100**s.OverlapRatio)
	} else {
		p.printf("| overlapped with compute (`overlap_ratio`) | - (no communication) |\n")
	}
	p.printf("| mean step time (Stage) | %.3f ms |\n", float64(s.StepTimeNs)/1e6)
	p.printf("| ranks × steps | %s × %d |\n\n", ranksOfExpected(s), s.Steps)
}

// mdFindings writes the findings, those after the first few folded.
func mdFindings(p *printer, findings []advisor.Finding) {
	if len(findings) == 0 {
		return
	}
	p.printf("### Findings\n\n")
	shown := foldAfter(findings, 5)
	for i, f := range findings {
		if i == shown {
			more := "findings"
			if len(findings)-shown == 1 {
				more = "finding"
			}
			p.printf("\n<details><summary>%d more %s</summary>\n\n", len(findings)-shown, more)
		}
		p.printf("- **%s** %s  \n  %s\n", strings.ToUpper(string(f.Severity)), mdText(f.Title), mdText(f.Evidence))
	}
	if len(findings) > shown {
		p.printf("\n</details>\n")
	}
	p.printf("\n")
}

// mdRecommendations writes what to do (a table, then how to apply each change, its
// assumptions and risks, folded), or the advice's notes when it has none.
func mdRecommendations(p *printer, a *advisor.Advice) {
	if len(a.Recommendations) == 0 {
		if len(a.Notes) > 0 {
			// Each note says why by itself ("no recommendation from the cost model: ..."),
			// as the text report prints them.
			p.printf("_(%s)_\n\n", mdText(strings.Join(a.Notes, "; ")))
		}
		return
	}
	p.printf("### What to do\n\n| # | change | predicted step | comm_share | gain per step | confidence |\n|---:|---|---:|---:|---:|---|\n")
	for i, rec := range a.Recommendations {
		conf := rec.Confidence
		if rec.Hypothesis {
			conf += " (hypothesis)"
		}
		p.printf("| %d | `%s` = %s | %.3f ms (%.3f–%.3f) | %.1f%% | %.3f ms | %s |\n", i+1, mdCode(rec.Knob), mdText(rec.Value),
			rec.Predicted.StepTimeUs/1e3, rec.Predicted.Low/1e3, rec.Predicted.High/1e3, 100*rec.Predicted.CommShare, rec.GainUs/1e3, conf)
	}
	p.printf("\n<details><summary>How to apply, assumptions and risks</summary>\n\n")
	for i, rec := range a.Recommendations {
		p.printf("%d. `%s` = %s\n\n   ```\n", i+1, mdCode(rec.Knob), mdText(rec.Value))
		for _, line := range strings.Split(rec.Apply, "\n") {
			p.printf("   %s\n", strings.ReplaceAll(line, "```", "'''"))
		}
		p.printf("   ```\n\n")
		for _, x := range rec.Assumptions {
			p.printf("   - assumes: %s\n", mdText(x))
		}
		for _, x := range rec.Risks {
			p.printf("   - risk: %s\n", mdText(x))
		}
		p.printf("\n")
	}
	p.printf("</details>\n\n")
}

// mdGates writes each --fail-on gate, passed or failed.
func mdGates(p *printer, gates []gateRow) {
	if len(gates) == 0 {
		return
	}
	p.printf("### Gates\n\n")
	for _, g := range gates {
		status := "pass"
		if !g.Passed {
			status = "**FAIL**"
		}
		p.printf("- %s `%s` (%s = %s)\n", status, mdCode(g.Expr), g.Metric, g.Value)
	}
	p.printf("\n")
}

// mdCollectives writes the collectives folded: rolled up per kind of group when
// there are many groups, else per op and group.
func mdCollectives(p *printer, r *analysis.Result, v *reportView) {
	if rolled := rolledCollectives(r); rolled != nil {
		mdKindCollectives(p, rolled, len(r.Collectives))
	} else if len(v.Collectives) > 0 {
		p.printf("<details><summary>Collectives</summary>\n\n| op | group | size | count | MB/op | total ms | mean ms | p95 ms | algbw GB/s | busbw GB/s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range v.Collectives {
			cells := c.Cells()
			p.printf("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", mdText(c.Op), mdText(c.Label), cells.Size, c.Count, cells.MBPerOp,
				ms(c.TotalNs), msf(c.MeanNs), msf(c.P95Ns), cells.AlgBw, cells.BusBw)
		}
		p.printf("\n</details>\n\n")
	}
}

// mdChecksAndWarnings writes, folded, the checks that fired and the warnings and
// notes.
func mdChecksAndWarnings(p *printer, d *Document, v *reportView) {
	r := d.Result
	if fired := v.FiredChecks; len(fired) > 0 {
		p.printf("<details><summary>Checks that fired (%d)</summary>\n\n", len(fired))
		for _, ch := range fired {
			p.printf("- %s: %d of %d (%s); %s\n", mdText(ch.Title), ch.Count, ch.Total, mdText(ch.Threshold), mdText(ch.Evidence))
		}
		p.printf("\n</details>\n\n")
	}
	if len(r.Warnings)+len(d.Notes) > 0 {
		p.printf("<details><summary>Warnings and notes</summary>\n\n")
		for _, x := range r.Warnings {
			p.printf("- warning: %s\n", mdText(x))
		}
		for _, x := range d.Notes {
			p.printf("- note: %s\n", mdText(x))
		}
		p.printf("\n</details>\n\n")
	}
}

func mdSteps(p *printer, r *analysis.Result, v *reportView) {
	if v.ManyRanks {
		p.printf("| step | ranks | Stage p50 | Stage max | comm_share p50 | comm_share max |\n|---:|---:|---:|---:|---:|---:|\n")
		for _, sd := range v.StepDists {
			p.printf("| %s | %d | %s | %s | %s | %s |\n", analysis.StepLabel(sd.Step), sd.Ranks, msf(sd.StageP50Ns), msf(sd.StageMaxNs),
				pct(sd.ShareP50), pct(sd.ShareMax))
		}
		return
	}
	p.printf("| rank | step | Stage | Computing | Comm | Comm not overlapped | Overlapped | Free | Bubble | Preparing | comm_share |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, rr := range r.Ranks {
		for _, st := range rr.Steps {
			p.printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rr.Rank, analysis.StepLabel(st.Step), ms(st.StageNs), ms(st.ComputingNs),
				ms(st.CommunicationNs), ms(st.CommNotOverlappedNs), ms(st.OverlappedNs), ms(st.FreeNs), ms(st.BubbleNs), preparingMs(st), pct(st.CommShare()))
		}
	}
}

func mdLinks(p *printer, hw hardware.Profile, links []transportLinks) {
	if len(links) == 0 {
		return
	}
	p.printf("<details><summary>Links per transport (GB/s, against %s's peaks)</summary>\n\n| transport | links | min | median | max | peak | median use |\n|---|---:|---:|---:|---:|---:|---:|\n", mdText(hw.Name))
	for _, l := range links {
		peak, use := "-", "-"
		if l.HasPeak {
			peak, use = fmt.Sprintf("%.1f", l.PeakGBps), pct(l.MedianGBps/l.PeakGBps)
		}
		p.printf("| %s | %d | %.2f | %.2f | %.2f | %s | %s |\n", mdText(l.Transport), l.Links, l.MinGBps, l.MedianGBps, l.MaxGBps, peak, use)
	}
	for _, note := range abovePeakNotes(hw, links) {
		p.printf("\n%s\n", mdText(note))
	}
	p.printf("\n</details>\n\n")
}

// mdText escapes text for a Markdown table cell or line: pipes, backticks, HTML
// brackets, asterisks and underscores are made literal; newlines become spaces.
func mdText(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "|", "\\|", "`", "\\`", "*", "\\*", "_", "\\_", "<", "&lt;", ">", "&gt;",
		"[", "\\[", "]", "\\]", "\r", " ", "\n", " ")
	return r.Replace(s)
}

// mdCode makes text safe inside a `code span`: backticks and pipes cannot be escaped
// there, so they are replaced.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", "¦", "\n", " ", "\r", " ").Replace(s)
}
