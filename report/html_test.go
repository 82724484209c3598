package report_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report"
)

// htmlDoc is the sample with rank 3's timeline kept (the timeline's compute lanes) and
// a recommendation whose "apply" holds `code`, the way the DDP advice writes it.
func htmlDoc(t *testing.T) *report.Document {
	t.Helper()
	d := sampleDoc(t)
	c, err := parser.LoadCluster([]string{"../fixtures/samples/demo-2server-8rank"}, parser.LoadOptions{})
	require.NoError(t, err)
	for _, r := range c.Ranks {
		if r.Rank == 3 {
			d.TimelineRank = r
		}
	}
	require.NotNil(t, d.TimelineRank)
	require.NotEmpty(t, d.TimelineRank.Compute)
	_, how := advisor.Apply(advisor.Setting{Knob: "accumulation", Accumulation: 4}, advisor.FrameworkDDP)
	require.Contains(t, how, "`")
	_, buf := advisor.Apply(advisor.Setting{Knob: "buffsize", BuffsizeMB: 400}, advisor.FrameworkDDP)
	d.Advice.Recommendations = append(d.Advice.Recommendations,
		advisor.Recommendation{ID: "accumulation", Knob: "no_sync", Value: "4", Apply: how, Confidence: "medium"},
		advisor.Recommendation{ID: "buffsize", Knob: "HCCL_BUFFSIZE", Value: "400", Apply: buf + "\n" + buf, Confidence: "low"})
	return d
}

// wideDoc is a synthetic cluster that stresses the layout: 48 ranks with links all
// ways, a transport with no known peak (the longest link label), long lane labels.
func wideDoc() *report.Document {
	res := &analysis.Result{Summary: analysis.Summary{Ranks: 48, Steps: 1}}
	res.Communication.Hardware = hardware.Profile{Name: "A2", PeakGBps: map[string]float64{"HCCS": 18.3}}
	for r := range 48 {
		res.Ranks = append(res.Ranks, analysis.RankResult{Rank: 100 + r, Steps: []analysis.StepBreakdown{{Step: 1, HasStep: true,
			StageNs: 1_234_567_891, ComputingNs: 900_000_000, OverlappedNs: 100_000_000, CommNotOverlappedNs: 300_000_000, FreeNs: 34_567_891}}})
		res.Communication.Ops = append(res.Communication.Ops, analysis.OpStat{Rank: 100 + r, Step: 1, Name: "hcom_allReduce__1", StartNs: 5_000_000_000 + int64(r)*1000, ElapseNs: 987_654_321})
		for d := range 48 {
			if d != r {
				tr := "HCCS"
				if (r+d)%3 == 0 {
					tr = "SOME_VENDOR_TRANSPORT"
				}
				res.Communication.Links = append(res.Communication.Links, analysis.Link{Src: 100 + r, Dst: 100 + d, Transport: tr,
					Bytes: int64(10_000_000 + 1000*r*d), TimeNs: 1_000_000})
			}
		}
	}
	return &report.Document{Result: res, Command: "hcclprof analyze x --format html", Version: "t"}
}

func writeHTML(t *testing.T, d *report.Document) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, d.Write(&b, report.HTML))
	return b.String()
}

// TestHTMLSelfContained: no external URL of any kind, no script, the four charts.
func TestHTMLSelfContained(t *testing.T) {
	out := writeHTML(t, htmlDoc(t))
	for _, bad := range []string{"http://", "https://", "//cdn", "<script", "@import", "src=", "@font-face", "<link", "<img"} {
		assert.NotContains(t, out, bad)
	}
	for _, id := range []string{`id="breakdown"`, `id="matrix"`, `id="links"`, `id="timeline"`} {
		assert.Contains(t, out, id)
	}
	// The only url() is the matrix key's own gradient, in the file.
	assert.Equal(t, []string{"url(#matrix-key)"}, regexp.MustCompile(`url\([^)]*\)`).FindAllString(out, -1))
	assert.Contains(t, out, `<linearGradient id="matrix-key">`)
}

// svgNode is an element of an SVG chart, read back with encoding/xml.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []svgNode  `xml:",any"`
}

func (n svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n svgNode) num(t *testing.T, name string) float64 {
	v, err := strconv.ParseFloat(n.attr(name), 64)
	require.NoError(t, err, "%s=%q", name, n.attr(name))
	return v
}

