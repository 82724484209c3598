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
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// writeHTMLReport writes one self-contained HTML file: inline CSS and inline SVG charts, no
// script and no external URL of any kind (clusters are air-gapped). Every string from
// the input goes through html/template's escaping.
func writeHTMLReport(w io.Writer, d *Document) error {
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
	PeakNotes  []string // transports whose median link runs above the peak
	Timeline   *svgChart
	TimeTitle  string
	TimeNote   string // why the timeline has no compute lanes ("" when it has)
	Checks     []advisor.Check
	// Collectives are the collectives table's rows (view.go); Rolled the same rolled
	// up by parallel dimension and op when they are too many to read (the per-group
	// rows are then folded under it).
	Collectives []collectiveRow
	Rolled      []htmlKindRow
	// Kinds is the communication per parallel dimension, "" when no group was seen.
	Kinds string
}

// htmlKindRow is a row of the collectives rolled up by dimension and op.
type htmlKindRow struct {
	analysis.KindCollective
	Size, MBPerOp, Worst, BusBw string
}

// chartWidth is the width of the bar charts and the timeline, in user units.
const chartWidth = 900.0

// htmlView lays the charts out.
func htmlView(d *Document) htmlPage {
	r := d.Result
	v := d.view()
	pg := htmlPage{Doc: d, Verdict: v.Verdict, Summary: v.Summary, Checks: v.FiredChecks, Collectives: v.Collectives}
	pg.Breakdown, pg.BarsNote = breakdownChart(r)
	for _, k := range rolledCollectives(r) {
		c := kindCollectiveRow(k)
		pg.Rolled = append(pg.Rolled, htmlKindRow{k, c.size, c.mbPerOp, c.worst, c.busbw})
	}
	pg.Kinds = strings.TrimSpace(kindsPhrase(v.Summary.Kinds) + " " + kindsInferred(v.Summary.Kinds))
	pg.Matrix, pg.MatrixNote = matrixChart(r.Communication, v.Detections.LatencyBound)
	pg.Links = linksChart(v.Links)
	pg.PeakNotes = abovePeakNotes(r.Communication.Hardware, v.Links)
	pg.Timeline, pg.TimeTitle, pg.TimeNote = timelineChart(d)
	return pg
}

// maxBars is the most ranks the breakdown draws one bar each; a larger cluster
// shows its bigBars slowest ranks. The JSON and Markdown reports list every rank.
const (
	maxBars = 64
	bigBars = 32
)

