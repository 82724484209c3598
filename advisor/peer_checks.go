package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/analysis"
)

// SmallMessagesThresholds decide small_messages' severity.
type SmallMessagesThresholds struct {
	// MediumShare: the time the small ops move data, as a share of the step
	// (Σ over ranks and steps of both), from which the finding is medium; below, low.
	MediumShare float64
}

// defaultSmallMessagesThresholds are small_messages' defaults: as small_collectives',
// worth acting on from 2% of the step.
var defaultSmallMessagesThresholds = SmallMessagesThresholds{MediumShare: 0.02}

func (t *SmallMessagesThresholds) keys() []thresholdKey {
	return []thresholdKey{{"medium_step_share", &t.MediumShare, 0, 1}}
}

// checkFindings turns the peer checks that fired into findings. Retransmission is
// already a finding of its own (slowFindings). stageNs is the run's Stage summed over
// ranks and steps, what the small messages' cost is a share of.
func checkFindings(checks []Check, stageNs int64, small SmallMessagesThresholds) []Finding {
	var out []Finding
	for _, ch := range checks {
		if !ch.Fired {
			continue
		}
		f := Finding{Evidence: fmt.Sprintf("%d of %d: %s", ch.Count, ch.Total, ch.Evidence)}
		if ch.Where.Rank >= 0 {
			f.Refs = []Ref{{Rank: ch.Where.Rank, Step: ch.Where.Step, Op: ch.Where.Op, StartUs: float64(ch.Where.StartNs) / 1e3, StartNs: ch.Where.StartNs}}
		}
		switch ch.ID {
		case "small_packets_sdma", "small_packets_rdma":
			transport := "SDMA"
			if ch.ID == "small_packets_rdma" {
				transport = "RDMA"
			}
			share := 0.0
			if stageNs > 0 {
				share = float64(ch.CostNs) / float64(stageNs)
			}
			f.ID, f.Severity = "small_messages", Medium
			f.Title = fmt.Sprintf("%.0f%% of the ops move small messages over %s: latency-bound, %.2f%% of the step", 100*float64(ch.Count)/float64(max(ch.Total, 1)), transport, 100*share)
			f.Evidence += fmt.Sprintf("; they move data for %.2f%% of the step", 100*share)
			if share < small.MediumShare {
				f.Severity = Low
				f.Evidence += ", too little to be worth changing"
			} else {
				f.Evidence += "; each op pays its fixed latency, so fewer, larger messages (bigger gradient buckets, fused collectives, or accumulation) move the same bytes in less time"
			}
		case "over_buffsize":
			f.ID, f.Severity = "messages_over_buffsize", Medium
			f.Title = fmt.Sprintf("%d ops are larger than HCCL_BUFFSIZE and run in several rounds", ch.Count)
			f.Evidence += "; every round pays the algorithm's latency again"
		case "bandwidth_contention":
			f.ID, f.Severity = "sdma_contention", Low
			f.Title = "SDMA copies slow down while compute runs"
			f.Evidence = ch.Threshold + "; " + ch.Evidence
		case "byte_alignment":
			f.ID, f.Severity = "unaligned_messages", Low
			f.Title = fmt.Sprintf("%d SDMA copies are not 512-byte aligned", ch.Count)
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

// stageSumNs is the run's Stage summed over its ranks and steps.
func stageSumNs(res *analysis.Result) int64 {
	var stage int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			stage += st.StageNs
		}
	}
	return stage
}
