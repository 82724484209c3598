package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// WriteHTML writes one self-contained HTML file: inline CSS and inline SVG charts, no
// script and no external URL of any kind (clusters are air-gapped). Every string from
// the input goes through html/template's escaping.
func WriteHTML(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	return htmlTemplate.Execute(w, htmlView(d))
}

type htmlPage struct {
	Doc        *Document
	Verdict    string
	Summary    analysis.Summary
	Breakdown  *svgChart
	BarsNote   string
	Matrix     *svgChart
	MatrixNote string
	Links      *svgChart
	Timeline   *svgChart
	TimeTitle  string
	Compute    bool // the timeline has compute lanes
	Checks     []advisor.Check
	// Collectives are the collectives table's rows (view.go).
	Collectives []collectiveRow
}

// chartWidth is the width of the bar charts and the timeline, in user units.
const chartWidth = 900.0

// htmlView lays the charts out.
func htmlView(d *Document) htmlPage {
	r := d.Result
	v := d.view()
	pg := htmlPage{Doc: d, Verdict: v.Verdict, Summary: v.Summary, Checks: v.FiredChecks, Collectives: v.Collectives}
	pg.Breakdown, pg.BarsNote = breakdownChart(r)
	pg.Matrix, pg.MatrixNote = matrixChart(r.Communication)
	pg.Links = linksChart(v.Links)
	pg.Timeline, pg.TimeTitle, pg.Compute = timelineChart(d)
	return pg
}

// maxBars is the most ranks the breakdown draws; the JSON and Markdown reports list
// every rank.
const maxBars = 64

// breakdownChart is each rank's mean step as stacked bars (computing only,
// overlapped, exposed communication, free) on a ms axis.
func breakdownChart(r *analysis.Result) (*svgChart, string) {
	type mean struct{ comp, ov, exp, free, stage float64 }
	var means []mean
	var labels, totals []string
	var maxSum float64
	for _, rr := range r.Ranks {
		if len(means) == maxBars {
			break
		}
		n := float64(len(rr.Steps))
		if n == 0 {
			continue
		}
		var m mean
		for _, st := range rr.Steps {
			m.comp += float64(st.ComputingNs-st.OverlappedNs) / n
			m.ov += float64(st.OverlappedNs) / n
			m.exp += float64(st.CommNotOverlappedNs) / n
			m.free += float64(st.FreeNs) / n
			m.stage += float64(st.StageNs) / n
		}
		means = append(means, m)
		labels = append(labels, fmt.Sprintf("rank %d", rr.Rank))
		totals = append(totals, fmt.Sprintf("%.3f ms", m.stage/1e6))
		maxSum = math.Max(maxSum, m.comp+m.ov+m.exp+m.free)
	}
	if maxSum <= 0 {
		return nil, ""
	}
	note := ""
	if len(r.Ranks) > maxBars {
		note = fmt.Sprintf("The first %d of %d ranks (the JSON and Markdown reports list every rank).", maxBars, len(r.Ranks))
	}
	c := &svgChart{ID: "breakdown", Label: "mean step of each rank, split into computing only, overlapped, exposed communication and free time", W: chartWidth}
	x0 := maxTextWidth(labels) + 10
	x1 := chartWidth - maxTextWidth(totals) - 12
	c.legend(x0, 4, [][2]string{{"comp", "computing only"}, {"ov", "overlapped"}, {"exp", "exposed communication"}, {"free", "free"}})
	const top, row = 26.0, 18.0
	axisY := top + row*float64(len(means)) + 2
	step := niceStep(maxSum/1e6, int((x1-x0)/90))
	domain := math.Ceil(maxSum/1e6/step-1e-9) * step // ms: the axis ends on a tick
	c.xAxis(x0, x1, axisY, top-2, domain, step, func(s string) string { return s }, "mean step time (ms); the figure at the right is the profiler's Stage")
	scale := (x1 - x0) / (domain * 1e6)
	for i, m := range means {
		y := top + row*float64(i)
		c.text(x0-6, y+11, "end", "label", labels[i])
		x := x0
		for _, s := range []struct {
			v           float64
			class, name string
		}{{m.comp, "comp", "computing only"}, {m.ov, "ov", "overlapped"}, {m.exp, "exp", "exposed communication"}, {m.free, "free", "free"}} {
			c.rect(x, y, s.v*scale, 14, s.class, fmt.Sprintf("%s %s: %.3f ms", labels[i], s.name, s.v/1e6))
			x += s.v * scale
		}
		c.text(chartWidth-2, y+11, "end", "value", totals[i])
	}
	c.H = axisY + 38
	return c, note
}

