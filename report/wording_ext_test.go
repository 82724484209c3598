package report_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/report"
)

// TestSharesSayWhatTheyAreSharesOf (issue 38 item 3): the split of the exposed
// communication read "of it moving data (exposed_transfer_share) 32.37%", a share of
// the step printed under the verdict's "67.0% of it moves data", a share of the
// exposed communication. Each figure now says what it is a share of, and prose says
// "step time (Stage)" where it means the step time.
func TestSharesSayWhatTheyAreSharesOf(t *testing.T) {
	doc := sampleDoc(t)
	var b bytes.Buffer
	require.NoError(t, doc.Write(&b, report.Text))
	out := b.String()
	assert.Contains(t, out, "Verdict: 48.3% of the step is exposed communication; 67.0% of it moves data.\n")
	assert.Contains(t, out, "\n    moving data (exposed_transfer_share)     32.37% of step time\n    waiting for a peer (exposed_wait_share)   0.29% of step time\n")
	assert.NotContains(t, out, "of it moving data")
	assert.Contains(t, out, "mean step time (Stage) 73.603 ms, of which 35.575 ms is communication not overlapped")
	assert.NotContains(t, out, "mean Stage")

	b.Reset()
	require.NoError(t, doc.Write(&b, report.Markdown))
	md := b.String()
	assert.Contains(t, md, "| exposed and moving data, share of the step (`exposed_transfer_share`) | 32.37% |")
	assert.NotContains(t, md, "| of it,")
}
