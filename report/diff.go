package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/hcclprof/hcclprof/analysis/compare"
	"github.com/hcclprof/hcclprof/report/contract"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// ReadReportRun reads a saved JSON report (hcclprof analyze --format json) as one side
// of a diff; label names it in errors and in the diff.
func ReadReportRun(r io.Reader, label string) (*compare.Run, error) {
	rep, err := contract.Decode(r)
	if err != nil {
		return nil, fmt.Errorf("%s: not an hcclprof JSON report: %v", label, err)
	}
	// Version 1 differs only in words (node for server), which Decode maps.
	if rep.SchemaVersion < 1 || rep.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this hcclprof reads 1 to %d", label, rep.SchemaVersion, SchemaVersion)
	}
	ns := func(us float64) int64 { return int64(math.Round(us * 1000)) }
	run := &compare.Run{Label: label, Ranks: rep.Summary.Ranks, Steps: rep.Summary.Steps, Incomplete: rep.Summary.Incomplete, Warnings: rep.Warnings}
	for _, rr := range rep.Ranks {
		for _, s := range rr.Steps {
			run.Samples = append(run.Samples, compare.StepSample{Rank: rr.Rank, Step: s.Step, StageNs: ns(s.StageUs), ComputingNs: ns(s.ComputingUs),
				CommunicationNs: ns(s.CommunicationUs), CommNotOverlappedNs: ns(s.CommunicationNotOverlappedUs), OverlappedNs: ns(s.OverlappedUs),
				FreeNs: ns(s.FreeUs), BubbleNs: ns(s.BubbleUs)})
		}
	}
	for _, o := range rep.Communication.Ops {
		run.Ops = append(run.Ops, compare.OpSample{Rank: o.Rank, Step: o.Step, Group: o.Group, Type: o.Type, ElapseNs: ns(o.ElapseUs), BytesTot: o.Bytes})
	}
	for _, c := range rep.Collectives {
		run.Collectives = append(run.Collectives, compare.CollectiveInfo{Op: c.Op, Group: c.Group, GroupName: c.GroupName, GroupSize: c.GroupSize,
			Count: c.Count, MeanNs: c.MeanUs * 1000, BusBwGBps: c.BusBwGBps})
	}
	return run, nil
}

// DiffDoc is a diff with its gates.
type DiffDoc struct {
	Diff  *compare.Diff
	Gates []GateView
	// Width is the text output's width in display columns (the terminal's); 0 is no
	// limit. Other formats ignore it.
	Width int `json:"-"`
}

// GateView is a gate's outcome for rendering.
type GateView struct {
	Expr, Metric string
	Value        float64
	Passed       bool
}

