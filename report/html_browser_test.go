package report_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report"
)

// layoutProbe measures the rendered page: for every text of every chart, its box
// against its chart's box and the other texts' boxes, and the size every text of
// the page is drawn at on the screen: its computed font size × the chart's scale
// (rendered width over viewBox width) × the visual viewport's zoom (a phone shows a
// page without a viewport meta zoomed out to fit 980 px).
const layoutProbe = `(() => {
  const zoom = window.visualViewport ? window.visualViewport.scale : 1;
  const out = {texts: 0, minFontPx: 1e9, minFontText: '', outside: [], overlaps: [], classes: {}, charts: {}, pageOverflowPx: 0};
  const font = (el, scale) => {
    const px = parseFloat(getComputedStyle(el).fontSize) * scale * zoom;
    if (px < out.minFontPx) { out.minFontPx = px; out.minFontText = el.textContent.slice(0, 60); }
  };
  for (const svg of document.querySelectorAll('svg.chart')) {
    const s = svg.getBoundingClientRect();
    const scale = s.width / svg.viewBox.baseVal.width;
    out.charts[svg.id] = {width: s.width, scale: scale};
    const boxes = [];
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      out.texts++;
      font(t, scale);
      const k = svg.id + '.' + t.getAttribute('class');
      out.classes[k] = (out.classes[k] || 0) + 1;
      if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5)
        out.outside.push(svg.id + ': ' + t.textContent + ' ' + [r.left - s.left, r.right - s.right, r.top - s.top, r.bottom - s.bottom].map(v => v.toFixed(1)).join(','));
      boxes.push([t.textContent, r]);
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i][1], b = boxes[j][1];
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
        out.overlaps.push(svg.id + ': ' + boxes[i][0] + ' / ' + boxes[j][0]);
    }
  }
  // The page's own text (headings, paragraphs, tables).
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || el.closest('svg')) continue;
    font(el, 1);
  }
  // What the page itself overflows the viewport by (charts and tables scroll in their own boxes).
  out.pageOverflowPx = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  return out;
})()`

type layoutReport struct {
	Texts          int
	MinFontPx      float64
	MinFontText    string
	Outside        []string
	Overlaps       []string
	Classes        map[string]int
	Charts         map[string]struct{ Width, Scale float64 }
	PageOverflowPx float64
}

// bigDoc is a synthetic 96-rank cluster on 12 servers of 8, rank 77 the slowest:
// more ranks than the charts draw one by one.
func bigDoc() *report.Document {
	const n = 96
	res := &analysis.Result{Summary: analysis.Summary{Ranks: n, Steps: 1}}
	res.Communication.ServerOf = map[int]int{}
	for r := range n {
		stage := int64(100_000_000 + r*10_000)
		if r == 77 {
			stage = 180_000_000
		}
		res.Ranks = append(res.Ranks, analysis.RankResult{Rank: r, Steps: []analysis.StepBreakdown{{Step: 1, HasStep: true,
			StageNs: stage, ComputingNs: stage - 30_000_000, OverlappedNs: 10_000_000, CommNotOverlappedNs: 20_000_000, FreeNs: 10_000_000}}})
		res.Communication.ServerOf[r] = r / 8
		res.Communication.Ops = append(res.Communication.Ops, analysis.OpStat{Rank: r, Step: 1, Name: "hcom_allReduce__1", StartNs: 1_000_000 + int64(r)*1000, ElapseNs: 20_000_000})
		for _, d := range []int{(r + 1) % n, (r + 8) % n} {
			tr := "HCCS"
			if d/8 != r/8 {
				tr = "RDMA"
			}
			res.Communication.Links = append(res.Communication.Links, analysis.Link{Src: r, Dst: d, Transport: tr, Bytes: 100_000_000, TimeNs: 8_000_000, Transfers: 10})
		}
	}
	return &report.Document{Result: res, Command: "hcclprof analyze big --format html", Version: "t"}
}

// realDoc is the real Megatron run (two of its four ranks) when ../shared is beside
// the project: links that moved 96 bytes, HCCS above A2's peak.
func realDoc(t *testing.T) *report.Document {
	dir := filepath.Join("..", "..", "shared", "realdata", "megatron-pp2dp2-2of4rank")
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	advice := advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	return &report.Document{Result: res, Advice: &advice, Command: "hcclprof analyze megatron --format html", Version: "t"}
}

