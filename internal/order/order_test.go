package order

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

type item struct {
	key, pos int
	pad      [12]int64
}

// Stable agrees with slices.SortStableFunc on inputs with many ties, sorted, reversed
// and random, and empty or single inputs.
func TestStableAgreesWithTheStandardSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		for _, shape := range []string{"random", "sorted", "reversed", "ties"} {
			xs := make([]item, n)
			for i := range xs {
				switch shape {
				case "random":
					xs[i].key = rng.IntN(1000)
				case "sorted":
					xs[i].key = i
				case "reversed":
					xs[i].key = n - i
				case "ties":
					xs[i].key = rng.IntN(3)
				}
				xs[i].pos = i
			}
			want := slices.Clone(xs)
			slices.SortStableFunc(want, func(a, b item) int { return cmp.Compare(a.key, b.key) })
			Stable(xs, func(a, b *item) int { return cmp.Compare(a.key, b.key) })
			assert.Equal(t, want, xs, "%d %s", n, shape)
		}
	}
}

func BenchmarkStable(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]item, 3000)
	for i := range src {
		src[i].key = rng.IntN(1 << 20)
	}
	xs := make([]item, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(xs, src)
		Stable(xs, func(a, b *item) int { return cmp.Compare(a.key, b.key) })
	}
}

func BenchmarkSortStableFunc(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]item, 3000)
	for i := range src {
		src[i].key = rng.IntN(1 << 20)
	}
	xs := make([]item, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(xs, src)
		slices.SortStableFunc(xs, func(a, b item) int { return cmp.Compare(a.key, b.key) })
	}
}
