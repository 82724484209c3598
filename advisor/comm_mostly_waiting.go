package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/analysis"
)

// WaitThresholds decide comm_mostly_waiting: less than MaxTransitShare of the
// collectives' time moves data, and their exposed waiting is at least MinWaitShare of
// the step (High above HighWaitShare).
type WaitThresholds struct {
	MaxTransitShare float64
	MinWaitShare    float64
	HighWaitShare   float64
}

// defaultWaitThresholds are comm_mostly_waiting's defaults.
var defaultWaitThresholds = WaitThresholds{MaxTransitShare: 0.3, MinWaitShare: 0.1, HighWaitShare: 0.3}

func (t *WaitThresholds) keys() []thresholdKey {
	return []thresholdKey{{"max_transit_share", &t.MaxTransitShare, 0, 1}, {"min_wait_share", &t.MinWaitShare, 0, 1}, {"high_wait_share", &t.HighWaitShare, 0, 1}}
}

// waitFindings separates time that moves data from time that waits: when the
// collectives mostly wait (Wait + Idle of msprof's split), faster links or another
// algorithm cannot help; the ranks arrive at different times (load imbalance, a rank
// slowed by its host, or ranks outside the profile), which is what to chase.
func waitFindings(res *analysis.Result, th WaitThresholds) []Finding {
	var elapse, transit int64
	var worst analysis.OpStat
	for _, o := range res.Communication.Ops {
		if o.Source == "none" {
			continue
		}
		elapse += o.ElapseNs
		transit += o.MovingNs
		if o.ElapseNs-o.MovingNs > worst.ElapseNs-worst.MovingNs {
			worst = o
		}
	}
	var stage, exposed int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			stage += st.StageNs
			exposed += st.ExposedCommNs()
		}
	}
	// Waiting hidden behind compute costs nothing: only the exposed part counts, as
	// the exposure split measures it where the ops are known.
	waiting := min(elapse-transit, exposed)
	ex := res.Exposure
	if ex.OpsKnown {
		waiting = int64((ex.WaitShare + ex.OtherShare) * float64(stage))
	}
	if elapse == 0 || stage == 0 || float64(transit)/float64(elapse) >= th.MaxTransitShare || float64(waiting)/float64(stage) < th.MinWaitShare {
		return nil
	}
	sev := Medium
	if float64(waiting)/float64(stage) > th.HighWaitShare {
		sev = High
	}
	unprofiled := ""
	for _, c := range res.Collectives {
		if c.GroupSize > res.Summary.Ranks && c.GroupSizeSource != "profiled ranks" {
			of := fmt.Sprintf("%d", c.GroupSize)
			if analysis.IsLowerBound(c.GroupSizeSource) {
				of = fmt.Sprintf("at least %d", c.GroupSize)
			}
			unprofiled = fmt.Sprintf(" Only %d of group %s's %s ranks were profiled: the others may be the ones arriving late.", res.Summary.Ranks, c.Group, of)
			break
		}
	}
	return []Finding{{ID: "comm_mostly_waiting", Severity: sev,
		Title: fmt.Sprintf("Only %.1f%% of the collectives' time moves data; the rest waits", 100*float64(transit)/float64(elapse)),
		Evidence: fmt.Sprintf("%.3f ms of %.3f ms in collectives is Wait or Idle, %.1f%% of the step time (Stage) not overlapped with compute; worst: %s on rank %d step %s, %.3f ms of which %.3f ms transit. "+
			"%s. Faster links or another algorithm would not shorten it."+unprofiled,
			float64(elapse-transit)/1e6, float64(elapse)/1e6, 100*float64(waiting)/float64(stage),
			worst.Name, worst.Rank, analysis.StepLabel(worst.Step), float64(worst.ElapseNs)/1e6, float64(worst.MovingNs)/1e6, waitWhere(ex)),
		Refs: []Ref{{Rank: worst.Rank, Step: worst.Step, Op: worst.Name, StartUs: float64(worst.StartNs) / 1e3, StartNs: worst.StartNs, DurUs: float64(worst.ElapseNs) / 1e3}}}}
}

// waitWhere says what the collectives' exposed waiting is spent on, from the exposure
// split: peers that arrive later (whom the diagnosis names), or the ops' own
// synchronisation and idle time.
func waitWhere(ex analysis.Exposure) string {
	switch {
	case !ex.OpsKnown:
		return "The collectives wait for ranks that arrive later or inside the ops (synchronisation, handshakes)"
	case ex.WaitShare >= ex.OtherShare:
		return fmt.Sprintf("Most of the exposed part (%s of the step) waits for peers that arrive later: the diagnosis and the slow-rank findings say whom", pct(ex.WaitShare))
	}
	return fmt.Sprintf("Most of the exposed part (%s of the step) is synchronisation and idle time inside the ops, not waiting for a later rank", pct(ex.OtherShare))
}