// bwColour is a link's fill: low bandwidth (v = bandwidth over the highest, 0..1)
// red and light, high green and darker.
func bwColour(v float64) string {
	return fmt.Sprintf("hsl(%d,70%%,%d%%)", int(120*v), 45+int(20*(1-v)))
}

// maxMatrix is the most ranks the communication matrix draws.
const maxMatrix = 64

// matrixChart is the bandwidth of each src→dst link (all transports) as a coloured
// grid with the ranks along both sides and a colour key in GB/s.
func matrixChart(c analysis.Communication) (*svgChart, string) {
	pos := map[int]int{}
	var ids []int
	for _, l := range c.Links {
		for _, x := range []int{l.Src, l.Dst} {
			if _, ok := pos[x]; !ok {
				pos[x] = 0
				ids = append(ids, x)
			}
		}
	}
	sort.Ints(ids)
	if len(ids) > maxMatrix {
		return nil, fmt.Sprintf("%d ranks: the matrix is drawn for up to %d (the JSON report has every link)", len(ids), maxMatrix)
	}
	if len(ids) == 0 {
		return nil, ""
	}
	names := make([]string, len(ids))
	for i, x := range ids {
		pos[x] = i
		names[i] = strconv.Itoa(x)
	}
	var maxBW float64
	for _, l := range c.Links {
		maxBW = math.Max(maxBW, l.BandwidthGBps())
	}
	n := float64(len(ids))
	cell := math.Min(40, math.Max(6, math.Floor(400/n)))
	grid := cell * n
	labelW := maxTextWidth(names)
	every := int(math.Ceil(math.Max(labelW+4, 13) / cell)) // label every k-th rank so labels do not touch
	left, top := 18+labelW+6, 34.0
	ch := &svgChart{ID: "matrix", Label: "communication matrix: bandwidth of each link from a source rank to a destination rank"}
	ch.text(left+grid/2, 12, "middle", "axis-title", "destination rank")
	ch.Elems = append(ch.Elems, svgElem{Kind: "text", X: 13, Y: top + grid/2, Anchor: "middle", Class: "axis-title", Rotate: true, Text: "source rank"})
	for i, name := range names {
		if i%every != 0 {
			continue
		}
		mid := float64(i)*cell + cell/2
		ch.text(left+mid, top-5, "middle", "tick", name)
		ch.text(left-5, top+mid+4, "end", "tick", name)
	}
	ch.rect(left, top, grid, grid, "nolink", "")
	for _, l := range c.Links {
		bw := l.BandwidthGBps()
		v := 0.0
		if maxBW > 0 {
			v = bw / maxBW
		}
		ch.fillRect(left+float64(pos[l.Dst])*cell, top+float64(pos[l.Src])*cell, cell, cell, bwColour(v),
			fmt.Sprintf("%d→%d %s: %.2f GB/s", l.Src, l.Dst, l.Transport, bw))
	}
	// The colour key: the fill's scale from 0 to the fastest link, and "no traffic".
	keyTop, keyW := top+grid+12, 240.0
	ch.text(left, keyTop+10, "start", "legend", "bandwidth of the link (GB/s, all transports)")
	for i := 0; i <= 10; i++ {
		ch.Gradient = append(ch.Gradient, svgStop{Offset: fmt.Sprintf("%.1f", float64(i)/10), Color: bwColour(float64(i) / 10)})
	}
	barY := keyTop + 16
	ch.fillRect(left, barY, keyW, 10, "url(#matrix-key)", "")
	if maxBW > 0 {
		step := niceStep(maxBW, 4)
		vals, labels := ticks(maxBW, step)
		for i, v := range vals {
			x := left + keyW*v/maxBW
			ch.line(x, barY+10, x, barY+14, "tick")
			ch.text(x, barY+25, "middle", "tick", labels[i])
		}
		// The key's end is the fastest link: labelled when it does not touch the last tick's label.
		end := fmt.Sprintf("%.1f", maxBW)
		last := vals[len(vals)-1]
		if keyW*(maxBW-last)/maxBW > (textWidth(end)+textWidth(labels[len(labels)-1]))/2+6 {
			ch.line(left+keyW, barY+10, left+keyW, barY+14, "tick")
			ch.text(left+keyW, barY+25, "middle", "tick", end)
		}
	}
	noX := left + keyW + 18
	right := ch.legend(noX, barY, [][2]string{{"nolink", "no traffic"}})
	ch.W = math.Ceil(math.Max(math.Max(left+grid, right), left+textWidth("bandwidth of the link (GB/s, all transports)")) + 6)
	ch.W = math.Max(ch.W, math.Ceil(left+grid/2+textWidth("destination rank")/2+6))
	ch.H = math.Max(barY+32, top+grid/2+textWidth("source rank")/2+4)
	return ch, ""
}

