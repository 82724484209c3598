package report_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/report"
)

// TestJSONNaNNamesField: a NaN that reaches the JSON writer is an error naming the
// field that holds it, not encoding/json's bare "unsupported value: NaN".
func TestJSONNaNNamesField(t *testing.T) {
	doc := &report.Document{Result: &analysis.Result{}, Version: "t"}
	doc.Result.Summary.CommShare = math.NaN()
	var b bytes.Buffer
	err := doc.Write(&b, report.JSON)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "summary.comm_share is NaN")
}
