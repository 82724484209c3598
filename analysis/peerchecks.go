package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// CheckRef locates a check's worst case.
type CheckRef struct {
	Rank, Step int
	Op         string
	StartNs    int64
}

// Limits are where the measurements cut: the time past which an RDMA transfer is a
// retransmission (left out of the links' bandwidth), and the sizes the per-rank check
// samples count against while the rank's tasks are in memory (msprof-analyze's
// communication checks, docs/diagnosis.md §6, docs/costmodel.md §4, plus the
// HCCL_BUFFSIZE check it never makes). Whether a check fires on the counts is the
// advisor's decision.
type Limits struct {
	// A transfer longer than RetransmissionNs is an RDMA retransmission (packet loss).
	RetransmissionNs int64
	// Small packets: an op's SDMA traffic under SmallSDMABytes or its RDMA traffic
	// under SmallRDMABytes.
	SmallSDMABytes, SmallRDMABytes int64
	// Bandwidth contention: SDMA transfers of at least ContentionMinBytes that run
	// while compute runs. Smaller transfers are latency-bound: their low bandwidth
	// says nothing about contention.
	ContentionMinBytes int64
	// Byte alignment: SDMA transfer sizes that are not a multiple of AlignmentBytes.
	AlignmentBytes int64
	// DefaultBuffsizeMB is HCCL_BUFFSIZE when the run's environment does not set it,
	// in MB as HCCL reads them (MiB); BuffsizeBytes is the size in effect.
	DefaultBuffsizeMB int
}

// DefaultLimits are msprof-analyze's (4 s retransmission; its check rules' sizes in
// decimal MB, as its rules and communication.json use them) and HCCL's default buffer.
var DefaultLimits = Limits{RetransmissionNs: 4_000_000_000, SmallSDMABytes: 16_000_000, SmallRDMABytes: 1_000_000,
	ContentionMinBytes: 1_000_000, AlignmentBytes: 512, DefaultBuffsizeMB: 200}

// CheckExample is a candidate worst case, kept per rank while its tasks exist.
type CheckExample struct {
	Ref   CheckRef
	Value float64 // what makes it the worst (smallest size, lowest bandwidth, most rounds)
	Text  string
	Set   bool
}

// keep makes the case the example when it is the first or a worse one; text is
// written only then (formatting every candidate's was a tenth of a rank's analysis).
func (e *CheckExample) keep(worse bool, ref CheckRef, value float64, text func() string) {
	if !e.Set || worse {
		*e = CheckExample{Ref: ref, Value: value, Text: text(), Set: true}
	}
}

// CheckSamples is what the checks keep of one rank, or of the cluster once merged
// (mergeCheckSamples): counts and each check's worst case.
type CheckSamples struct {
	SDMAOps, SmallSDMA, RDMAOps, SmallRDMA int
	SmallSDMAEx, SmallRDMAEx               CheckExample
	// SmallSDMANs and SmallRDMANs are what the small ops cost: the sum of the time
	// they moved data (OpStat.MovingNs; their elapse less their wait where that is
	// unknown), which for a small message is mostly its fixed latency. They are
	// summed over the cluster's ops (smallMessageCosts), not per rank: without tasks,
	// an op's moving time is settled only once the other ranks are read
	// (inServerLevel). Not the
	// elapse: a pipeline's batchSendRecv of a few MB waits for the other stage for
	// most of its elapse, which the profiler does not count as wait. Counting ops alone, as msprof-analyze's rule does, flags a job whose only small
	// ops are a few scalar AllReduces of microseconds as much as one that moves its
	// gradients in small buckets.
	SmallSDMANs, SmallRDMANs int64

	ContendedBytes, ContendedNs int64
	ContendedTransfers          int
	// SDMATransfers are the SDMA copies the alignment check examined (task rows, or
	// the profiler's Size Distribution); TimedSDMATransfers those of task rows, the
	// only ones whose overlap with compute is known (the contention check's total).
	SDMATransfers, TimedSDMATransfers int
	ContentionEx                      CheckExample

	Misaligned  int
	AlignmentEx CheckExample

	OverBuffer, SizedOps int
	BufferEx             CheckExample
}