// maxLabelPx is the widest a label from the input (a transport's name) is drawn.
const maxLabelPx = 160.0

// linksChart is, per transport, the median link bandwidth as a share of the link's
// peak.
func linksChart(links []transportLinks) *svgChart {
	if len(links) == 0 {
		return nil
	}
	names := make([]string, len(links))
	type bar struct {
		med, peak float64
		value     string
	}
	bars := make([]bar, len(links))
	values := make([]string, len(links))
	for i, l := range links {
		names[i] = l.Transport
		b := bar{med: l.MedianGBps}
		peak, ok := l.PeakGBps, l.HasPeak
		b.peak = peak
		b.value = fmt.Sprintf("median %.2f of %.1f GB/s", b.med, peak)
		if !ok || peak <= 0 {
			b.peak = l.MaxGBps
			b.value = fmt.Sprintf("median %.2f of %.2f GB/s (fastest link; no peak known)", b.med, b.peak)
		}
		bars[i], values[i] = b, b.value
	}
	ch := &svgChart{ID: "links", Label: "median link bandwidth per transport as a share of its peak", W: chartWidth}
	x0 := math.Min(maxTextWidth(names), maxLabelPx) + 10
	x1 := chartWidth - maxTextWidth(values) - 12
	ch.legend(x0, 4, [][2]string{{"bw", "median link bandwidth"}, {"free", "up to the peak"}})
	const top, row = 26.0, 20.0
	axisY := top + row*float64(len(bars)) + 2
	ch.xAxis(x0, x1, axisY, top-2, 100, 25, func(s string) string { return s + "%" }, "median link bandwidth, % of the transport's peak")
	for i, b := range bars {
		y := top + row*float64(i)
		share := 0.0
		if b.peak > 0 {
			share = math.Min(b.med/b.peak, 1)
		}
		w := (x1 - x0) * share
		ch.label(x0-6, y+11, "end", "label", names[i], maxLabelPx)
		ch.rect(x0, y, w, 14, "bw", fmt.Sprintf("%s median %.2f GB/s (%.0f%% of %.1f)", names[i], b.med, 100*share, b.peak))
		ch.rect(x0+w, y, x1-x0-w, 14, "free", fmt.Sprintf("peak %.1f GB/s", b.peak))
		ch.text(chartWidth-2, y+11, "end", "value", b.value)
	}
	ch.H = axisY + 38
	return ch
}

