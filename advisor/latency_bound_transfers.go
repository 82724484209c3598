package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
)

// LatencyBoundThresholds decide latency_bound_transfers: more than MinShare of a
// transport's transfers are smaller than n½.
type LatencyBoundThresholds struct {
	MinShare float64
}

// defaultLatencyBoundThresholds are latency_bound_transfers' defaults.
var defaultLatencyBoundThresholds = LatencyBoundThresholds{MinShare: 0.5}

func (t *LatencyBoundThresholds) keys() []thresholdKey {
	return []thresholdKey{{"min_share", &t.MinShare, 0, 1}}
}

// latencyBoundFindings uses the links calibrated on the run: a transfer smaller than
// n½ = α·BW runs at under half the link's bandwidth, its time mostly latency. When
// most transfers of a transport are that small, fewer, larger messages would help.
func latencyBoundFindings(c analysis.Communication, links []costmodel.LinkFit, th LatencyBoundThresholds) []Finding {
	var out []Finding
	for _, f := range links {
		if f.Confidence == "none" || f.AlphaUs <= 0 {
			continue
		}
		nHalf := f.AlphaUs * f.BWGBps * 1e3 // µs × GB/s = 1e3 bytes
		var below, all int
		for _, s := range c.TransferSamples {
			if s.Transport != f.Transport {
				continue
			}
			all += s.Count
			if float64(s.SizeBytes) < nHalf {
				below += s.Count
			}
		}
		if all == 0 || float64(below)/float64(all) <= th.MinShare {
			continue
		}
		sev := Medium
		if f.Confidence == "low" {
			sev = Low
		}
		out = append(out, Finding{ID: "latency_bound_transfers", Severity: sev,
			Title: fmt.Sprintf("%.0f%% of %s transfers are latency-bound (smaller than n½ = %s)", 100*float64(below)/float64(all), f.Transport, units.FormatBytes(int64(nHalf))),
			Evidence: fmt.Sprintf("calibrated on this run: α %.1f µs, %.2f GB/s (confidence %s); below n½ = α·BW a transfer gets under half the link's bandwidth; fewer, larger messages (bigger buckets, fusion) move the same bytes faster",
				f.AlphaUs, f.BWGBps, f.Confidence)})
	}
	return out
}
