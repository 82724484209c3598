package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFindingsActionableFirst (issue 38 item 3): findings that name a change worth
// making come first, the largest saving first, then the rest by severity; the order
// within one is kept.
func TestFindingsActionableFirst(t *testing.T) {
	fs := []Finding{
		{ID: "headline", Severity: High},
		{ID: "stage", Severity: Medium, Saving: 0.292},
		{ID: "overlap", Severity: Medium},
		{ID: "small", Severity: Low},
		{ID: "aligned", Severity: Low},
		{ID: "rsag", Severity: Low, Saving: 0.074},
		{ID: "bubble", Severity: Info},
		{ID: "fault", Severity: High},
	}
	sortFindings(fs)
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	assert.Equal(t, []string{"stage", "rsag", "headline", "fault", "overlap", "small", "aligned", "bubble"}, ids)
}
