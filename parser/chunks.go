package parser

import "unsafe"

// chunks is an append-only list kept in chunks that are never copied: a trace's
// candidate events grown in one slice were copied at every growth, the old and new
// arrays alive together, and a big trace's peak memory was mostly those copies. Two
// lists join without copying (join), and the chunks of a finished list can be kept
// for the next trace (reset).
type chunks[T any] struct {
	parts [][]T // in order; only the last has room
	spare [][]T // empty chunks kept by reset, used before new ones are made
	n     int
}

// Chunk sizes: the first is small, so that the many small traces of a cluster take
// little; each next one is as large as the list so far (the list doubles, as a slice
// would), up to maxChunkBytes.
const (
	minChunkLen   = 64
	maxChunkBytes = 256 << 10
)

func (c *chunks[T]) add(x T) {
	k := len(c.parts) - 1
	if k < 0 || len(c.parts[k]) == cap(c.parts[k]) {
		c.grow()
		k++
	}
	c.parts[k] = append(c.parts[k], x)
	c.n++
}

func (c *chunks[T]) grow() {
	if k := len(c.spare); k > 0 {
		c.parts = append(c.parts, c.spare[k-1])
		c.spare[k-1] = nil
		c.spare = c.spare[:k-1]
		return
	}
	var t T
	size := max(1, int(unsafe.Sizeof(t)))
	n := min(max(minChunkLen, c.n), max(minChunkLen, maxChunkBytes/size))
	c.parts = append(c.parts, make([]T, 0, n))
}

// len is the number of elements added.
func (c *chunks[T]) len() int { return c.n }

// join appends o's elements after c's, taking o's chunks (o is left empty). c's last
// chunk stays partly filled; what is added after goes to o's last.
func (c *chunks[T]) join(o *chunks[T]) {
	for _, p := range o.parts {
		if len(p) > 0 {
			c.parts = append(c.parts, p)
		}
	}
	c.n += o.n
	o.parts, o.n = nil, 0
}

// release drops every chunk, so that the collector can take them while the caller
// goes on.
func (c *chunks[T]) release() {
	c.parts, c.spare, c.n = nil, nil, 0
}

// reset empties the list and keeps chunks of up to keepBytes in all, zeroed (no
// pointer of the old elements stays reachable), for the elements added next.
func (c *chunks[T]) reset(keepBytes int) {
	var t T
	size := max(1, int(unsafe.Sizeof(t)))
	kept := 0
	for _, p := range c.spare {
		kept += cap(p) * size
	}
	for _, p := range c.parts {
		if b := cap(p) * size; kept+b <= keepBytes {
			clear(p)
			c.spare = append(c.spare, p[:0])
			kept += b
		}
	}
	c.parts, c.n = nil, 0
}

// bytes is the memory the list's chunks take.
func (c *chunks[T]) bytes() int {
	var t T
	n := 0
	for _, p := range c.parts {
		n += cap(p)
	}
	for _, p := range c.spare {
		n += cap(p)
	}
	return n * int(unsafe.Sizeof(t))
}
