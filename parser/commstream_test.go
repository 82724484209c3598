package parser

import (
	"bytes"
	"github.com/hcclprof/hcclprof/internal/jsonx"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// parseCommunicationJSONTree is the reader communication.json had before it was
// streamed: the whole document as a tree. Kept as the reference the stream is held to.
func parseCommunicationJSONTree(data []byte, file string) ([]profile.CommOpStats, error) {
	d := treeReader{jsonx.TreeReader{File: file}}
	var ops []profile.CommOpStats
	err := jsonx.WithTree(bytes.NewReader(data), file, func(root *jsonx.Node) error {
		if err := d.Object(root, "communication.json"); err != nil {
			return err
		}
		return d.forEachOp(root, isFlatCommJSON(root), func(m jsonx.Member, step int, p2p bool) error {
			op, err := d.commOp(m, step, p2p)
			ops = append(ops, op)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	sortCommOps(ops)
	return ops, nil
}

// TestCommStreamEqualsTree: the streamed communication.json reads as the tree did,
// value for value, on every real file and bundled sample, and on copies with repeated
// keys (the last value kept), a null kind, a flat layout, and damage.
func TestCommStreamEqualsTree(t *testing.T) {
	files := map[string]string{} // subtest name (relative to its root) → path
	for label, root := range map[string]string{"samples": "../fixtures/samples", "realdata": realdata.Root()} {
		if root == "" {
			continue
		}
		filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() && de.Name() == "communication.json" {
				rel, _ := filepath.Rel(root, p)
				files[label+"/"+rel] = p
			}
			return nil
		})
	}
	require.NotEmpty(t, files)
	cases := map[string][]byte{
		"repeated op":    []byte(`{"step1": {"collective": {"op@1": {"Communication Time Info": {"Elapse Time(ms)": 1}}, "op@1": {"Communication Time Info": {"Elapse Time(ms)": 2}}}}}`),
		"repeated kind":  []byte(`{"step1": {"collective": {"a@1": {"Communication Time Info": {"Elapse Time(ms)": 1}}}, "collective": {"b@1": {"Communication Time Info": {"Elapse Time(ms)": 2}}}}}`),
		"repeated step":  []byte(`{"step1": {"p2p": {"a@1": {"Communication Time Info": {"Elapse Time(ms)": 1}}}}, "step2": {}, "step1": {"collective": {"b@1": {"Communication Time Info": {"Elapse Time(ms)": 2}}}}}`),
		"null kind":      []byte(`{"step1": {"p2p": null, "other": [1, {"x": 2}], "collective": {"Total Op Info": {}, "b@1": {"Communication Time Info": {"Elapse Time(ms)": 2}}}}}`),
		"flat":           []byte(`{"Total Op Info": {"Communication Time Info": {}}, "hcom_send_1@9": {"Communication Time Info": {"Elapse Time(ms)": 2}}, "x@9": {"Communication Time Info": {"Elapse Time(ms)": 3}}, "x@9": {"Communication Time Info": {"Elapse Time(ms)": 4}}}`),
		"flat not first": []byte(`{"weird": {}, "x@9": {"Communication Time Info": {"Elapse Time(ms)": 3}}}`),
		"bad syntax":     []byte(`{"step1": {"collective": {"a@1": {"Communication Time Info": {"Elapse Time(ms)": 1,}}}}}`),
		"cut":            []byte(`{"step1": {"collective": {"a@1": {"Communication Time Info": {"Elapse Time(ms)": 1`),
		"bom and space":  []byte("\xef\xbb\xbf \n{\"step\": {\"collective\": {\"a@1\": {\"Communication Time Info\": {\"Elapse Time(ms)\": 1}}}}}\n"),
	}
	for name, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		cases[name] = data
		if strings.Contains(name, "megatron") {
			cases[name+" ×50 steps"] = repeatCommSteps(t, data, 50)
		}
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			want, werr := parseCommunicationJSONTree(data, "c.json")
			got, gerr := parseCommunicationJSON(bytes.NewReader(data), "c.json")
			if werr != nil {
				require.Error(t, gerr, "the tree refused it: %v", werr)
				if name != "flat not first" {
					assert.Equal(t, werr.Error(), gerr.Error())
				}
				return
			}
			require.NoError(t, gerr)
			assert.Equal(t, want, got)
		})
	}
}

// BenchmarkParseCommunicationJSON reads a communication.json of 2000 steps made from
// the real Megatron rank's (17 ops a step, 35 MB).
func BenchmarkParseCommunicationJSON(b *testing.B) {
	one, err := os.ReadFile(realdata.Path(b, "megatron-pp2dp2-2of4rank", "rank_0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "communication.json"))
	require.NoError(b, err)
	data := repeatCommSteps(b, one, 2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseCommunicationJSON(bytes.NewReader(data), "c.json"); err != nil {
			b.Fatal(err)
		}
	}
}

// repeatCommSteps writes n copies of a one-step communication.json's step, as steps
// 0..n-1, with distinct op names.
func repeatCommSteps(tb testing.TB, one []byte, n int) []byte {
	tb.Helper()
	s := strings.TrimSpace(string(one))
	i := strings.Index(s, ":")
	require.True(tb, strings.HasPrefix(s, `{"step`) && i > 0)
	body := s[i+1 : len(s)-1]
	var buf bytes.Buffer
	buf.WriteString("{")
	for k := range n {
		if k > 0 {
			buf.WriteString(", ")
		}
		suffix := "_" + strconv.Itoa(k) + "@"
		buf.WriteString(`"step` + strconv.Itoa(k) + `": ` + strings.ReplaceAll(body, "@", suffix))
	}
	buf.WriteString("}")
	return buf.Bytes()
}

// BenchmarkParseCommunicationJSONTree is BenchmarkParseCommunicationJSON with the
// tree reader it replaced, for comparison.
func BenchmarkParseCommunicationJSONTree(b *testing.B) {
	one, err := os.ReadFile(realdata.Path(b, "megatron-pp2dp2-2of4rank", "rank_0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "communication.json"))
	require.NoError(b, err)
	data := repeatCommSteps(b, one, 2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseCommunicationJSONTree(data, "c.json"); err != nil {
			b.Fatal(err)
		}
	}
}
