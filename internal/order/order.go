// Package order sorts slices of large structs stably without swapping them around.
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
	// Apply the permutation in place, a cycle at a time: xs[i] takes xs[idx[i]].
	// Visited positions are marked by idx[i] = i.
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
