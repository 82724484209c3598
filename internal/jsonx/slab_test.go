package jsonx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlabReuse(t *testing.T) {
	s := slab[int]{min: 4}
	a := s.alloc(3)
	a[0], a[1], a[2] = 1, 2, 3
	b := s.alloc(2) // does not fit the first chunk: a new one
	b[0] = 9
	big := s.alloc(10) // larger than a chunk: its own
	assert.Len(t, big, 10)
	assert.Equal(t, []int{1, 2, 3}, a)
	assert.Len(t, s.chunks, 3)
	s.reset()
	assert.Equal(t, []int{0, 0, 0}, a, "handed-out memory is cleared on reset")
	c := s.alloc(4)
	assert.Equal(t, []int{0, 0, 0, 0}, c)
	assert.Len(t, s.chunks, 3, "the chunks are reused")
	assert.Equal(t, 18*8, s.bytes())
}

// Rank lists are shared between files by their bytes: the same bytes give the same
// ranks, different bytes never the cached ones, and a damaged list is not cached.
func TestIntArraysSharedByBytes(t *testing.T) {
	list := func(n, from int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d", from+i)
		}
		b.WriteString("]")
		return b.String()
	}
	read := func(doc string) []int64 {
		root, err := readJSONTreeWith(strings.NewReader(doc), "m.json", true)
		require.NoError(t, err)
		return root.Get("r").Ints
	}
	a := read(`{"r": ` + list(500, 0) + `}`)
	require.Len(t, a, 500)
	assert.Equal(t, int64(499), a[499])
	again := read(`{"r": ` + list(500, 0) + `}`)
	assert.Equal(t, a, again)
	other := read(`{"r": ` + list(500, 1) + `}`)
	assert.Equal(t, int64(1), other[0])
	assert.Equal(t, int64(500), other[499])
	damaged := strings.Replace(list(500, 0), "17", "1x", 1)
	root, err := readJSONTreeWith(strings.NewReader(`{"r": `+damaged+`}`), "m.json", true)
	assert.Error(t, err)
	assert.Nil(t, root)
	_, cached := sharedIntArrays.Get([]byte(damaged))
	assert.False(t, cached)
}

// TestIntArraysReadAlike: a tree read with integer arrays packed (as profiler_metadata
// is) holds the same values as one read node by node, whatever the array holds.
func TestIntArraysReadAlike(t *testing.T) {
	for _, doc := range []string{
		`{"global_ranks": [0, 1, 2, 4095], "x": [ -3 , 7 ]}`,
		`{"a": [], "b": [0, 1.0], "c": [1e3], "d": ["1", 2], "e": [01], "f": [1234567890123456], "g": [[1, 2], [3]]}`,
		`[1, 2,`,
		`[1, 2 3]`,
	} {
		plain, errPlain := readJSONTreeWith(strings.NewReader(doc), "m.json", false)
		packed, errPacked := readJSONTreeWith(strings.NewReader(doc), "m.json", true)
		if errPlain != nil {
			require.EqualError(t, errPacked, errPlain.Error(), doc)
			continue
		}
		require.NoError(t, errPacked, doc)
		assert.Equal(t, ToAny(plain), ToAny(packed), doc)
	}
}
