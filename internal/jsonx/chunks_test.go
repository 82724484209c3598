package jsonx

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The record types of a trace's candidate lists, as the trace reader has them: span
// is an interval, the others plain (packable) records but opRec, which holds a string.
type span struct{ StartNs, EndNs int64 }

func init() { PackAsSpan[span]() }

type hwRec struct {
	pid      int64
	iv       span
	stream   int64
	conn     int64
	taskType uint16
	name     uint32
}

type taskRec struct {
	iv                    span
	stream                int64
	size                  int64
	row                   uint32
	name, transport, link uint32
	src, dst              int32
}

type genRec struct {
	iv   span
	row  uint32
	name uint32
}

type opRec struct {
	pid, tid int64
	conn     int64
	op       struct{ name string }
}

type flowEnd struct {
	deviceNs int64
	num      int64
	str      uint32
	isNum    bool
}

const (
	noConn        = math.MinInt64
	testKeepBytes = 2 << 20
)

func chunkValues[T any](c *Chunks[T]) []T {
	var out []T
	for p := range c.All() {
		out = append(out, p...)
	}
	return out
}

// TestChunksKeepOrderWithoutCopying: elements stay where they were put (a pointer
// taken early still sees the element) and come back in order; chunks double up to
// maxChunkBytes, so the room left over is at most one chunk.
func TestChunksKeepOrderWithoutCopying(t *testing.T) {
	var c Chunks[opRec] // a type with pointers: never packed
	c.Add(opRec{pid: 0})
	first := &c.parts[0].recs[0]
	const n = 100_000
	for i := 1; i < n; i++ {
		c.Add(opRec{pid: int64(i)})
	}
	first.conn = 7 // the element was never moved
	got := chunkValues(&c)
	require.Len(t, got, n)
	assert.Equal(t, n, c.Len())
	assert.Equal(t, int64(7), got[0].conn)
	for i, h := range got {
		require.Equal(t, int64(i), h.pid)
	}
	maxLen := maxChunkBytes / int(unsafe.Sizeof(opRec{}))
	assert.Equal(t, minChunkLen, cap(c.parts[0].recs))
	for _, p := range c.parts[:len(c.parts)-1] {
		assert.False(t, p.isPacked())
		assert.Equal(t, len(p.recs), cap(p.recs), "only the last chunk has room")
		assert.LessOrEqual(t, cap(p.recs), maxLen)
	}
	assert.Less(t, c.Bytes()-n*int(unsafe.Sizeof(opRec{})), maxChunkBytes, "more than one chunk spare")
}

// TestChunksJoin: a joined list is the first's elements then the second's, sharing
// the second's chunks; what is added after goes at the end.
func TestChunksJoin(t *testing.T) {
	var a, b, empty Chunks[genRec]
	for i := range 100 {
		a.Add(genRec{row: uint32(i)})
	}
	for i := range 1000 {
		b.Add(genRec{row: uint32(100 + i)})
	}
	inB := &b.parts[0].recs[0]
	a.Join(&b)
	a.Join(&empty)
	a.Add(genRec{row: 1100})
	assert.Equal(t, 0, b.Len())
	assert.Nil(t, b.parts)
	got := chunkValues(&a)
	require.Len(t, got, 1101)
	assert.Equal(t, 1101, a.Len())
	for i, g := range got {
		require.Equal(t, uint32(i), g.row)
	}
	inB.name = 9
	assert.Equal(t, uint32(9), a.parts[2].recs[0].name, "b's chunks are a's now, not copies")
}

// TestChunksResetKeepsZeroedChunks: reset keeps chunks up to its budget, cleared,
// and the next elements fill them before any new chunk is made; release keeps none.
func TestChunksResetKeepsZeroedChunks(t *testing.T) {
	var c Chunks[flowEnd]
	for i := range 10_000 {
		c.Add(flowEnd{num: int64(i), deviceNs: 1})
	}
	size := int(unsafe.Sizeof(flowEnd{}))
	budget := 1000 * size
	c.Reset(budget)
	assert.Equal(t, 0, c.Len())
	assert.Nil(t, c.parts)
	kept := 0
	for _, p := range c.spare {
		kept += cap(p) * size
		assert.Empty(t, p)
		for _, f := range p[:cap(p)] {
			require.Zero(t, f, "a kept chunk still holds an old element")
		}
	}
	assert.Positive(t, kept)
	assert.LessOrEqual(t, kept, budget)
	assert.Equal(t, kept, c.Bytes())

	spare := len(c.spare)
	for i := range 50 {
		c.Add(flowEnd{num: int64(i)})
	}
	assert.Len(t, c.spare, spare-1, "a kept chunk was used")
	got := chunkValues(&c)
	require.Len(t, got, 50)
	assert.Equal(t, int64(49), got[49].num)

	c.Reset(budget) // again: what is kept stays within the budget
	assert.LessOrEqual(t, c.Bytes(), budget)
	c.Release()
	assert.Zero(t, c.Bytes())
	assert.Zero(t, c.Len())
}

// hwRun is n hardware tasks of one stream as a trace has them: times advancing a
// little, ids repeating.
func hwRun(n int) []hwRec {
	out := make([]hwRec, n)
	t := int64(1_736_408_883_700_059_821)
	for i := range out {
		d := int64(1000 + i%700)
		out[i] = hwRec{pid: 3170820512, iv: span{StartNs: t, EndNs: t + d}, stream: 7, conn: int64(400_000 + i), taskType: 2, name: uint32(i % 40)}
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
	old := PackFromBytes
	PackFromBytes = 0
	if never {
		PackFromBytes = math.MaxInt
	}
	t.Cleanup(func() { PackFromBytes = old })
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
	iv := func() span { return span{StartNs: i64(), EndNs: i64()} }
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

// TestChunksPacked: past PackFromBytes a list's full chunks are packed, and read,
// joined, updated and reset as the unpacked ones are.
func TestChunksPacked(t *testing.T) {
	recs := hwRun(200_000)
	var a, b Chunks[hwRec]
	for _, r := range recs[:150_000] {
		a.Add(r)
	}
	for _, r := range recs[150_000:] {
		b.Add(r)
	}
	require.Greater(t, len(a.parts), 10)
	for _, p := range a.parts[:len(a.parts)-1] {
		assert.True(t, p.isPacked(), "a full chunk is packed, those before PackFromBytes too")
	}
	assert.False(t, a.parts[len(a.parts)-1].isPacked(), "the chunk being filled is not packed")
	assert.Less(t, a.Bytes(), 150_000*int(unsafe.Sizeof(hwRec{}))/3, "packing took little off")
	require.Equal(t, recs[:150_000], chunkValues(&a))

	a.Join(&b)
	a.Add(hwRec{pid: 42})
	a.Update(func(part []hwRec) {
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
	assert.Equal(t, len(want), a.Len())

	a.Reset(testKeepBytes)
	assert.Zero(t, a.Len())
	for _, p := range a.spare {
		assert.Empty(t, p)
	}
	a.Add(hwRec{pid: 1})
	assert.Equal(t, []hwRec{{pid: 1}}, chunkValues(&a))
}
