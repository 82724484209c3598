package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report"
)

// TestBidiControlsNotPrinted: an op name holding U+202E (right-to-left override) was
// printed as read, reversing what follows it on a terminal or web page. The Unicode
// bidirectional controls are replaced, like the other control characters, in every
// report written from the profile's names.
func TestBidiControlsNotPrinted(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	const controls = "\u202e\u2066\u200f\u061c"
	for _, f := range []string{"trace_view.json", "communication.json"} {
		for _, r := range []string{"rank0_ascend_pt", "rank1_ascend_pt"} {
			p := filepath.Join(dir, r, "ASCEND_PROFILER_OUTPUT", f)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			nb := strings.ReplaceAll(string(b), "hcom_allReduce__586_", "hcom_allReduce"+controls+"__586_")
			require.NotEqual(t, string(b), nb)
			require.NoError(t, os.WriteFile(p, []byte(nb), 0o644))
		}
	}
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	require.NotEmpty(t, res.Collectives)
	held := false
	for _, r := range c.Ranks {
		for _, op := range r.CommOps {
			held = held || strings.Contains(op.Name, "\u202e")
		}
	}
	require.True(t, held, "the names hold the controls as read")
	for name, write := range map[string]func(*bytes.Buffer, *report.Document) error{
		"text":     func(b *bytes.Buffer, d *report.Document) error { return d.Write(b, report.Text) },
		"json":     func(b *bytes.Buffer, d *report.Document) error { return d.Write(b, report.JSON) },
		"markdown": func(b *bytes.Buffer, d *report.Document) error { return d.Write(b, report.Markdown) },
	} {
		var b bytes.Buffer
		require.NoError(t, write(&b, &report.Document{Result: res, Version: "t"}), name)
		out := b.String()
		assert.Contains(t, strings.ToLower(out), "allreduce", name)
		for _, r := range controls {
			assert.NotContains(t, out, string(r), "%s holds U+%04X", name, r)
		}
		// JSON escapes are decoded by every reader: none may stand for a control.
		assert.NotContains(t, strings.ToLower(out), `\u202e`, name)
	}
}
