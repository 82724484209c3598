// Package benchtrace builds large timelines for benchmarks by repeating a real
// trace_view.json: each copy's events are shifted in time past the previous copy,
// step markers renumbered and flow ids kept unique, so the result analyses as one run
// of many steps. The output is made at bench time, never committed.
package benchtrace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// Default is the benchmarks' big timeline: the real rank-0 trace of
// imagenet-2rank-level1 repeated 60 times, cached under $HCCLPROF_BENCH_DIR (default:
// the temp dir). It returns the directory (a one-rank cluster) and the trace's path,
// skipping the benchmark when the real data is absent.
func Default(tb testing.TB) (dir, trace string) {
	tb.Helper()
	src := realdata.Path(tb, "imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	dir = os.Getenv("HCCLPROF_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "hcclprof-bench")
	}
	trace, err := Repeat(src, dir, 60)
	if err != nil {
		tb.Fatal(err)
	}
	return dir, trace
}

// Repeat writes src repeated times into a rank directory under dstDir
// (dstDir/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json, with a
// profiler_info_0.json) and returns the trace's path. An existing output of the same
// source and count is reused.
func Repeat(src, dstDir string, times int) (string, error) {
	rankDir := filepath.Join(dstDir, "rank0_ascend_pt")
	out := filepath.Join(rankDir, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	stamp := filepath.Join(dstDir, "source.txt")
	want := fmt.Sprintf("%s x%d v2", src, times)
	if b, err := os.ReadFile(stamp); err == nil && string(b) == want {
		if _, err := os.Stat(out); err == nil {
			return out, nil
		}
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	var events []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &events); err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	// Time span of the source, in ns, to shift each copy past the previous one.
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, e := range events {
		if ts, ok := tsNs(e["ts"]); ok {
			lo = min(lo, ts)
			d, _ := durNs(e["dur"])
			hi = max(hi, ts+d)
		}
	}
	if lo > hi {
		return "", fmt.Errorf("%s: no timed events", src)
	}
	shiftNs := (hi - lo) + 1_000_000 // 1 ms gap between copies
	// Each copy's steps follow the previous copy's: a source of steps 5 and 6 repeated
	// three times has steps 5 to 10.
	firstStep, lastStep := math.MaxInt, math.MinInt
	for _, e := range events {
		if n, ok := stepOf(e); ok {
			firstStep, lastStep = min(firstStep, n), max(lastStep, n)
		}
	}
	stepsPerCopy := max(lastStep-firstStep+1, 1)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	info := `{"config": {"experimental_config": {"_profiler_level": "Level1", "_export_type": "text"}}, "rank_id": 0}`
	if err := os.WriteFile(filepath.Join(rankDir, "profiler_info_0.json"), []byte(info), 0o644); err != nil {
		return "", err
	}
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("[")
	first := true
	for k := 0; k < times; k++ {
		for _, e := range events {
			ph := string(e["ph"])
			if ph == `"M"` && k > 0 {
				continue
			}
			c := make(map[string]json.RawMessage, len(e))
			for key, v := range e {
				c[key] = v
			}
			if ts, ok := tsNs(e["ts"]); ok && k > 0 {
				c["ts"] = formatTs(ts + int64(k)*shiftNs)
			}
			if k > 0 {
				shiftID(c, int64(k)*shiftNs, k)
				renumberStep(c, k*stepsPerCopy)
			}
			b, err := json.Marshal(c)
			if err != nil {
				return "", err
			}
			if !first {
				w.WriteString(",\n")
			}
			first = false
			w.Write(b)
		}
	}
	w.WriteString("]\n")
	if err := w.Flush(); err != nil {
		return "", err
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		return "", err
	}
	return out, nil
}

func tsNs(v json.RawMessage) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	s := strings.Trim(string(v), `"`)
	intPart, frac, _ := strings.Cut(s, ".")
	us, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return 0, false
	}
	frac = (frac + "000")[:3]
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, false
	}
	return us*1000 + f, true
}

func durNs(v json.RawMessage) (int64, bool) {
	f, err := strconv.ParseFloat(strings.Trim(string(v), `"`), 64)
	if err != nil {
		return 0, false
	}
	return int64(f * 1000), true
}

func formatTs(ns int64) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`"%d.%03d"`, ns/1000, ns%1000))
}

// shiftID keeps flow ids unique: torch_to_npu ids are device times in ns and move
// with the copy; string ids get the copy number appended.
func shiftID(c map[string]json.RawMessage, shiftNs int64, k int) {
	v, ok := c["id"]
	if !ok {
		return
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		c["id"] = json.RawMessage(strconv.FormatInt(n+shiftNs, 10))
		return
	}
	if s, err := strconv.Unquote(string(v)); err == nil {
		c["id"] = json.RawMessage(strconv.Quote(s + "_" + strconv.Itoa(k)))
	}
}

// stepOf is the number of a ProfilerStep#N event.
func stepOf(e map[string]json.RawMessage) (int, bool) {
	var name string
	if json.Unmarshal(e["name"], &name) != nil || !strings.HasPrefix(name, "ProfilerStep#") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "ProfilerStep#"))
	return n, err == nil
}

// renumberStep adds by to a step marker's number.
func renumberStep(c map[string]json.RawMessage, by int) {
	if n, ok := stepOf(c); ok {
		b, _ := json.Marshal(fmt.Sprintf("ProfilerStep#%d", n+by))
		c["name"] = b
	}
}