func diffValue(m compare.MetricDiff, v float64) string {
	if m.Unit == "share" {
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	return strconv.FormatFloat(v/1e3, 'f', 3, 64) + " ms"
}

// diffChange is benchstat's column: the change, or "~" when it is not significant.
func diffChange(m compare.MetricDiff) string {
	if !m.Significant {
		return "~"
	}
	if m.Unit == "share" {
		return fmt.Sprintf("%+.2f pts", 100*m.Delta)
	}
	if math.IsNaN(m.DeltaPct) {
		return fmt.Sprintf("%+.3f ms", m.Delta/1e3)
	}
	return fmt.Sprintf("%+.2f%%", m.DeltaPct)
}

// WriteDiffText writes a diff as benchstat does: base, new, the change or "~", p and n.
func WriteDiffText(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := newPrinter(w, d.Width)
	df := d.Diff
	p.printf("hcclprof diff: %s (%d samples) → %s (%d samples); α = %.2g\n", df.Base.Label, df.Base.Samples, df.New.Label, df.New.Samples, df.Alpha)
	t := newTextTable(column{name: "Metric", cut: true}, col("Base"), col("New"), col("Change"), column{name: "p", drop: 2}, column{name: "n", drop: 1})
	for _, m := range df.Metrics {
		t.Append(m.Name, diffValue(m, m.BaseValue), diffValue(m, m.NewValue), diffChange(m),
			fmt.Sprintf("%.3g", m.Test.P), fmt.Sprintf("%d+%d", m.Base.N, m.New.N))
	}
	p.table(t)
	a := df.Attribution
	p.printf("\nStep time %+.3f ms = ", a.StepTimeDeltaUs/1e3)
	for i, part := range a.Parts {
		if i > 0 {
			p.printf(" + ")
		}
		p.printf("%s %+.3f", part.Name, part.DeltaUs/1e3)
	}
	p.printf(" (residue %+.3f) ms\n", a.ResidueUs/1e3)
	if len(df.Collectives) > 0 {
		p.printf("\nCollectives (mean per op)\n")
		ct := newTextTable(column{name: "Op", cut: true}, column{name: "Group", cut: true, drop: 1}, col("Base"), col("New"), col("Change"),
			column{name: "busbw base", short: "busbw\nbase", drop: 2}, column{name: "busbw new", short: "busbw\nnew", drop: 3},
			column{name: "Change", short: "busbw\nchange", drop: 4})
		for _, c := range df.Collectives {
			ct.Append(c.Op, c.Group, diffValue(c.MeanUs, c.MeanUs.BaseValue), diffValue(c.MeanUs, c.MeanUs.NewValue), diffChange(c.MeanUs),
				fmt.Sprintf("%.2f", c.BusBwGBps.BaseValue), fmt.Sprintf("%.2f", c.BusBwGBps.NewValue), diffChange(c.BusBwGBps))
		}
		p.table(ct)
	}
	for _, x := range df.Warnings {
		p.printf("warning: %s\n", x)
	}
	for _, g := range d.Gates {
		status := "PASS"
		if !g.Passed {
			status = "FAIL"
		}
		p.printf("%s  %s (%s = %.6g)\n", status, g.Expr, g.Metric, g.Value)
	}
	return p.done()
}

// WriteDiffJSON writes a diff as JSON.
func WriteDiffJSON(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	type metric struct {
		Name        string     `json:"name"`
		Unit        string     `json:"unit"`
		Base        float64    `json:"base"`
		New         float64    `json:"new"`
		Delta       float64    `json:"delta"`
		DeltaPct    *float64   `json:"delta_pct"`
		P           float64    `json:"p"`
		Method      string     `json:"test"`
		CI          [2]float64 `json:"ci"`
		Significant bool       `json:"significant"`
		NBase, NNew int        `json:"-"`
		N           [2]int     `json:"n"`
	}
	df := d.Diff
	out := struct {
		SchemaVersion int        `json:"schema_version"`
		Base          string     `json:"base"`
		New           string     `json:"new"`
		Alpha         float64    `json:"alpha"`
		Metrics       []metric   `json:"metrics"`
		Attribution   any        `json:"attribution"`
		Warnings      []string   `json:"warnings"`
		Gates         []GateView `json:"gates"`
	}{SchemaVersion: SchemaVersion, Base: df.Base.Label, New: df.New.Label, Alpha: df.Alpha, Warnings: nonNil(df.Warnings), Gates: d.Gates}
	for _, m := range df.Metrics {
		jm := metric{Name: m.Name, Unit: m.Unit, Base: m.BaseValue, New: m.NewValue, Delta: m.Delta, P: m.Test.P, Method: m.Test.Method,
			CI: [2]float64{m.CI.Lo, m.CI.Hi}, Significant: m.Significant, N: [2]int{m.Base.N, m.New.N}}
		if !math.IsNaN(m.DeltaPct) {
			v := m.DeltaPct
			jm.DeltaPct = &v
		}
		if math.IsNaN(jm.CI[0]) || math.IsNaN(jm.CI[1]) {
			jm.CI = [2]float64{}
		}
		out.Metrics = append(out.Metrics, jm)
	}
	parts := map[string]float64{}
	for _, p := range df.Attribution.Parts {
		parts[p.Name] = p.DeltaUs
	}
	out.Attribution = map[string]any{"step_time_delta_us": df.Attribution.StepTimeDeltaUs, "parts_us": parts, "residue_us": df.Attribution.ResidueUs}
	if out.Gates == nil {
		out.Gates = []GateView{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteDiffMarkdown writes a diff for a ticket: the metrics table with "~" for no
// significant change, the step-time attribution, and the gates.
func WriteDiffMarkdown(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := &printer{w: w}
	df := d.Diff
	p.printf("## hcclprof diff: %s → %s\n\n", mdText(df.Base.Label), mdText(df.New.Label))
	p.printf("| metric | base | new | change | p | n |\n|---|---:|---:|---:|---:|---:|\n")
	for _, m := range df.Metrics {
		p.printf("| %s | %s | %s | %s | %.3g | %d+%d |\n", m.Name, diffValue(m, m.BaseValue), diffValue(m, m.NewValue), diffChange(m), m.Test.P, m.Base.N, m.New.N)
	}
	a := df.Attribution
	p.printf("\nStep time %+.3f ms:", a.StepTimeDeltaUs/1e3)
	for _, part := range a.Parts {
		p.printf(" %s %+.3f;", part.Name, part.DeltaUs/1e3)
	}
	p.printf(" residue %+.3f ms.\n", a.ResidueUs/1e3)
	if len(d.Gates) > 0 {
		p.printf("\n")
		for _, g := range d.Gates {
			status := "pass"
			if !g.Passed {
				status = "**FAIL**"
			}
			p.printf("- %s `%s` (%s = %.6g)\n", status, mdCode(g.Expr), g.Metric, g.Value)
		}
	}
	for _, x := range df.Warnings {
		p.printf("\n> %s\n", mdText(x))
	}
	p.printf("\n<sub>α = %.2g; \"~\": no significant change (Mann-Whitney U)</sub>\n", df.Alpha)
	return p.firstErr
}
