package stats

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/gonum/stat"
)

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

func TestQuantileIsNearestRank(t *testing.T) {
	s := []float64{10, 20, 30, 40}
	for q, want := range map[float64]float64{0: 10, 0.25: 10, 0.26: 20, 0.5: 20, 0.75: 30, 0.9: 40, 1: 40} {
		assert.Equal(t, want, QuantileSorted(s, q), "q %g", q)
	}
	assert.Equal(t, 20.0, LowerMedianSorted(s), "the lower middle value, where Median gives 25")
	assert.Equal(t, 0.0, Quantile(nil, 0.5))
}

// TestConventionsMatchGonum pins the two conventions the code used through gonum:
// Quantile is stat.Empirical and InterpQuantileSorted is stat.LinInterp.
func TestConventionsMatchGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(rng.IntN(50))
		}
		slices.Sort(s)
		for _, q := range []float64{0, 0.05, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 1} {
			assert.Equal(t, stat.Quantile(q, stat.Empirical, s, nil), QuantileSorted(s, q), "n %d q %g", n, q)
			assert.Equal(t, stat.Quantile(q, stat.LinInterp, s, nil), InterpQuantileSorted(s, q), "n %d q %g", n, q)
		}
	}
	assert.Equal(t, 2.5, InterpQuantileSorted([]float64{1, 2, 3, 4, 5}, 0.5), "LinInterp's p50 of five values is not the middle one")
}

func TestMedianMAD(t *testing.T) {
	m, mad := MedianMAD([]float64{1, 2, 3, 4, 100})
	assert.Equal(t, 3.0, m)
	assert.Equal(t, 1.0, mad)
	m, mad = MedianMAD([]float64{1, 2, 4, 8})
	assert.Equal(t, 2.0, m, "the lower median")
	assert.Equal(t, 1.0, mad, "deviations 1 0 2 6: lower median 1")
	m, mad = MedianMAD(nil)
	assert.Zero(t, m+mad)
}

func TestUpperMedian(t *testing.T) {
	assert.Equal(t, 30.0, UpperMedianSorted([]float64{10, 20, 30, 40}), "the upper middle value, where Median gives 25")
	assert.Equal(t, 20.0, UpperMedianSorted([]float64{10, 20, 30}))
	assert.Equal(t, 0.0, UpperMedianSorted(nil))
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
