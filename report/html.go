package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// WriteHTML writes one self-contained HTML file: inline CSS and inline SVG charts, no
// script and no external URL of any kind (clusters are air-gapped). Every string from
// the input goes through html/template's escaping.
func WriteHTML(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	return htmlTemplate.Execute(w, htmlView(d))
}

type svgBar struct {
	Label string
	Y     int
	Segs  []svgSeg
	Total string
}

type svgSeg struct {
	X, W  float64
	Class string
	Title string
}

type svgCell struct {
	X, Y  int
	Fill  string
	Title string
}

type svgLane struct {
	Y     int
	Label string
	Boxes []svgSeg
}

type htmlPage struct {
	Doc        *Document
	Verdict    string
	Summary    analysis.Summary
	RankBars   []svgBar
	BarsHeight int
	Matrix     []svgCell
	MatrixN    int
	MatrixCell int
	MatrixNote string
	LinkBars   []svgBar
	LinkHeight int
	Timeline   []svgLane
	TimeTitle  string
	TimeHeight int
	Compute    bool // the timeline has compute lanes
	Checks     []analysis.Check
}

// htmlView lays the charts out (in user units of a 900-wide SVG).
func htmlView(d *Document) htmlPage {
	r := d.Result
	pg := htmlPage{Doc: d, Verdict: d.verdict(), Summary: r.Summary}
	// Per-rank stacked breakdown of the mean step.
	var maxStage float64
	type mean struct{ comp, ov, exp, free, stage float64 }
	means := make([]mean, len(r.Ranks))
	for i, rr := range r.Ranks {
		n := float64(len(rr.Steps))
		if n == 0 {
			continue
		}
		for _, st := range rr.Steps {
			means[i].comp += float64(st.ComputingNs-st.OverlappedNs) / n
			means[i].ov += float64(st.OverlappedNs) / n
			means[i].exp += float64(st.CommNotOverlappedNs) / n
			means[i].free += float64(st.FreeNs) / n
			means[i].stage += float64(st.StageNs) / n
		}
		maxStage = math.Max(maxStage, means[i].comp+means[i].ov+means[i].exp+means[i].free)
	}
	const width = 700.0
	for i, rr := range r.Ranks {
		if i == 64 {
			break // the JSON and Markdown reports list every rank
		}
		m := means[i]
		if maxStage == 0 {
			break
		}
		x := 0.0
		bar := svgBar{Label: fmt.Sprintf("rank %d", rr.Rank), Y: 10 + 18*i, Total: fmt.Sprintf("%.3f ms", m.stage/1e6)}
		for _, s := range []struct {
			v     float64
			class string
			name  string
		}{{m.comp, "comp", "computing only"}, {m.ov, "ov", "overlapped"}, {m.exp, "exp", "exposed communication"}, {m.free, "free", "free"}} {
			wdt := width * s.v / maxStage
			bar.Segs = append(bar.Segs, svgSeg{X: x, W: wdt, Class: s.class, Title: fmt.Sprintf("rank %d %s: %.3f ms", rr.Rank, s.name, s.v/1e6)})
			x += wdt
		}
		pg.RankBars = append(pg.RankBars, bar)
	}
	pg.BarsHeight = 20 + 18*len(pg.RankBars)
	// Communication matrix: bandwidth per src→dst (all transports).
	c := r.Communication
	ranks := map[int]int{}
	var ids []int
	for _, l := range c.Links {
		for _, x := range []int{l.Src, l.Dst} {
			if _, ok := ranks[x]; !ok {
				ranks[x] = 0
				ids = append(ids, x)
			}
		}
	}
	sort.Ints(ids)
	if len(ids) > 64 {
		pg.MatrixNote = fmt.Sprintf("%d ranks: the matrix is drawn for up to 64 (the JSON report has every link)", len(ids))
	} else if len(ids) > 0 {
		for i, x := range ids {
			ranks[x] = i
		}
		var maxBW float64
		for _, l := range c.Links {
			maxBW = math.Max(maxBW, l.BandwidthGBps())
		}
		cell := max(400/len(ids), 4)
		pg.MatrixN, pg.MatrixCell = cell*len(ids), cell
		for _, l := range c.Links {
			v := l.BandwidthGBps() / maxBW
			// Low bandwidth is red, high green.
			fill := fmt.Sprintf("hsl(%d,70%%,%d%%)", int(120*v), 45+int(20*(1-v)))
			pg.Matrix = append(pg.Matrix, svgCell{X: ranks[l.Dst] * cell, Y: ranks[l.Src] * cell, Fill: fill,
				Title: fmt.Sprintf("%d→%d %s: %.2f GB/s", l.Src, l.Dst, l.Transport, l.BandwidthGBps())})
		}
	}
	// Link use against peak: per transport, the median link bandwidth over the peak.
	byT := map[string][]float64{}
	for _, l := range c.Links {
		byT[l.Transport] = append(byT[l.Transport], l.BandwidthGBps())
	}
	names := make([]string, 0, len(byT))
	for n := range byT {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		v := byT[n]
		sort.Float64s(v)
		peak, ok := c.Hardware.Peak(n)
		if !ok {
			peak = v[len(v)-1]
		}
		bar := svgBar{Label: n, Y: 10 + 22*i, Total: fmt.Sprintf("median %.2f of %.1f GB/s", v[len(v)/2], peak)}
		bar.Segs = []svgSeg{{X: 0, W: width * math.Min(v[len(v)/2]/peak, 1), Class: "exp", Title: fmt.Sprintf("%s median %.2f GB/s", n, v[len(v)/2])},
			{X: width * math.Min(v[len(v)/2]/peak, 1), W: width * math.Max(0, 1-v[len(v)/2]/peak), Class: "free", Title: fmt.Sprintf("peak %.1f GB/s", peak)}}
		pg.LinkBars = append(pg.LinkBars, bar)
	}
	pg.LinkHeight = 20 + 22*len(pg.LinkBars)
	// One step of a rank (the one whose timeline was kept, else the slowest): its
	// compute, its collectives and its waits for the others.
	if len(r.Ranks) > 0 {
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
		if len(ops) > 0 && hi > lo {
			pg.TimeTitle = fmt.Sprintf("rank %d, step %s: collectives, the time they waited for the other ranks, compute and exposed communication (%.3f ms shown)", rank, analysis.StepLabel(step), float64(hi-lo)/1e6)
			scale := width / float64(hi-lo)
			comm, wait := svgLane{Y: 10, Label: "collectives"}, svgLane{Y: 40, Label: "waiting"}
			for _, o := range ops {
				x := float64(o.StartNs-lo) * scale
				comm.Boxes = append(comm.Boxes, svgSeg{X: x, W: math.Max(1, float64(o.ElapseNs)*scale), Class: "exp",
					Title: fmt.Sprintf("%s: %.3f ms (transit %.3f)", o.Name, float64(o.ElapseNs)/1e6, float64(o.TransitNs)/1e6)})
				if o.CrossWaitNs > 0 {
					wait.Boxes = append(wait.Boxes, svgSeg{X: x, W: math.Max(1, float64(o.CrossWaitNs)*scale), Class: "wait",
						Title: fmt.Sprintf("%s waited %.3f ms for the others", o.Name, float64(o.CrossWaitNs)/1e6)})
				}
			}
			pg.Timeline = []svgLane{comm, wait}
			if tr := d.TimelineRank; tr != nil && tr.Rank == rank {
				compute := svgLane{Y: 70, Label: "compute"}
				for _, iv := range tr.Compute {
					if iv.EndNs <= lo || iv.StartNs >= hi {
						continue
					}
					s, e := max(iv.StartNs, lo), min(iv.EndNs, hi)
					compute.Boxes = append(compute.Boxes, svgSeg{X: float64(s-lo) * scale, W: math.Max(0.5, float64(e-s)*scale), Class: "comp",
						Title: fmt.Sprintf("compute %.3f ms", float64(iv.DurNs())/1e6)})
				}
				exposed := svgLane{Y: 100, Label: "exposed comm"}
				for _, iv := range analysis.ExposedCommunication(tr) {
					if iv.EndNs <= lo || iv.StartNs >= hi {
						continue
					}
					s, e := max(iv.StartNs, lo), min(iv.EndNs, hi)
					exposed.Boxes = append(exposed.Boxes, svgSeg{X: float64(s-lo) * scale, W: math.Max(0.5, float64(e-s)*scale), Class: "exp",
						Title: fmt.Sprintf("exposed %.3f ms", float64(e-s)/1e6)})
				}
				pg.Timeline = append(pg.Timeline, compute, exposed)
				pg.TimeHeight, pg.Compute = 130, true
			}
		}
	}
	for _, ch := range c.Checks {
		if ch.Fired {
			pg.Checks = append(pg.Checks, ch)
		}
	}
	return pg
}

