package jsonx

import (
	"bytes"
	"iter"
	"unsafe"
)

// Chunks is an append-only list kept in chunks that are never copied: a trace's
// candidate events grown in one slice were copied at every growth, the old and new
// arrays alive together, and a big trace's peak memory was mostly those copies. Two
// lists join without copying (join), and the chunks of a finished list can be kept
// for the next trace (reset).
//
// Once a list holds PackFromBytes, its chunks are packed (recordCodec), those filled
// so far and then each as it fills, whose array takes the next elements: a big
// trace's candidates, held until the file ends, take a quarter of their size. Lists of
// types with pointers are never packed. Elements of a packed chunk have no address;
// those of the others stay where they were put.
type Chunks[T any] struct {
	parts   []chunk[T] // in order; only the last has room
	packed  int        // parts[:packed] are packed or empty
	spare   [][]T      // empty chunks kept by reset, used before new ones are made
	n       int
	scratch []T    // a packed chunk, unpacked for all or update
	packBuf []byte // a chunk being packed, before it is copied at its size
}

// chunk is a run of elements, as they are (recs) or packed (packed, n of them, to
// be changed by fix in order once unpacked: see update).
type chunk[T any] struct {
	recs   []T
	packed []byte
	n      int
	fix    []func([]T)
}

func (p *chunk[T]) isPacked() bool { return p.packed != nil }

// Chunk sizes: the first is small, so that the many small traces of a cluster take
// little; each next one is as large as the list so far (the list doubles, as a slice
// would), up to maxChunkBytes. Lists smaller than PackFromBytes (a cluster's ranks'
// are) are never packed, so that their cost is only a big trace's.
const (
	minChunkLen   = 64
	maxChunkBytes = 256 << 10
)

// PackFromBytes is the size of a list from which its chunks are packed: a variable
// for the tests, which pack every list (0) or none (math.MaxInt).
var PackFromBytes = 1 << 20

// Add appends x.
func (c *Chunks[T]) Add(x T) {
	k := len(c.parts) - 1
	if k < 0 || len(c.parts[k].recs) == cap(c.parts[k].recs) {
		c.grow()
		k = len(c.parts) - 1
	}
	c.parts[k].recs = append(c.parts[k].recs, x)
	c.n++
}

func (c *Chunks[T]) grow() {
	var t T
	size := max(1, int(unsafe.Sizeof(t)))
	if k := len(c.parts) - 1; k >= 0 && c.n*size >= PackFromBytes {
		if codec := codecOf[T](); codec != nil {
			// The chunks filled before the list reached PackFromBytes are packed
			// too, the first time; the last one's array takes the next elements.
			recs := c.parts[k].recs
			for ; c.packed <= k; c.packed++ {
				if p := &c.parts[c.packed]; !p.isPacked() && len(p.recs) > 0 {
					c.packBuf = packRecords(codec, c.packBuf[:0], p.recs)
					*p = chunk[T]{packed: bytes.Clone(c.packBuf), n: len(p.recs)}
				}
			}
			c.parts = append(c.parts, chunk[T]{recs: recs[:0]})
			return
		}
	}
	if k := len(c.spare); k > 0 {
		c.parts = append(c.parts, chunk[T]{recs: c.spare[k-1]})
		c.spare[k-1] = nil
		c.spare = c.spare[:k-1]
		return
	}
	n := min(max(minChunkLen, c.n), max(minChunkLen, maxChunkBytes/size))
	c.parts = append(c.parts, chunk[T]{recs: make([]T, 0, n)})
}

// Len is the number of elements added.
func (c *Chunks[T]) Len() int { return c.n }

// All yields the elements in order, a chunk at a time. A packed chunk is unpacked
// into a buffer that the next one reuses: a yielded slice is valid until the next.
func (c *Chunks[T]) All() iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		for i := range c.parts {
			p := &c.parts[i]
			recs := p.recs
			if p.isPacked() {
				c.scratch = unpackRecords(codecOf[T](), c.scratch[:0], p.packed, p.n)
				recs = c.scratch
				for _, fn := range p.fix {
					fn(recs)
				}
			}
			if !yield(recs) {
				return
			}
		}
	}
}

// Update calls fn on the elements a chunk at a time, keeping what it changes. On a
// packed chunk it is called each time the chunk is unpacked: packing the chunk again
// took longer than the few passes over it that follow.
func (c *Chunks[T]) Update(fn func([]T)) {
	for i := range c.parts {
		if p := &c.parts[i]; p.isPacked() {
			p.fix = append(p.fix, fn)
		} else {
			fn(p.recs)
		}
	}
}

// Join appends o's elements after c's, taking o's chunks (o is left empty). c's last
// chunk stays partly filled; what is added after goes to o's last.
func (c *Chunks[T]) Join(o *Chunks[T]) {
	for _, p := range o.parts {
		if p.n > 0 || len(p.recs) > 0 {
			c.parts = append(c.parts, p)
		}
	}
	c.n += o.n
	o.parts, o.n, o.scratch, o.packBuf, o.packed = nil, 0, nil, nil, 0
}

// Release drops every chunk, so that the collector can take them while the caller
// goes on.
func (c *Chunks[T]) Release() {
	c.parts, c.spare, c.n, c.scratch, c.packBuf, c.packed = nil, nil, 0, nil, nil, 0
}

// Reset empties the list and keeps chunks of up to keepBytes in all, zeroed (no
// pointer of the old elements stays reachable), for the elements added next. Packed
// chunks are let go.
func (c *Chunks[T]) Reset(keepBytes int) {
	var t T
	size := max(1, int(unsafe.Sizeof(t)))
	kept := 0
	for _, p := range c.spare {
		kept += cap(p) * size
	}
	for _, p := range c.parts {
		if p.isPacked() {
			continue
		}
		if b := cap(p.recs) * size; kept+b <= keepBytes {
			clear(p.recs)
			c.spare = append(c.spare, p.recs[:0])
			kept += b
		}
	}
	c.parts, c.n, c.scratch, c.packBuf, c.packed = nil, 0, nil, nil, 0
}

// Bytes is the memory the list's chunks take.
func (c *Chunks[T]) Bytes() int {
	var t T
	n := 0
	packed := 0
	for _, p := range c.parts {
		n += cap(p.recs)
		packed += cap(p.packed)
	}
	for _, p := range c.spare {
		n += cap(p)
	}
	return n*int(unsafe.Sizeof(t)) + packed + cap(c.scratch)*int(unsafe.Sizeof(t)) + cap(c.packBuf)
}

// Packed is the bytes of c's packed chunks, what their records take as they are, and
// how many of its chunks are packed (the first ones: chunks are packed in order).
func (c *Chunks[T]) Packed() (packedBytes, rawBytes, chunks int) {
	var t T
	for _, p := range c.parts {
		if p.isPacked() {
			packedBytes += len(p.packed)
			rawBytes += p.n * int(unsafe.Sizeof(t))
			chunks++
		}
	}
	return packedBytes, rawBytes, chunks
}
