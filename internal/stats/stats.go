// Package stats holds the order statistics hcclprof reports and decides on, with one
// convention, so that "the p95" or "the median" is the same figure in every package
// and the same figure a user gets from the exports:
//
//   - Quantile: linear interpolation between the order statistics, "type 7" of
//     Hyndman and Fan: for n values sorted ascending s[0..n-1] and 0 ≤ q ≤ 1, the
//     position h = (n−1)·q and s[⌊h⌋] + (h−⌊h⌋)·(s[⌊h⌋+1] − s[⌊h⌋]). It is numpy's
//     default (numpy.quantile, numpy.percentile with method="linear"), R's default,
//     pandas' and DuckDB's quantile_cont;
//   - Median: Quantile at 0.5, the middle value, and for an even count the mean of
//     the two middle values;
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
// count: Quantile(xs, 0.5).
func Median(xs []float64) float64 { return MedianSorted(sorted(xs)) }

// MedianSorted is Median of values sorted ascending.
func MedianSorted(s []float64) float64 { return QuantileSorted(s, 0.5) }

// Quantile is the q-th quantile of xs (0 ≤ q ≤ 1; outside, the minimum or the
// maximum) by linear interpolation, numpy's default: h = (n−1)·q and the value a
// share h−⌊h⌋ of the way from the ⌊h⌋-th to the next order statistic (0-based).
func Quantile(xs []float64, q float64) float64 { return QuantileSorted(sorted(xs), q) }

// QuantileSorted is Quantile of values sorted ascending.
func QuantileSorted(s []float64, q float64) float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	if !(q > 0) { // q ≤ 0 or NaN
		return s[0]
	}
	if q >= 1 {
		return s[n-1]
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return s[n-1]
	}
	return lerp(s[lo], s[lo+1], h-float64(lo))
}

// lerp is a + t·(b − a) computed as numpy's quantile computes it (from b for
// t ≥ ½), so that results agree with numpy to the last bit.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}

// MedianMAD is the median of xs and the median absolute deviation around it, both
// by Median.
func MedianMAD(xs []float64) (median, mad float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := sorted(xs)
	median = MedianSorted(s)
	dev := make([]float64, len(s))
	for i, v := range s {
		dev[i] = math.Abs(v - median)
	}
	slices.Sort(dev)
	return median, MedianSorted(dev)
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
			if lo == hi {
				return x.Value
			}
			return lerp(loValue, x.Value, 0.5)
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