// slowestRankStep is the rank and step with the longest Stage.
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

var htmlFuncs = template.FuncMap{
	"pct":   func(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) },
	"ms":    func(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) },
	"nsms":  func(ns float64) string { return fmt.Sprintf("%.3f", ns/1e6) },
	"usms":  func(us float64) string { return fmt.Sprintf("%.3f", us/1e3) },
	"upper": strings.ToUpper,
	"add":   func(a, b int) int { return a + b },
	"f1":    func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"step":  analysis.StepLabel,
	"addf":  func(x float64) float64 { return x + 120 }, // room for the labels
	// The fills are built here from numbers only (hsl(...)), never from input.
	"safeCSS": func(s string) template.CSS { return template.CSS(s) },
}

var htmlTemplate = template.Must(template.New("report").Funcs(htmlFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hcclprof report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}
.HIGH{color:#b00020;font-weight:bold}.MEDIUM{color:#a15c00;font-weight:bold}.LOW,.INFO{color:#555}
.comp{fill:#4e79a7}.ov{fill:#59a14f}.exp{fill:#e15759}.free{fill:#ddd}.wait{fill:#f28e2b}
svg text{font-size:11px}
</style></head><body>
<h1>hcclprof: {{.Verdict}}</h1>
<p>exposed communication (comm_share) <b>{{pct .Summary.CommShare}}</b> · all communication {{pct .Summary.CommTotalShare}} ·
overlapped {{pct .Summary.OverlapRatio}} · mean step {{ms .Summary.StepTimeNs}} ms · {{.Summary.Ranks}} ranks × {{.Summary.Steps}} steps</p>
{{with .Doc.Advice}}{{if .Findings}}<h2>Findings</h2><ul>{{range .Findings}}<li><span class="{{upper (printf "%s" .Severity)}}">{{upper (printf "%s" .Severity)}}</span> {{.Title}}<br><small>{{.Evidence}}</small></li>{{end}}</ul>{{end}}
{{if .Recommendations}}<h2>What to do</h2><table><tr><th class="l">change</th><th>predicted step (ms)</th><th>comm_share</th><th>gain (ms)</th><th class="l">confidence</th><th class="l">apply</th></tr>
{{range .Recommendations}}<tr><td class="l">{{.Knob}} = {{.Value}}</td><td>{{usms .Predicted.StepTimeUs}} ({{usms .Predicted.Low}}–{{usms .Predicted.High}})</td><td>{{pct .Predicted.CommShare}}</td><td>{{usms .GainUs}}</td><td class="l">{{.Confidence}}{{if .Hypothesis}} (hypothesis){{end}}</td><td class="l"><code>{{.Apply}}</code></td></tr>{{end}}</table>{{end}}{{end}}
<h2>Step breakdown per rank (mean step)</h2>
<p><svg width="10" height="10"><rect class="comp" width="10" height="10"/></svg> computing only
<svg width="10" height="10"><rect class="ov" width="10" height="10"/></svg> overlapped
<svg width="10" height="10"><rect class="exp" width="10" height="10"/></svg> exposed communication
<svg width="10" height="10"><rect class="free" width="10" height="10"/></svg> free</p>
<svg id="breakdown" width="900" height="{{.BarsHeight}}" role="img" aria-label="per-rank step breakdown">
{{range .RankBars}}<text x="0" y="{{add .Y 11}}">{{.Label}}</text>{{$y := .Y}}{{range .Segs}}<rect class="{{.Class}}" x="{{printf "%.1f" (addf .X)}}" y="{{$y}}" width="{{printf "%.1f" .W}}" height="14"><title>{{.Title}}</title></rect>{{end}}<text x="830" y="{{add .Y 11}}">{{.Total}}</text>
{{end}}</svg>
<h2>Communication matrix (bandwidth src→dst)</h2>
{{if .MatrixNote}}<p>{{.MatrixNote}}</p>{{end}}{{if .Matrix}}<svg id="matrix" width="{{.MatrixN}}" height="{{.MatrixN}}" role="img" aria-label="communication matrix">
{{range .Matrix}}<rect x="{{.X}}" y="{{.Y}}" width="{{$.MatrixCell}}" height="{{$.MatrixCell}}" style="fill:{{.Fill | safeCSS}}"><title>{{.Title}}</title></rect>{{end}}</svg>{{else}}{{if not .MatrixNote}}<p>No links between known ranks (no HCCL task rows, or no parallel_group_info).</p>{{end}}{{end}}
<h2>Link use against peak{{with .Doc.Result.Communication.Hardware}} ({{.Name}}{{if .Assumed}}, assumed{{end}}){{end}}</h2>
{{if .LinkBars}}<svg id="links" width="900" height="{{.LinkHeight}}" role="img" aria-label="link use">
{{range .LinkBars}}<text x="0" y="{{add .Y 11}}">{{.Label}}</text>{{$y := .Y}}{{range .Segs}}<rect class="{{.Class}}" x="{{printf "%.1f" (addf .X)}}" y="{{$y}}" width="{{printf "%.1f" .W}}" height="14"><title>{{.Title}}</title></rect>{{end}}<text x="830" y="{{add .Y 11}}">{{.Total}}</text>
{{end}}</svg>{{else}}<p>No link figures.</p>{{end}}
{{if .Timeline}}<h2>Timeline</h2><p>{{.TimeTitle}}</p><svg id="timeline" width="900" height="{{if .Compute}}{{.TimeHeight}}{{else}}70{{end}}" role="img" aria-label="timeline">
{{range .Timeline}}<text x="0" y="{{add .Y 11}}">{{.Label}}</text>{{$y := .Y}}{{range .Boxes}}<rect class="{{.Class}}" x="{{printf "%.1f" (addf .X)}}" y="{{$y}}" width="{{printf "%.1f" .W}}" height="14"><title>{{.Title}}</title></rect>{{end}}
{{end}}</svg>{{if not .Compute}}<p><small>Compute lanes are drawn for the rank named by --timeline-rank (large clusters keep every rank's kernels only on request).</small></p>{{end}}{{end}}
{{if .Checks}}<h2>Checks that fired</h2><ul>{{range .Checks}}<li>{{.Title}}: {{.Count}} of {{.Total}} ({{.Threshold}}); {{.Evidence}}</li>{{end}}</ul>{{end}}
<h2>Collectives</h2><table><tr><th class="l">op</th><th class="l">group</th><th>size</th><th>count</th><th>total ms</th><th>mean ms</th><th>p95 ms</th><th>algbw GB/s</th><th>busbw GB/s</th></tr>
{{range .Doc.Result.Collectives}}<tr><td class="l">{{.Op}}</td><td class="l">{{.GroupName}} {{.Group}}</td><td>{{.GroupSize}}</td><td>{{.Count}}</td><td>{{ms .TotalNs}}</td><td>{{nsms .MeanNs}}</td><td>{{nsms .P95Ns}}</td><td>{{printf "%.2f" .AlgBwGBps}}</td><td>{{printf "%.2f" .BusBwGBps}}</td></tr>{{end}}</table>
{{with .Doc.Result.Warnings}}<h2>Warnings</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p><small><code>{{.Doc.Command}}</code> · hcclprof {{.Doc.Version}}</small></p>
</body></html>
`))
