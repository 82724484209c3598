package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis/compare"
	"github.com/hcclprof/hcclprof/internal/units"
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
	if err := checkReportFigures(rep); err != nil {
		return nil, fmt.Errorf("%s: not a report hcclprof can have written: %v", label, err)
	}
	ns := func(us float64) int64 { return int64(math.Round(us * 1000)) }
	run := &compare.Run{Label: label, Ranks: rep.Summary.Ranks, Steps: rep.Summary.Steps, Incomplete: rep.Summary.Incomplete, Warnings: rep.Warnings}
	for _, rr := range rep.Ranks {
		for _, s := range rr.Steps {
			run.Samples = append(run.Samples, compare.StepSample{Rank: rr.Rank, Step: s.Step, StageNs: ns(s.StageUs), ComputingNs: ns(s.ComputingUs),
				CommunicationNs: ns(s.CommunicationUs), CommNotOverlappedNs: ns(s.CommunicationNotOverlappedUs), OverlappedNs: ns(s.OverlappedUs),
				FreeNs: ns(s.FreeUs), BubbleNs: ns(s.BubbleUs), ExposedNs: exposedNs(s)})
		}
	}
	for _, o := range rep.Communication.Ops {
		run.Ops = append(run.Ops, compare.OpSample{Rank: o.Rank, Step: o.Step, Group: o.Group, Type: o.Type, ElapseNs: ns(o.ElapseUs), BytesTot: orZero(o.Bytes)})
	}
	members := map[string][]int{}
	for _, g := range rep.Communication.Groups {
		members[g.Group] = g.Ranks
	}
	for _, c := range rep.Collectives {
		run.Collectives = append(run.Collectives, compare.CollectiveInfo{Op: c.Op, Group: c.Group, GroupName: c.GroupName, GroupSize: orZero(c.GroupSize),
			Count: c.Count, MeanNs: c.MeanUs * 1000, BusBwGBps: orZero(c.BusBwGBps), Members: members[c.Group]})
	}
	return run, nil
}

