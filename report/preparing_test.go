package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report"
	"github.com/hcclprof/hcclprof/report/export"
)

// A step_trace_time.csv without a Preparing column (written before 2024) says nothing
// of Preparing: the reports show it as unknown, not as 0.
func TestAbsentPreparingIsNotZero(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rank0_ascend_pt")
	out := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT")
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "profiler_info_0.json"), []byte(`{"rank_id": 0}`), 0o644))
	csv := "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive)\n" +
		"1,100,50,10,60,20,170,0,50\n"
	require.NoError(t, os.WriteFile(filepath.Join(out, "step_trace_time.csv"), []byte(csv), 0o644))
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	require.Len(t, res.Ranks, 1)
	require.Len(t, res.Ranks[0].Steps, 1)
	st := res.Ranks[0].Steps[0]
	assert.False(t, st.HasPreparing)
	doc := &report.Document{Result: res, Command: "hcclprof analyze x", Version: "test"}

	var js bytes.Buffer
	require.NoError(t, doc.Write(&js, report.JSON))
	var rep struct {
		Ranks []struct {
			Steps []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &rep))
	step := rep.Ranks[0].Steps[0]
	v, ok := step["preparing_us"]
	assert.True(t, ok, "the field is there")
	assert.Nil(t, v, "preparing_us is null")
	assert.Equal(t, 170.0, step["stage_us"])

	var txt bytes.Buffer
	require.NoError(t, doc.Write(&txt, report.Text))
	row := lineWith(t, txt.String(), "│ step_trace_time.csv │")
	cells := strings.Split(row, "│")
	assert.Equal(t, "0.000", strings.TrimSpace(cells[9]), "the Bubble cell, known to be 0, of %q", row)
	assert.Equal(t, "-", strings.TrimSpace(cells[10]), "the Preparing cell of %q", row)

	var md bytes.Buffer
	require.NoError(t, doc.Write(&md, report.Markdown))
	assert.Contains(t, md.String(), "| 0 | 1 | 0.170 | 0.100 | 0.060 | 0.050 | 0.010 | 0.020 | 0.000 | - | 29.41% |")

	tablesDir := t.TempDir()
	ex, err := export.Begin(tablesDir, export.CSV)
	require.NoError(t, err)
	require.NoError(t, ex.Finish(res, nil))
	b, err := os.ReadFile(filepath.Join(tablesDir, "steps.csv"))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, rows, 2)
	col := slices.Index(strings.Split(rows[0], ","), "preparing_us")
	require.GreaterOrEqual(t, col, 0)
	assert.Equal(t, "", strings.Split(rows[1], ",")[col], "an empty cell: NULL")
}

// Preparing that the profile gives, even 0, is a figure.
func TestKnownPreparingIsShown(t *testing.T) {
	doc := sampleDoc(t)
	st := doc.Result.Ranks[0].Steps[0]
	require.True(t, st.HasPreparing)
	var js bytes.Buffer
	require.NoError(t, doc.Write(&js, report.JSON))
	assert.Contains(t, js.String(), `"preparing_us": `)
	assert.NotContains(t, js.String(), `"preparing_us": null`)
}

func lineWith(t *testing.T, s, sub string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	t.Fatalf("no line with %q in:\n%s", sub, s)
	return ""
}
