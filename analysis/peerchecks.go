package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// CheckThresholds are the limits of msprof-analyze's communication checks
// (docs/diagnosis.md §6, docs/costmodel.md §4), plus the HCCL_BUFFSIZE check it never makes.
type CheckThresholds struct {
	// Small packets: an op's SDMA traffic under SmallSDMABytes or its RDMA traffic
	// under SmallRDMABytes, in more than SmallShare of the ops that use the transport.
	SmallSDMABytes, SmallRDMABytes int64
	SmallShare                     float64
	// Bandwidth contention: SDMA transfers of at least ContentionMinBytes that run
	// while compute runs, at under ContentionGBps (0.8 × the 18 GB/s SDMA baseline).
	// Smaller transfers are latency-bound: their low bandwidth says nothing about
	// contention.
	ContentionGBps     float64
	ContentionMinBytes int64
	// Byte alignment: SDMA transfer sizes that are not a multiple of AlignmentBytes.
	AlignmentBytes int64
	// DefaultBuffsizeMB is HCCL_BUFFSIZE when the run's environment does not set it.
	DefaultBuffsizeMB int
}

// DefaultCheckThresholds are msprof-analyze's rule values (decimal MB, as its rules
// and communication.json use them) and HCCL's default buffer.
var DefaultCheckThresholds = CheckThresholds{SmallSDMABytes: 16_000_000, SmallRDMABytes: 1_000_000, SmallShare: 0.2,
	ContentionGBps: 14.4, ContentionMinBytes: 1_000_000, AlignmentBytes: 512, DefaultBuffsizeMB: 200}

// Check is one check's verdict over the cluster.
type Check struct {
	ID        string // small_packets_sdma, small_packets_rdma, bandwidth_contention, byte_alignment, over_buffsize, rdma_retransmission
	Title     string
	Fired     bool
	Count     int // ops (or transfers) that break the rule
	Total     int // ops (or transfers) the rule looked at
	Threshold string
	Evidence  string // the worst case, findable in the timeline
	Where     CheckRef
}

// Evaluated reports whether the check had anything to examine: a check over no op or
// transfer did not pass, it was not evaluated.
func (c Check) Evaluated() bool { return c.Total > 0 }

// CheckRef locates a check's worst case.
type CheckRef struct {
	Rank, Step int
	Op         string
	StartNs    int64
}

// checkExample is a candidate worst case, kept per rank while its tasks exist.
type checkExample struct {
	ref   CheckRef
	value float64 // what makes it the worst (smallest size, lowest bandwidth, most rounds)
	text  string
	set   bool
}

func (e *checkExample) keep(worse bool, ref CheckRef, value float64, text string) {
	if !e.set || worse {
		*e = checkExample{ref: ref, value: value, text: text, set: true}
	}
}

// rankChecks is what the checks keep of one rank: counts and each check's worst case.
type rankChecks struct {
	sdmaOps, smallSDMA, rdmaOps, smallRDMA int
	smallSDMAEx, smallRDMAEx               checkExample

	contendedBytes, contendedNs int64
	contendedTransfers          int
	sdmaTransfers               int
	contentionEx                checkExample

	misaligned  int
	alignmentEx checkExample

	overBuffer, sizedOps int
	bufferEx             checkExample
}

