// Package stats holds the order statistics hcclprof reports and decides on, each
// with one stated convention, so that "the median" is the same figure in every
// package:
//
//   - Median: the middle value, and for an even count the mean of the two middle
//     values;
//   - Quantile: the nearest rank, the smallest value with at least a share q of the
//     values at or below it (for q = 0.5 and an even count, the lower middle value);
//   - UpperMedian: the middle value, the upper of the two middle values for an even
//     count (s[n/2]), which the warm-up finding, the links-per-transport tables, the
//     back-test's median ratio and the micro-batch inference print or decide on;
//   - InterpQuantile: the linear interpolation of the empirical distribution that the
//     collectives' p50 and p95 have always used (gonum's LinInterp);
//   - MAD: the median absolute deviation around the median, both by Median;
//   - MedianCounted: Median of values each repeated a number of times (a
//     histogram's bins), without writing the repeats out.
//
// Functions named ...Sorted take values sorted ascending and do not copy them; the
// others leave their argument as it is. Every function returns 0 for no values.
package stats

import (
	"cmp"
	"math"
	"slices"
)

// Median is the middle value of xs, the mean of the two middle values for an even
// count.
func Median(xs []float64) float64 { return MedianSorted(sorted(xs)) }

// MedianSorted is Median of values sorted ascending.
func MedianSorted(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Quantile is the q-th quantile of xs by nearest rank: the smallest value with at
// least q·n of the n values at or below it (q ≤ 0 gives the minimum).
func Quantile(xs []float64, q float64) float64 { return QuantileSorted(sorted(xs), q) }

// QuantileSorted is Quantile of values sorted ascending.
func QuantileSorted(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// LowerMedianSorted is QuantileSorted(s, 0.5): the middle value, the lower of the
// two middle values for an even count. The robust outlier tests (slow ranks, links
// and servers) use it so that the median is always one of the measured values.
func LowerMedianSorted(s []float64) float64 { return QuantileSorted(s, 0.5) }

// UpperMedianSorted is the middle of values sorted ascending, the upper of the two
// middle values for an even count. Kept apart from MedianSorted because figures the
// reports print depend on it (moving them to Median changes, for example, the warm-up
// finding's typical step of warmup-outlier-8rank from 53.224 to 53.195 ms).
func UpperMedianSorted(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// InterpQuantileSorted is the q-th quantile of values sorted ascending by linear
// interpolation between the order statistics, the value at cumulative share (i+1)/n
// being s[i] (gonum's stat.LinInterp without weights).
func InterpQuantileSorted(s []float64, q float64) float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	at := q * float64(n)
	for i := range s {
		if c := float64(i + 1); c >= at {
			if i == 0 {
				return s[0]
			}
			t := c - at
			return t*s[i-1] + (1-t)*s[i]
		}
	}
	return s[n-1]
}

// MedianMAD is the lower median of xs (LowerMedianSorted) and the median absolute
// deviation around it, by the same convention.
func MedianMAD(xs []float64) (median, mad float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := sorted(xs)
	median = LowerMedianSorted(s)
	dev := make([]float64, len(s))
	for i, v := range s {
		dev[i] = math.Abs(v - median)
	}
	slices.Sort(dev)
	return median, LowerMedianSorted(dev)
}

// Counted is a value that stands for Count equal values.
type Counted struct {
	Value float64
	Count int64
}

// MedianCounted is Median of the values xs stand for (each Value Count times);
// entries with a count below 1 stand for none. xs is sorted by value in place.
func MedianCounted(xs []Counted) float64 {
	slices.SortFunc(xs, func(a, b Counted) int { return cmp.Compare(a.Value, b.Value) })
	var n int64
	for _, x := range xs {
		n += max(x.Count, 0)
	}
	if n == 0 {
		return 0
	}
	// The values at 0-based positions lo and hi of the written-out list: the middle
	// one, or the two middle ones for an even count.
	lo, hi := (n-1)/2, n/2
	var at int64
	var loValue float64
	for _, x := range xs {
		if x.Count < 1 {
			continue
		}
		next := at + x.Count
		if lo >= at && lo < next {
			loValue = x.Value
		}
		if hi >= at && hi < next {
			return (loValue + x.Value) / 2
		}
		at = next
	}
	return loValue // not reached: hi < n
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}
