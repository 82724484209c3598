package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// injection is what the hostile cluster appends to every op name: bytes that are not
// UTF-8 (raw in the JSON string: \xff has no JSON escape), then a line break (the JSON
// escape \n) and a GitHub workflow command.
const injection = "\xff\xfe\x80\\n::warning::INJECTED"

// hostileCluster copies the sample into a temporary directory with every HCCL op name
// in trace_view.json and communication.json rewritten to carry the injection, and one
// rank directory renamed to carry it raw (a file name is not decoded as JSON is).
func hostileCluster(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cluster")
	require.NoError(t, os.CopyFS(dir, os.DirFS(sample)))
	opName := regexp.MustCompile(`(hcom_[A-Za-z]+__\d+_\d+_\d+)`)
	changed := 0
	for _, name := range []string{"trace_view.json", "communication.json"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT", name))
		require.NoError(t, err)
		require.Len(t, files, 8)
		for _, p := range files {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			nb := opName.ReplaceAll(b, []byte("${1}"+injection))
			require.NotEqual(t, b, nb, p)
			require.NoError(t, os.WriteFile(p, nb, 0o644))
			changed++
		}
	}
	require.Equal(t, 16, changed)
	rank0 := filepath.Join(dir, "node0_3000000_20250109074733000_ascend_pt")
	require.NoError(t, os.Rename(rank0, filepath.Join(dir, "node0\xff\xfe\x80\n::warning::INJECTED_3000000_20250109074733000_ascend_pt")))
	return dir
}

// assertSafe checks one output: valid UTF-8, and no line that a profile's name starts
// (hcclprof's own annotations are the only lines that may start with "::").
func assertSafe(t *testing.T, what, out string) {
	t.Helper()
	assert.True(t, utf8.ValidString(out), "%s: not valid UTF-8", what)
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " \t\r")
		assert.False(t, strings.HasPrefix(trimmed, "::warning::INJECTED"), "%s: a name starts a line: %q", what, line)
		if strings.HasPrefix(line, "::") {
			assert.Regexp(t, `^::(error|warning) title=`, line, "%s: a workflow command hcclprof did not write", what)
		}
	}
	assert.NotContains(t, out, "\xff", what)
}

func TestUntrustedNames(t *testing.T) {
	in := hostileCluster(t)
	out := t.TempDir()
	outputs := map[string]string{}
	run := func(name string, okCodes []int, args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLI(t, args...)
		require.Contains(t, okCodes, code, "%s: stderr %s", name, stderr)
		outputs[name] = stdout
		outputs[name+" stderr"] = stderr
		return stdout
	}
	// The names reach the outputs: the test would pass vacuously otherwise.
	text := run("analyze text", []int{0, 1, 3}, "analyze", in, "--allow-partial", "--github", "--fail-on", "comm_share>1%",
		"--junit", filepath.Join(out, "gates.xml"))
	assert.NotContains(t, text, "::error", "the --github annotations are not in the report")
	assert.Contains(t, outputs["analyze text stderr"], "::error title=hcclprof gate", "the --github annotations go to stderr")
	for _, f := range []string{"json", "markdown", "html"} {
		run("analyze "+f, []int{0}, "analyze", in, "--allow-partial", "--format", f, "-o", filepath.Join(out, "report."+f))
		b, err := os.ReadFile(filepath.Join(out, "report."+f))
		require.NoError(t, err)
		outputs["analyze -o "+f] = string(b)
	}
	run("advise text", []int{0}, "advise", in, "--allow-partial")
	run("advise json", []int{0}, "advise", in, "--allow-partial", "--format", "json")
	run("inspect text", []int{0}, "inspect", in, "--allow-partial")
	run("inspect json", []int{0}, "inspect", in, "--allow-partial", "--format", "json")
	run("calibrate text", []int{0}, "calibrate", in, "--allow-partial")
	run("calibrate json", []int{0}, "calibrate", in, "--allow-partial", "--format", "json")
	for _, f := range []string{"text", "json", "markdown"} {
		run("diff "+f, []int{0}, "diff", sample, in, "--allow-partial", "--format", f)
	}
	run("export csv", []int{0}, "export", in, "--allow-partial", "--to", "csv", "-o", filepath.Join(out, "csv"))
	run("export parquet", []int{0}, "export", in, "--allow-partial", "--to", "parquet", "-o", filepath.Join(out, "pq"))
	run("export trace", []int{0}, "export", in, "--allow-partial", "--to", "trace", "-o", filepath.Join(out, "trace.json"))
	for _, p := range []string{"gates.xml", "trace.json"} {
		b, err := os.ReadFile(filepath.Join(out, p))
		require.NoError(t, err)
		outputs[p] = string(b)
	}
	csvs, err := filepath.Glob(filepath.Join(out, "csv", "*.csv"))
	require.NoError(t, err)
	require.NotEmpty(t, csvs)
	for _, p := range csvs {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		outputs["csv "+filepath.Base(p)] = string(b)
	}

	assert.Contains(t, outputs["csv ops.csv"], "hcom_allReduce__698_0_1\uFFFD\uFFFD\uFFFD ::warning::INJECTED",
		"the name is kept, its invalid bytes each replaced by U+FFFD, its line break by a space")
	for what, s := range outputs {
		assertSafe(t, what, s)
	}
	for _, what := range []string{"advise json", "inspect json", "calibrate json", "diff json", "analyze -o json", "trace.json"} {
		assert.True(t, json.Valid([]byte(outputs[what])), "%s: not JSON", what)
	}
	var suites struct{}
	assert.NoError(t, xml.Unmarshal([]byte(outputs["gates.xml"]), &suites))

	pqs, err := filepath.Glob(filepath.Join(out, "pq", "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, pqs)
	sawName := false
	for _, p := range pqs {
		for col, values := range parquetStrings(t, p) {
			for _, v := range values {
				assert.True(t, utf8.ValidString(v), "%s %s: %q is not UTF-8", filepath.Base(p), col, v)
				assert.NotContains(t, v, "\n", "%s %s", filepath.Base(p), col)
				sawName = sawName || strings.Contains(v, "INJECTED")
			}
		}
	}
	assert.True(t, sawName, "the injected names reach the Parquet tables")
}

// parquetStrings reads a Parquet file's STRING columns back with arrow-go's Parquet
// reader (NULLs left out).
func parquetStrings(t *testing.T, path string) map[string][]string {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer rdr.Close()
	sch := rdr.MetaData().Schema
	out := map[string][]string{}
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.RowGroup(g)
		for i := 0; i < sch.NumColumns(); i++ {
			if _, ok := sch.Column(i).LogicalType().(schema.StringLogicalType); !ok {
				continue
			}
			cr, err := rg.Column(i)
			require.NoError(t, err)
			vals := make([]parquet.ByteArray, rg.NumRows())
			defs := make([]int16, rg.NumRows())
			_, n, err := cr.(*file.ByteArrayColumnChunkReader).ReadBatch(rg.NumRows(), vals, defs, nil)
			require.NoError(t, err)
			for _, v := range vals[:n] {
				out[sch.Column(i).Name()] = append(out[sch.Column(i).Name()], string(v))
			}
		}
	}
	return out
}