// rankCheckSamples runs the per-rank part of the checks while the rank's tasks and
// compute intervals are in memory; ops are the rank's OpStats (those of skipSteps
// left out already), and the tasks of ops in skipSteps are left out too.
func rankCheckSamples(r *profile.Rank, idx rankIndex, ops []OpStat, th Limits, skipSteps map[int]bool) CheckSamples {
	var rc CheckSamples
	bufBytes := th.BuffsizeBytes(r.Metadata.Env)
	buffMB := bufBytes >> 20
	for _, o := range ops {
		ref := CheckRef{Rank: o.Rank, Step: o.Step, Op: o.Name, StartNs: o.StartNs}
		for _, small := range []struct {
			transport     string
			limit         int64
			ops, smallOps *int
			example       *CheckExample
		}{
			{"SDMA", th.SmallSDMABytes, &rc.SDMAOps, &rc.SmallSDMA, &rc.SmallSDMAEx},
			{"RDMA", th.SmallRDMABytes, &rc.RDMAOps, &rc.SmallRDMA, &rc.SmallRDMAEx},
		} {
			t, ok := o.Transports.moved(small.transport)
			if !ok {
				continue
			}
			*small.ops++
			if t.Bytes < small.limit {
				*small.smallOps++
				small.example.keep(float64(t.Bytes) < small.example.Value, ref, float64(t.Bytes),
					func() string {
						if t.Bytes < 1000 { // a scalar: 0.000 MB says nothing
							return fmt.Sprintf("%s moves %d bytes over %s", o.Name, t.Bytes, small.transport)
						}
						return fmt.Sprintf("%s moves %.3f MB over %s", o.Name, float64(t.Bytes)/1e6, small.transport)
					})
			}
		}
		// HCCL_BUFFSIZE's rounds are HCCL's: NCCL pipelines an op through its buffer
		// in chunks, so an NCCL run's ops are not checked against it.
		if o.Bytes > 0 && !r.NCCL {
			round, known := BufferRoundBytes(o.Type, o.AlgType, bufBytes, opGroupRanks(r, o))
			if !known {
				continue // a pipelined AllReduce of a group of unknown size: no claim
			}
			rc.SizedOps++
			if o.Bytes > round {
				rc.OverBuffer++
				rounds := float64((o.Bytes + round - 1) / round)
				rc.BufferEx.keep(rounds > rc.BufferEx.Value, ref, rounds,
					func() string {
						return fmt.Sprintf("%s carries %.1f MiB against HCCL_BUFFSIZE=%d: %.0f rounds", o.Name, float64(o.Bytes)/(1<<20), buffMB, rounds)
					})
			}
		}
	}
	if len(r.CommTasks) == 0 {
		binAlignment(&rc, ops, th)
		return rc
	}
	steps := idx.steps
	computeMaxNs := maxDur(r.Compute)
	for i, op := range r.CommOps {
		if skipSteps[steps[i]] {
			continue // left out of every figure, the checks too (ops already are)
		}
		ref := CheckRef{Rank: r.Rank, Step: steps[i], Op: op.Name}
		for _, k := range idx.tasksOf(op) {
			t := idx.tasks[k]
			if t.TransportType != "SDMA" || !isDataTask(&t) || t.LinkType == "ON_CHIP" || t.SizeBytes <= 0 {
				continue
			}
			rc.SDMATransfers++
			rc.TimedSDMATransfers++
			tref := ref
			tref.StartNs = t.StartNs
			if th.AlignmentBytes > 0 && t.SizeBytes%th.AlignmentBytes != 0 {
				rc.Misaligned++
				rc.AlignmentEx.keep(false, tref, float64(t.SizeBytes),
					func() string {
						return fmt.Sprintf("%s copies %d bytes (%d mod %d)", op.Name, t.SizeBytes, t.SizeBytes%th.AlignmentBytes, th.AlignmentBytes)
					})
			}
			if t.SizeBytes >= th.ContentionMinBytes && t.DurNs() > 0 && overlapsAny(r.Compute, computeMaxNs, t.Interval) {
				rc.ContendedTransfers++
				rc.ContendedBytes += t.SizeBytes
				rc.ContendedNs += t.DurNs()
				bw := units.GBps(t.SizeBytes, t.DurNs())
				rc.ContentionEx.keep(bw < rc.ContentionEx.Value, tref, bw,
					func() string {
						return fmt.Sprintf("%s: %.1f MB in %.1f µs (%.2f GB/s) while compute runs", op.Name, float64(t.SizeBytes)/1e6, float64(t.DurNs())/1e3, bw)
					})
			}
		}
	}
	return rc
}

