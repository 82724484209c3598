package parser

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// hwRun is n hardware tasks of one stream as a trace has them: times advancing a
// little, ids repeating.
func hwRun(n int) []hwRec {
	out := make([]hwRec, n)
	t := int64(1_736_408_883_700_059_821)
	for i := range out {
		d := int64(1000 + i%700)
		out[i] = hwRec{pid: 3170820512, iv: profile.Interval{StartNs: t, EndNs: t + d}, stream: 7, conn: int64(400_000 + i), taskType: 2, name: uint32(i % 40)}
		t += d + int64(i%13)*100
	}
	return out
}

func BenchmarkPackRecords(b *testing.B) {
	recs := hwRun(5000)
	c := codecOf[hwRec]()
	var buf []byte
	b.SetBytes(int64(len(recs)) * 48)
	for b.Loop() {
		buf = packRecords(c, buf[:0], recs)
	}
	b.ReportMetric(float64(len(buf))/float64(len(recs)), "B/rec")
}

func BenchmarkUnpackRecords(b *testing.B) {
	recs := hwRun(5000)
	c := codecOf[hwRec]()
	packed := packRecords(c, nil, recs)
	var out []hwRec
	b.SetBytes(int64(len(recs)) * 48)
	for b.Loop() {
		out = unpackRecords(c, out[:0], packed, len(recs))
	}
}

// packEvery makes every full chunk of a list of packable records packed (or none,
// with never) for the duration of a test.
func packEvery(t *testing.T, never bool) {
	t.Helper()
	old := packFromBytes
	packFromBytes = 0
	if never {
		packFromBytes = math.MaxInt
	}
	t.Cleanup(func() { packFromBytes = old })
}

// roundTrip packs recs and unpacks them.
func roundTrip[T any](t *testing.T, recs []T) []T {
	t.Helper()
	c := codecOf[T]()
	require.NotNil(t, c)
	packed := packRecords(c, []byte("kept"), recs)
	require.Equal(t, "kept", string(packed[:4]), "what dst held is kept")
	var out []T
	return unpackRecords(c, out, packed[4:], len(recs))
}

// TestRecordCodecRoundTrip: every packable candidate type comes back exactly, with
// the extremes of each field, runs of equal and of wildly different records, and
// intervals that end before they start or span the whole int64 range.
func TestRecordCodecRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	extremes := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, noConn, 1_736_408_883_700_059_821}
	i64 := func() int64 {
		if rng.IntN(3) == 0 {
			return extremes[rng.IntN(len(extremes))]
		}
		return rng.Int64() >> rng.IntN(64)
	}
	iv := func() profile.Interval { return profile.Interval{StartNs: i64(), EndNs: i64()} }
	const n = 3000
	hw := make([]hwRec, n)
	tasks := make([]taskRec, n)
	gens := make([]genRec, n)
	flows := make([]flowEnd, n)
	for i := range n {
		if i > 0 && rng.IntN(4) == 0 { // runs of repeats
			hw[i], tasks[i], gens[i], flows[i] = hw[i-1], tasks[i-1], gens[i-1], flows[i-1]
			continue
		}
		hw[i] = hwRec{pid: i64(), iv: iv(), stream: i64(), conn: i64(), taskType: uint16(i64()), name: uint32(i64())}
		tasks[i] = taskRec{iv: iv(), stream: i64(), size: i64(), row: uint32(i64()), name: uint32(i64()), transport: uint32(i64()), link: uint32(i64()),
			src: int32(i64()), dst: int32(i64())}
		gens[i] = genRec{iv: iv(), row: uint32(i64()), name: uint32(i64())}
		flows[i] = flowEnd{deviceNs: i64(), num: i64(), str: uint32(i64()), isNum: rng.IntN(2) == 0}
	}
	assert.Equal(t, hw, roundTrip(t, hw))
	assert.Equal(t, tasks, roundTrip(t, tasks))
	assert.Equal(t, gens, roundTrip(t, gens))
	assert.Equal(t, flows, roundTrip(t, flows))
	assert.Empty(t, roundTrip(t, []hwRec{}))
}

