package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
)

// Check is one check's verdict over the cluster.
type Check struct {
	ID        string // small_packets_sdma, small_packets_rdma, bandwidth_contention, byte_alignment, over_buffsize, rdma_retransmission
	Title     string
	Fired     bool
	Count     int // ops (or transfers) that break the rule
	Total     int // ops (or transfers) the rule looked at
	Threshold string
	Evidence  string // the worst case, findable in the timeline
	Where     analysis.CheckRef
	// CostNs is, for the small-message checks, the time the small ops moved data
	// (analysis.CheckSamples.SmallSDMANs), summed over ranks and steps.
	CostNs int64
}

// Evaluated reports whether the check had anything to examine: a check over no op or
// transfer did not pass, it was not evaluated.
func (c Check) Evaluated() bool { return c.Total > 0 }

// CheckThresholds decide whether a communication check fires on the cluster's
// samples (analysis.CheckSamples, counted at analysis.Limits' sizes): the
// configuration file's checks section.
type CheckThresholds struct {
	// Small packets fire when more than SmallShare of the ops that use a transport
	// move less than its small size.
	SmallShare float64
	// Bandwidth contention fires when the SDMA transfers overlapped by compute run at
	// under ContentionGBps (0.8 × the 18 GB/s SDMA baseline).
	ContentionGBps float64
}

// defaultCheckThresholds are msprof-analyze's rule values.
var defaultCheckThresholds = CheckThresholds{SmallShare: 0.2, ContentionGBps: 14.4}

// evaluateChecks decides the checks from the cluster's samples, counted at lim's
// sizes, and the transfers over its retransmission limit.
func evaluateChecks(sum analysis.CheckSamples, retrans []analysis.Retransmission, lim analysis.Limits, th CheckThresholds) []Check {
	share := func(n, d int) float64 {
		if d == 0 {
			return 0
		}
		return float64(n) / float64(d)
	}
	var out []Check
	add := func(c Check, ex analysis.CheckExample) {
		c.Where = analysis.CheckRef{Rank: -1, Step: -1}
		if ex.Set {
			c.Where = ex.Ref
			c.Evidence = fmt.Sprintf("rank %d step %s: %s", ex.Ref.Rank, analysis.StepLabel(ex.Ref.Step), ex.Text)
		}
		out = append(out, c)
	}
	add(Check{ID: "small_packets_sdma", Title: "Small SDMA messages", Count: sum.SmallSDMA, Total: sum.SDMAOps, CostNs: sum.SmallSDMANs,
		Fired:     share(sum.SmallSDMA, sum.SDMAOps) > th.SmallShare,
		Threshold: fmt.Sprintf("ops moving < %.0f MB over SDMA in over %.0f%% of SDMA ops", float64(lim.SmallSDMABytes)/1e6, 100*th.SmallShare)}, sum.SmallSDMAEx)
	add(Check{ID: "small_packets_rdma", Title: "Small RDMA messages", Count: sum.SmallRDMA, Total: sum.RDMAOps, CostNs: sum.SmallRDMANs,
		Fired:     share(sum.SmallRDMA, sum.RDMAOps) > th.SmallShare,
		Threshold: fmt.Sprintf("ops moving < %.0f MB over RDMA in over %.0f%% of RDMA ops", float64(lim.SmallRDMABytes)/1e6, 100*th.SmallShare)}, sum.SmallRDMAEx)
	contBW := units.GBps(sum.ContendedBytes, sum.ContendedNs)
	add(Check{ID: "bandwidth_contention", Title: "SDMA bandwidth under compute", Count: sum.ContendedTransfers, Total: sum.TimedSDMATransfers,
		Fired: sum.ContendedTransfers > 0 && contBW < th.ContentionGBps,
		Threshold: fmt.Sprintf("SDMA transfers of ≥ %.0f MB overlapped by compute at < %.1f GB/s (here %.2f GB/s over %d transfers; any compute kernel counts, not only MatMul)",
			float64(lim.ContentionMinBytes)/1e6, th.ContentionGBps, contBW, sum.ContendedTransfers)}, sum.ContentionEx)
	add(Check{ID: "byte_alignment", Title: "SDMA sizes not 512-byte aligned", Count: sum.Misaligned, Total: sum.SDMATransfers,
		Fired:     sum.Misaligned > 0,
		Threshold: fmt.Sprintf("SDMA transfer sizes not a multiple of %d bytes", lim.AlignmentBytes)}, sum.AlignmentEx)
	add(Check{ID: "over_buffsize", Title: "Messages larger than HCCL_BUFFSIZE", Count: sum.OverBuffer, Total: sum.SizedOps,
		Fired:     sum.OverBuffer > 0,
		Threshold: fmt.Sprintf("op size above HCCL_BUFFSIZE (default %d MB): the op runs in ⌈size/buffer⌉ rounds, each paying its latency again", lim.DefaultBuffsizeMB)}, sum.BufferEx)
	rt := Check{ID: "rdma_retransmission", Title: "RDMA retransmission", Count: len(retrans), Total: sum.RDMAOps, Fired: len(retrans) > 0,
		Where:     analysis.CheckRef{Rank: -1, Step: -1},
		Threshold: fmt.Sprintf("an RDMA transfer longer than the retransmission limit (%s)", units.FormatSeconds(lim.RetransmissionNs))}
	if len(retrans) > 0 {
		r := retrans[0]
		rt.Where = analysis.CheckRef{Rank: r.Src, Step: r.Step, Op: r.Op}
		rt.Evidence = fmt.Sprintf("%s in %s, step %s: %.3f s", r.Link(), r.Op, analysis.StepLabel(r.Step), float64(r.TimeNs)/1e9)
	}
	out = append(out, rt)
	return out
}
