package advisor

import (
	"fmt"
)

// checkFindings turns the peer checks that fired into findings. Retransmission is
// already a finding of its own (slowFindings).
func checkFindings(checks []Check) []Finding {
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
			f.ID, f.Severity = "small_messages", Medium
			f.Title = fmt.Sprintf("%.0f%% of the ops move small messages over %s: latency-bound", 100*float64(ch.Count)/float64(max(ch.Total, 1)), transport)
			f.Evidence += "; each op pays its fixed latency, so fewer, larger messages (bigger gradient buckets, fused collectives, or accumulation) move the same bytes in less time"
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
