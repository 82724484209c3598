package report_test

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report"
)

// TestHTMLViewport: a phone lays the page out at its own width (without the meta it
// lays it out 980 px wide and zooms out, its 11-px chart text then about 4 px), and
// no chart is drawn narrower than the width that keeps its text at 9 px or more:
// narrower screens scroll the chart in its box.
func TestHTMLViewport(t *testing.T) {
	page := writeHTML(t, htmlDoc(t))
	assert.Contains(t, page, `<meta name="viewport" content="width=device-width, initial-scale=1">`)
	svgs := regexp.MustCompile(`<div class="scroll"><svg id="([^"]+)" class="chart" viewBox="0 0 ([0-9.]+) [0-9.]+" width="[0-9.]+" height="[0-9.]+" style="min-width:([0-9]+)px"`).FindAllStringSubmatch(page, -1)
	require.Len(t, svgs, 4, "each chart in a box of its own that scrolls")
	for _, m := range svgs {
		w, _ := strconv.ParseFloat(m[2], 64)
		minW, _ := strconv.ParseFloat(m[3], 64)
		assert.GreaterOrEqual(t, 11*minW/w, 9.0, "%s: its 11-px text at its narrowest", m[1])
	}
	assert.Equal(t, 1, strings.Count(page, `<div class="scroll"><table id="collectives">`), "the collectives table scrolls in its box too")
	// What to do stacks its cells on a phone, each under its column's name.
	start := strings.Index(page, `<div class="scroll"><table class="stack">`)
	require.Positive(t, start)
	table := page[start : start+strings.Index(page[start:], "</table>")]
	assert.Equal(t, 2*6, strings.Count(table, `data-label="`), "each cell of the two recommendations")
	assert.Contains(t, table, `<td class="l" data-label="apply">`)
	assert.Contains(t, page, `table.stack td::before{content:attr(data-label) ": "`)
}

// luminance is the relative luminance of a #rrggbb colour (WCAG).
func luminance(t *testing.T, hex string) float64 {
	require.Regexp(t, `^#[0-9a-f]{6}$`, hex)
	var out float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		require.NoError(t, err)
		c := float64(v) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		out += w * c
	}
	return out
}

// TestHTMLMatrixScale: the matrix's colour scale is sequential (viridis): its
// brightness rises with the bandwidth, so slow and fast links differ for a reader
// who cannot tell red from green, and in grey. The red-to-green scale it replaces
// ran from light red to darker green.
func TestHTMLMatrixScale(t *testing.T) {
	m := charts(t, writeHTML(t, htmlDoc(t)))["matrix"]
	stops := m.walk("stop")
	require.Len(t, stops, 11)
	assert.Equal(t, "#440154", stops[0].attr("stop-color"), "viridis' dark end: the slowest")
	assert.Equal(t, "#fde725", stops[10].attr("stop-color"), "viridis' light end: the fastest")
	for i := 1; i < len(stops); i++ {
		assert.Greater(t, luminance(t, stops[i].attr("stop-color")), luminance(t, stops[i-1].attr("stop-color")), "stop %d", i)
	}
}

// withTinyLink is the sample with a link that moved 96 bytes in 1.7 µs (0.06 GB/s),
// as the real Megatron run's 0→3 does, and its detections.
func withTinyLink(t *testing.T) *report.Document {
	d := htmlDoc(t)
	c := &d.Result.Communication
	c.Links = append(c.Links, analysis.Link{Src: 0, Dst: 7, Transport: "HCCS", Bytes: 96, TimeNs: 1680, Transfers: 1})
	d.Advice.Detections = advisor.Detect(d.Result, advisor.DefaultDetectThresholds)
	return d
}

// TestHTMLLatencyBoundLinks: a link too small to judge its bandwidth is hatched, not
// painted as the slowest link, and the legend says what the hatch means; the key's
// scale is the judged links' alone.
func TestHTMLLatencyBoundLinks(t *testing.T) {
	d := withTinyLink(t)
	require.True(t, d.Advice.Detections.LatencyBound[analysis.LinkID{Src: 0, Dst: 7, Transport: "HCCS"}])
	require.Len(t, d.Advice.Detections.LatencyBound, 1, "the sample's own links move MBs")
	m := charts(t, writeHTML(t, d))["matrix"]
	var hatched []string
	for _, r := range m.walk("rect") {
		if r.attr("fill") == "url(#matrix-hatch)" && len(r.Nodes) > 0 {
			hatched = append(hatched, r.Nodes[0].Text)
		}
	}
	assert.Equal(t, []string{"0→7 HCCS: 96 B in 1.68 µs, latency-bound: too small to judge bandwidth"}, hatched)
	assert.Equal(t, []string{"bandwidth of the link (GB/s, all transports)", "no traffic", "latency-bound: too small to judge bandwidth"}, m.texts("legend"))
	assert.Len(t, m.walk("pattern"), 1)
	assert.Equal(t, []string{"0", "5", "10", "15"}, m.texts("tick")[16:20], "the key still runs to the fastest link")
	for _, r := range m.walk("rect") {
		if len(r.Nodes) > 0 && strings.HasPrefix(r.Nodes[0].Text, "0→7") {
			assert.Equal(t, "url(#matrix-hatch)", r.attr("fill"))
		}
	}
}

