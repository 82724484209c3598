package vfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// NewestMatch returns the file of dir whose name matches re with the greatest number
// in its first group (numbers compared as numbers, joined digits for several parts),
// "" when none does.
func NewestMatch(dir string, re *regexp.Regexp) string {
	entries, err := ReadDir(dir)
	if err != nil {
		return ""
	}
	best, bestKey := "", ""
	for _, e := range entries {
		m := re.FindStringSubmatch(e.Name())
		if e.IsDir() || m == nil {
			continue
		}
		key := m[1]
		if best == "" || len(key) > len(bestKey) || (len(key) == len(bestKey) && key > bestKey) {
			best, bestKey = filepath.Join(dir, e.Name()), key
		}
	}
	return best
}

// SortByNumbers sorts paths by the numbers in their base names, compared as numbers
// one after the other, so that msprof_0_2_10.json follows msprof_0_2_9.json; the
// order of paths with the same numbers is kept.
func SortByNumbers(paths []string) {
	key := func(p string) []int {
		var out []int
		for _, f := range strings.FieldsFunc(filepath.Base(p), func(r rune) bool { return r < '0' || r > '9' }) {
			n, _ := strconv.Atoi(f)
			out = append(out, n)
		}
		return out
	}
	sort.SliceStable(paths, func(i, j int) bool { return slices.Compare(key(paths[i]), key(paths[j])) < 0 })
}

// RealPath is path's absolute path with every link resolved.
func RealPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Within reports whether path is dir or below it (both clean and absolute).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator))
}

// WalkLimited walks what path names on disk (not in an archive) as filepath.WalkDir
// does, a directory through a link to it, passing over what cannot be read: fn sees
// each entry, path's own first, with its depth (the count of separators past path's;
// a directory's entries are at 1); no directory deeper than maxDepth is entered, and
// the walk stops before the entry past *budget, which it counts down (walks that
// share a budget share the bound). It reports whether the budget stopped it. A
// directory a user names may be a large tree of something else: the bounds keep a
// look at it short.
func WalkLimited(path string, maxDepth int, budget *int, fn func(p string, e fs.DirEntry, depth int)) (cut bool) {
	rootDepth := strings.Count(filepath.Clean(path), string(filepath.Separator))
	root := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		root = filepath.Clean(path) + string(filepath.Separator)
	}
	_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if *budget <= 0 {
			cut = true
			return filepath.SkipAll
		}
		*budget--
		depth := strings.Count(p, string(filepath.Separator)) - rootDepth
		fn(p, e, depth)
		if e.IsDir() && depth > maxDepth {
			return filepath.SkipDir
		}
		return nil
	})
	return cut
}
