package costmodel

import (
	"maps"
	"math"
	"slices"

	"github.com/hcclprof/hcclprof/analysis"
)

// SmallCollectives is a storm of small collectives in the gradient group: many ops
// of a size far below the group's largest. DDP makes at most two small buckets a
// step (its first bucket, 1 MiB by default, and the remainder), so a size repeated
// several times per step that small is not gradient buckets: bucket_cap_mb does not
// touch it, fusing the collectives does.
type SmallCollectives struct {
	Type         string  // the ops' type (allreduce)
	SizesBytes   []int64 // the distinct sizes, ascending
	PerStep      int     // ops per step on one rank
	BytesPerStep int64
	// FirstName and LastName are the first and last of them in one rank's step.
	FirstName, LastName string
	// AfterBuckets: every one is launched after the step's last gradient bucket.
	AfterBuckets bool
	// MeasuredUs is their elapse summed per step (mean over ranks and steps);
	// ExposedUs the part of it not hidden behind compute (at most the group's
	// exposure); FusedUs one op moving BytesPerStep, priced on the fitted line plus
	// the first op's wait for the other ranks.
	MeasuredUs, ExposedUs, FusedUs float64
	// firstWaitUs is the first op's mean wait for the other ranks.
	firstWaitUs float64
}

// stormShare is the largest size, relative to the group's largest op, counted as
// small; stormMinOps the fewest small ops per step that make a storm.
const (
	stormShare  = 16
	stormMinOps = 4
)

// stormSizes returns the sizes of one rank's step that are small collectives: sizes
// at most 1/16 of the step's largest op that occur at least twice, when there are at
// least 4 such ops. nil when there is no storm.
func stormSizes(ops []*analysis.OpStat) map[int64]bool {
	var largest int64
	count := map[int64]int{}
	for _, o := range ops {
		largest = max(largest, o.Bytes)
		count[o.Bytes]++
	}
	small, n := map[int64]bool{}, 0
	for size, c := range count {
		if size*stormShare <= largest && c >= 2 {
			small[size] = true
			n += c
		}
	}
	if n < stormMinOps {
		return nil
	}
	return small
}

// measureStorm fills the storm's measured time from every rank's steps of the group
// and prices its fusion on the fitted line.
func (bk *Bucketing) measureStorm(stepOps [][]*analysis.OpStat, sizes map[int64]bool) {
	s := bk.Storm
	s.SizesBytes = slices.Sorted(maps.Keys(sizes))
	var total, firstWait, n float64
	for _, ops := range stepOps {
		byRank := map[int][]*analysis.OpStat{}
		for _, o := range ops {
			if sizes[o.Bytes] {
				byRank[o.Rank] = append(byRank[o.Rank], o)
			}
		}
		for _, rank := range slices.Sorted(maps.Keys(byRank)) {
			first := byRank[rank][0]
			for _, o := range byRank[rank] {
				total += float64(o.ElapseNs) / 1e3
				if o.StartNs < first.StartNs {
					first = o
				}
			}
			firstWait += float64(first.CrossWaitNs) / 1e3
			n++
		}
	}
	if n == 0 {
		return
	}
	s.MeasuredUs, s.firstWaitUs = total/n, firstWait/n
	s.FusedUs = bk.fusedUs(bk.AlphaUs, bk.BetaUsPerB)
	// What the storm exposes is at most what the group exposes; the rest of the
	// group's exposure is the buckets'.
	s.ExposedUs = math.Min(s.MeasuredUs, bk.GroupExposedUs)
	bk.GroupExposedUs -= s.ExposedUs
}

// fusedUs prices the storm as one op on the line t = rounds·α + n·β, after the
// first op's wait.
func (bk *Bucketing) fusedUs(alphaUs, betaUsPerB float64) float64 {
	s := bk.Storm
	return float64(Rounds(s.BytesPerStep, bk.BufferBytes))*alphaUs + float64(s.BytesPerStep)*betaUsPerB + s.firstWaitUs
}

// fusionSavingUs is the exposed time fusing the storm into one op saves, the op
// priced with α and β (the fit's or its bounds'): the exposed part shrinks in
// proportion to the op's time.
func (bk *Bucketing) fusionSavingUs(alphaUs, betaUsPerB float64) float64 {
	s := bk.Storm
	if s == nil || s.MeasuredUs <= 0 {
		return 0
	}
	return s.ExposedUs * math.Max(1-bk.fusedUs(alphaUs, betaUsPerB)/s.MeasuredUs, 0)
}
