package advisor

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/hcclprof/hcclprof/internal/stats"
)

// Dixon's test for one low outlier, as msprof-analyze's slow_rank recipe uses it for
// up to 100 ranks (3σ beyond): the statistic compares the gap between the smallest
// value and its neighbour with the sample's range, in the variant Dixon (1950)
// recommends for the sample size (r10 up to 7 values, r11 up to 10, r21 up to 13,
// r22 beyond), against the one-sided 99.5% critical value.
//
// The critical values are not copied from a table: they are computed once per sample
// size by simulation from normal samples (a fixed seed, so every run agrees), which
// covers every n up to 100; dixon_test.go checks them against the published r10
// values.

const (
	dixonMaxN       = 100
	dixonConfidence = 0.995
	dixonReps       = 40000
)

// dixonStatistic is the statistic for the smallest value of sorted (ascending).
func dixonStatistic(sorted []float64) float64 {
	n := len(sorted)
	x := sorted
	var num, den float64
	switch {
	case n < 3:
		return 0
	case n <= 7:
		num, den = x[1]-x[0], x[n-1]-x[0]
	case n <= 10:
		num, den = x[1]-x[0], x[n-2]-x[0]
	case n <= 13:
		num, den = x[2]-x[0], x[n-2]-x[0]
	default:
		num, den = x[2]-x[0], x[n-3]-x[0]
	}
	if den <= 0 {
		return 0
	}
	return num / den
}

var dixonCritical = struct {
	sync.Mutex
	byN map[int]float64
}{byN: map[int]float64{}}

// dixonCriticalValue is the one-sided 99.5% critical value of dixonStatistic for n
// normal values.
func dixonCriticalValue(n int) float64 {
	dixonCritical.Lock()
	defer dixonCritical.Unlock()
	if v, ok := dixonCritical.byN[n]; ok {
		return v
	}
	rng := rand.New(rand.NewPCG(uint64(n), 0x48434c)) // seeded by n: the same value in every run
	draws := make([]float64, dixonReps)
	sample := make([]float64, n)
	for i := range draws {
		for j := range sample {
			sample[j] = rng.NormFloat64()
		}
		sort.Float64s(sample)
		draws[i] = dixonStatistic(sample)
	}
	sort.Float64s(draws)
	v := stats.QuantileSorted(draws, dixonConfidence)
	dixonCritical.byN[n] = v
	return v
}

// lowOutlier reports whether the smallest of vals is an outlier, with a score (the
// statistic over its critical value, or the distance below the mean in σ over 3):
// Dixon's test up to 100 values, the 3σ rule beyond.
func lowOutlier(vals []float64) (bool, float64) {
	n := len(vals)
	if n < 3 {
		return false, 0
	}
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	if n <= dixonMaxN {
		crit := dixonCriticalValue(n)
		r := dixonStatistic(s)
		return r > crit, r / crit
	}
	var mean, sq float64
	for _, v := range s {
		mean += v
	}
	mean /= float64(n)
	for _, v := range s {
		sq += (v - mean) * (v - mean)
	}
	sigma := math.Sqrt(sq / float64(n-1))
	if sigma == 0 {
		return false, 0
	}
	k := (mean - s[0]) / sigma
	return k > 3, k / 3
}