// breakdownChart is each rank's mean step as stacked bars (computing only,
// overlapped, exposed communication, free) on a ms axis, the slowest rank first.
func breakdownChart(r *analysis.Result) (*svgChart, string) {
	type mean struct {
		rank                       int
		comp, ov, exp, free, stage float64
	}
	var means []mean
	for _, rr := range r.Ranks {
		n := float64(len(rr.Steps))
		if n == 0 {
			continue
		}
		m := mean{rank: rr.Rank}
		for _, st := range rr.Steps {
			m.comp += float64(st.ComputingNs-st.OverlappedNs) / n
			m.ov += float64(st.OverlappedNs) / n
			m.exp += float64(st.CommNotOverlappedNs) / n
			m.free += float64(st.FreeNs) / n
			m.stage += float64(st.StageNs) / n
		}
		means = append(means, m)
	}
	sort.SliceStable(means, func(i, j int) bool { return means[i].stage > means[j].stage })
	note := ""
	if len(means) > maxBars {
		note = fmt.Sprintf("The %d slowest of %d ranks, slowest first; %d ranks not shown (the JSON and Markdown reports list every rank).", bigBars, len(means), len(means)-bigBars)
		means = means[:bigBars]
	}
	var labels, totals []string
	var maxSum float64
	for _, m := range means {
		labels = append(labels, fmt.Sprintf("rank %d", m.rank))
		totals = append(totals, fmt.Sprintf("%.3f ms", m.stage/1e6))
		maxSum = math.Max(maxSum, m.comp+m.ov+m.exp+m.free)
	}
	if maxSum <= 0 {
		return nil, ""
	}
	c := &svgChart{ID: "breakdown", Label: "mean step of each rank, slowest first, split into computing only, overlapped, exposed communication and free time", W: chartWidth}
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

// viridis is matplotlib's viridis colour map at nine even stops: sequential,
// readable by the colour-blind and in grey.
var viridis = [...][3]float64{{68, 1, 84}, {71, 45, 123}, {59, 82, 139}, {44, 114, 142}, {33, 145, 140},
	{40, 174, 128}, {94, 201, 98}, {173, 220, 48}, {253, 231, 37}}

// bwColour is a link's fill on the viridis scale: v is the bandwidth over the
// fastest link's (0..1), slow dark purple, fast yellow.
func bwColour(v float64) string {
	v = math.Max(0, math.Min(1, v))
	f := v * float64(len(viridis)-1)
	i := min(int(f), len(viridis)-2)
	t := f - float64(i)
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(viridis[i][k] + t*(viridis[i+1][k]-viridis[i][k])))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// maxMatrix is the most ranks (or servers) the communication matrix draws.
const maxMatrix = 64

// latencyBoundLegend names the hatched cells of the matrix.
const latencyBoundLegend = "latency-bound: too small to judge bandwidth"

// matrixCell is one src→dst cell: its bytes and time, and whether every link in it
// is latency-bound (the advisor's Detections.LatencyBound).
type matrixCell struct {
	src, dst      int // positions along the sides
	bytes, timeNs int64
	latency       bool
	title         string
}

// matrixChart is the bandwidth of each src→dst link (all transports) as a coloured
// grid with the ranks along both sides and a colour key in GB/s. Past maxMatrix ranks
// it is the matrix of the servers (every link between two servers: their bytes over
// their time), when the run names them.
func matrixChart(c analysis.Communication, lat map[analysis.LinkID]bool) (*svgChart, string) {
	seen := map[int]bool{}
	var ids []int
	for _, l := range c.Links {
		for _, x := range []int{l.Src, l.Dst} {
			if !seen[x] {
				seen[x] = true
				ids = append(ids, x)
			}
		}
	}
	if len(ids) == 0 {
		return nil, ""
	}
	sort.Ints(ids)
	if len(ids) <= maxMatrix {
		pos := map[int]int{}
		names := make([]string, len(ids))
		for i, x := range ids {
			pos[x] = i
			names[i] = strconv.Itoa(x)
		}
		cells := make([]matrixCell, 0, len(c.Links))
		for _, l := range c.Links {
			lb := lat[analysis.LinkID{Src: l.Src, Dst: l.Dst, Transport: l.Transport}]
			title := fmt.Sprintf("%d→%d %s: %.2f GB/s", l.Src, l.Dst, l.Transport, l.BandwidthGBps())
			if lb {
				title = fmt.Sprintf("%d→%d %s: %s in %.2f µs, %s", l.Src, l.Dst, l.Transport, units.FormatBytes(l.Bytes), float64(l.TimeNs)/1e3, latencyBoundLegend)
			}
			cells = append(cells, matrixCell{pos[l.Src], pos[l.Dst], l.Bytes, l.TimeNs, lb, title})
		}
		return drawMatrix(names, cells, "rank"), ""
	}
	// The servers' matrix: each cell sums the links between two servers.
	servers := map[int]bool{}
	for _, x := range ids {
		s, ok := c.ServerOf[x]
		if !ok {
			return nil, fmt.Sprintf("%d ranks: the matrix is drawn for up to %d ranks, or for the servers when every rank's server is known (the JSON report has every link)", len(ids), maxMatrix)
		}
		servers[s] = true
	}
	if len(servers) > maxMatrix || len(servers) < 2 {
		return nil, fmt.Sprintf("%d ranks on %d servers: the matrix is drawn for up to %d ranks or servers (the JSON report has every link)", len(ids), len(servers), maxMatrix)
	}
	sids := make([]int, 0, len(servers))
	for s := range servers {
		sids = append(sids, s)
	}
	sort.Ints(sids)
	pos := map[int]int{}
	names := make([]string, len(sids))
	for i, s := range sids {
		pos[s] = i
		names[i] = strconv.Itoa(s)
	}
	type agg struct {
		bytes, timeNs     int64
		links, latencyOne int
	}
	byPair := map[[2]int]*agg{}
	var pairs [][2]int
	for _, l := range c.Links {
		k := [2]int{c.ServerOf[l.Src], c.ServerOf[l.Dst]}
		a := byPair[k]
		if a == nil {
			a = &agg{}
			byPair[k] = a
			pairs = append(pairs, k)
		}
		a.bytes += l.Bytes
		a.timeNs += l.TimeNs
		a.links++
		if lat[analysis.LinkID{Src: l.Src, Dst: l.Dst, Transport: l.Transport}] {
			a.latencyOne++
		}
	}
	host := func(s int) string {
		if s >= 0 && s < len(c.Hosts) && c.Hosts[s] != "" {
			return fmt.Sprintf("server %d (%s)", s, c.Hosts[s])
		}
		return fmt.Sprintf("server %d", s)
	}
	cells := make([]matrixCell, 0, len(pairs))
	for _, k := range pairs {
		a := byPair[k]
		lb := a.latencyOne == a.links
		title := fmt.Sprintf("%s→%s: %.2f GB/s over %d links", host(k[0]), host(k[1]), units.GBps(a.bytes, a.timeNs), a.links)
		if lb {
			title = fmt.Sprintf("%s→%s: %s over %d links, %s", host(k[0]), host(k[1]), units.FormatBytes(a.bytes), a.links, latencyBoundLegend)
		}
		cells = append(cells, matrixCell{pos[k[0]], pos[k[1]], a.bytes, a.timeNs, lb, title})
	}
	return drawMatrix(names, cells, "server"), fmt.Sprintf("%d ranks: the matrix of their %d servers; a cell is every link from one server to another, its bytes over its time (the JSON report has every link).", len(ids), len(sids))
}

// drawMatrix draws the cells on a grid with the names along both sides (what: rank or
// server), the colour key from 0 to the fastest cell that is not latency-bound, and
// the legend of the cells without traffic and the latency-bound ones (hatched).
func drawMatrix(names []string, cells []matrixCell, what string) *svgChart {
	var maxBW float64
	anyLatency := false
	for _, c := range cells {
		if c.latency {
			anyLatency = true
			continue
		}
		maxBW = math.Max(maxBW, units.GBps(c.bytes, c.timeNs))
	}
	n := float64(len(names))
	cell := math.Min(40, math.Max(6, math.Floor(400/n)))
	grid := cell * n
	labelW := maxTextWidth(names)
	every := int(math.Ceil(math.Max(labelW+4, 13) / cell)) // label every k-th one so labels do not touch
	left, top := 18+labelW+6, 34.0
	ch := &svgChart{ID: "matrix", Label: "communication matrix: bandwidth of each link from a source " + what + " to a destination " + what, Hatch: anyLatency}
	ch.text(left+grid/2, 12, "middle", "axis-title", "destination "+what)
	ch.Elems = append(ch.Elems, svgElem{Kind: "text", X: 13, Y: top + grid/2, Anchor: "middle", Class: "axis-title", Rotate: true, Text: "source " + what})
	for i, name := range names {
		if i%every != 0 {
			continue
		}
		mid := float64(i)*cell + cell/2
		ch.text(left+mid, top-5, "middle", "tick", name)
		ch.text(left-5, top+mid+4, "end", "tick", name)
	}
	ch.rect(left, top, grid, grid, "nolink", "")
	for _, c := range cells {
		fill := "url(#matrix-hatch)"
		if !c.latency {
			v := 0.0
			if maxBW > 0 {
				v = units.GBps(c.bytes, c.timeNs) / maxBW
			}
			fill = bwColour(v)
		}
		ch.fillRect(left+float64(c.dst)*cell, top+float64(c.src)*cell, cell, cell, fill, c.title)
	}
	// The colour key: the fill's scale from 0 to the fastest link, and "no traffic".
	keyTop, keyW := top+grid+12, 240.0
	keyTitle := "bandwidth of the link (GB/s, all transports)"
	if what != "rank" {
		keyTitle = "bandwidth between the " + what + "s (GB/s, all transports)"
	}
	ch.text(left, keyTop+10, "start", "legend", keyTitle)
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
	bottom := barY + 32
	if anyLatency {
		ly := barY + 34
		ch.fillRect(left, ly, 10, 10, "url(#matrix-hatch)", "")
		ch.rect(left, ly, 10, 10, "outline", "")
		ch.text(left+14, ly+9, "start", "legend", latencyBoundLegend)
		right = math.Max(right, left+14+textWidth(latencyBoundLegend))
		bottom = ly + 16
	}
	ch.W = math.Ceil(math.Max(math.Max(left+grid, right), left+textWidth(keyTitle)) + 6)
	ch.W = math.Max(ch.W, math.Ceil(left+grid/2+textWidth("destination "+what)/2+6))
	ch.H = math.Max(bottom, top+grid/2+textWidth("source "+what)/2+4)
	return ch
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
// slowest) on a ms axis. With the rank's timeline it is the whole step, from its
// first device task to its last: compute, collectives, the time they waited for the
// other ranks and the exposed communication. Without, the collectives alone, from
// the first; the note says why.
func timelineChart(d *Document) (*svgChart, string, string) {
	r := d.Result
	c := r.Communication
	if len(r.Ranks) == 0 {
		return nil, "", ""
	}
	rank, step := slowestRankStep(r)
	tr := d.TimelineRank
	if tr != nil {
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
	compute := false
	note := ""
	switch {
	case tr == nil:
		note = "No compute lanes: they are drawn for the rank named by --timeline-rank (default 0), which this run does not hold."
	case len(tr.Compute) == 0:
		note = fmt.Sprintf("No compute lanes: this run has no device timeline for rank %d (its profile holds no trace_view.json, profiler db or msprof timeline with its kernels), so only its collectives are drawn, from the first.", rank)
	default:
		if s, e, ok := analysis.StepSpan(tr, step); ok {
			lo, hi, compute = s, e, true
		}
	}
	if hi <= lo || (len(ops) == 0 && !compute) {
		return nil, "", ""
	}
	title := timelineTitle(r, rank, step, compute, lo, hi)
	lanes := timelineLanes(ops, tr, compute, lo, hi)
	return drawTimeline(lanes, rank, compute, lo, hi), title, note
}

// timelineTitle says what the timeline shows of which rank's step, the step's
// Stage, and which step is the slowest when it is another rank's.
func timelineTitle(r *analysis.Result, rank, step int, compute bool, lo, hi int64) string {
	what := "collectives and the time they waited for the other ranks"
	if compute {
		what = "compute, collectives, the time they waited for the other ranks and exposed communication"
	}
	var stage int64
	for _, rr := range r.Ranks {
		for _, st := range rr.Steps {
			if rr.Rank == rank && st.Step == step {
				stage = st.StageNs
			}
		}
	}
	title := fmt.Sprintf("rank %d, step %s: %s (%.3f ms shown", rank, analysis.StepLabel(step), what, float64(hi-lo)/1e6)
	if stage > 0 {
		title += fmt.Sprintf("; the step's Stage is %.3f ms", float64(stage)/1e6)
	}
	title += ")"
	if sr, ss := slowestRankStep(r); sr != rank && ss >= 0 {
		title += fmt.Sprintf("; the slowest step is rank %d's step %s (--timeline-rank %d draws it)", sr, analysis.StepLabel(ss), sr)
	}
	return title
}

// timelineBox is one box of a timeline lane, with its tooltip.
type timelineBox struct {
	startNs, endNs int64
	class, title   string
}

// timelineLane is one row of the timeline.
type timelineLane struct {
	label, what string // what: a merged box's tooltip names its kind
	boxes       []timelineBox
}

// timelineLanes are the collectives and their waits, and with the rank's timeline
// (compute) its compute and exposed communication within lo–hi too.
func timelineLanes(ops []analysis.OpStat, tr *profile.Rank, compute bool, lo, hi int64) []timelineLane {
	comm, wait := timelineLane{label: "collectives", what: "collectives"}, timelineLane{label: "waiting", what: "waits for the other ranks"}
	for _, o := range ops {
		comm.boxes = append(comm.boxes, timelineBox{o.StartNs, o.StartNs + o.ElapseNs, "exp",
			fmt.Sprintf("%s: %.3f ms (transit %.3f)", o.Name, float64(o.ElapseNs)/1e6, float64(o.TransitNs)/1e6)})
		if o.CrossWaitNs > 0 {
			wait.boxes = append(wait.boxes, timelineBox{o.StartNs, o.StartNs + o.CrossWaitNs, "wait",
				fmt.Sprintf("%s waited %.3f ms for the others", o.Name, float64(o.CrossWaitNs)/1e6)})
		}
	}
	if !compute {
		return []timelineLane{comm, wait}
	}
	cl, el := timelineLane{label: "compute", what: "compute"}, timelineLane{label: "exposed comm", what: "exposed communication"}
	for _, iv := range tr.Compute {
		if iv.EndNs <= lo || iv.StartNs >= hi {
			continue
		}
		cl.boxes = append(cl.boxes, timelineBox{max(iv.StartNs, lo), min(iv.EndNs, hi), "comp", fmt.Sprintf("compute %.3f ms", float64(iv.DurNs())/1e6)})
	}
	for _, iv := range analysis.ExposedCommunication(tr) {
		if iv.EndNs <= lo || iv.StartNs >= hi {
			continue
		}
		s, e := max(iv.StartNs, lo), min(iv.EndNs, hi)
		el.boxes = append(el.boxes, timelineBox{s, e, "exp", fmt.Sprintf("exposed %.3f ms", float64(e-s)/1e6)})
	}
	return []timelineLane{cl, comm, wait, el}
}

// drawTimeline draws the lanes on a ms axis from lo to hi.
func drawTimeline(lanes []timelineLane, rank int, compute bool, lo, hi int64) *svgChart {
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
	axisTitle := "ms since the step's first collective started"
	if compute {
		axisTitle = "ms since the step started"
	}
	ch.xAxis(x0, x1, axisY, top, spanMs, step10, func(s string) string { return s }, axisTitle)
	for i, l := range lanes {
		y := top + row*float64(i) + 3
		ch.text(x0-6, y+11, "end", "label", l.label)
		// Boxes closer than half a pixel are drawn as one (a step holds thousands of
		// kernels): its tooltip counts them.
		sort.SliceStable(l.boxes, func(a, b int) bool { return l.boxes[a].startNs < l.boxes[b].startNs })
		for j := 0; j < len(l.boxes); {
			b, k := l.boxes[j], j+1
			for ; k < len(l.boxes) && float64(l.boxes[k].startNs-b.endNs)*scale < 0.5; k++ {
				b.endNs = max(b.endNs, l.boxes[k].endNs)
			}
			if k-j > 1 {
				b.title = fmt.Sprintf("%d %s over %.3f ms", k-j, l.what, float64(b.endNs-b.startNs)/1e6)
			}
			ch.rect(x0+float64(b.startNs-lo)*scale, y, math.Max(1, float64(b.endNs-b.startNs)*scale), 14, b.class, b.title)
			j = k
		}
	}
	ch.H = axisY + 38
	return ch
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
	"ranksPhrase": func(s analysis.Summary) string {
		if s.RanksExpected > s.Ranks {
			return ranksOfExpected(s) + " ranks"
		}
		return units.Count(s.Ranks, "rank")
	},
	"count":  units.Count,
	"ms":     func(ns int64) string { return units.FormatMs(float64(ns)) },
	"nsms":   units.FormatMs,
	"usms":   func(us float64) string { return fmt.Sprintf("%.3f", us/1e3) },
	"upper":  strings.ToUpper,
	"f1":     func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"minpx":  func(w float64) string { return fmt.Sprintf("%.0f", math.Ceil(w*minFontPx/fontPx)) },
	"apply":  apply,
	"prose":  prose,
	"group":  analysis.GroupKeyText,
	"glabel": func(name, key string) string { return namedGroup(name, analysis.GroupKeyText(key)) },
}

var htmlTemplate = template.Must(template.New("report").Funcs(htmlFuncs).Parse(`{{define "chart"}}<div class="scroll"><svg id="{{.ID}}" class="chart" viewBox="0 0 {{f1 .W}} {{f1 .H}}" width="{{f1 .W}}" height="{{f1 .H}}" style="min-width:{{minpx .W}}px" role="img" aria-label="{{.Label}}">
{{if or .Gradient .Hatch}}<defs>{{if .Gradient}}<linearGradient id="{{.ID}}-key">{{range .Gradient}}<stop offset="{{.Offset}}" stop-color="{{.Color}}"/>{{end}}</linearGradient>{{end}}{{if .Hatch}}<pattern id="{{.ID}}-hatch" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="4" height="4" fill="#fff"/><line x1="0" y1="0" x2="0" y2="4" stroke="#777" stroke-width="1.6"/></pattern>{{end}}</defs>
{{end}}{{range .Elems}}{{if eq .Kind "rect"}}<rect{{with .Class}} class="{{.}}"{{end}} x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}"{{with .Fill}} fill="{{.}}"{{end}}>{{with .Title}}<title>{{.}}</title>{{end}}</rect>
{{else if eq .Kind "text"}}<text class="{{.Class}}" x="{{f1 .X}}" y="{{f1 .Y}}" text-anchor="{{.Anchor}}"{{if .Rotate}} transform="rotate(-90 {{f1 .X}} {{f1 .Y}})"{{end}}>{{with .Title}}<title>{{.}}</title>{{end}}{{.Text}}</text>
{{else}}<line class="{{.Class}}" x1="{{f1 .X}}" y1="{{f1 .Y}}" x2="{{f1 .X2}}" y2="{{f1 .Y2}}"/>
{{end}}{{end}}</svg></div>{{end}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>hcclprof report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px;color:#222;overflow-wrap:break-word}
@media (max-width:600px){body{margin:1em .75em}h1{font-size:1.4em}
table.stack tr:first-child{display:none}table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;text-align:left}
table.stack tr{margin:.5em 0;border:1px solid #ccc}table.stack td{border:0}table.stack td::before{content:attr(data-label) ": ";color:#555}}
.scroll{overflow-x:auto;max-width:100%}p>small>code{overflow-wrap:anywhere}td.l{min-width:7em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}
.HIGH{color:#b00020;font-weight:bold}.MEDIUM{color:#a15c00;font-weight:bold}.LOW,.INFO{color:#555}
svg.chart{display:block;max-width:100%;height:auto;margin:.5em 0}
rect.outline{fill:none;stroke:#777;stroke-width:.5}
svg text{font-size:11px;fill:#222}svg text.axis-title{font-size:11px;fill:#555}
.comp{fill:#0072b2}.ov{fill:#56b4e9}.exp{fill:#d55e00}.free{fill:#ddd}.wait{fill:#e69f00}.bw{fill:#009e73}
.nolink{fill:#f4f4f4;stroke:#bbb;stroke-width:.5}
line.axis,line.tick{stroke:#444;stroke-width:1}line.grid{stroke:#e4e4e4;stroke-width:1}
</style></head><body>
<h1>hcclprof: {{.Verdict}}</h1>
<p>exposed communication (comm_share) <b>{{pct .Summary.CommShare}}</b> · all communication {{pct .Summary.CommTotalShare}} ·
overlapped {{with .Summary.OverlapRatio}}{{pct .}}{{else}}- (no communication){{end}} · mean step {{ms .Summary.StepTimeNs}} ms · {{ranksPhrase .Summary}} × {{count .Summary.Steps "step"}}</p>
{{with .Kinds}}<p>By parallel dimension: {{.}}</p>{{end}}
{{with .Doc.Advice}}{{if .Findings}}<h2>Findings</h2><ul>{{range .Findings}}<li><span class="{{upper (printf "%s" .Severity)}}">{{upper (printf "%s" .Severity)}}</span> {{prose .Title}}<br><small>{{prose .Evidence}}</small></li>{{end}}</ul>{{end}}
{{if .Recommendations}}<h2>What to do</h2><div class="scroll"><table class="stack"><tr><th class="l">change</th><th>predicted step (ms)</th><th>comm_share</th><th>gain (ms)</th><th class="l">confidence</th><th class="l">apply</th></tr>
{{range .Recommendations}}<tr><td class="l" data-label="change">{{.Knob}} = {{.Value}}</td><td data-label="predicted step (ms)">{{usms .Predicted.StepTimeUs}} ({{usms .Predicted.Low}}–{{usms .Predicted.High}})</td><td data-label="comm_share">{{pct .Predicted.CommShare}}</td><td data-label="gain (ms)">{{usms .GainUs}}</td><td class="l" data-label="confidence">{{.Confidence}}{{if .Hypothesis}} (hypothesis){{end}}</td><td class="l" data-label="apply">{{apply .Apply}}</td></tr>{{end}}</table></div>{{end}}{{end}}
<h2>Step breakdown per rank (mean step, slowest first)</h2>
{{with .Breakdown}}{{template "chart" .}}{{else}}<p>No step figures.</p>{{end}}{{with .BarsNote}}<p><small>{{.}}</small></p>{{end}}
<h2>Communication matrix (bandwidth src→dst)</h2>
{{with .Matrix}}{{template "chart" .}}{{with $.MatrixNote}}<p><small>{{.}}</small></p>{{end}}{{else}}{{with .MatrixNote}}<p>{{.}}</p>{{else}}<p>No links between known ranks (no HCCL task rows, or no parallel_group_info).</p>{{end}}{{end}}
<h2>Link use against peak{{with .Doc.Result.Communication.Hardware}} ({{.Name}}{{if .Assumed}}, assumed{{end}}){{end}}</h2>
{{with .Links}}{{template "chart" .}}{{else}}<p>No link figures.</p>{{end}}{{range .PeakNotes}}<p class="note">{{.}}</p>{{end}}
{{with .Timeline}}<h2>Timeline</h2><p>{{$.TimeTitle}}</p>{{template "chart" .}}{{with $.TimeNote}}<p><small>{{.}}</small></p>{{end}}{{end}}
{{if .Checks}}<h2>Checks that fired</h2><ul>{{range .Checks}}<li>{{.Title}}: {{.Count}} of {{.Total}} ({{.Threshold}}); {{.Evidence}}</li>{{end}}</ul>{{end}}
<h2>Collectives</h2>{{if .Rolled}}<p>Per parallel dimension and op ({{len .Collectives}} rows, one per group and op, below):</p><div class="scroll"><table id="collective-kinds"><tr><th class="l">kind</th><th class="l">op</th><th>groups</th><th>size</th><th>count</th><th>MB/op</th><th>total ms</th><th>mean ms</th><th>median group ms</th><th class="l">worst group</th><th>its mean ms</th><th>busbw GB/s (median group)</th></tr>
{{range .Rolled}}<tr><td class="l">{{.Kind}}</td><td class="l">{{.Op}}</td><td>{{.Groups}}</td><td>{{.Size}}</td><td>{{.Count}}</td><td>{{.MBPerOp}}</td><td>{{ms .TotalNs}}</td><td>{{nsms .MeanNs}}</td><td>{{nsms .MedianGroupMeanNs}}</td><td class="l">{{.Worst}}</td><td>{{nsms .WorstMeanNs}}</td><td>{{.BusBw}}</td></tr>{{end}}</table></div>
<details><summary>Every group's rows ({{len .Collectives}})</summary>{{end}}<div class="scroll"><table id="collectives"><tr><th class="l">op</th><th class="l">group</th><th>size</th><th>count</th><th>total ms</th><th>mean ms</th><th>p95 ms</th><th>algbw GB/s</th><th>busbw GB/s</th></tr>
{{range .Collectives}}{{$cells := .Cells}}<tr><td class="l">{{.Op}}</td><td class="l">{{glabel .GroupName .Group}}</td><td>{{$cells.Size}}</td><td>{{.Count}}</td><td>{{ms .TotalNs}}</td><td>{{nsms .MeanNs}}</td><td>{{nsms .P95Ns}}</td><td>{{$cells.AlgBw}}</td><td>{{$cells.BusBw}}</td></tr>{{end}}</table></div>{{if .Rolled}}</details>{{end}}
{{with .Doc.Result.Warnings}}<h2>Warnings</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p><small><code>{{.Doc.Command}}</code> · hcclprof {{.Doc.Version}}</small></p>
</body></html>
`))
