package driver

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExitCode: the policy main applies to a command's error: its code, printed but
// for a failed gate (whose report already said so); any other error is a usage error.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"done", nil, ExitOK, ""},
		{"gate failed", &exitError{code: ExitGateFailed}, ExitGateFailed, ""},
		{"usage", UsageError(errors.New("unknown --format")), ExitUsage, "hcclprof: unknown --format\n"},
		{"incomplete", &exitError{code: ExitIncomplete, err: errors.New("input incomplete")}, ExitIncomplete, "hcclprof: input incomplete\n"},
		{"cobra's own", errors.New(`unknown flag: --nope`), ExitUsage, "hcclprof: unknown flag: --nope\n"},
	} {
		var stderr bytes.Buffer
		assert.Equal(t, tc.code, ExitCode(tc.err, &stderr), tc.name)
		assert.Equal(t, tc.stderr, stderr.String(), tc.name)
	}
}

// TestPipelineRefusals: every command that reads a run goes through the one load,
// which refuses a run with no step (exit 2), and flags an incomplete run (exit 3)
// after writing its output.
func TestPipelineRefusals(t *testing.T) {
	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "host_1.1700000000000.pt.trace.json"), []byte(`{"schemaVersion": 1, "traceEvents": []}`), 0o644))
	scratch := t.TempDir()
	commands := map[string]func(env Env, args []string) error{
		"analyze":   func(env Env, args []string) error { return Analyze(env, args, AnalyzeFlags{Format: "json"}) },
		"advise":    func(env Env, args []string) error { return Advise(env, args, AdviseFlags{Format: "json"}) },
		"calibrate": func(env Env, args []string) error { return Calibrate(env, args, CalibrateFlags{Format: "json"}) },
		"whatif": func(env Env, args []string) error {
			return WhatIf(env, args, WhatIfFlags{Format: "json", Sets: []string{"overlap=0.9"}, BackwardShare: 2.0 / 3})
		},
		"export csv": func(env Env, args []string) error {
			return Export(env, args, ExportFlags{To: "csv", Output: filepath.Join(scratch, "csv")})
		},
		"export trace": func(env Env, args []string) error {
			return Export(env, args, ExportFlags{To: "trace", Output: filepath.Join(scratch, "trace.json")})
		},
		"inspect": func(env Env, args []string) error { return Inspect(env, args, InspectFlags{Format: "json"}) },
	}
	// A rank whose trace is cut in the middle.
	cut := filepath.Join(t.TempDir(), "cluster")
	require.NoError(t, os.CopyFS(cut, os.DirFS(sample)))
	traces, err := filepath.Glob(filepath.Join(cut, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
	require.NoError(t, err)
	require.NotEmpty(t, traces)
	b, err := os.ReadFile(traces[1])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(traces[1], b[:len(b)/2], 0o644))
	for name, run := range commands {
		var out bytes.Buffer
		err := run(Env{Stdout: &out, Stderr: &out}, []string{empty})
		var stderr bytes.Buffer
		assert.Equal(t, ExitUsage, ExitCode(err, &stderr), name)
		assert.Contains(t, stderr.String(), "nothing to analyse: no step found", name)

		out.Reset()
		stderr.Reset()
		err = run(Env{Stdout: &out, Stderr: &out}, []string{cut})
		assert.Equal(t, ExitIncomplete, ExitCode(err, &stderr), name)
		assert.Contains(t, stderr.String(), "input incomplete (rank", name)
		if name != "export csv" && name != "export trace" {
			assert.NotEmpty(t, out.String(), "%s: the output is written before the exit code", name)
		}
	}
}
