package parser

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/realdata"
)

// splitSmall makes every trace of at least 1 KiB split into parts of 256 bytes or
// more, on four threads, for the duration of a test.
func splitSmall(t *testing.T) {
	t.Helper()
	minBytes, partBytes := parallelTraceMinBytes, parallelPartBytes
	procs := runtime.GOMAXPROCS(4)
	parallelTraceMinBytes, parallelPartBytes = 1<<10, 256
	t.Cleanup(func() {
		parallelTraceMinBytes, parallelPartBytes = minBytes, partBytes
		runtime.GOMAXPROCS(procs)
	})
}

// bothWays parses data from a file (in parts when it can, every full candidate chunk
// packed) and from memory (alone, none packed), and requires the same timeline and
// error; it returns whether the parts were used.
func bothWays(t *testing.T, data []byte) (parallel bool) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trace_view.json")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	pack := jsonx.PackFromBytes
	defer func() { jsonx.PackFromBytes = pack }()
	jsonx.PackFromBytes = math.MaxInt
	want, wantErr := parseTraceView(bytes.NewReader(data), p)
	jsonx.PackFromBytes = 0

	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	_, parallel = parseTraceParallel(f, p)

	f2, err := os.Open(p)
	require.NoError(t, err)
	defer f2.Close()
	got, gotErr := parseTraceView(f2, p)
	require.Equal(t, want, got)
	if wantErr == nil {
		require.NoError(t, gotErr)
	} else {
		require.EqualError(t, gotErr, wantErr.Error())
	}
	return parallel
}

// TestTraceInPartsEqualsAlone: real traces read in parts give the timeline read by
// one goroutine, field for field.
func TestTraceInPartsEqualsAlone(t *testing.T) {
	splitSmall(t)
	for _, rel := range [][]string{
		{"imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json"},
		{"imagenet-2rank-level1", "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json"},
		{"torchnpu-1rank-nohccl", "trace_view.json"},
	} {
		t.Run(rel[0], func(t *testing.T) {
			data, err := os.ReadFile(realdata.Path(t, rel...))
			require.NoError(t, err)
			assert.True(t, bothWays(t, data), "the parts were not used")
		})
	}
	t.Run("mini trace repeated", func(t *testing.T) {
		assert.True(t, bothWays(t, repeatMini(40)), "the parts were not used")
	})
	t.Run("object form with members after the events", func(t *testing.T) {
		events := repeatMini(40)
		data := []byte(`{"displayTimeUnit": "ns", "traceEvents": ` + string(events) + `, "otherData": {"a": [1, {"b": "},{"}]}}`)
		assert.True(t, bothWays(t, data), "the parts were not used")
	})
}

// repeatMini is miniTrace's events n times over, in one array.
func repeatMini(n int) []byte {
	body := strings.TrimSpace(miniTrace)
	body = strings.TrimSuffix(strings.TrimPrefix(body, "["), "]")
	parts := make([]string, n)
	for i := range parts {
		parts[i] = body
	}
	return []byte("[" + strings.Join(parts, ",\n") + "]")
}

// TestTraceInPartsMisleadingBytes: "},{" inside strings and damaged events anywhere
// still give exactly what one goroutine reads (the parts fall back to it).
func TestTraceInPartsMisleadingBytes(t *testing.T) {
	splitSmall(t)
	fake := `{"ph": "X", "name": "aten::mul", "pid": 11, "tid": 11, "ts": "1736408883000011.000", "dur": 1, "cat": "cpu_op", "args": {"Call stack": "` +
		strings.Repeat(`}, {\"ph\": \"X\", \"name\": \"fake\"}, {`, 40) + `"}}`
	events := repeatMini(10)
	mixed := bytes.Replace(events, []byte("},\n{"), []byte("},\n"+fake+",\n{"), -1)
	bothWays(t, mixed)

	// A string pid, an event without dur and one without pid, in a late part.
	damaged := append([]byte(nil), events[:len(events)-1]...)
	damaged = append(damaged, []byte(`,{"ph": "X", "name": "k", "pid": "host", "tid": 1, "ts": "1", "dur": 1},
{"ph": "X", "name": "nodur", "pid": 5, "tid": 1, "ts": "1"},
{"ph": "X", "name": "nopid", "tid": 1, "ts": "1", "dur": 2}]`)...)
	bothWays(t, damaged)

	// Truncated and broken at many places: the same partial timeline and message.
	for _, cut := range []int{len(events) / 3, len(events) / 2, len(events) - 40, len(events) - 2} {
		bothWays(t, events[:cut])
		broken := append([]byte(nil), events...)
		broken[cut] = '#'
		bothWays(t, broken)
	}
}

func BenchmarkTraceViewFile(b *testing.B) {
	p := benchTrace(b)
	fi, err := os.Stat(p)
	require.NoError(b, err)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(p)
		require.NoError(b, err)
		tl, err := parseTraceView(f, p)
		f.Close()
		if err != nil || len(tl.CommOps) != 240 {
			b.Fatalf("err %v, %d ops", err, len(tl.CommOps))
		}
	}
}

// FuzzTraceViewInParts: whatever the bytes, a trace read in parts is the trace read
// alone (same timeline, same error).
func FuzzTraceViewInParts(f *testing.F) {
	f.Add(repeatMini(8))
	f.Add([]byte(`{"traceEvents": [{"ph": "X", "name": "a", "ts": 1.5, "dur": "2"}, {"ph": "X", "name": "},{", "ts": 1.5, "dur": "2"}], "x": "},{"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		minBytes, partBytes := parallelTraceMinBytes, parallelPartBytes
		parallelTraceMinBytes, parallelPartBytes = 64, 16
		defer func() { parallelTraceMinBytes, parallelPartBytes = minBytes, partBytes }()
		if runtime.GOMAXPROCS(0) < 2 {
			t.Skip("one CPU: traces are never split")
		}
		bothWays(t, data)
	})
}