// TestHTMLAbovePeakNote: a transport whose median link runs above its peak says so
// under the chart, as the text and Markdown reports do.
func TestHTMLAbovePeakNote(t *testing.T) {
	d := htmlDoc(t)
	hw := d.Result.Communication.Hardware
	peaks := map[string]float64{}
	for k, v := range hw.PeakGBps {
		peaks[k] = v
	}
	peaks["HCCS"] = 15
	hw.PeakGBps = peaks
	d.Result.Communication.Hardware = hw
	page := writeHTML(t, d)
	assert.Contains(t, page, `<p class="note">HCCS: the links run above A2&#39;s peak`)
	assert.Contains(t, page, "set --peak HCCS=GB/s")
	assert.NotContains(t, page, "RDMA: the links run above")
	assert.NotContains(t, writeHTML(t, htmlDoc(t)), `<p class="note">`, "no note below the peak")
}

// TestHTMLBigCluster: past 64 ranks the breakdown shows the 32 slowest, slowest
// first, and says how many it leaves out; the matrix is the servers'.
func TestHTMLBigCluster(t *testing.T) {
	page := writeHTML(t, bigDoc())
	cs := charts(t, page)
	labels := cs["breakdown"].texts("label")
	require.Len(t, labels, 32)
	assert.Equal(t, "rank 77", labels[0], "the slowest")
	assert.Equal(t, []string{"rank 95", "rank 94"}, labels[1:3], "then by Stage")
	assert.Contains(t, page, "The 32 slowest of 96 ranks, slowest first; 64 ranks not shown")
	m := cs["matrix"]
	assert.ElementsMatch(t, []string{"destination server", "source server"}, m.texts("axis-title"))
	var cells []string
	for _, r := range m.walk("rect") {
		if strings.HasPrefix(r.attr("fill"), "#") && len(r.Nodes) > 0 {
			cells = append(cells, r.Nodes[0].Text)
		}
	}
	// Each server sends within itself (r→r+1: 7 links) and to the next server (its
	// last rank's r→r+1 and its 8 ranks' r→r+8), the last server to the first.
	assert.Len(t, cells, 12+12)
	assert.Contains(t, cells, "server 0→server 0: 12.50 GB/s over 7 links")
	assert.Contains(t, cells, "server 0→server 1: 12.50 GB/s over 9 links")
	assert.Contains(t, cells, "server 11→server 0: 12.50 GB/s over 9 links")
	assert.Contains(t, page, "96 ranks: the matrix of their 12 servers")
}

// TestHTMLTimelineWholeStep: the chosen rank's step is drawn whole, from its first
// device task to its last (the sample's rank 3, step 40: 73.687 ms, its Stage), not
// from its first collective (44.4 ms of it).
func TestHTMLTimelineWholeStep(t *testing.T) {
	page := writeHTML(t, htmlDoc(t))
	assert.Contains(t, page, "rank 3, step 40: compute, collectives, the time they waited for the other ranks and exposed communication (73.687 ms shown; the step&#39;s Stage is 73.687 ms)")
	tl := charts(t, page)["timeline"]
	// The compute lane starts at the axis' 0: the step opens with compute.
	var x0 float64 = -1
	for _, l := range lines(tl, "axis") {
		x0 = l.num(t, "x1")
	}
	for _, r := range tl.walk("rect") {
		if r.attr("class") == "comp" {
			assert.InDelta(t, x0, r.num(t, "x"), 0.1)
			break
		}
	}
	assert.NotContains(t, page, "No compute lanes")
}

// TestHTMLTimelineNotes: without the rank's device timeline the page says the run
// has none, and without the rank at all it names the flag.
func TestHTMLTimelineNotes(t *testing.T) {
	d := htmlDoc(t)
	d.TimelineRank = &profile.Rank{Rank: 3}
	page := writeHTML(t, d)
	assert.Contains(t, page, "No compute lanes: this run has no device timeline for rank 3")
	assert.Contains(t, page, "ms since the step&#39;s first collective started")
	d = htmlDoc(t)
	d.TimelineRank = nil
	assert.Contains(t, writeHTML(t, d), "No compute lanes: they are drawn for the rank named by --timeline-rank (default 0), which this run does not hold.")
}

