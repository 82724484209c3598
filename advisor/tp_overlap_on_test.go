package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/analysis"
)

// TP communication overlap already on leaves part of each collective exposed (half
// at TP 2): a judge job, TP2 × CP2 with the overlap on, had 13.9% of its step in
// exposed TP communication, 77% of the TP time overlapped, and was named
// tp_critical_path, whose cure is the overlap it had. A TP dimension mostly
// overlapped is not the setting's cause; on the compute stream it is.
func TestTPOverlapOnIsNotTheSetting(t *testing.T) {
	for _, c := range []struct {
		name              string
		commNs, exposedNs int64
		want              string
	}{
		{"on the compute stream", 1000, 950, CauseTPCriticalPath},
		{"half overlapped", 1000, 520, CauseTPCriticalPath},
		{"overlap on, TP 2", 1000, 230, CauseComputeBound},
		{"overlap on, TP 8", 1000, 60, CauseComputeBound},
	} {
		t.Run(c.name, func(t *testing.T) {
			share := 0.139
			res := &analysis.Result{Ranks: []analysis.RankResult{{Rank: 0, Source: analysis.SourceTimeline}}}
			res.Summary.CommShare = 0.148
			res.Summary.Kinds = []analysis.KindShare{
				{Kind: analysis.KindSP, Groups: 8, CommNs: c.commNs, ExposedNs: c.exposedNs, CommShare: share, Sources: []string{`profile ("tp")`}},
				{Kind: analysis.KindCP, Groups: 8, CommNs: 800, CommShare: 0, Sources: []string{`profile ("cp")`}},
			}
			d := settingCause(res, Diagnosis{Cause: CauseComputeBound, Share: 0.93})
			assert.Equal(t, c.want, d.Cause, d.Title)
		})
	}
}