// binAlignment runs the byte-alignment check of a rank without HCCL task rows on
// the profiler's Size Distribution: its bins are the copies' exact sizes (MB written
// to the byte: "1.937312"), so the count is the tasks' (8 of 112 on the real Level1
// run either way). The SDMA links' bins are read (HCCS, PCIE, SIO), the SDMA sum only
// when none has any, as for calibration (sizeDistributionSamples).
func binAlignment(rc *CheckSamples, ops []OpStat, th Limits) {
	for _, o := range ops {
		transports := sdmaLinks
		if readSDMASumBins(func(name string) bool { return len(o.Transports.Of(name).Sizes) > 0 }) {
			transports = []string{"SDMA"}
		}
		ref := CheckRef{Rank: o.Rank, Step: o.Step, Op: o.Name, StartNs: o.StartNs}
		for _, name := range transports {
			for _, b := range o.Transports.Of(name).Sizes {
				if b.Count <= 0 || b.SizeBytes <= 0 {
					continue
				}
				rc.SDMATransfers += int(b.Count)
				if th.AlignmentBytes > 0 && b.SizeBytes%th.AlignmentBytes != 0 {
					rc.Misaligned += int(b.Count)
					rc.AlignmentEx.keep(false, ref, float64(b.SizeBytes), func() string {
						return fmt.Sprintf("%s copies %d bytes (%d mod %d; %d such copies, the profiler's Size Distribution)",
							o.Name, b.SizeBytes, b.SizeBytes%th.AlignmentBytes, th.AlignmentBytes, b.Count)
					})
				}
			}
		}
	}
}

// smallMessageCosts sums what the ops under the checks' small-message sizes cost, per
// transport (CheckSamples.SmallSDMANs, SmallRDMANs): ops are the cluster's, their
// moving times final.
func smallMessageCosts(ops []OpStat, th Limits) (sdmaNs, rdmaNs int64) {
	for _, o := range ops {
		if t, ok := o.Transports.moved("SDMA"); ok && t.Bytes < th.SmallSDMABytes {
			sdmaNs += smallMessageCostNs(o)
		}
		if t, ok := o.Transports.moved("RDMA"); ok && t.Bytes < th.SmallRDMABytes {
			rdmaNs += smallMessageCostNs(o)
		}
	}
	return sdmaNs, rdmaNs
}

// smallMessageCostNs is what a small op costs.
func smallMessageCostNs(o OpStat) int64 {
	if o.MovingSource != "" {
		return o.MovingNs
	}
	return max(o.ElapseNs-o.WaitNs, 0)
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

// mergeCheckSamples joins the ranks' samples into the cluster's: the counts summed,
// the worst case of each check kept.
func mergeCheckSamples(per []CheckSamples) CheckSamples {
	var sum CheckSamples
	worst := func(dst *CheckExample, src CheckExample, lower bool) {
		if !src.Set {
			return
		}
		if !dst.Set || (lower && src.Value < dst.Value) || (!lower && src.Value > dst.Value) {
			*dst = src
		}
	}
	for _, rc := range per {
		sum.SDMAOps += rc.SDMAOps
		sum.SmallSDMA += rc.SmallSDMA
		sum.RDMAOps += rc.RDMAOps
		sum.SmallRDMA += rc.SmallRDMA
		sum.ContendedBytes += rc.ContendedBytes
		sum.ContendedNs += rc.ContendedNs
		sum.ContendedTransfers += rc.ContendedTransfers
		sum.SDMATransfers += rc.SDMATransfers
		sum.TimedSDMATransfers += rc.TimedSDMATransfers
		sum.Misaligned += rc.Misaligned
		sum.OverBuffer += rc.OverBuffer
		sum.SizedOps += rc.SizedOps
		worst(&sum.SmallSDMAEx, rc.SmallSDMAEx, true)
		worst(&sum.SmallRDMAEx, rc.SmallRDMAEx, true)
		worst(&sum.ContentionEx, rc.ContentionEx, true)
		worst(&sum.AlignmentEx, rc.AlignmentEx, false)
		worst(&sum.BufferEx, rc.BufferEx, false)
	}
	return sum
}

// BufferRoundBytes is how much of an op one HCCL_BUFFSIZE round carries: the buffer,
// except for an AllReduce HCCL runs with its pipeline executor (alg_type ending in
// PIPELINE: A2 across servers), which loops over (B − 16 KiB) × the group's ranks
// (docs/costmodel.md §3.7). known is false for such an op of a group of unknown size.
func BufferRoundBytes(opType, algType string, bufferBytes int64, groupRanks int) (round int64, known bool) {
	if strings.EqualFold(opType, "allreduce") && strings.HasSuffix(strings.ToUpper(algType), "PIPELINE") {
		if groupRanks < 2 {
			return 0, false
		}
		return (bufferBytes - 16<<10) * int64(groupRanks), true
	}
	return bufferBytes, true
}

// opGroupRanks is the number of ranks of o's group as the rank's metadata names them,
// else as its transfers show (at least), 0 when unknown.
func opGroupRanks(r *profile.Rank, o OpStat) int {
	for _, pg := range r.Metadata.ParallelGroups {
		if pg.OpsKey() == o.Group && pg.GroupSize() > 0 {
			return pg.GroupSize()
		}
	}
	return int(o.PeerRanks)
}
