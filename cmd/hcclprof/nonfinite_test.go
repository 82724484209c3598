package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNonFiniteFlagsRefused: NaN and ±Inf given to a number flag or knob are refused
// with exit 2 naming it, before anything is computed: they printed NaN with exit 0.
func TestNonFiniteFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"whatif", sample, "--set", "overlap=NaN"}, "overlap="},
		{[]string{"whatif", sample, "--set", "overlap=nan%"}, "overlap="},
		{[]string{"whatif", sample, "--set", "bucket=64MiB", "--backward-share", "NaN"}, "--backward-share"},
		{[]string{"whatif", sample, "--set", "overlap=0.9", "--backward-share", "Inf"}, "--backward-share"},
		{[]string{"model", "--op", "allreduce", "--algo", "ring", "--ranks", "8", "--size", "256MiB", "--alpha-us", "20", "--bw-gbps", "NaN"}, "--bw-gbps"},
		{[]string{"model", "--op", "allreduce", "--algo", "ring", "--ranks", "8", "--size", "256MiB", "--alpha-us", "-Inf", "--bw-gbps", "18"}, "--alpha-us"},
	} {
		stdout, stderr, code := runCLI(t, tc.args...)
		assert.Equal(t, 2, code, "%v: stdout %s stderr %s", tc.args, stdout, stderr)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
		assert.NotContains(t, stdout, "NaN", "%v", tc.args)
	}
}

// TestNonFiniteConfigRefused: a NaN or infinite number in the config file or --peak
// is refused where it is read (exit 2, naming the key and line): comm_budget: .nan
// was accepted, and peaks_gbps: .nan or --peak HCCS=NaN made analyze --format json
// exit 2 with only "json: unsupported value: NaN".
func TestNonFiniteConfigRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		config, want string
	}{
		{"comm_budget: .nan\n", "line 1: comm_budget = .nan"},
		{"slow_link:\n  fraction: .NaN\n", "line 2: slow_link.fraction = .NaN"},
		{"peaks_gbps:\n  HCCS: .nan\n", "line 2: peaks_gbps.HCCS = .nan"},
		{"retransmission_s: .inf\n", "line 1: retransmission_s = .inf"},
		{"checks:\n  small_share: -.Inf\n", "line 2: checks.small_share = -.Inf"},
	} {
		cfg := filepath.Join(dir, "c.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(tc.config), 0o644))
		stdout, stderr, code := runCLI(t, "analyze", sample, "--config", cfg, "--format", "json")
		assert.Equal(t, 2, code, "%q: stdout %s stderr %s", tc.config, stdout, stderr)
		assert.Contains(t, stderr, tc.want, "%q", tc.config)
		assert.NotContains(t, stderr, "unsupported value")
	}
	stdout, stderr, code := runCLI(t, "analyze", sample, "--peak", "HCCS=NaN", "--format", "json")
	assert.Equal(t, 2, code, "stdout %s stderr %s", stdout, stderr)
	assert.Contains(t, stderr, `--peak "HCCS=NaN"`)
}