// orZero is *p, or 0 (the analysis' "not known") when the report has null.
func orZero[T int | int64 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// DiffDoc is a diff with its gates.
type DiffDoc struct {
	Diff  *compare.Diff
	Gates []advisor.GateResult
	// Width is the text output's width in display columns (the terminal's); 0 is no
	// limit. Other formats ignore it.
	Width int `json:"-"`
}

// diffSide is one run's figure of a diffed metric, "-" when the run has none (a
// collective of the other run only, a bandwidth without byte counts).
func diffSide(m compare.MetricDiff, base bool) string {
	n, v := m.New.N, m.NewValue
	if base {
		n, v = m.Base.N, m.BaseValue
	}
	switch {
	case n == 0:
		return "-"
	case m.Unit == "share":
		return fmt.Sprintf("%.2f%%", 100*v)
	case m.Unit == "GB/s":
		return fmt.Sprintf("%.2f", v)
	}
	return strconv.FormatFloat(v/1e3, 'f', 3, 64) + " ms"
}

// collectiveChange is a collective's change column: the change, "~", which run alone
// has it, or "-" when a run lacks the figure.
func collectiveChange(c compare.CollectiveDiff, m compare.MetricDiff) string {
	switch {
	case !c.InBase:
		return "new only"
	case !c.InNew:
		return "base only"
	case m.Base.N == 0 || m.New.N == 0:
		return "-" // a figure one run lacks (a bandwidth without byte counts)
	}
	return diffChange(m)
}

// diffGateValue is a diff gate's figure, or why there is none.
func diffGateValue(g advisor.GateResult) string {
	if g.Unmeasured {
		return "not measured"
	}
	return strconv.FormatFloat(g.Value, 'g', 6, 64)
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

// writeDiffText writes a diff as benchstat does: base, new, the change or "~", p and n.
func writeDiffText(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := newPrinter(w, d.Width)
	df := d.Diff
	p.printf("hcclprof diff: %s (%s) → %s (%s); α = %.2g\n", df.Base.Label, units.Count(df.Base.Samples, "sample"), df.New.Label, units.Count(df.New.Samples, "sample"), df.Alpha)
	t := newTextTable(column{name: "Metric", cut: true}, col("Base"), col("New"), col("Change"), column{name: "p", drop: 2}, column{name: "n", drop: 1})
	for _, m := range df.Metrics {
		t.Append(m.Name, diffSide(m, true), diffSide(m, false), diffChange(m),
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
		ct := newTextTable(column{name: "Op", cut: true, key: true}, column{name: "Group", cut: true, drop: 1, key: true}, col("Base"), col("New"), col("Change"),
			column{name: "busbw base", short: "busbw\nbase", drop: 2}, column{name: "busbw new", short: "busbw\nnew", drop: 3},
			column{name: "Change", short: "busbw\nchange", drop: 4})
		for _, c := range df.Collectives {
			ct.Append(c.Op, c.Group, diffSide(c.MeanUs, true), diffSide(c.MeanUs, false), collectiveChange(c, c.MeanUs),
				diffSide(c.BusBwGBps, true), diffSide(c.BusBwGBps, false), collectiveChange(c, c.BusBwGBps))
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
		p.printf("%s  %s (%s = %s)\n", status, g.Expr, g.Metric, diffGateValue(g))
	}
	return p.done()
}

// diffMetricJSON is one diffed figure in diff's JSON. A figure a run does not have
// (a collective of the other run only, a bandwidth without byte counts) is null, as
// is what is computed from it; ci is null when no interval could be drawn.
type diffMetricJSON struct {
	Name        string      `json:"name,omitempty"`
	Unit        string      `json:"unit"`
	Base        *float64    `json:"base"`
	New         *float64    `json:"new"`
	Delta       *float64    `json:"delta"`
	DeltaPct    *float64    `json:"delta_pct"`
	P           float64     `json:"p"`
	Method      string      `json:"test"`
	CI          *[2]float64 `json:"ci"`
	Significant bool        `json:"significant"`
	N           [2]int      `json:"n"`
	Note        string      `json:"note"`
}

func diffMetric(m compare.MetricDiff) diffMetricJSON {
	hasBase, hasNew := m.Base.N > 0, m.New.N > 0
	out := diffMetricJSON{Name: m.Name, Unit: m.Unit, Base: figure(m.BaseValue, hasBase), New: figure(m.NewValue, hasNew),
		Delta: figure(m.Delta, hasBase && hasNew), DeltaPct: figure(m.DeltaPct, hasBase && hasNew),
		P: m.Test.P, Method: m.Test.Method, Significant: m.Significant, N: [2]int{m.Base.N, m.New.N}, Note: m.Note}
	if !math.IsNaN(m.CI.Lo) && !math.IsNaN(m.CI.Hi) {
		out.CI = &[2]float64{m.CI.Lo, m.CI.Hi}
	}
	return out
}

// writeDiffJSON writes a diff as JSON (testdata/report.schema.json, $defs/Diff).
func writeDiffJSON(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	type collective struct {
		Op        string         `json:"op"`
		Group     string         `json:"group"`
		InBase    bool           `json:"in_base"`
		InNew     bool           `json:"in_new"`
		MeanUs    diffMetricJSON `json:"mean_us"`
		BusBwGBps diffMetricJSON `json:"busbw_gbps"`
	}
	type attribution struct {
		StepTimeDeltaUs float64            `json:"step_time_delta_us"`
		PartsUs         map[string]float64 `json:"parts_us"`
		ResidueUs       float64            `json:"residue_us"`
	}
	df := d.Diff
	out := struct {
		SchemaVersion int              `json:"schema_version"`
		Base          string           `json:"base"`
		New           string           `json:"new"`
		Alpha         float64          `json:"alpha"`
		Metrics       []diffMetricJSON `json:"metrics"`
		Attribution   attribution      `json:"attribution"`
		Collectives   []collective     `json:"collectives"`
		Warnings      []string         `json:"warnings"`
		Gates         []contract.Gate  `json:"gates"`
	}{SchemaVersion: SchemaVersion, Base: df.Base.Label, New: df.New.Label, Alpha: df.Alpha, Metrics: []diffMetricJSON{},
		Collectives: []collective{}, Warnings: nonNil(df.Warnings), Gates: gatesJSON(d.Gates)}
	for _, m := range df.Metrics {
		out.Metrics = append(out.Metrics, diffMetric(m))
	}
	out.Attribution = attribution{StepTimeDeltaUs: df.Attribution.StepTimeDeltaUs, PartsUs: map[string]float64{}, ResidueUs: df.Attribution.ResidueUs}
	for _, p := range df.Attribution.Parts {
		out.Attribution.PartsUs[p.Name] = p.DeltaUs
	}
	for _, c := range df.Collectives {
		mean, busbw := diffMetric(c.MeanUs), diffMetric(c.BusBwGBps)
		mean.Name, busbw.Name = "", ""
		out.Collectives = append(out.Collectives, collective{Op: c.Op, Group: c.Group, InBase: c.InBase, InNew: c.InNew, MeanUs: mean, BusBwGBps: busbw})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return namedJSONError(out, enc.Encode(out))
}

// writeDiffMarkdown writes a diff for a ticket: the metrics table with "~" for no
// significant change, the step-time attribution, and the gates.
func writeDiffMarkdown(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := &printer{w: w}
	df := d.Diff
	p.printf("## hcclprof diff: %s → %s\n\n", mdText(df.Base.Label), mdText(df.New.Label))
	p.printf("| metric | base | new | change | p | n |\n|---|---:|---:|---:|---:|---:|\n")
	for _, m := range df.Metrics {
		p.printf("| %s | %s | %s | %s | %.3g | %d+%d |\n", m.Name, diffSide(m, true), diffSide(m, false), diffChange(m), m.Test.P, m.Base.N, m.New.N)
	}
	a := df.Attribution
	p.printf("\nStep time %+.3f ms:", a.StepTimeDeltaUs/1e3)
	for _, part := range a.Parts {
		p.printf(" %s %+.3f;", part.Name, part.DeltaUs/1e3)
	}
	p.printf(" residue %+.3f ms.\n", a.ResidueUs/1e3)
	if len(df.Collectives) > 0 {
		p.printf("\n| collective | group | base | new | change | busbw base | busbw new | change |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range df.Collectives {
			p.printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(c.Op), mdText(c.Group), diffSide(c.MeanUs, true), diffSide(c.MeanUs, false),
				collectiveChange(c, c.MeanUs), diffSide(c.BusBwGBps, true), diffSide(c.BusBwGBps, false), collectiveChange(c, c.BusBwGBps))
		}
	}
	if len(d.Gates) > 0 {
		p.printf("\n")
		for _, g := range d.Gates {
			status := "pass"
			if !g.Passed {
				status = "**FAIL**"
			}
			p.printf("- %s `%s` (%s = %s)\n", status, mdCode(g.Expr), g.Metric, diffGateValue(g))
		}
	}
	for _, x := range df.Warnings {
		p.printf("\n> %s\n", mdText(x))
	}
	p.printf("\n<sub>α = %.2g; \"~\": no significant change (Mann-Whitney U)</sub>\n", df.Alpha)
	return p.firstErr
}

// exposedNs is a report step's exposed communication as analyze counted it: the
// profiler's arithmetic, Not Overlapped − Bubble within Stage, exact from the report's
// ns-precise figures, wherever comm_share (6 decimals) agrees with it; else comm_share
// × Stage, measured on a timeline whose receives overlapped computation (a
// context-parallel ring), within 0.5 ppm of the step.
func exposedNs(s contract.Step) int64 {
	ns := func(us float64) int64 { return int64(math.Round(us * 1000)) }
	stage := ns(s.StageUs)
	arith := min(max(ns(s.CommunicationNotOverlappedUs)-ns(s.BubbleUs), 0), max(stage, 0))
	fromShare := int64(math.Round(s.CommShare * float64(stage)))
	if math.Abs(float64(arith-fromShare)) <= 0.5e-6*float64(stage)+1 {
		return arith
	}
	return fromShare
}
