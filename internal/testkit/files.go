package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
)

// filesBudget is how many bytes of generated clusters no test holds stay written (in
// memory, on /dev/shm): a few of the largest a test makes (a 16-rank job of small
// buckets is about 600 MB), not the several GB a package writes in all.
var filesBudget int64 = 1 << 30

// dirFiles is what an entry's directory holds (under cache.mu).
type dirFiles struct {
	written bool   // the cluster is in dir
	bytes   int64  // its size
	holders int    // tests holding it (Generate, Analyse or Load until the test ends)
	used    uint64 // when a test last took it, for removing the least recently used
}

// copyScenario is a copy of sc to write it again (the test may change its own after),
// nil when its JSON does not make the same scenario.
func copyScenario(sc *scenario.Scenario) *scenario.Scenario {
	var cp scenario.Scenario
	if err := json.Unmarshal(sc.JSON(), &cp); err != nil || !bytes.Equal(cp.JSON(), sc.JSON()) {
		return nil
	}
	return &cp
}

// hold keeps e's directory written until the end of tb (writing it again if it was
// removed), then lets it go. Before Generate's first write it only holds.
func hold(tb testing.TB, e *entry) {
	tb.Helper()
	e.filesMu.Lock()
	defer e.filesMu.Unlock()
	cache.mu.Lock()
	e.files.holders++
	cache.clock++
	e.files.used = cache.clock
	written := e.files.written || e.genDone == nil
	cache.mu.Unlock()
	tb.Cleanup(func() {
		cache.mu.Lock()
		defer cache.mu.Unlock()
		e.files.holders--
		trimFiles()
	})
	if written {
		return
	}
	if err := rewrite(e); err != nil {
		tb.Fatalf("writing %s as %s again: %v", e.dir, e.format, err)
	}
}

// rewrite writes an entry's removed cluster again: the generator is deterministic,
// so the files are the ones removed.
func rewrite(e *entry) error {
	if e.sc == nil {
		return fmt.Errorf("the scenario cannot be copied")
	}
	run, err := sim.Simulate(e.sc)
	if err != nil {
		return err
	}
	if _, _, err := render.WriteCluster(run, e.dir, render.Options{Format: e.format}); err != nil {
		return err
	}
	written(e)
	return nil
}

// written records that e's directory holds its cluster, and removes the least
// recently used ones held by no test beyond filesBudget.
func written(e *entry) {
	size := dirBytes(e.dir)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	e.files.written, e.files.bytes, e.size = true, size, size
	cache.written = append(cache.written, e)
	trimFiles()
}

// trimFiles removes, least recently used first, the directories no test holds
// while they are more than filesBudget bytes (under cache.mu).
func trimFiles() {
	var free int64
	for _, e := range cache.written {
		if e.files.holders == 0 {
			free += e.files.bytes
		}
	}
	for free > filesBudget {
		var lru *entry
		for _, e := range cache.written {
			if e.files.holders == 0 && (lru == nil || e.files.used < lru.files.used) {
				lru = e
			}
		}
		if err := os.RemoveAll(lru.dir); err != nil {
			fmt.Fprintln(os.Stderr, "testkit:", err)
			return
		}
		free -= lru.files.bytes
		lru.files.written, lru.files.bytes = false, 0
		cache.written = slices.DeleteFunc(cache.written, func(o *entry) bool { return o == lru })
	}
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
