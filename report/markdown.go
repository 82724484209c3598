package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// WriteMarkdown writes the ticket-ready report (GitHub and GitLab Markdown): the
// verdict, top findings and recommendations first; tables after; details folded in
// <details> blocks; the command and version last. Every string from the input is
// escaped: op and group names are untrusted.
func WriteMarkdown(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	p := &printer{w: w}
	r := d.Result
	s := r.Summary
	p.printf("## hcclprof: %s\n\n", mdText(d.verdict()))
	if s.Incomplete {
		p.printf("> **Incomplete input:** some rank could not be read in full; see the warnings.\n\n")
	}
	p.printf("| metric | value |\n|---|---:|\n")
	p.printf("| exposed communication (`comm_share`) | **%.2f%%** |\n", 100*s.CommShare)
	if s.ExposedTransferShare != nil {
		p.printf("| of it, moving data (`exposed_transfer_share`) | %.2f%% |\n", 100**s.ExposedTransferShare)
		p.printf("| of it, waiting for a peer (`exposed_wait_share`) | %.2f%% |\n", 100**s.ExposedWaitShare)
	}
	p.printf("| all communication (`comm_total_share`) | %.2f%% |\n", 100*s.CommTotalShare)
	p.printf("| overlapped with compute (`overlap_ratio`) | %.2f%% |\n", 100*s.OverlapRatio)
	p.printf("| mean step time (Stage) | %.3f ms |\n", float64(s.StepTimeNs)/1e6)
	p.printf("| ranks × steps | %d × %d |\n\n", s.Ranks, s.Steps)

	if a := d.Advice; a != nil {
		if len(a.Findings) > 0 {
			p.printf("### Findings\n\n")
			for i, f := range a.Findings {
				if i == 5 {
					p.printf("\n<details><summary>%d more findings</summary>\n\n", len(a.Findings)-5)
				}
				p.printf("- **%s** %s  \n  %s\n", strings.ToUpper(string(f.Severity)), mdText(f.Title), mdText(f.Evidence))
			}
			if len(a.Findings) > 5 {
				p.printf("\n</details>\n")
			}
			p.printf("\n")
		}
		if len(a.Recommendations) > 0 {
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
		} else if len(a.Notes) > 0 {
			p.printf("_No recommendation: %s_\n\n", mdText(strings.Join(a.Notes, "; ")))
		}
	}
	if len(d.Gates) > 0 {
		p.printf("### Gates\n\n")
		for _, g := range d.Gates {
			status := "pass"
			if !g.Passed {
				status = "**FAIL**"
			}
			p.printf("- %s `%s` (%s = %s)\n", status, mdCode(g.Expr), g.Metric, gateValue(g))
		}
		p.printf("\n")
	}

	p.printf("<details><summary>Steps (ms)</summary>\n\n")
	mdSteps(p, r)
	p.printf("\n</details>\n\n")
	if len(r.Collectives) > 0 {
		p.printf("<details><summary>Collectives</summary>\n\n| op | group | size | count | MB/op | total ms | mean ms | p95 ms | algbw GB/s | busbw GB/s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Collectives {
			mb := "-"
			if c.Bytes > 0 {
				mb = fmt.Sprintf("%.2f", float64(c.Bytes)/float64(c.Count)/1e6)
			}
			p.printf("| %s | %s | %d | %d | %s | %s | %s | %s | %.2f | %.2f |\n", mdText(c.Op), mdText(groupLabel(c)), c.GroupSize, c.Count, mb,
				ms(c.TotalNs), msf(c.MeanNs), msf(c.P95Ns), c.AlgBwGBps, c.BusBwGBps)
		}
		p.printf("\n</details>\n\n")
	}
	mdLinks(p, r.Communication)
	var fired []analysis.Check
	for _, ch := range r.Communication.Checks {
		if ch.Fired {
			fired = append(fired, ch)
		}
	}
	if len(fired) > 0 {
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
	p.printf("<sub>`%s` · hcclprof %s</sub>\n", mdCode(d.Command), mdText(d.Version))
	return p.firstErr
}

func mdSteps(p *printer, r *analysis.Result) {
	if len(r.Ranks) > maxRankRows {
		p.printf("| step | ranks | Stage p50 | Stage max | comm_share p50 | comm_share max |\n|---:|---:|---:|---:|---:|---:|\n")
		for _, step := range r.StepNumbers() {
			var stage, share []float64
			for _, rr := range r.Ranks {
				for _, st := range rr.Steps {
					if st.Step == step {
						stage = append(stage, float64(st.StageNs))
						share = append(share, st.CommShare())
					}
				}
			}
			sort.Float64s(stage)
			sort.Float64s(share)
			p.printf("| %s | %d | %s | %s | %s | %s |\n", analysis.StepLabel(step), len(stage), msf(stats.MedianSorted(stage)), msf(stage[len(stage)-1]),
				pct(stats.MedianSorted(share)), pct(share[len(share)-1]))
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

func mdLinks(p *printer, c analysis.Communication) {
	by := map[string][]float64{}
	for _, l := range c.Links {
		by[l.Transport] = append(by[l.Transport], l.BandwidthGBps())
	}
	if len(by) == 0 {
		return
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	p.printf("<details><summary>Links per transport (GB/s, against %s's peaks)</summary>\n\n| transport | links | min | median | max | peak | median use |\n|---|---:|---:|---:|---:|---:|---:|\n", mdText(c.Hardware.Name))
	for _, n := range names {
		v := by[n]
		sort.Float64s(v)
		peak, use := "-", "-"
		if pk, ok := c.Hardware.Peak(n); ok {
			peak, use = fmt.Sprintf("%.1f", pk), pct(stats.UpperMedianSorted(v)/pk)
		}
		p.printf("| %s | %d | %.2f | %.2f | %.2f | %s | %s |\n", mdText(n), len(v), v[0], stats.UpperMedianSorted(v), v[len(v)-1], peak, use)
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
