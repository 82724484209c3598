package stats

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQuantileIsNumpyLinear: each want is numpy.quantile(in, q) (method="linear",
// numpy's default; DuckDB's quantile_cont agrees), worked out by hand from its
// formula h = (n−1)·q, s[⌊h⌋] + (h−⌊h⌋)·(s[⌊h⌋+1] − s[⌊h⌋]). The rows marked
// "differs" are where the conventions the code used before gave another figure.
func TestQuantileIsNumpyLinear(t *testing.T) {
	ten := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		name string
		in   []float64
		q    float64
		want float64
	}{
		{"empty", nil, 0.5, 0},
		{"one value", []float64{7}, 0.95, 7},
		{"q 0 is the minimum", ten, 0, 10},
		{"q 1 is the maximum", ten, 1, 100},
		// h = 9·0.95 = 8.55: 90 + 0.55·10. Nearest rank gave 100, gonum's LinInterp 95.
		{"p95 of ten (differs)", ten, 0.95, 95.5},
		// h = 19·0.95 = 18.05: 19 + 0.05·1. Nearest rank and LinInterp both gave 19.
		{"p95 of 1..20 (differs)", twenty, 0.95, 19.05},
		// h = 9·0.5 = 4.5: the mean of 50 and 60.
		{"p50 of ten, an even count", ten, 0.5, 55},
		// h = 3·0.25 = 0.75: 10 + 0.75·10. Nearest rank gave 10.
		{"p25 of four (differs)", []float64{40, 10, 30, 20}, 0.25, 17.5},
		// h = 3·0.75 = 2.25: 30 + 0.25·10. Nearest rank gave 30.
		{"p75 of four (differs)", []float64{10, 20, 30, 40}, 0.75, 32.5},
		// h = 3·0.9 = 2.7: 30 + 0.7·10. Nearest rank gave 40.
		{"p90 of four (differs)", []float64{10, 20, 30, 40}, 0.9, 37},
		// h = 4·0.5 = 2: the middle value. LinInterp gave 2.5.
		{"p50 of five (differs)", []float64{5, 4, 3, 2, 1}, 0.5, 3},
		// h = 5·0.95 = 4.75: 157.3 + 0.75·(158.1 − 157.3).
		{"p95 of six", []float64{157.0, 156.9, 157.2, 157.3, 158.1, 157.1}, 0.95, 157.9},
		{"ties", []float64{1, 2, 2, 2, 9}, 0.5, 2},
	} {
		in := slices.Clone(tc.in)
		assert.InDelta(t, tc.want, Quantile(tc.in, tc.q), 1e-12, tc.name)
		assert.Equal(t, in, tc.in, "%s: Quantile leaves its argument as it is", tc.name)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{1, 1, 5, 9}, 3}} {
		in := slices.Clone(tc.in)
		assert.Equal(t, tc.want, Median(tc.in), "%v", tc.in)
		assert.Equal(t, in, tc.in, "Median leaves its argument unsorted")
	}
}

// TestMedianIsQuantileHalf: one convention, so the median of an even count is what
// Quantile(0.5) gives, on random lists.
func TestMedianIsQuantileHalf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		s := make([]float64, n)
		for i := range s {
			s[i] = rng.Float64() * 100
		}
		assert.Equal(t, Quantile(s, 0.5), Median(s), "n %d", n)
	}
}

func TestMedianMAD(t *testing.T) {
	m, mad := MedianMAD([]float64{1, 2, 3, 4, 100})
	assert.Equal(t, 3.0, m)
	assert.Equal(t, 1.0, mad)
	m, mad = MedianMAD([]float64{1, 2, 4, 8})
	assert.Equal(t, 3.0, m, "the mean of the two middle values")
	assert.Equal(t, 1.5, mad, "deviations 2 1 1 5: median 1.5")
	m, mad = MedianMAD(nil)
	assert.Zero(t, m+mad)
}

// TestMedianCountedIsMedianOfTheRepeats: on random bins, MedianCounted equals Median
// of the list with every value written out Count times.
func TestMedianCountedIsMedianOfTheRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 500; trial++ {
		var bins []Counted
		var flat []float64
		for range rng.IntN(6) {
			b := Counted{Value: float64(rng.IntN(20)), Count: int64(rng.IntN(5)) - 1}
			bins = append(bins, b)
			for range b.Count {
				flat = append(flat, b.Value)
			}
		}
		assert.Equal(t, Median(flat), MedianCounted(bins), "%v", bins)
	}
	assert.Equal(t, 2.5, MedianCounted([]Counted{{Value: 3, Count: 1}, {Value: 2, Count: 1}}))
	assert.Equal(t, 7.0, MedianCounted([]Counted{{Value: 7, Count: 1_000_000_000}, {Value: 1, Count: 3}}))
}
