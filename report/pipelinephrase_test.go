package report_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/report"
)

// Issue 37: a pipeline found from one profiled stage (msprof's output, its groups
// naming no other member) counts its stages by the ranks its transfers name, a lower
// bound: the text report's pipelines line said "2 pipelines of 3 stages, 1 of 3
// stages profiled in each" for stage 1 of 3 or more; a pipeline whose members are
// named keeps its exact count.
func TestPipelinesLineSaysALowerBound(t *testing.T) {
	line := func(atLeast bool) string {
		res := &analysis.Result{}
		for _, r := range []int{8, 9} {
			res.Communication.Pipelines = append(res.Communication.Pipelines, analysis.Pipeline{
				Group: "g", Ranks: []int{r}, Stages: 3, StagesAtLeast: atLeast, MeasuredBubble: 0.3,
				StageComputingNs: []int64{0, 488e6, 0}, StageProfiled: []bool{false, true, false}, ProfiledStages: 1})
		}
		var txt bytes.Buffer
		require.NoError(t, (&report.Document{Result: res, Version: "test"}).Write(&txt, report.Text))
		for _, l := range bytes.Split(txt.Bytes(), []byte("\n")) {
			if bytes.HasPrefix(l, []byte("Pipelines: ")) {
				return string(l)
			}
		}
		t.Fatalf("no pipelines line in\n%s", txt.String())
		return ""
	}
	assert.Contains(t, line(true), "Pipelines: 2 pipelines of 3 or more stages, 1 of 3 or more stages profiled in each;")
	assert.Contains(t, line(false), "Pipelines: 2 pipelines of 3 stages, 1 of 3 stages profiled in each;")
}

// The JSON report says so in a field of its own, stages_at_least (it was only in
// the note's text): true for a pipeline placed from one profiled stage, false where
// its members are named; the report holds to the schema.
func TestPipelineJSONStagesAtLeast(t *testing.T) {
	for _, atLeast := range []bool{true, false} {
		res := &analysis.Result{}
		res.Communication.Pipelines = []analysis.Pipeline{{
			Group: "g", Ranks: []int{9}, Stages: 3, StagesAtLeast: atLeast, MeasuredBubble: 0.3,
			StageComputingNs: []int64{0, 488e6, 0}, StageProfiled: []bool{false, true, false}, ProfiledStages: 1}}
		var out bytes.Buffer
		require.NoError(t, (&report.Document{Result: res, Version: "test"}).Write(&out, report.JSON))
		var doc struct {
			Communication struct {
				Pipelines []map[string]any `json:"pipelines"`
			} `json:"communication"`
		}
		require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
		require.Len(t, doc.Communication.Pipelines, 1)
		assert.Equal(t, atLeast, doc.Communication.Pipelines[0]["stages_at_least"])
		assert.EqualValues(t, 3, doc.Communication.Pipelines[0]["stages"])
	}
}