// TestHTMLInBrowser renders the report in headless Chromium, when it is installed,
// at a desktop's width (1280 px) and a phone's (390 px, mobile emulation: a page
// without a viewport meta is laid out 980 px wide and zoomed out), and measures in
// the rendered page that every text of a chart lies inside its chart, that no two
// texts of a chart overlap, that no text is drawn below 9 px on the screen and that
// the page itself does not overflow the phone's width (charts and tables scroll in
// their own boxes).
func TestHTMLInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: not under -short")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if chromium, err = exec.LookPath("chromium-browser"); err != nil {
			t.Skip("no chromium on this machine")
		}
	}
	docs := []struct {
		name      string
		doc       *report.Document
		wantTexts map[string]int // chart.class → at least this many texts
	}{
		{"sample", htmlDoc(t), map[string]int{"breakdown.label": 8, "breakdown.tick": 5, "breakdown.legend": 4, "breakdown.axis-title": 1,
			"matrix.tick": 16 + 3, "matrix.axis-title": 2, "matrix.legend": 2, "links.label": 2, "links.value": 2, "links.tick": 5,
			"links.legend": 2, "timeline.label": 4, "timeline.tick": 4, "timeline.axis-title": 1}},
		{"wide", wideDoc(), map[string]int{"breakdown.label": 48, "matrix.tick": 12 * 2, "links.value": 2}},
		{"big", bigDoc(), map[string]int{"breakdown.label": 32, "matrix.tick": 12 * 2}},
	}
	if d := realDoc(t); d != nil {
		docs = append(docs, struct {
			name      string
			doc       *report.Document
			wantTexts map[string]int
		}{"megatron", d, map[string]int{"matrix.legend": 3}})
	}
	dir := t.TempDir()
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(filepath.Join(dir, "profile")))...)
	defer cancel()
	browser, cancel := chromedp.NewContext(alloc)
	defer cancel()
	require.NoError(t, chromedp.Do(browser), "start chromium")
	for _, tc := range docs {
		page := filepath.Join(dir, tc.name+".html")
		require.NoError(t, os.WriteFile(page, []byte(writeHTML(t, tc.doc)), 0o644))
		for _, vp := range []struct {
			name          string
			width, height int64
			opts          []chromedp.EmulateViewportOption
		}{
			{"desktop", 1280, 900, nil},
			{"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait, chromedp.EmulateScale(3)}},
		} {
			t.Run(tc.name+"/"+vp.name, func(t *testing.T) {
				ctx, cancel := chromedp.NewContext(browser)
				defer cancel()
				ctx, cancelT := context.WithTimeout(ctx, time.Minute)
				defer cancelT()
				require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(vp.width, vp.height, vp.opts...), chromedp.Navigate("file://"+page)))
				rep, err := chromedp.Run(ctx, chromedp.Evaluate[layoutReport](layoutProbe))
				require.NoError(t, err)
				t.Logf("%d chart texts; smallest text %.2f px (%q); %d outside their chart, %d overlapping; page overflow %.0f px; charts %v",
					rep.Texts, rep.MinFontPx, rep.MinFontText, len(rep.Outside), len(rep.Overlaps), rep.PageOverflowPx, rep.Charts)
				for _, id := range []string{"breakdown", "matrix", "links"} {
					assert.Contains(t, rep.Charts, id)
				}
				assert.Empty(t, rep.Outside, "texts cut at their chart's edge")
				assert.Empty(t, rep.Overlaps, "texts drawn over each other")
				assert.GreaterOrEqual(t, rep.MinFontPx, 9.0, "the smallest text on the screen: %q", rep.MinFontText)
				assert.LessOrEqual(t, rep.PageOverflowPx, 0.0, "the page is wider than the screen")
				for k, n := range tc.wantTexts {
					assert.GreaterOrEqual(t, rep.Classes[k], n, k)
				}
				// HCCLPROF_KEEP_SCREENSHOT=DIR keeps a picture of each page to look at.
				if keep := os.Getenv("HCCLPROF_KEEP_SCREENSHOT"); keep != "" {
					png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(keep, tc.name+"-"+vp.name+".png"), png, 0o644))
				}
			})
		}
	}
}
