package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
