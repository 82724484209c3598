package compare

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/hcclprof/hcclprof/internal/stats"
)

// MannWhitney is the result of a two-sided Mann-Whitney U test of two samples.
type MannWhitney struct {
	// U is the statistic of the first sample: the number of pairs (x, y) with x > y,
	// ties counting one half. U of the second sample is n1·n2 − U.
	U float64
	// P is the two-sided p-value; 1 when the test cannot be made (a sample empty,
	// every value equal).
	P float64
	// Method says how P was found: "exact" (the permutation distribution of U, for
	// small samples without ties), "normal" (the normal approximation with tie and
	// continuity correction) or "none" (no test possible).
	Method string
}

// exactMaxN bounds the sample sizes for which the exact distribution of U is used:
// scipy's "auto" uses it below 8 per sample; counting it stays cheap well beyond, so
// hcclprof uses it up to 20 per sample (without ties), where the normal
// approximation is still off in the third digit.
const exactMaxN = 20

// MannWhitneyU tests whether x and y come from the same distribution, against the
// two-sided alternative that one is stochastically larger. With ties or samples
// larger than exactMaxN it uses the normal approximation with the tie correction of
// the variance and a continuity correction of ½, as scipy.stats.mannwhitneyu does by
// default; otherwise the exact distribution.
func MannWhitneyU(x, y []float64) MannWhitney {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MannWhitney{P: 1, Method: "none"}
	}
	n := n1 + n2
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Average ranks over ties; Σ(t³ − t) over the tie groups for the variance.
	var r1, tieSum float64
	ties := false
	for i := 0; i < n; {
		j := i
		for j < n && all[j].v == all[i].v {
			j++
		}
		t := float64(j - i)
		if t > 1 {
			ties = true
			tieSum += t*t*t - t
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		i = j
	}
	f1, f2 := float64(n1), float64(n2)
	u1 := r1 - f1*(f1+1)/2
	res := MannWhitney{U: u1}
	if tieSum == float64(n*n*n-n) { // every value equal: no evidence either way
		res.P, res.Method = 1, "none"
		return res
	}
	uMax := math.Max(u1, f1*f2-u1)
	if !ties && n1 <= exactMaxN && n2 <= exactMaxN {
		res.P, res.Method = math.Min(1, 2*exactUpperTail(n1, n2, int(math.Round(uMax)))), "exact"
		return res
	}
	mu := f1 * f2 / 2
	sigma := math.Sqrt(f1 * f2 / 12 * (float64(n+1) - tieSum/float64(n*(n-1))))
	z := (uMax - mu - 0.5) / sigma
	p := 2 * distuv.UnitNormal.Survival(z)
	res.P, res.Method = math.Min(1, math.Max(0, p)), "normal"
	return res
}

// exactUpperTail is P(U ≥ u) under the null hypothesis for samples of n1 and n2
// without ties: the share of the C(n1+n2, n1) arrangements whose U is at least u.
func exactUpperTail(n1, n2, u int) float64 {
	// f(m, k, u), the number of arrangements of m first-sample and k second-sample
	// values with statistic u, by the classic recursion on the largest value:
	// f(m, k, u) = f(m−1, k, u−k) + f(m, k−1, u).
	prev := make([][]float64, n2+1) // prev[k] = distribution for (m−1, k)
	for k := range prev {
		prev[k] = []float64{1} // m = 0: U = 0 in exactly one way
	}
	for m := 1; m <= n1; m++ {
		cur := make([][]float64, n2+1)
		cur[0] = []float64{1} // k = 0: U = 0
		for k := 1; k <= n2; k++ {
			d := make([]float64, m*k+1)
			for v, c := range prev[k] { // the largest value is from the first sample: it beats all k
				d[v+k] += c
			}
			for v, c := range cur[k-1] { // the largest is from the second sample
				d[v] += c
			}
			cur[k] = d
		}
		prev = cur
	}
	dist := prev[n2]
	var total, tail float64
	for v, c := range dist {
		total += c
		if v >= u {
			tail += c
		}
	}
	return tail / total
}

// Interval is a confidence interval.
type Interval struct {
	Lo, Hi float64
}

// Contains reports whether x lies in the interval.
func (iv Interval) Contains(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// BootstrapMeanDiff is the percentile bootstrap interval, at confidence 1−alpha, of
// mean(y) − mean(x): each of iters rounds resamples both samples with replacement.
// The same seed gives the same interval.
func BootstrapMeanDiff(x, y []float64, iters int, alpha float64, seed uint64) Interval {
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
