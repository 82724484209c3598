// Package realdata locates the real profiler output that tests use as ground truth:
// ../shared/realdata beside the project root. It is not part of the project (a user's
// clone lacks it), so tests that need it skip cleanly when it is absent.
package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the realdata directory, or "" when it is absent.
func Root() string { return shared("realdata") }

// benchRoot returns ../shared/benchdata (published collective-communication
// measurements), or "" when it is absent.
func benchRoot() string { return shared("benchdata") }

// BenchPath is Path for a file of ../shared/benchdata.
func BenchPath(tb testing.TB, elem ...string) string {
	tb.Helper()
	root := benchRoot()
	if root == "" {
		tb.Skip("../shared/benchdata is absent: skipping the measurement test")
	}
	p := filepath.Join(append([]string{root}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("measurements %s are absent: %v", p, err)
	}
	return p
}

// shared returns ../shared/name beside the project root, or "" when it is absent.
func shared(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "..", "shared", name)
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return p
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Path returns the path of elem inside the realdata directory, skipping the test
// when the directory (or that file) is absent.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	root := Root()
	if root == "" {
		tb.Skip("../shared/realdata is absent: skipping the real-data test")
	}
	p := filepath.Join(append([]string{root}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("real data %s is absent: %v", p, err)
	}
	return p
}