// TestRecordCodecOnlyPlainTypes: records holding pointers (opRec's strings) or kinds
// the codec does not know are never packed.
func TestRecordCodecOnlyPlainTypes(t *testing.T) {
	assert.Nil(t, codecOf[opRec]())
	assert.Nil(t, codecOf[struct{ f float64 }]())
	assert.Nil(t, codecOf[struct{ a [2]int64 }]())
	assert.Nil(t, codecOf[struct{ p *int }]())
	type wide struct{ a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q int8 }
	assert.Nil(t, codecOf[wide](), "more fields than the codec keeps")
	c := codecOf[hwRec]()
	require.NotNil(t, c)
	assert.Len(t, c.fields, 7)
	assert.Equal(t, 1, c.fields[2].fromField, "an interval's end is written from its start")
	assert.Same(t, c, codecOf[hwRec](), "worked out once")
}

// TestChunksPacked: past packFromBytes a list's full chunks are packed, and read,
// joined, updated and reset as the unpacked ones are.
func TestChunksPacked(t *testing.T) {
	recs := hwRun(200_000)
	var a, b chunks[hwRec]
	for _, r := range recs[:150_000] {
		a.add(r)
	}
	for _, r := range recs[150_000:] {
		b.add(r)
	}
	require.Greater(t, len(a.parts), 10)
	for _, p := range a.parts[:len(a.parts)-1] {
		assert.True(t, p.isPacked(), "a full chunk is packed, those before packFromBytes too")
	}
	assert.False(t, a.parts[len(a.parts)-1].isPacked(), "the chunk being filled is not packed")
	assert.Less(t, a.bytes(), 150_000*int(unsafe.Sizeof(hwRec{}))/3, "packing took little off")
	require.Equal(t, recs[:150_000], chunkValues(&a))

	a.join(&b)
	a.add(hwRec{pid: 42})
	a.update(func(part []hwRec) {
		for i := range part {
			part[i].stream++
		}
	})
	want := append(slices.Clone(recs), hwRec{pid: 42})
	for i := range want {
		want[i].stream++
	}
	require.Equal(t, want, chunkValues(&a))
	require.Equal(t, want, chunkValues(&a), "an update is applied once, however often the list is read")
	assert.Equal(t, len(want), a.len())

	a.reset(scratchKeepBytes)
	assert.Zero(t, a.len())
	for _, p := range a.spare {
		assert.Empty(t, p)
	}
	a.add(hwRec{pid: 1})
	assert.Equal(t, []hwRec{{pid: 1}}, chunkValues(&a))
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
			packFromBytes = 0
			assert.Equal(t, want, parseTraceFile(t, p), "alone")
			if strings.Contains(p, "imagenet") { // the lists were packed indeed
				f, err := os.Open(p)
				require.NoError(t, err)
				defer f.Close()
				for len(traceScratches) > 0 { // chunks kept by earlier tests might hold it all
					<-traceScratches
				}
				st := newTraceState(p)
				require.NoError(t, readStream(f, p, st.read))
				for _, list := range []bool{st.hw.parts[1].isPacked(), st.tasks.parts[1].isPacked(), st.generic.parts[1].isPacked(),
					st.overlap.parts[1].isPacked(), st.flowEnds.parts[1].isPacked(), st.flowNums.parts[1].isPacked()} {
					assert.True(t, list)
				}
				// What the packed records of a real trace take, against their size as
				// they are (docs/performance.md's bytes an event rest on it).
				var got, raw int
				for _, c := range []interface{ packedAndRaw() (int, int) }{&st.hw, &st.tasks, &st.generic, &st.overlap, &st.flowEnds, &st.flowNums} {
					g, r := c.packedAndRaw()
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

// packedAndRaw is the bytes of c's packed chunks and what their records take as they
// are.
func (c *chunks[T]) packedAndRaw() (packed, raw int) {
	var t T
	for _, p := range c.parts {
		if p.isPacked() {
			packed += len(p.packed)
			raw += p.n * int(unsafe.Sizeof(t))
		}
	}
	return packed, raw
}

// TestHardwareCountsManyProcesses: the counts finish sizes its lists by stay cheap
// when every hardware task names a process of its own (a damaged or hostile trace):
// a scan of the processes per task made 150 000 of them take seconds.
func TestHardwareCountsManyProcesses(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Ascend Hardware"}}`)
	const n = 150_000
	for i := range n {
		fmt.Fprintf(&b, `,{"ph": "X", "name": "k", "pid": %d, "tid": 1, "ts": "%d", "dur": 1, "args": {"Task Type": "AI_CORE"}}`, i%n+1, 1000+i)
	}
	b.WriteString("]")
	start := time.Now()
	tl, err := ParseTraceView(strings.NewReader(b.String()), "many.json")
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Len(t, tl.Compute, 1, "only process 1 is Ascend Hardware")
	assert.Equal(t, n+1, tl.Events)
}
