package advisor

import (
	"github.com/hcclprof/hcclprof/analysis"
)

// settingRecommendations adds the priced changes to a parallel layout's own settings
// (issue 37) beyond TP overlap and routing balance: FSDP prefetch, the MoE capacity
// factor, TP kept inside a server, the MoE AlltoAlls overlapped. Each is ranked with
// the others by its gain; none while a slow rank, link or server is found (fix it
// first), and only the routing's own cures while the step waits for a cause other
// than a setting.
func settingRecommendations(res *analysis.Result, det Detections, diag Diagnosis, facts RunFacts, recs []Recommendation, notes []string) ([]Recommendation, []string) {
	if r, note := expertCapacityRecommendation(res, diag); r != nil {
		// The routing's cure holds while the step waits for the hot expert's rank,
		// which the detectors may also name slow.
		recs = append(recs, *r)
	} else if note != "" {
		notes = append(notes, note)
	}
	if det.faulty(res.Communication) {
		return recs, notes
	}
	add := func(r *Recommendation, note string) {
		switch {
		case r != nil:
			recs = insertByGain(recs, *r)
		case note != "":
			notes = append(notes, note)
		}
	}
	if !waitingCause(diag.Cause) {
		add(fsdpRecommendation(res, facts))
		add(tpPlacementRecommendation(res))
		add(shardBucketRecommendation(res, facts))
		add(moeOverlapRecommendation(res))
	}
	return recs, notes
}
