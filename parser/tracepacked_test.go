package parser

import (
	"fmt"
	"github.com/hcclprof/hcclprof/internal/jsonx"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// packEvery makes every full chunk of a list of packable records packed (or none,
// with never) for the duration of a test.
func packEvery(t *testing.T, never bool) {
	t.Helper()
	old := jsonx.PackFromBytes
	jsonx.PackFromBytes = 0
	if never {
		jsonx.PackFromBytes = math.MaxInt
	}
	t.Cleanup(func() { jsonx.PackFromBytes = old })
}

// TestPackedCandidatesReadTheSame: real traces, read with every candidate chunk
// packed (alone, and in parts, whose records are renumbered when joined) give the
// timeline read with none packed, field for field.
func TestPackedCandidatesReadTheSame(t *testing.T) {
	var traces []string
	for _, pattern := range []string{"*/trace_view.json", "*/*/ASCEND_PROFILER_OUTPUT/trace_view.json", "*/*/*/*/msprof_*.json", "*/*/msprof_*.json", "*/*/*/*/*/msprof_*.json"} {
		m, err := filepath.Glob(filepath.Join(realdata.Root(), pattern))
		require.NoError(t, err)
		traces = append(traces, m...)
	}
	if len(traces) == 0 {
		t.Skip("no real data")
	}
	for _, p := range traces {
		rel, _ := filepath.Rel(realdata.Root(), p)
		t.Run(rel, func(t *testing.T) {
			packEvery(t, true)
			want := parseTraceFile(t, p)
			jsonx.PackFromBytes = 0
			assert.Equal(t, want, parseTraceFile(t, p), "alone")
			if strings.Contains(p, "imagenet") { // the lists were packed indeed
				f, err := os.Open(p)
				require.NoError(t, err)
				defer f.Close()
				for len(traceScratches) > 0 { // chunks kept by earlier tests might hold it all
					<-traceScratches
				}
				st := newTraceState(p)
				require.NoError(t, jsonx.ReadStream(f, p, st.read))
				// What the packed records of a real trace take, against their size as
				// they are (docs/performance.md's bytes an event rest on it); each list
				// has its first two chunks packed at least.
				var got, raw int
				for _, c := range []interface{ Packed() (int, int, int) }{&st.hw, &st.tasks, &st.generic, &st.overlap, &st.flowEnds, &st.flowNums} {
					g, r, n := c.Packed()
					assert.GreaterOrEqual(t, n, 2)
					got, raw = got+g, raw+r
				}
				t.Logf("packed candidates: %d bytes for %d as they are (%.0f%%)", got, raw, 100*float64(got)/float64(raw))
				assert.Less(t, float64(got), 0.3*float64(raw))
			}
			splitSmall(t)
			assert.Equal(t, want, parseTraceFile(t, p), "in parts")
		})
	}
	t.Logf("%d traces", len(traces))
}

// TestHardwareCountsManyProcesses: the counts finish sizes its lists by stay cheap
// when every hardware task names a process of its own (a damaged or hostile trace):
// a scan of the processes per task made 150 000 of them take seconds, 128 times the
// same tasks in one process. The bound is relative to that, the same number of tasks
// in one process read by the same test, so that it holds on a machine of any speed
// (the best of three reads of each, against a busy machine's noise). Allocations
// would not tell: the scan allocated no more than the map that replaced it.
func TestHardwareCountsManyProcesses(t *testing.T) {
	const n = 150_000
	trace := func(procs int) string {
		var b strings.Builder
		b.WriteString(`[{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Ascend Hardware"}}`)
		for i := range n {
			fmt.Fprintf(&b, `,{"ph": "X", "name": "k", "pid": %d, "tid": 1, "ts": "%d", "dur": 1, "args": {"Task Type": "AI_CORE"}}`, i%procs+1, 1000+i)
		}
		b.WriteString("]")
		return b.String()
	}
	read := func(doc string) (time.Duration, *traceTimeline) {
		best, tl := time.Duration(math.MaxInt64), (*traceTimeline)(nil)
		for range 3 {
			start := time.Now()
			got, err := parseTraceView(strings.NewReader(doc), "many.json")
			require.NoError(t, err)
			best, tl = min(best, time.Since(start)), got
		}
		return best, tl
	}
	oneTime, one := read(trace(1))
	manyTime, many := read(trace(n))
	t.Logf("%d tasks in 1 process: %v; in %d processes: %v (%.1fx)", n, oneTime, n, manyTime, float64(manyTime)/float64(oneTime))
	assert.Less(t, manyTime, 10*oneTime, "one process per task costs no more than a few times the same tasks in one process")
	assert.Len(t, one.Compute, n)
	assert.Len(t, many.Compute, 1, "only process 1 is Ascend Hardware")
	assert.Equal(t, n+1, many.Events)
}
