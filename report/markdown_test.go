package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/report"
)

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleDoc(t).Write(&b, report.Markdown))
	out := b.String()
	// The first screen is the verdict, the headline metrics and the findings.
	assert.True(t, strings.HasPrefix(out, "## hcclprof: 48.3% of the step is exposed communication; 67.0% of it moves data"), out[:80])
	assert.Contains(t, out, "| exposed and moving data, share of the step (`exposed_transfer_share`) | 32.37% |")
	assert.Less(t, strings.Index(out, "### Findings"), strings.Index(out, "<details><summary>Steps"))
	assert.Contains(t, out, "hcclprof analyze fixtures/samples/demo-2server-8rank")
	golden(t, "sample.md", b.Bytes())
}

// TestMarkdownEscapesInput: names from the input cannot break the tables or inject
// HTML.
func TestMarkdownEscapesInput(t *testing.T) {
	hostile := "hcom_x|<script>alert(1)</script>`*[y](http://z)"
	res := &analysis.Result{Summary: analysis.Summary{Ranks: 1, Steps: 1, CommShare: 0.5, CommTotalShare: 0.6, StepTimeNs: 1e6},
		Collectives: []analysis.Collective{{Op: hostile, Group: hostile, Count: 1, TotalNs: 10}}}
	adv := &advisor.Advice{Findings: []advisor.Finding{{ID: "x", Severity: advisor.High, Title: hostile, Evidence: "line1\nline2 " + hostile}}}
	var b bytes.Buffer
	require.NoError(t, (&report.Document{Result: res, Advice: adv, Command: "hcclprof analyze `x`|y", Version: "t"}).Write(&b, report.Markdown))
	out := b.String()
	assert.NotContains(t, out, "<script>")
	assert.NotContains(t, out, "[y](http", "no link can be formed")
	assert.Contains(t, out, `\[y\](http://z)`)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, "hcom") {
			// An escaped pipe is "\|": the cell count stays that of the header.
			assert.Equal(t, 11, strings.Count(line, "|")-strings.Count(line, `\|`), line)
		}
	}
	assert.Contains(t, out, "line1 line2", "newlines cannot end a list item")
}

// Findings past the fifth fold under a count that reads as English: "1 more finding",
// "2 more findings".
func TestMarkdownFoldedFindingsCount(t *testing.T) {
	res := &analysis.Result{Summary: analysis.Summary{Ranks: 1, Steps: 1, StepTimeNs: 1e6}}
	for n, want := range map[int]string{6: "<details><summary>1 more finding</summary>", 7: "<details><summary>2 more findings</summary>"} {
		adv := &advisor.Advice{}
		for i := range n {
			adv.Findings = append(adv.Findings, advisor.Finding{ID: fmt.Sprintf("f%d", i), Severity: advisor.Low, Title: fmt.Sprintf("finding %d", i)})
		}
		var b bytes.Buffer
		require.NoError(t, (&report.Document{Result: res, Advice: adv, Version: "t"}).Write(&b, report.Markdown))
		assert.Contains(t, b.String(), want)
	}
}