// timelineChart is one step of a rank (the one whose timeline was kept, else the
// slowest) on a ms axis: its collectives, its waits for the others and, with the
// rank's timeline, its compute and exposed communication.
func timelineChart(d *Document) (*svgChart, string, bool) {
	r := d.Result
	c := r.Communication
	if len(r.Ranks) == 0 {
		return nil, "", false
	}
	rank, step := slowestRankStep(r)
	if tr := d.TimelineRank; tr != nil {
		rank, step = tr.Rank, longestStepOf(r, tr.Rank)
	}
	var ops []analysis.OpStat
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, o := range c.Ops {
		if o.Rank == rank && o.Step == step {
			ops = append(ops, o)
			lo, hi = min(lo, o.StartNs), max(hi, o.StartNs+o.ElapseNs)
		}
	}
	if len(ops) == 0 || hi <= lo {
		return nil, "", false
	}
	title := fmt.Sprintf("rank %d, step %s: collectives, the time they waited for the other ranks, compute and exposed communication (%.3f ms shown)", rank, analysis.StepLabel(step), float64(hi-lo)/1e6)
	type box struct {
		startNs, durNs int64
		minW           float64 // px: a box shorter than a pixel still shows
		class, title   string
	}
	type lane struct {
		label string
		boxes []box
	}
	comm, wait := lane{label: "collectives"}, lane{label: "waiting"}
	for _, o := range ops {
		comm.boxes = append(comm.boxes, box{o.StartNs, o.ElapseNs, 1, "exp",
			fmt.Sprintf("%s: %.3f ms (transit %.3f)", o.Name, float64(o.ElapseNs)/1e6, float64(o.TransitNs)/1e6)})
		if o.CrossWaitNs > 0 {
			wait.boxes = append(wait.boxes, box{o.StartNs, o.CrossWaitNs, 1, "wait",
				fmt.Sprintf("%s waited %.3f ms for the others", o.Name, float64(o.CrossWaitNs)/1e6)})
		}
	}
	lanes := []lane{comm, wait}
	compute := false
	if tr := d.TimelineRank; tr != nil && tr.Rank == rank {
		cl, el := lane{label: "compute"}, lane{label: "exposed comm"}
		for _, iv := range tr.Compute {
			if iv.EndNs <= lo || iv.StartNs >= hi {
				continue
			}
			s, e := max(iv.StartNs, lo), min(iv.EndNs, hi)
			cl.boxes = append(cl.boxes, box{s, e - s, 0.5, "comp", fmt.Sprintf("compute %.3f ms", float64(iv.DurNs())/1e6)})
		}
		for _, iv := range analysis.ExposedCommunication(tr) {
			if iv.EndNs <= lo || iv.StartNs >= hi {
				continue
			}
			s, e := max(iv.StartNs, lo), min(iv.EndNs, hi)
			el.boxes = append(el.boxes, box{s, e - s, 0.5, "exp", fmt.Sprintf("exposed %.3f ms", float64(e-s)/1e6)})
		}
		lanes, compute = append(lanes, cl, el), true
	}
	ch := &svgChart{ID: "timeline", Label: "timeline of one step of rank " + strconv.Itoa(rank), W: chartWidth}
	labels := make([]string, len(lanes))
	for i, l := range lanes {
		labels[i] = l.label
	}
	spanMs := float64(hi-lo) / 1e6
	step10 := niceStep(spanMs, 8)
	_, tickLabels := ticks(spanMs, step10)
	x0 := maxTextWidth(labels) + 10
	x1 := chartWidth - textWidth(tickLabels[len(tickLabels)-1])/2 - 6
	scale := (x1 - x0) / float64(hi-lo)
	const top, row = 6.0, 24.0
	axisY := top + row*float64(len(lanes))
	ch.xAxis(x0, x1, axisY, top, spanMs, step10, func(s string) string { return s }, "ms since the step's first collective started")
	for i, l := range lanes {
		y := top + row*float64(i) + 3
		ch.text(x0-6, y+11, "end", "label", l.label)
		for _, b := range l.boxes {
			ch.rect(x0+float64(b.startNs-lo)*scale, y, math.Max(b.minW, float64(b.durNs)*scale), 14, b.class, b.title)
		}
	}
	ch.H = axisY + 38
	return ch, title, compute
}

// longestStepOf is the rank's step with the longest Stage.
func longestStepOf(r *analysis.Result, rank int) int {
	best, step := int64(-1), -1
	for _, rr := range r.Ranks {
		if rr.Rank != rank {
			continue
		}
		for _, st := range rr.Steps {
			if st.StageNs > best {
				best, step = st.StageNs, st.Step
			}
		}
	}
	return step
}

