package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	mstats "github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"

	"github.com/hcclprof/hcclprof/internal/stats"
)

// MannWhitney is the result of a two-sided Mann-Whitney U test of two samples.
type MannWhitney struct {
	// U is the statistic of the first sample: the number of pairs (x, y) with x > y,
	// ties counting one half. U of the second sample is n1·n2 − U.
	U float64
	// P is the two-sided p-value, benchstat's; 1 when the test cannot be made (a
	// sample empty, every value equal).
	P float64
	// Method says how P was found: "exact" (the distribution of U, with ties as
	// they are), "normal" (the normal approximation with tie and continuity
	// correction, for larger samples) or "none" (no test possible).
	Method string
}

// mannWhitneyU tests whether x and y come from the same distribution, against the
// two-sided alternative that one is stochastically larger, as benchstat does: P is
// golang.org/x/perf/benchmath's (AssumeNothing.Compare, go-moremath's U test), exact
// up to mstats.MannWhitneyExactLimit values a sample without ties and
// mstats.MannWhitneyTiesExactLimit with ties, else the normal approximation.
func mannWhitneyU(x, y []float64) MannWhitney {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MannWhitney{P: 1, Method: "none"}
	}
	th := benchmath.DefaultThresholds
	// NewSample sorts its values in place: give it copies.
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(x), &th), benchmath.NewSample(slices.Clone(y), &th))
	res := MannWhitney{P: c.P}
	var ties bool
	res.U, ties = uStatistic(x, y)
	switch {
	case allEqual(x, y):
		res.P, res.Method = 1, "none" // no evidence either way
	case !ties && n1 <= mstats.MannWhitneyExactLimit && n2 <= mstats.MannWhitneyExactLimit,
		ties && n1 <= mstats.MannWhitneyTiesExactLimit && n2 <= mstats.MannWhitneyTiesExactLimit:
		res.Method = "exact"
	default:
		res.Method = "normal"
	}
	return res
}

// uStatistic is U of x (pairs x > y, ties one half) and whether any two of the
// values are equal.
func uStatistic(x, y []float64) (u float64, ties bool) {
	all := append(slices.Clone(x), y...)
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			ties = true
			break
		}
	}
	ys := slices.Sorted(slices.Values(y))
	for _, v := range x {
		below, _ := slices.BinarySearch(ys, v) // values of y under v
		atOrBelow := below
		for atOrBelow < len(ys) && ys[atOrBelow] == v {
			atOrBelow++
		}
		u += float64(below) + float64(atOrBelow-below)/2
	}
	return u, ties
}

func allEqual(x, y []float64) bool {
	for _, v := range append(slices.Clone(x), y...) {
		if v != x[0] {
			return false
		}
	}
	return true
}

// Interval is a confidence interval.
type Interval struct {
	Lo, Hi float64
}

// Contains reports whether x lies in the interval.
func (iv Interval) Contains(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// bootstrapMeanDiff is the percentile bootstrap interval, at confidence 1−alpha, of
// mean(y) − mean(x): each of iters rounds resamples both samples with replacement.
// The same seed gives the same interval.
func bootstrapMeanDiff(x, y []float64, iters int, alpha float64, seed uint64) Interval {
	if len(x) == 0 || len(y) == 0 || iters <= 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	diffs := make([]float64, iters)
	resampledMean := func(s []float64) float64 {
		var sum float64
		for range s {
			sum += s[rng.IntN(len(s))]
		}
		return sum / float64(len(s))
	}
	for i := range diffs {
		diffs[i] = resampledMean(y) - resampledMean(x)
	}
	sort.Float64s(diffs)
	return Interval{
		Lo: stats.QuantileSorted(diffs, alpha/2),
		Hi: stats.QuantileSorted(diffs, 1-alpha/2),
	}
}

// Dist summarises one sample.
type Dist struct {
	N      int
	Mean   float64
	Median float64
	StdDev float64
	Min    float64
	Max    float64
}

// Describe summarises xs.
func Describe(xs []float64) Dist {
	d := Dist{N: len(xs)}
	if len(xs) == 0 {
		return d
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	d.Mean = stat.Mean(s, nil)
	d.Median = stats.QuantileSorted(s, 0.5)
	if len(s) > 1 {
		d.StdDev = stat.StdDev(s, nil)
	}
	d.Min, d.Max = s[0], s[len(s)-1]
	return d
}