// walk lists the elements of a tag under n.
func (n svgNode) walk(tag string) []svgNode {
	var out []svgNode
	for _, c := range n.Nodes {
		if c.XMLName.Local == tag {
			out = append(out, c)
		}
		out = append(out, c.walk(tag)...)
	}
	return out
}

// texts of a class (any class when class is "").
func (n svgNode) texts(class string) []string {
	var out []string
	for _, e := range n.walk("text") {
		if class == "" || e.attr("class") == class {
			out = append(out, e.Text)
		}
	}
	return out
}

// charts parses each inline SVG of a page by its id.
func charts(t *testing.T, page string) map[string]svgNode {
	t.Helper()
	out := map[string]svgNode{}
	for _, m := range regexp.MustCompile(`(?s)<svg id="[^"]+".*?</svg>`).FindAllString(page, -1) {
		var n svgNode
		require.NoError(t, xml.Unmarshal([]byte(m), &n), m[:min(200, len(m))])
		out[n.attr("id")] = n
	}
	return out
}

// TestHTMLChartStructure: each chart has its axis (line, ticks with values, a title
// with the unit), its labels and its legend; the viewBox is the chart's size; every
// text's anchor lies inside it.
func TestHTMLChartStructure(t *testing.T) {
	cs := charts(t, writeHTML(t, htmlDoc(t)))
	require.Len(t, cs, 4)
	for id, c := range cs {
		w, h := c.num(t, "width"), c.num(t, "height")
		assert.Equal(t, fmt.Sprintf("0 0 %.1f %.1f", w, h), c.attr("viewBox"), id)
		for _, e := range c.walk("text") {
			x, y := e.num(t, "x"), e.num(t, "y")
			assert.True(t, x >= 0 && x <= w && y >= 0 && y <= h, "%s: %q at %v,%v outside %vx%v", id, e.Text, x, y, w, h)
			assert.Contains(t, []string{"start", "middle", "end"}, e.attr("text-anchor"), "%s: %q", id, e.Text)
		}
	}

	b := cs["breakdown"]
	// The slowest rank first: the Stage at the right of each bar runs down.
	assert.Equal(t, []string{"rank 5", "rank 2", "rank 4", "rank 7", "rank 6", "rank 1", "rank 0", "rank 3"}, b.texts("label"))
	var stages []float64
	for _, v := range b.texts("value") {
		x, err := strconv.ParseFloat(strings.TrimSuffix(v, " ms"), 64)
		require.NoError(t, err)
		stages = append(stages, x)
	}
	assert.True(t, sort.IsSorted(sort.Reverse(sort.Float64Slice(stages))), "slowest first: %v", stages)
	assert.Equal(t, []string{"0", "10", "20", "30", "40", "50", "60", "70", "80"}, b.texts("tick"), "ms ticks up to the next tick above 73.6 ms")
	assert.Equal(t, []string{"computing only", "overlapped", "exposed communication", "free"}, b.texts("legend"))
	assert.Contains(t, b.texts("axis-title")[0], "(ms)")
	assert.Contains(t, b.texts("value"), "73.571 ms")
	assert.Len(t, lines(b, "axis"), 1)
	assert.Len(t, lines(b, "tick"), 9)

	m := cs["matrix"]
	var ranks []string
	for r := range 8 {
		ranks = append(ranks, strconv.Itoa(r), strconv.Itoa(r))
	}
	key := m.texts("tick")[len(ranks):]
	assert.Equal(t, ranks, m.texts("tick")[:len(ranks)], "each rank along the top and down the side")
	assert.Equal(t, []string{"0", "5", "10", "15"}, key[:4], "the colour key's GB/s")
	assert.ElementsMatch(t, []string{"destination rank", "source rank"}, m.texts("axis-title"))
	assert.Equal(t, []string{"bandwidth of the link (GB/s, all transports)", "no traffic"}, m.texts("legend"), "no latency-bound link: no hatch in the legend")
	assert.Len(t, m.walk("stop"), 11)
	var cells int
	for _, r := range m.walk("rect") {
		if regexp.MustCompile(`^#[0-9a-f]{6}$`).MatchString(r.attr("fill")) {
			cells++
		}
	}
	assert.Equal(t, len(htmlDoc(t).Result.Communication.Links), cells)

	l := cs["links"]
	assert.Equal(t, []string{"HCCS", "RDMA"}, l.texts("label"))
	assert.Equal(t, []string{"median 18.19 of 18.3 GB/s", "median 19.47 of 20.0 GB/s"}, l.texts("value"), "whole, not cut at the edge")
	assert.Equal(t, []string{"0%", "25%", "50%", "75%", "100%"}, l.texts("tick"))
	assert.Equal(t, []string{"median link bandwidth", "up to the peak"}, l.texts("legend"))

	tl := cs["timeline"]
	assert.Equal(t, []string{"compute", "collectives", "waiting", "exposed comm"}, tl.texts("label"))
	assert.Equal(t, []string{"0", "10", "20", "30", "40", "50", "60", "70"}, tl.texts("tick"), "the whole step: 73.687 ms shown")
	assert.Equal(t, "ms since the step started", tl.texts("axis-title")[0])
}