// slowestRankStep is the rank and step with the longest Stage.
func slowestRankStep(r *analysis.Result) (int, int) {
	best, rank, step := int64(-1), r.Ranks[0].Rank, -1
	for _, rr := range r.Ranks {
		for _, st := range rr.Steps {
			if st.StageNs > best {
				best, rank, step = st.StageNs, rr.Rank, st.Step
			}
		}
	}
	return rank, step
}

// apply renders a recommendation's "how to apply": a line that holds `code` spans is
// prose with those spans as <code>; a line without is a command or setting, all
// code. Lines stay lines. Every piece is escaped.
func apply(s string) template.HTML {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteString("<br>")
		}
		parts := strings.Split(line, "`")
		if len(parts) < 3 || len(parts)%2 == 0 { // no pair of backticks
			b.WriteString("<code>" + template.HTMLEscapeString(line) + "</code>")
			continue
		}
		b.WriteString(inlineCode(parts))
	}
	return template.HTML(b.String())
}

// inlineCode writes the pieces of a text split at its backticks: the odd ones as code.
func inlineCode(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
		} else {
			b.WriteString(template.HTMLEscapeString(p))
		}
	}
	return b.String()
}

// prose renders a text with `code` spans (a finding's title or evidence).
func prose(s string) template.HTML {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backtick: the text as it is
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML(inlineCode(parts))
}

var htmlFuncs = template.FuncMap{
	"pct":     func(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) },
	"ranksOf": ranksOfExpected,
	"ms":      func(ns int64) string { return units.FormatMs(float64(ns)) },
	"nsms":    units.FormatMs,
	"usms":    func(us float64) string { return fmt.Sprintf("%.3f", us/1e3) },
	"upper":   strings.ToUpper,
	"f1":      func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"apply":   apply,
	"prose":   prose,
	"group":   analysis.GroupKeyText,
	"glabel":  func(name, key string) string { return namedGroup(name, analysis.GroupKeyText(key)) },
}

