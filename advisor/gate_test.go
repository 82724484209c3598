package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
)

func TestParseGate(t *testing.T) {
	tests := []struct {
		expr    string
		want    Gate
		wantErr string
	}{
		{expr: "comm_share>30%", want: Gate{Expr: "comm_share>30%", Metric: "comm_share", Op: ">", Threshold: 0.30}},
		{expr: " overlap_ratio <= 0.5 ", want: Gate{Expr: "overlap_ratio <= 0.5", Metric: "overlap_ratio", Op: "<=", Threshold: 0.5}},
		{expr: "step_time_us>=1.5e5", want: Gate{Expr: "step_time_us>=1.5e5", Metric: "step_time_us", Op: ">=", Threshold: 150000}},
		{expr: ">30%", want: Gate{Expr: "comm_share>30%", Metric: "comm_share", Op: ">", Threshold: 0.30}},
		{expr: "comm_share=30%", wantErr: "want METRIC OP VALUE"},
		{expr: "bogus>1", wantErr: `unknown metric "bogus"`},
		{expr: "comm_share>", wantErr: "want METRIC OP VALUE"},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			g, err := ParseGate(tc.expr, analysis.MetricNames)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, g)
		})
	}
	g, _ := ParseGate("comm_share>30%", analysis.MetricNames)
	res := EvaluateGates([]Gate{g}, map[string]float64{"comm_share": 0.31})
	assert.False(t, res[0].Passed)
	res = EvaluateGates([]Gate{g}, map[string]float64{"comm_share": 0.30})
	assert.True(t, res[0].Passed, "30% is not above 30%")
}
