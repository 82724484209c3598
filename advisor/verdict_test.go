package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/analysis"
)

// TestVerdict: without a diagnosis, the verdict reads the exposed share against the
// budget (0: the default 30%).
func TestVerdict(t *testing.T) {
	v := func(s analysis.Summary) string { return Verdict(Diagnosis{}, s, 0) }
	assert.Equal(t, "no step breakdown could be computed", v(analysis.Summary{}))
	assert.Equal(t, "no communication in the profiled steps", v(analysis.Summary{Ranks: 1}))
	assert.Contains(t, v(analysis.Summary{Ranks: 1, CommShare: 0.31, CommTotalShare: 0.5}), "bottleneck")
	assert.Contains(t, v(analysis.Summary{Ranks: 1, CommShare: 0.2, CommTotalShare: 0.5}), "within the 30% budget")
	assert.Equal(t, "communication is a minor cost", v(analysis.Summary{Ranks: 1, CommShare: 0.05, CommTotalShare: 0.5}))
	assert.Equal(t, "the title", Verdict(Diagnosis{Title: "the title"}, analysis.Summary{}, 0), "the diagnosis names the cause")
}
