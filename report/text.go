package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hcclprof/hcclprof/analysis"
)

// WriteText writes the terminal report: the verdict, the per-rank step table, the
// per-collective table, gates, warnings and notes.
func WriteText(w io.Writer, d *Document) error {
	r := d.Result
	s := r.Summary
	p := &printer{w: w}
	steps := r.StepNumbers()
	p.printf("hcclprof: %d rank(s), %d step(s) %s\n", s.Ranks, s.Steps, stepList(steps))
	p.printf("Verdict: %s.\n", Verdict(s))
	if s.Ranks > 0 {
		p.printf("  exposed communication (comm_share)   %6.2f%% of step time\n", 100*s.CommShare)
		p.printf("  all communication (comm_total_share) %6.2f%%\n", 100*s.CommTotalShare)
		p.printf("  AllReduce (allreduce_share)          %6.2f%%\n", 100*s.AllReduceShare)
		p.printf("  overlapped with compute (overlap_ratio) %.2f%% of communication\n", 100*s.OverlapRatio)
		p.printf("  mean step time (Stage)               %.3f ms\n", float64(s.StepTimeNs)/1e6)
	}
	if s.Incomplete {
		p.printf("  INCOMPLETE: some input could not be read in full (see warnings)\n")
	}

	p.printf("\nSteps per rank (times in ms)\n")
	t := newTable(p)
	t.Header("Rank", "Step", "Stage", "Computing", "Comm", "Comm not overlapped", "Overlapped", "Free", "Bubble", "Preparing", "comm_share", "Source")
	for _, rr := range r.Ranks {
		if len(rr.Steps) == 0 {
			_ = t.Append(strconv.Itoa(rr.Rank), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", string(rr.Source))
		}
		for _, st := range rr.Steps {
			_ = t.Append(strconv.Itoa(rr.Rank), analysis.StepLabel(st.Step), ms(st.StageNs), ms(st.ComputingNs),
				ms(st.CommunicationNs), ms(st.CommNotOverlappedNs), ms(st.OverlappedNs), ms(st.FreeNs),
				ms(st.BubbleNs), ms(st.PreparingNs), pct(st.CommShare()), string(rr.Source))
		}
	}
	p.err(t.Render())

	if len(r.Collectives) > 0 {
		p.printf("\nCollectives (over all ranks and steps; times in ms, bandwidth in GB/s)\n")
		t := newTable(p)
		t.Header("Op", "Group", "Size", "Count", "MB/op", "Total", "Mean", "p50", "p95", "Max", "algbw", "busbw")
		for _, c := range r.Collectives {
			mbPerOp, algbw, busbw := "-", "-", "-"
			if c.Bytes > 0 {
				mbPerOp = fmt.Sprintf("%.2f", float64(c.Bytes)/float64(c.Count)/1e6)
				algbw = fmt.Sprintf("%.2f", c.AlgBwGBps)
				busbw = fmt.Sprintf("%.2f", c.BusBwGBps)
			}
			size := "-"
			if c.GroupSize > 0 {
				size = strconv.Itoa(c.GroupSize)
			}
			_ = t.Append(c.Op, groupLabel(c), size, strconv.Itoa(c.Count), mbPerOp, ms(c.TotalNs),
				msf(c.MeanNs), msf(c.P50Ns), msf(c.P95Ns), ms(c.MaxNs), algbw, busbw)
		}
		p.err(t.Render())
	}

	writeCommunication(p, r.Communication)

	if len(d.Gates) > 0 {
		p.printf("\nGates\n")
		for _, g := range d.Gates {
			status := "PASS"
			if !g.Passed {
				status = "FAIL"
			}
			p.printf("  %s  %s (%s = %s)\n", status, g.Expr, g.Metric, formatMetric(g.Metric, g.Value))
		}
	}
	if len(r.Warnings) > 0 {
		p.printf("\nWarnings\n")
		for _, w := range r.Warnings {
			p.printf("  - %s\n", w)
		}
	}
	if len(d.Notes) > 0 {
		p.printf("\nNotes\n")
		for _, n := range d.Notes {
			p.printf("  - %s\n", n)
		}
	}
	return p.firstErr
}

type printer struct {
	w        io.Writer
	firstErr error
}

func (p *printer) printf(format string, args ...any) {
	if p.firstErr == nil {
		_, p.firstErr = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) err(err error) {
	if p.firstErr == nil {
		p.firstErr = err
	}
}

func (p *printer) Write(b []byte) (int, error) {
	if p.firstErr != nil {
		return 0, p.firstErr
	}
	n, err := p.w.Write(b)
	p.firstErr = err
	return n, err
}

func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
	)
}

func ms(ns int64) string    { return fmt.Sprintf("%.3f", float64(ns)/1e6) }
func msf(ns float64) string { return fmt.Sprintf("%.3f", ns/1e6) }
func pct(x float64) string  { return fmt.Sprintf("%.2f%%", 100*x) }

func formatMetric(name string, v float64) string {
	if strings.HasSuffix(name, "share") || strings.HasSuffix(name, "ratio") {
		return fmt.Sprintf("%.4f (%.2f%%)", v, 100*v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func groupLabel(c analysis.Collective) string {
	g := c.Group
	if len(g) > 8 {
		g = "…" + g[len(g)-6:]
	}
	if c.GroupName != "" {
		return c.GroupName + " " + g
	}
	return g
}

func stepList(steps []int) string {
	if len(steps) == 0 {
		return ""
	}
	if len(steps) == 1 && steps[0] < 0 {
		return "(no step markers)"
	}
	if len(steps) <= 8 {
		parts := make([]string, len(steps))
		for i, s := range steps {
			parts[i] = analysis.StepLabel(s)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprintf("(%d…%d)", steps[0], steps[len(steps)-1])
}
