package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentOutputNeverTorn runs analyze -o one file several times at once while
// a reader reads it: every read is either no file yet or a whole JSON report, never a
// truncated or interleaved one, and no temporary file is left beside it.
func TestConcurrentOutputNeverTorn(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "same.json")
	var stop atomic.Bool
	var torn atomic.Value
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		for !stop.Load() {
			b, err := os.ReadFile(out)
			if err != nil {
				continue
			}
			if !json.Valid(b) {
				torn.Store(len(b))
				return
			}
		}
	}()
	var writers sync.WaitGroup
	for range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for range 5 {
				var o, e bytes.Buffer
				if code := run([]string{"analyze", sample, "--format", "json", "-o", out}, &o, &e); code != 0 {
					t.Errorf("exit %d: %s", code, e.String())
					return
				}
			}
		}()
	}
	writers.Wait()
	stop.Store(true)
	reader.Wait()
	if n := torn.Load(); n != nil {
		t.Fatalf("a reader saw %d bytes that are not a whole JSON report", n)
	}
	b, err := os.ReadFile(out)
	if err != nil || !json.Valid(b) {
		t.Fatalf("final report: %v, valid %v", err, json.Valid(b))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left beside the report: %v", entries)
	}
}