var htmlTemplate = template.Must(template.New("report").Funcs(htmlFuncs).Parse(`{{define "chart"}}<svg id="{{.ID}}" class="chart" viewBox="0 0 {{f1 .W}} {{f1 .H}}" width="{{f1 .W}}" height="{{f1 .H}}" role="img" aria-label="{{.Label}}">
{{if .Gradient}}<defs><linearGradient id="{{.ID}}-key">{{range .Gradient}}<stop offset="{{.Offset}}" stop-color="{{.Color}}"/>{{end}}</linearGradient></defs>
{{end}}{{range .Elems}}{{if eq .Kind "rect"}}<rect{{with .Class}} class="{{.}}"{{end}} x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}"{{with .Fill}} fill="{{.}}"{{end}}>{{with .Title}}<title>{{.}}</title>{{end}}</rect>
{{else if eq .Kind "text"}}<text class="{{.Class}}" x="{{f1 .X}}" y="{{f1 .Y}}" text-anchor="{{.Anchor}}"{{if .Rotate}} transform="rotate(-90 {{f1 .X}} {{f1 .Y}})"{{end}}>{{with .Title}}<title>{{.}}</title>{{end}}{{.Text}}</text>
{{else}}<line class="{{.Class}}" x1="{{f1 .X}}" y1="{{f1 .Y}}" x2="{{f1 .X2}}" y2="{{f1 .Y2}}"/>
{{end}}{{end}}</svg>{{end}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hcclprof report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}
.HIGH{color:#b00020;font-weight:bold}.MEDIUM{color:#a15c00;font-weight:bold}.LOW,.INFO{color:#555}
svg.chart{display:block;max-width:100%;height:auto;margin:.5em 0}
svg text{font-size:11px;fill:#222}svg text.axis-title{font-size:11px;fill:#555}
.comp{fill:#4e79a7}.ov{fill:#59a14f}.exp{fill:#e15759}.free{fill:#ddd}.wait{fill:#f28e2b}.bw{fill:#76b7b2}
.nolink{fill:#f4f4f4;stroke:#bbb;stroke-width:.5}
line.axis,line.tick{stroke:#444;stroke-width:1}line.grid{stroke:#e4e4e4;stroke-width:1}
</style></head><body>
<h1>hcclprof: {{.Verdict}}</h1>
<p>exposed communication (comm_share) <b>{{pct .Summary.CommShare}}</b> · all communication {{pct .Summary.CommTotalShare}} ·
overlapped {{with .Summary.OverlapRatio}}{{pct .}}{{else}}- (no communication){{end}} · mean step {{ms .Summary.StepTimeNs}} ms · {{ranksOf .Summary}} ranks × {{.Summary.Steps}} steps</p>
{{with .Doc.Advice}}{{if .Findings}}<h2>Findings</h2><ul>{{range .Findings}}<li><span class="{{upper (printf "%s" .Severity)}}">{{upper (printf "%s" .Severity)}}</span> {{prose .Title}}<br><small>{{prose .Evidence}}</small></li>{{end}}</ul>{{end}}
{{if .Recommendations}}<h2>What to do</h2><table><tr><th class="l">change</th><th>predicted step (ms)</th><th>comm_share</th><th>gain (ms)</th><th class="l">confidence</th><th class="l">apply</th></tr>
{{range .Recommendations}}<tr><td class="l">{{.Knob}} = {{.Value}}</td><td>{{usms .Predicted.StepTimeUs}} ({{usms .Predicted.Low}}–{{usms .Predicted.High}})</td><td>{{pct .Predicted.CommShare}}</td><td>{{usms .GainUs}}</td><td class="l">{{.Confidence}}{{if .Hypothesis}} (hypothesis){{end}}</td><td class="l">{{apply .Apply}}</td></tr>{{end}}</table>{{end}}{{end}}
<h2>Step breakdown per rank (mean step)</h2>
{{with .Breakdown}}{{template "chart" .}}{{else}}<p>No step figures.</p>{{end}}{{with .BarsNote}}<p><small>{{.}}</small></p>{{end}}
<h2>Communication matrix (bandwidth src→dst)</h2>
{{with .Matrix}}{{template "chart" .}}{{else}}{{with .MatrixNote}}<p>{{.}}</p>{{else}}<p>No links between known ranks (no HCCL task rows, or no parallel_group_info).</p>{{end}}{{end}}
<h2>Link use against peak{{with .Doc.Result.Communication.Hardware}} ({{.Name}}{{if .Assumed}}, assumed{{end}}){{end}}</h2>
{{with .Links}}{{template "chart" .}}{{else}}<p>No link figures.</p>{{end}}
{{with .Timeline}}<h2>Timeline</h2><p>{{$.TimeTitle}}</p>{{template "chart" .}}{{if not $.Compute}}<p><small>Compute lanes are drawn for the rank named by --timeline-rank (large clusters keep every rank's kernels only on request).</small></p>{{end}}{{end}}
{{if .Checks}}<h2>Checks that fired</h2><ul>{{range .Checks}}<li>{{.Title}}: {{.Count}} of {{.Total}} ({{.Threshold}}); {{.Evidence}}</li>{{end}}</ul>{{end}}
<h2>Collectives</h2><table><tr><th class="l">op</th><th class="l">group</th><th>size</th><th>count</th><th>total ms</th><th>mean ms</th><th>p95 ms</th><th>algbw GB/s</th><th>busbw GB/s</th></tr>
{{range .Collectives}}{{$cells := .Cells}}<tr><td class="l">{{.Op}}</td><td class="l">{{glabel .GroupName .Group}}</td><td>{{$cells.Size}}</td><td>{{.Count}}</td><td>{{ms .TotalNs}}</td><td>{{nsms .MeanNs}}</td><td>{{nsms .P95Ns}}</td><td>{{$cells.AlgBw}}</td><td>{{$cells.BusBw}}</td></tr>{{end}}</table>
{{with .Doc.Result.Warnings}}<h2>Warnings</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p><small><code>{{.Doc.Command}}</code> · hcclprof {{.Doc.Version}}</small></p>
</body></html>
`))
