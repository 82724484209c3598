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

// Stable and StableByKey agree with slices.SortStableFunc on inputs with many ties, sorted, reversed
// and random, and empty or single inputs.
func TestStableAgreesWithTheStandardSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		for _, shape := range []string{"random", "sorted", "reversed", "ties", "runs"} {
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
				case "runs": // five ascending runs with ties across them, as planes' tasks
					xs[i].key = (i%(n/5+1))*2 + rng.IntN(2)
				}
				xs[i].pos = i
			}
			want := slices.Clone(xs)
			slices.SortStableFunc(want, func(a, b item) int { return cmp.Compare(a.key, b.key) })
			byKey := slices.Clone(xs)
			Stable(xs, func(a, b *item) int { return cmp.Compare(a.key, b.key) })
			assert.Equal(t, want, xs, "%d %s", n, shape)
			StableByKey(byKey, func(a *item) int64 { return int64(a.key) })
			assert.Equal(t, want, byKey, "by key: %d %s", n, shape)
		}
	}
}

// randomItems are 3000 items with random keys, the benchmarks' input.
func randomItems() []item {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]item, 3000)
	for i := range src {
		src[i].key = rng.IntN(1 << 20)
	}
	return src
}

func BenchmarkStable(b *testing.B) {
	src := randomItems()
	xs := make([]item, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(xs, src)
		Stable(xs, func(a, b *item) int { return cmp.Compare(a.key, b.key) })
	}
}

func BenchmarkStableByKey(b *testing.B) {
	src := randomItems()
	xs := make([]item, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(xs, src)
		StableByKey(xs, func(a *item) int64 { return int64(a.key) })
	}
}

// BenchmarkStableByKeyRuns sorts what a rank's tasks look like: eight planes' rows,
// each in order.
func BenchmarkStableByKeyRuns(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]item, 3000)
	for p := range 8 {
		t := 0
		for i := p * 375; i < (p+1)*375; i++ {
			t += 1 + rng.IntN(1000)
			src[i].key = t
		}
	}
	xs := make([]item, len(src))
	for _, sorter := range []struct {
		name string
		sort func([]item)
	}{
		{"Stable", func(xs []item) { Stable(xs, func(a, b *item) int { return cmp.Compare(a.key, b.key) }) }},
		{"StableByKey", func(xs []item) { StableByKey(xs, func(a *item) int64 { return int64(a.key) }) }},
	} {
		b.Run(sorter.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(xs, src)
				sorter.sort(xs)
			}
		})
	}
}

func BenchmarkSortStableFunc(b *testing.B) {
	src := randomItems()
	xs := make([]item, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(xs, src)
		slices.SortStableFunc(xs, func(a, b item) int { return cmp.Compare(a.key, b.key) })
	}
}

// NaturalLess compares runs of digits as numbers ("rank2" before "rank10"), a number
// with leading zeros as its value (neither of "rank02" and "rank2" first), the rest
// as bytes.
func TestNaturalLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"rank2", "rank10", true}, {"rank10", "rank2", false}, {"rank02", "rank2", false}, {"rank2", "rank02", false},
		{"a", "b", true}, {"node1/rank3", "node1/rank3x", true}, {"", "a", true}, {"x9y", "x10a", true},
	} {
		assert.Equal(t, c.less, NaturalLess(c.a, c.b), "%q < %q", c.a, c.b)
	}
}

func TestCompareBool(t *testing.T) {
	for _, tc := range []struct {
		a, b bool
		want int
	}{{false, false, 0}, {true, true, 0}, {false, true, -1}, {true, false, 1}} {
		if got := CompareBool(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareBool(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
