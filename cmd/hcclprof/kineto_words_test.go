package main

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// Issue 36 item 8: a Kineto trace whose process group is named "world" was printed
// "world world", and inspect said its NCCL ops were sized while their bytes were null.
// The real trace, its group renamed "world" and its message sizes removed.
func TestKinetoWorldGroupAndUnsizedOps(t *testing.T) {
	src := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	f, err := os.Open(src)
	require.NoError(t, err)
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var trace map[string]any
	require.NoError(t, json.NewDecoder(zr).Decode(&trace))
	f.Close()
	info := trace["distributedInfo"].(map[string]any)
	for _, pg := range info["pg_config"].([]any) {
		pg := pg.(map[string]any)
		pg["pg_name"], pg["pg_desc"] = "world", "world"
	}
	for _, ev := range trace["traceEvents"].([]any) {
		args, _ := ev.(map[string]any)["args"].(map[string]any)
		if args == nil {
			continue
		}
		if _, ok := args["Process Group Name"]; ok {
			args["Process Group Name"], args["Process Group Description"] = "world", "world"
		}
		delete(args, "In msg nelems")
		delete(args, "Out msg nelems")
		delete(args, "dtype")
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "rank0.pt.trace.json.gz"))
	require.NoError(t, err)
	zw := gzip.NewWriter(out)
	require.NoError(t, json.NewEncoder(zw).Encode(trace))
	require.NoError(t, zw.Close())
	require.NoError(t, out.Close())

	report, stderr, code := runCLI(t, "analyze", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, report, "world")
	assert.NotContains(t, report, "world world")
	ins, stderr, code := runCLI(t, "inspect", dir)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, ins, "sized from", "no op carries a size")
	assert.Contains(t, ins, "sizes are not in the trace")
	assert.False(t, strings.Contains(ins, "world world"))
}
