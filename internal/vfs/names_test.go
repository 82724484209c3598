package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSortByNumbers: numbers compare as numbers, field by field, and paths with the
// same numbers keep their order.
func TestSortByNumbers(t *testing.T) {
	paths := []string{"d/msprof_0_2_10.json", "d9/msprof_0_2_9.json", "b/x_1.json", "a/y_1.json", "msprof_0_10_1.json"}
	SortByNumbers(paths)
	assert.Equal(t, []string{"d9/msprof_0_2_9.json", "d/msprof_0_2_10.json", "msprof_0_10_1.json", "b/x_1.json", "a/y_1.json"}, paths)
}

// TestWithin: a path is within a directory when it is the directory or below it, not
// when it only shares the directory's name as a prefix.
func TestWithin(t *testing.T) {
	assert.True(t, Within("/a/b", "/a/b"))
	assert.True(t, Within("/a/b/c", "/a/b"))
	assert.False(t, Within("/a/bc", "/a/b"))
	assert.False(t, Within("/a", "/a/b"))
	assert.True(t, Within("/a/..b", "/a"), "a name beginning with two dots is below")
}

// TestWalkLimited: the walk sees the named directory first, then its entries with
// their depth; it enters no directory deeper than maxDepth and stops at the budget,
// which walks can share.
func TestWalkLimited(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/b/c/f.txt", "a/g.txt", "h.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), nil, 0o644))
	}
	walk := func(maxDepth int, budget *int) (seen []string, cut bool) {
		cut = WalkLimited(dir, maxDepth, budget, func(p string, e fs.DirEntry, depth int) {
			rel, _ := filepath.Rel(dir, p)
			seen = append(seen, fmt.Sprintf("%s@%d", filepath.ToSlash(rel), depth))
		})
		return seen, cut
	}
	budget := 100
	seen, cut := walk(2, &budget)
	assert.False(t, cut)
	assert.Equal(t, []string{".@1", "a@1", "a/b@2", "a/b/c@3", "a/g.txt@2", "h.txt@1"}, seen, "a/b/c is seen, not entered")
	assert.Equal(t, 94, budget)

	budget = 3
	seen, cut = walk(10, &budget)
	assert.True(t, cut)
	assert.Equal(t, []string{".@1", "a@1", "a/b@2"}, seen)
	seen, cut = walk(10, &budget)
	assert.True(t, cut, "the budget spent by one walk stops the next")
	assert.Empty(t, seen)
}