// rankCheckSamples runs the per-rank part of the checks while the rank's tasks and
// compute intervals are in memory; ops are the rank's OpStats.
func rankCheckSamples(r *profile.Rank, idx rankIndex, ops []OpStat, th CheckThresholds) rankChecks {
	var rc rankChecks
	buffMB := th.DefaultBuffsizeMB
	if v, err := strconv.Atoi(strings.TrimSpace(r.Metadata.Env["HCCL_BUFFSIZE"])); err == nil && v > 0 {
		buffMB = v
	}
	bufBytes := int64(buffMB) << 20
	for _, o := range ops {
		ref := CheckRef{Rank: o.Rank, Step: o.Step, Op: o.Name, StartNs: o.StartNs}
		for _, small := range []struct {
			transport     string
			limit         int64
			ops, smallOps *int
			example       *checkExample
		}{
			{"SDMA", th.SmallSDMABytes, &rc.sdmaOps, &rc.smallSDMA, &rc.smallSDMAEx},
			{"RDMA", th.SmallRDMABytes, &rc.rdmaOps, &rc.smallRDMA, &rc.smallRDMAEx},
		} {
			t, ok := o.Transports[small.transport]
			if !ok || t.Bytes <= 0 {
				continue
			}
			*small.ops++
			if t.Bytes < small.limit {
				*small.smallOps++
				small.example.keep(float64(t.Bytes) < small.example.value, ref, float64(t.Bytes),
					fmt.Sprintf("%s moves %.3f MB over %s", o.Name, float64(t.Bytes)/1e6, small.transport))
			}
		}
		if o.Bytes > 0 {
			rc.sizedOps++
			if o.Bytes > bufBytes {
				rc.overBuffer++
				rounds := float64((o.Bytes + bufBytes - 1) / bufBytes)
				rc.bufferEx.keep(rounds > rc.bufferEx.value, ref, rounds,
					fmt.Sprintf("%s carries %.1f MiB against HCCL_BUFFSIZE=%d: %.0f rounds", o.Name, float64(o.Bytes)/(1<<20), buffMB, rounds))
			}
		}
	}
	if len(r.CommTasks) == 0 {
		return rc
	}
	steps, byRow := idx.steps, idx.byRow
	computeMaxNs := maxDur(r.Compute)
	for i, op := range r.CommOps {
		ref := CheckRef{Rank: r.Rank, Step: steps[i], Op: op.Name}
		for _, t := range tasksOf(byRow, op) {
			if t.TransportType != "SDMA" || !isDataTask(&t) || t.LinkType == "ON_CHIP" || t.SizeBytes <= 0 {
				continue
			}
			rc.sdmaTransfers++
			tref := ref
			tref.StartNs = t.StartNs
			if th.AlignmentBytes > 0 && t.SizeBytes%th.AlignmentBytes != 0 {
				rc.misaligned++
				rc.alignmentEx.keep(false, tref, float64(t.SizeBytes),
					fmt.Sprintf("%s copies %d bytes (%d mod %d)", op.Name, t.SizeBytes, t.SizeBytes%th.AlignmentBytes, th.AlignmentBytes))
			}
			if t.SizeBytes >= th.ContentionMinBytes && t.DurNs() > 0 && overlapsAny(r.Compute, computeMaxNs, t.Interval) {
				rc.contendedTransfers++
				rc.contendedBytes += t.SizeBytes
				rc.contendedNs += t.DurNs()
				bw := units.GBps(t.SizeBytes, t.DurNs())
				rc.contentionEx.keep(bw < rc.contentionEx.value, tref, bw,
					fmt.Sprintf("%s: %.1f MB in %.1f µs (%.2f GB/s) while compute runs", op.Name, float64(t.SizeBytes)/1e6, float64(t.DurNs())/1e3, bw))
			}
		}
	}
	return rc
}

// overlapsAny reports whether iv overlaps any of the start-sorted intervals, none of
// which is longer than maxDurNs.
func overlapsAny(sorted []profile.Interval, maxDurNs int64, iv profile.Interval) bool {
	// Intervals starting at or after iv's end cannot overlap; of those before, only
	// the ones starting within maxDurNs of iv's start can reach into it.
	j := sort.Search(len(sorted), func(i int) bool { return sorted[i].StartNs >= iv.EndNs })
	for i := j - 1; i >= 0 && sorted[i].StartNs >= iv.StartNs-maxDurNs; i-- {
		if sorted[i].EndNs > iv.StartNs {
			return true
		}
	}
	return false
}

