package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The summary readers' trees share their memory from file to file (withJSONTree): what
// a reader returned must not change when later files are read, from files (sized
// buffers) or from streams, nor when a later file fails.
func TestTreeMemoryReusedSafely(t *testing.T) {
	comm := `{"step50": {"p2p": {` + cjSend + `, ` + cjTotal + `}, "collective": {` + cjOp0 + `, ` + cjTotal + `}}}`
	matrix := `{"step50": {"p2p": {` + cmP2PTotal + `}, "collective": {` + cmTop1 + `}}}`
	dir := t.TempDir()
	commFile := filepath.Join(dir, "communication.json")
	require.NoError(t, os.WriteFile(commFile, []byte(comm), 0o644))

	f, err := os.Open(commFile)
	require.NoError(t, err)
	first, err := ParseCommunicationJSON(f, commFile)
	f.Close()
	require.NoError(t, err)
	want, err := ParseCommunicationJSON(strings.NewReader(comm), "again.json")
	require.NoError(t, err)
	require.Equal(t, want, first)

	firstLinks, err := ParseCommMatrixJSON(strings.NewReader(matrix), "m.json")
	require.NoError(t, err)
	wantLinks, err := ParseCommMatrixJSON(strings.NewReader(matrix), "m2.json")
	require.NoError(t, err)
	// Many other files through the same parsers, some of them damaged, some big.
	other := strings.ReplaceAll(strings.ReplaceAll(comm, "586", "999"), "step50", "step51")
	for i := 0; i < 20; i++ {
		_, _ = ParseCommunicationJSON(strings.NewReader(other), "other.json")
		_, _ = ParseCommMatrixJSON(strings.NewReader(strings.ReplaceAll(matrix, "HCCS", "RDMA")), "other.json")
		_, _ = ParseCommunicationJSON(strings.NewReader(other[:len(other)/2]), "cut.json")
		_, _ = ParseCommMatrixJSON(strings.NewReader(`{"step1": {"collective": {`+strings.Repeat(`"x@1": {"0-1": {}}, `, 2000)+`"y@1": {}}}}`), "big.json")
	}
	assert.Equal(t, want, first)
	assert.Equal(t, wantLinks, firstLinks)
}

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
		return root.get("r").ints
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
	_, cached := sharedIntArrays.get([]byte(damaged))
	assert.False(t, cached)
}
