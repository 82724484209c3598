package jsonx

import "unsafe"

// slab hands out runs of Ts from chunks that it keeps when reset: the JSON tree of a
// summary file is thousands of small nodes and member lists, and a cluster reads a few
// such files per rank. Reset, the chunks serve the next file instead of the collector.
type slab[T any] struct {
	chunks [][]T
	cur    int // the chunk being filled
	used   int // elements of it handed out
	min    int // the size of a new chunk (larger runs get their own)
}

// alloc returns n zeroed Ts, n ≥ 1, valid until reset.
func (s *slab[T]) alloc(n int) []T {
	for s.cur < len(s.chunks) {
		c := s.chunks[s.cur]
		if s.used+n <= len(c) {
			out := c[s.used : s.used+n : s.used+n]
			s.used += n
			return out
		}
		s.cur++
		s.used = 0
	}
	c := make([]T, max(s.min, n))
	s.chunks = append(s.chunks, c)
	s.used = n
	return c[:n:n]
}

// reset zeroes what was handed out (so that no old pointer stays reachable) and makes
// the chunks free for reuse.
func (s *slab[T]) reset() {
	for i := 0; i <= s.cur && i < len(s.chunks); i++ {
		clear(s.chunks[i])
	}
	s.cur, s.used = 0, 0
}

// bytes is the memory the slab keeps.
func (s *slab[T]) bytes() int {
	var t T
	n := 0
	for _, c := range s.chunks {
		n += len(c)
	}
	return n * int(unsafe.Sizeof(t))
}

// unstack moves what was stacked from base (an object's members, an array's
// elements) into the slab, at its exact length, and pops it off the stack. A run over
// 256 gets its own allocation rather than a slab chunk.
func unstack[T any](stack *[]T, base int, s *slab[T]) []T {
	run := (*stack)[base:]
	if len(run) == 0 {
		return nil
	}
	var out []T
	if len(run) > 256 {
		out = make([]T, len(run))
	} else {
		out = s.alloc(len(run))
	}
	copy(out, run)
	clear(run)
	*stack = (*stack)[:base]
	return out
}