func lines(n svgNode, class string) []svgNode {
	var out []svgNode
	for _, l := range n.walk("line") {
		if l.attr("class") == class {
			out = append(out, l)
		}
	}
	return out
}

// TestHTMLWideCluster: 48 ranks label every fourth rank in the matrix (8-px cells: the
// labels would touch), and a transport without a peak says so.
func TestHTMLWideCluster(t *testing.T) {
	cs := charts(t, writeHTML(t, wideDoc()))
	m := cs["matrix"]
	ticks := m.texts("tick")
	assert.Equal(t, []string{"100", "100", "104", "104"}, ticks[:4])
	assert.Contains(t, ticks, "144")
	assert.NotContains(t, ticks, "146")
	l := cs["links"]
	assert.Equal(t, []string{"median 10.40 of 18.3 GB/s", "median 10.41 of 12.16 GB/s (fastest link; no peak known)"}, l.texts("value"))
	// A transport's name longer than the label column is cut, whole in its tooltip.
	labels := l.walk("text")
	var cut svgNode
	for _, e := range labels {
		if e.attr("class") == "label" && strings.HasPrefix(e.Text, "SOME") {
			cut = e
		}
	}
	assert.Equal(t, "SOME_VENDOR_TRAN…", cut.Text)
	require.Len(t, cut.Nodes, 1)
	assert.Equal(t, "SOME_VENDOR_TRANSPORT", cut.Nodes[0].Text)
}

// TestHTMLApplyCode: backticks in "apply" become <code>, a command is code whole, a
// recommendation of several lines keeps its lines.
func TestHTMLApplyCode(t *testing.T) {
	out := writeHTML(t, htmlDoc(t))
	start := strings.Index(out, "<h2>What to do</h2>")
	require.Positive(t, start)
	table := out[start : start+strings.Index(out[start:], "</table>")]
	assert.NotContains(t, table, "`")
	assert.Contains(t, table, "run the first 3 under <code>with model.no_sync():</code>, step the optimizer after the last")
	assert.Contains(t, table, "<code>export HCCL_BUFFSIZE=400   # MB per communicator; each communicator reserves 2 × this of device memory</code><br><code>export HCCL_BUFFSIZE=400")
}

// TestHTMLEscapesInput: hostile op names stay text.
func TestHTMLEscapesInput(t *testing.T) {
	hostile := "\"><img src=x onerror=alert(1)><script>alert(2)</script>`<b>x</b>`"
	res := &analysis.Result{Summary: analysis.Summary{Ranks: 1, Steps: 1},
		Collectives: []analysis.Collective{{Op: hostile, Group: hostile, Count: 1}}}
	res.Communication.Links = []analysis.Link{{Src: 0, Dst: 1, Transport: hostile, Bytes: 1 << 20, TimeNs: 1000}}
	adv := &advisor.Advice{Findings: []advisor.Finding{{ID: "x", Severity: advisor.High, Title: hostile, Evidence: hostile}},
		Recommendations: []advisor.Recommendation{{Knob: hostile, Apply: hostile}}}
	out := writeHTML(t, &report.Document{Result: res, Advice: adv, Command: hostile, Version: "t"})
	assert.NotContains(t, out, "<script>alert")
	assert.NotContains(t, out, "<img")
	assert.NotContains(t, out, "<b>x")
	assert.Contains(t, out, "&lt;script&gt;")
	assert.Contains(t, out, "<code>&lt;b&gt;x&lt;/b&gt;</code>")
}
