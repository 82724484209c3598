package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
)

// TestShareGateAboveOneRefused: a gate on a share or ratio whose threshold is above 1
// without a % sign means thousands of percent and can never fail ('comm_share>30' is
// 3000%); it is refused with a hint, while '30%', '0.3' and a diff's delta stay.
func TestShareGateAboveOneRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", sample, "--fail-on", "comm_share>30"}, "did you mean 30%?"},
		{[]string{"analyze", sample, "--fail-on", ">45"}, "did you mean 45%?"},
		{[]string{"analyze", sample, "--fail-on", "overlap_ratio<50"}, "did you mean 50%?"},
		{[]string{"diff", sample, sample, "--fail-on", "comm_share.delta>5"}, "did you mean 5%?"},
	} {
		_, stderr, code := runCLI(t, tc.args...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	for _, args := range [][]string{
		{"analyze", sample, "--fail-on", "comm_share>95%"},
		{"analyze", sample, "--fail-on", "comm_share>0.95"},
		{"analyze", sample, "--fail-on", "step_time_us>1e300"},
		{"diff", sample, sample, "--fail-on", "comm_share.delta<-1"},
		{"diff", sample, sample, "--fail-on", "step_time_us.delta_pct>50"},
	} {
		_, stderr, code := runCLI(t, args...)
		assert.Equal(t, 0, code, "%v: %s", args, stderr)
	}
}

// A diff's .delta_pct is in percent already (5 is 5%): '--fail-on
// step_time_us.delta_pct>5%' read 5% as 0.05 and failed on any change above a
// twentieth of a percent. And a share's threshold above 100% can never be reached.
func TestPercentGatesMeanWhatTheySay(t *testing.T) {
	g, err := advisor.ParseGate("step_time_us.delta_pct>5%", []string{"step_time_us.delta_pct"})
	require.NoError(t, err)
	assert.Equal(t, 5.0, g.Threshold)
	assert.False(t, g.Breached(4.9))
	assert.True(t, g.Breached(5.1))
	g, err = advisor.ParseGate("step_time_us.delta_pct>5", []string{"step_time_us.delta_pct"})
	require.NoError(t, err)
	assert.Equal(t, 5.0, g.Threshold)
	_, stderr, code := runCLI(t, "analyze", sample, "--fail-on", "comm_share>3000%")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "can never be reached")
	// The same run twice: no change, so a 5% gate holds.
	_, stderr, code = runCLI(t, "diff", sample, sample, "--fail-on", "step_time_us.delta_pct>5%")
	assert.Equal(t, 0, code, stderr)
}
