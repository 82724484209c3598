// Package order sorts slices of large structs stably without swapping them around
// (Stable, StableByKey), orders names naturally, numbers by value (NaturalLess), and
// compares booleans for sort keys (CompareBool).
package order

import (
	"cmp"
	"slices"
)

// Stable sorts xs by compare, keeping equal elements in their order, as
// slices.SortStableFunc does. It sorts indices and then moves each element once, in
// place: a stable sort of the structs themselves (a communication task is over 100 bytes)
// moved each many times, and was the costliest step of reading a cluster's ranks.
// Input that is already in order is left as it is after one pass.
func Stable[T any](xs []T, compare func(a, b *T) int) {
	n := len(xs)
	sorted := true
	for i := 1; i < n; i++ {
		if compare(&xs[i-1], &xs[i]) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	// Ties broken by position make the unstable (and faster) sort stable.
	slices.SortFunc(idx, func(a, b int32) int {
		if c := compare(&xs[a], &xs[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	permute(xs, idx)
}

// permute applies a permutation in place, a cycle at a time: xs[i] takes xs[idx[i]].
// Visited positions are marked by idx[i] = i.
func permute[T any](xs []T, idx []int32) {
	for i := range idx {
		if idx[i] == int32(i) {
			continue
		}
		first := xs[i]
		j := i
		for {
			k := int(idx[j])
			idx[j] = int32(j)
			if k == i {
				xs[j] = first
				break
			}
			xs[j] = xs[k]
			j = k
		}
	}
}

// StableByKey sorts xs by the int64 key of each element, keeping equal keys in their
// order. The keys are read once into a compact array, which is sorted by merging its
// ascending runs: a trace lists each row's events in order, so a rank's communication
// tasks are a few sorted runs (one per plane), merged in a few passes where a
// comparison sort makes log2(n) of them.
func StableByKey[T any](xs []T, key func(*T) int64) {
	n := len(xs)
	sorted := true
	for i := 1; i < n; i++ {
		if key(&xs[i-1]) > key(&xs[i]) {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	keys := make([]keyed, n)
	for i := range xs {
		keys[i] = keyed{key: key(&xs[i]), at: int32(i)}
	}
	keys = mergeRuns(keys)
	idx := make([]int32, n)
	for i, k := range keys {
		idx[i] = k.at
	}
	permute(xs, idx)
}

type keyed struct {
	key int64
	at  int32
}

// mergeRuns sorts keys stably by merging adjacent ascending runs, pass after pass,
// and returns the sorted slice (keys or a buffer of the same length).
func mergeRuns(keys []keyed) []keyed {
	less := func(a, b keyed) bool { return a.key < b.key || a.key == b.key && a.at < b.at }
	var bounds []int // the start of each run, then len(keys)
	for i := range keys {
		if i == 0 || less(keys[i], keys[i-1]) {
			bounds = append(bounds, i)
		}
	}
	bounds = append(bounds, len(keys))
	buf := make([]keyed, len(keys))
	for len(bounds) > 2 {
		next := bounds[:1]
		for r := 0; r+1 < len(bounds); r += 2 {
			lo, mid := bounds[r], bounds[r+1]
			if r+2 >= len(bounds) { // an odd run out: copied as it is
				copy(buf[lo:mid], keys[lo:mid])
				next = append(next, mid)
				continue
			}
			hi := bounds[r+2]
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if less(keys[j], keys[i]) {
					buf[k] = keys[j]
					j++
				} else {
					buf[k] = keys[i]
					i++
				}
				k++
			}
			k += copy(buf[k:], keys[i:mid])
			copy(buf[k:], keys[j:hi])
			next = append(next, hi)
		}
		bounds = next
		keys, buf = buf, keys
	}
	return keys
}

// CompareBool orders false before true, as cmp.Compare orders numbers: for a key of
// a sort written with cmp.Or (the standard library compares no booleans).
func CompareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
