package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletion asks the binary what the shell completion scripts ask it
// (hcclprof __complete ARGS... PARTIAL) and checks the values and the directive
// (4: no file completion, 6: no file completion and no space, 0: files as well).
func TestCompletion(t *testing.T) {
	tests := []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"analyze", "x", "--format", ""}, []string{"text", "json", "markdown", "html"}, ":4"},
		{[]string{"analyze", "x", "--format", "m"}, []string{"text", "json", "markdown", "html"}, ":4"}, // the shell filters fixed values
		{[]string{"diff", "a", "b", "--format", ""}, []string{"text", "json", "markdown"}, ":4"},
		{[]string{"gen", "x", "--format", ""}, []string{"text", "db", "msprof"}, ":4"},
		{[]string{"advise", "x", "--format", ""}, []string{"text", "json"}, ":4"},
		{[]string{"export", "x", "--to", ""}, []string{"parquet", "csv", "trace"}, ":4"},
		{[]string{"analyze", "x", "--hardware", ""}, []string{"910A", "A2", "A3", "NVIDIA", "H100", "A100"}, ":4"},
		{[]string{"model", "--product", ""}, []string{"910A", "A2", "A3", "NVIDIA", "H100", "A100"}, ":4"},
		{[]string{"advise", "x", "--framework", ""}, []string{"ddp", "megatron", "deepspeed", "mindspore"}, ":4"},
		{[]string{"whatif", "x", "--set", ""}, []string{"bucket=", "accumulation=", "buffsize=", "overlap=", "algo=", "dp="}, ":6"},
		{[]string{"whatif", "x", "--set", "b"}, []string{"bucket=", "buffsize="}, ":6"},
		{[]string{"whatif", "x", "--set", "algo="}, []string{"algo=ring", "algo=nhr", "algo=rhd", "algo=nb", "algo=pipeline"}, ":4"},
		// Issue 38: the gates' metrics, the peaks' transports, gen's --omit and
		// model's ops, algorithms and expansion modes had no values.
		{[]string{"analyze", "x", "--fail-on", "comm"}, []string{"comm_share", "comm_total_share"}, ":6"},
		{[]string{"diff", "a", "b", "--fail-on", "comm_share."}, []string{"comm_share.base", "comm_share.delta", "comm_share.delta_pct", "comm_share.p"}, ":6"},
		{[]string{"analyze", "x", "--peak", "R"}, []string{"RDMA="}, ":6"},
		{[]string{"gen", "x", "--omit", ""}, []string{"trace", "none"}, ":4"},
		{[]string{"model", "--expansion", ""}, []string{"AI_CPU", "AIV"}, ":4"},
		{[]string{"model", "--op", ""}, []string{"allgather", "allreduce", "alltoall", "broadcast", "reduce", "reducescatter"}, ":4"},
		{[]string{"gen", "straggler"}, []string{"straggler-64rank"}, ":0"},
		{[]string{"gen", "demo-2server-8rank", ""}, nil, ":4"},
	}
	for _, tt := range tests {
		out, stderr, code := runCLI(t, append([]string{"__complete"}, tt.args...)...)
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		require.NotEmpty(t, lines)
		got, directive := lines[:len(lines)-1], lines[len(lines)-1]
		if len(got) == 0 {
			got = nil
		}
		assert.Equal(t, tt.want, got, "%v", tt.args)
		assert.Equal(t, tt.directive, directive, "%v", tt.args)
	}

	// gen with no partial name offers every built-in scenario, and files too.
	out, _, code := runCLI(t, "__complete", "gen", "")
	require.Equal(t, 0, code)
	for _, name := range []string{"demo-2server-8rank", "straggler-64rank", "seed-8card-bert"} {
		assert.Contains(t, strings.Split(out, "\n"), name)
	}
	assert.True(t, strings.HasSuffix(out, "\n:0\n"), out)
}
