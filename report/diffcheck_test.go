package report_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/report"
)

// TestDiffRefusesImpossibleFigures: a saved report with a negative stage_us was
// diffed as if measured. A figure no analysis can write is refused, naming its field.
func TestDiffRefusesImpossibleFigures(t *testing.T) {
	_, err := report.ReadReportRun(bytes.NewReader(mustRead(t, "sample.json")), "r")
	require.NoError(t, err)
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"negative stage", func(m map[string]any) { step(m)["stage_us"] = -5.0 }, "steps[0] (step 40): stage_us = -5: a duration"},
		{"negative computing", func(m map[string]any) { step(m)["computing_us"] = -1.0 }, "computing_us = -1"},
		{"share over 1", func(m map[string]any) { step(m)["comm_share"] = 1.5 }, "comm_share = 1.5: a share is in [0, 1]"},
		{"over a day", func(m map[string]any) { step(m)["free_us"] = 1e300 }, "free_us = 1e+300"},
		{"negative op elapse", func(m map[string]any) {
			m["communication"].(map[string]any)["ops"].([]any)[0].(map[string]any)["elapse_us"] = -3.0
		}, "communication.ops[0] (rank 0, "},
		{"negative collective count", func(m map[string]any) {
			m["collectives"].([]any)[0].(map[string]any)["count"] = -2
		}, "count = -2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(mustRead(t, "sample.json"), &m))
			tc.edit(m)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			_, err = report.ReadReportRun(bytes.NewReader(b), "base.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "base.json: not a report hcclprof can have written: ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func step(m map[string]any) map[string]any {
	return m["ranks"].([]any)[0].(map[string]any)["steps"].([]any)[0].(map[string]any)
}
