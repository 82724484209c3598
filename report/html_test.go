package report_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/report"
)

// TestHTMLSelfContained: no external URL of any kind, no script, the four charts.
func TestHTMLSelfContained(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, report.WriteHTML(&b, sampleDoc(t)))
	out := b.String()
	for _, bad := range []string{"http://", "https://", "//cdn", "<script", "@import", "src="} {
		assert.NotContains(t, out, bad)
	}
	for _, id := range []string{`id="breakdown"`, `id="matrix"`, `id="links"`, `id="timeline"`} {
		assert.Contains(t, out, id)
	}
	assert.Contains(t, out, "rank 7")
	assert.Equal(t, 8, strings.Count(out, "<text x=\"0\" y=")-strings.Count(out, ">HCCS<")-strings.Count(out, ">RDMA<")-2, "a bar per rank (and the link and lane labels)")
}

// TestHTMLEscapesInput: hostile op names stay text.
func TestHTMLEscapesInput(t *testing.T) {
	hostile := `"><img src=x onerror=alert(1)><script>alert(2)</script>`
	res := &analysis.Result{Summary: analysis.Summary{Ranks: 1, Steps: 1},
		Collectives: []analysis.Collective{{Op: hostile, Group: hostile, Count: 1}}}
	adv := &advisor.Advice{Findings: []advisor.Finding{{ID: "x", Severity: advisor.High, Title: hostile, Evidence: hostile}}}
	var b bytes.Buffer
	require.NoError(t, report.WriteHTML(&b, &report.Document{Result: res, Advice: adv, Command: hostile, Version: "t"}))
	out := b.String()
	assert.NotContains(t, out, "<script>alert")
	assert.NotContains(t, out, "<img")
	assert.Contains(t, out, "&lt;script&gt;")
}

// TestHTMLInBrowser loads the sample's page in headless Chromium when it exists: it
// must render (a screenshot of some size, the SVGs in the DOM) without console errors.
func TestHTMLInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on this machine")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	require.NoError(t, report.WriteHTML(&b, sampleDoc(t)))
	require.NoError(t, os.WriteFile(page, b.Bytes(), 0o644))
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0"}
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.Command(chromium, append(flags, "--screenshot="+shot, "--window-size=1200,2000", "file://"+page)...)
	logs, err := cmd.CombinedOutput()
	require.NoError(t, err, string(logs))
	st, err := os.Stat(shot)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(20_000), "a rendered page, not a blank one")
	for _, line := range strings.Split(string(logs), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") {
			t.Errorf("console: %s", line)
		}
	}
	dom, err := exec.Command(chromium, append(flags, "--dump-dom", "file://"+page)...).Output()
	require.NoError(t, err)
	assert.Contains(t, string(dom), `<svg id="breakdown"`)
	assert.GreaterOrEqual(t, strings.Count(string(dom), "<rect"), 30)
	t.Logf("screenshot: %s (%d bytes)", shot, st.Size())
}