// evaluateChecks joins the ranks' samples into the checks' verdicts.
func evaluateChecks(per []rankChecks, retrans []Retransmission, th CheckThresholds, retransmissionNs int64) []Check {
	var sum rankChecks
	worst := func(dst *checkExample, src checkExample, lower bool) {
		if !src.set {
			return
		}
		if !dst.set || (lower && src.value < dst.value) || (!lower && src.value > dst.value) {
			*dst = src
		}
	}
	for _, rc := range per {
		sum.sdmaOps += rc.sdmaOps
		sum.smallSDMA += rc.smallSDMA
		sum.rdmaOps += rc.rdmaOps
		sum.smallRDMA += rc.smallRDMA
		sum.contendedBytes += rc.contendedBytes
		sum.contendedNs += rc.contendedNs
		sum.contendedTransfers += rc.contendedTransfers
		sum.sdmaTransfers += rc.sdmaTransfers
		sum.misaligned += rc.misaligned
		sum.overBuffer += rc.overBuffer
		sum.sizedOps += rc.sizedOps
		worst(&sum.smallSDMAEx, rc.smallSDMAEx, true)
		worst(&sum.smallRDMAEx, rc.smallRDMAEx, true)
		worst(&sum.contentionEx, rc.contentionEx, true)
		worst(&sum.alignmentEx, rc.alignmentEx, false)
		worst(&sum.bufferEx, rc.bufferEx, false)
	}
	share := func(n, d int) float64 {
		if d == 0 {
			return 0
		}
		return float64(n) / float64(d)
	}
	var out []Check
	add := func(c Check, ex checkExample) {
		c.Where = CheckRef{Rank: -1, Step: -1}
		if ex.set {
			c.Where = ex.ref
			c.Evidence = fmt.Sprintf("rank %d step %s: %s", ex.ref.Rank, StepLabel(ex.ref.Step), ex.text)
		}
		out = append(out, c)
	}
	add(Check{ID: "small_packets_sdma", Title: "Small SDMA messages", Count: sum.smallSDMA, Total: sum.sdmaOps,
		Fired:     share(sum.smallSDMA, sum.sdmaOps) > th.SmallShare,
		Threshold: fmt.Sprintf("ops moving < %.0f MB over SDMA in over %.0f%% of SDMA ops", float64(th.SmallSDMABytes)/1e6, 100*th.SmallShare)}, sum.smallSDMAEx)
	add(Check{ID: "small_packets_rdma", Title: "Small RDMA messages", Count: sum.smallRDMA, Total: sum.rdmaOps,
		Fired:     share(sum.smallRDMA, sum.rdmaOps) > th.SmallShare,
		Threshold: fmt.Sprintf("ops moving < %.0f MB over RDMA in over %.0f%% of RDMA ops", float64(th.SmallRDMABytes)/1e6, 100*th.SmallShare)}, sum.smallRDMAEx)
	contBW := units.GBps(sum.contendedBytes, sum.contendedNs)
	add(Check{ID: "bandwidth_contention", Title: "SDMA bandwidth under compute", Count: sum.contendedTransfers, Total: sum.sdmaTransfers,
		Fired: sum.contendedTransfers > 0 && contBW < th.ContentionGBps,
		Threshold: fmt.Sprintf("SDMA transfers of ≥ %.0f MB overlapped by compute at < %.1f GB/s (here %.2f GB/s over %d transfers; any compute kernel counts, not only MatMul)",
			float64(th.ContentionMinBytes)/1e6, th.ContentionGBps, contBW, sum.contendedTransfers)}, sum.contentionEx)
	add(Check{ID: "byte_alignment", Title: "SDMA sizes not 512-byte aligned", Count: sum.misaligned, Total: sum.sdmaTransfers,
		Fired:     sum.misaligned > 0,
		Threshold: fmt.Sprintf("SDMA transfer sizes not a multiple of %d bytes", th.AlignmentBytes)}, sum.alignmentEx)
	add(Check{ID: "over_buffsize", Title: "Messages larger than HCCL_BUFFSIZE", Count: sum.overBuffer, Total: sum.sizedOps,
		Fired:     sum.overBuffer > 0,
		Threshold: fmt.Sprintf("op size above HCCL_BUFFSIZE (default %d MB): the op runs in ⌈size/buffer⌉ rounds, each paying its latency again", th.DefaultBuffsizeMB)}, sum.bufferEx)
	rt := Check{ID: "rdma_retransmission", Title: "RDMA retransmission", Count: len(retrans), Total: sum.rdmaOps, Fired: len(retrans) > 0,
		Where:     CheckRef{Rank: -1, Step: -1},
		Threshold: fmt.Sprintf("an RDMA transfer longer than the retransmission limit (%s)", units.FormatSeconds(retransmissionNs))}
	if len(retrans) > 0 {
		r := retrans[0]
		rt.Where = CheckRef{Rank: r.Src, Step: r.Step, Op: r.Op}
		rt.Evidence = fmt.Sprintf("%d→%d in %s, step %s: %.3f s", r.Src, r.Dst, r.Op, StepLabel(r.Step), float64(r.TimeNs)/1e9)
	}
	out = append(out, rt)
	return out
}
