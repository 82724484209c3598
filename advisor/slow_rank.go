package advisor

import (
	"fmt"
	"math"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
)

func slowFindings(det Detections, retrans []analysis.Retransmission, stake StakeThresholds) []Finding {
	var out []Finding
	for _, s := range det.SlowRanks {
		refs := make([]Ref, 0, len(s.Steps))
		for _, st := range s.Steps {
			refs = append(refs, Ref{Rank: s.Rank, Step: st})
		}
		out = append(out, Finding{ID: "slow_rank", Severity: stake.severity(s.ShareOfStep, s.StepsSeen), Saving: s.ShareOfStep,
			Title:    fmt.Sprintf("Rank %d holds the others back by %.1f%% of the step (cause: %s)", s.Rank, 100*s.ShareOfStep, s.Cause),
			Evidence: s.Evidence + evidenceStrength(s.StepsSeen), Refs: refs})
	}
	for _, n := range det.SlowServers {
		title := fmt.Sprintf("Server %d's %s links run at %.0f%% of their peers'", n.Server, n.Transport, 100*n.Fraction)
		if n.Server < 0 {
			title = fmt.Sprintf("Every server's %s links run at %.0f%% of the hardware's peak, latency taken off", n.Transport, 100*n.Fraction)
		}
		out = append(out, Finding{ID: "slow_server", Severity: High, Title: title, Evidence: n.Evidence})
	}
	for _, g := range det.SlowGroups {
		out = append(out, Finding{ID: "slow_group", Severity: High,
			Title:    fmt.Sprintf("%s group %s runs its collectives at %.0f%% of its peer groups' speed: a link it crosses is slow", g.Parallel, g.Group, 100*g.Fraction),
			Evidence: g.Evidence, Refs: []Ref{{Rank: g.Ranks[0], Step: -1}}})
	}
	for _, l := range det.SlowLinks {
		out = append(out, Finding{ID: "slow_link", Severity: High,
			Title:    fmt.Sprintf("Link %d→%d (%s) runs at %.0f%% of its peers' bandwidth", l.Src, l.Dst, l.Transport, 100*l.BandwidthGBps/math.Max(l.PeerMedianGBps, 1e-9)),
			Evidence: l.Evidence, Refs: []Ref{{Rank: l.Src, Step: -1}}})
	}
	if n := len(retrans); n > 0 {
		r := retrans[0]
		f := Finding{ID: "rdma_retransmission", Severity: High,
			Title: fmt.Sprintf("%d RDMA transfer(s) took over %s: packet loss and retransmission", n, units.FormatSeconds(r.LimitNs)),
			Evidence: fmt.Sprintf("first: %s in %s, step %s, %.3f s; check the switch and the NICs (not an HCCL setting)",
				r.Link(), r.Op, analysis.StepLabel(r.Step), float64(r.TimeNs)/1e9),
			Refs: []Ref{{Rank: r.Src, Step: r.Step, Op: r.Op}}}
		if r.FromOpTotal {
			// Only the op's RDMA total is known (no task rows): msprof-analyze's rule.
			f.Title = fmt.Sprintf("%d op(s) spent over %s in RDMA transfers: suspected packet loss and retransmission", n, units.FormatSeconds(r.LimitNs))
			f.Evidence = fmt.Sprintf("first: rank %d, %s in step %s: %.3f s over RDMA for %.3f MB (%.4f GB/s), and the op took at least %s on every profiled rank; "+
				"the profiler's per-op analysis gives the op's RDMA total, not its transfers (profile with the timeline to name the link); check the switch and the NICs (not an HCCL setting)",
				r.Src, r.Op, analysis.StepLabel(r.Step), float64(r.TimeNs)/1e9, float64(r.Bytes)/1e6, units.GBps(r.Bytes, r.TimeNs), units.FormatSeconds(r.LimitNs))
		}
		out = append(out, f)
	}
	return out
}

// StakeThresholds grade slow_rank and distributed_optimizer_exposed by the share of
// the step at stake: High from High, Medium from Medium (below it the
// distributed-optimizer finding is not made, and a slow rank does not lead a
// diagnosis within the budget).
type StakeThresholds struct {
	High, Medium float64
}

// defaultStakeThresholds are the stakes' defaults.
var defaultStakeThresholds = StakeThresholds{High: 0.10, Medium: 0.03}

func (t *StakeThresholds) keys() []thresholdKey {
	return []thresholdKey{{"high_share", &t.High, 0, 1}, {"medium_share", &t.Medium, 0, 1}}
}

// severity grades a finding by the share of the step at stake, one level lower
// when it rests on a single step (one step is weak evidence).
func (t StakeThresholds) severity(share float64, steps int) Severity {
	sev := Low
	switch {
	case share >= t.High:
		sev = High
	case share >= t.Medium:
		sev = Medium
	}
	if steps < 2 {
		sev = lower(sev)
	}
	return sev
}

func evidenceStrength(steps int) string {
	if steps < 2 {
		return " (seen in one profiled step only: confirm on more steps)"
	}
	return ""
}