// TestHTMLCollectiveKinds: past 24 per-group rows the collectives are rolled up by
// parallel dimension and op with the worst group named, every group's row folded
// below; the summary gives the communication per dimension.
func TestHTMLCollectiveKinds(t *testing.T) {
	d := bigDoc()
	r := d.Result
	for g := range 12 {
		key := "dp" + strconv.Itoa(g)
		r.Communication.Groups = append(r.Communication.Groups, analysis.Group{Key: key, Name: "dp", Kind: "dp", Parallel: "dp"})
		mean := 5e6 + float64(g)*1e5
		r.Collectives = append(r.Collectives, analysis.Collective{Op: "allreduce", Group: key, GroupName: "dp", GroupSize: 8, Count: 10,
			Bytes: 10 * 100_000_000, TotalNs: int64(10 * mean), MeanNs: mean, BusBwGBps: 20})
	}
	for g := range 16 {
		key := "tp" + strconv.Itoa(g)
		r.Communication.Groups = append(r.Communication.Groups, analysis.Group{Key: key, Name: "tp", Kind: "tp", Parallel: "tp"})
		r.Collectives = append(r.Collectives, analysis.Collective{Op: "allgather", Group: key, GroupName: "tp", GroupSize: 4, Count: 100,
			TotalNs: 100 * 200_000, MeanNs: 200_000})
	}
	page := writeHTML(t, d)
	start := strings.Index(page, `<table id="collective-kinds">`)
	require.Positive(t, start, "rolled up: 28 rows")
	table := page[start : start+strings.Index(page[start:], "</table>")]
	rows := regexp.MustCompile(`<tr><td class="l">(\w+)</td><td class="l">(\w+)</td><td>(\d+)</td>.*?<td class="l">([^<]*)</td><td>([0-9.]+)</td>`).FindAllStringSubmatch(table, -1)
	require.Len(t, rows, 2)
	assert.Equal(t, []string{"tp", "allgather", "16", "tp tp0", "0.200"}, rows[0][1:], "the dimensions in their order: tp first")
	assert.Equal(t, []string{"dp", "allreduce", "12", "dp dp11", "6.100"}, rows[1][1:], "the worst dp group named, its mean")
	assert.Contains(t, page, "<details><summary>Every group's rows (28)</summary>")
	assert.Equal(t, 28, strings.Count(page[strings.Index(page, `<table id="collectives">`):], `<tr><td class="l">all`))
	assert.NotContains(t, writeHTML(t, htmlDoc(t)), "collective-kinds", "the sample's one row stays as it is")
}

// TestHTMLTimelineNamesSlowest: a timeline of another rank than the slowest says
// which rank and step are the slowest and how to draw them.
func TestHTMLTimelineNamesSlowest(t *testing.T) {
	page := writeHTML(t, htmlDoc(t)) // rank 3 drawn; rank 4's step 40 is the longest
	assert.Contains(t, page, "; the slowest step is rank 4&#39;s step 40 (--timeline-rank 4 draws it)")
	d := htmlDoc(t)
	d.TimelineRank.Rank = 4
	assert.NotContains(t, writeHTML(t, d), "the slowest step is")
}

// TestHTMLRealLatencyBound: in the real Megatron run (two of its four ranks, when
// ../shared is beside the project) the links that moved 96 bytes, 0→3 and 2→1, are
// hatched, the others (hundreds of MB at about 19 GB/s) coloured; HCCS runs above
// A2's peak and the page says so.
func TestHTMLRealLatencyBound(t *testing.T) {
	d := realDoc(t)
	if d == nil {
		t.Skip("no ../shared/realdata beside the project")
	}
	page := writeHTML(t, d)
	m := charts(t, page)["matrix"]
	var hatched, coloured []string
	for _, r := range m.walk("rect") {
		if len(r.Nodes) == 0 {
			continue
		}
		link, _, _ := strings.Cut(r.Nodes[0].Text, " ")
		switch {
		case r.attr("fill") == "url(#matrix-hatch)":
			hatched = append(hatched, link)
		case strings.HasPrefix(r.attr("fill"), "#"):
			coloured = append(coloured, link)
		}
	}
	assert.ElementsMatch(t, []string{"0→3", "2→1"}, hatched)
	assert.ElementsMatch(t, []string{"0→1", "0→2", "2→0", "2→3"}, coloured)
	assert.Contains(t, m.texts("legend"), "latency-bound: too small to judge bandwidth")
	assert.Contains(t, page, `<p class="note">HCCS: the links run above A2&#39;s peak`)
}
