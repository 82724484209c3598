package parser

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"runtime"
	"sync"

	"github.com/hcclprof/hcclprof/internal/jsonx"
)

// A large trace on disk is read by several goroutines, each from its own part of the
// event array, then merged in file order: one rank of a real job is a 0.1–2 GB trace,
// and parsing it is CPU-bound. Where a part begins is guessed (an event boundary
// found by its bytes, "},{"), and proven when the part before it reaches exactly that
// offset as the start of an event; anything unexpected (a guess inside a string, a
// syntax error, string pids, damaged events whose messages number the events) makes
// the caller read the file again from the start, alone, so the result and every
// message are those of the one-goroutine reader.

// parallelTraceMinBytes is the smallest trace split into parts; parallelPartBytes the
// least size of a part.
var (
	parallelTraceMinBytes int64 = 32 << 20
	parallelPartBytes     int64 = 16 << 20
)

// errSplitFailed makes the caller read the trace alone.
var errSplitFailed = errors.New("the trace's parts did not join")

type statFile interface {
	io.ReaderAt
	Stat() (fs.FileInfo, error)
}

// parseTraceParallel reads a trace file in parts when it is large, positioned at its
// start and more than one CPU can run; ok is false when it did not (then nothing of r
// was consumed).
func parseTraceParallel(r io.Reader, file string) (tl *traceTimeline, ok bool) {
	f, isFile := r.(statFile)
	if !isFile {
		return nil, false
	}
	if sk, isSeeker := r.(io.Seeker); !isSeeker {
		return nil, false
	} else if pos, err := sk.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < parallelTraceMinBytes {
		return nil, false
	}
	size := fi.Size()
	parts := int(min(int64(runtime.GOMAXPROCS(0)), size/parallelPartBytes, 16))
	if parts < 2 {
		return nil, false
	}
	var starts []int64 // starts[k]: the offset of the first event of part k+1
	for k := 1; k < parts; k++ {
		from := int64(k) * size / int64(parts)
		if len(starts) > 0 && from <= starts[len(starts)-1] {
			continue
		}
		if off, found := jsonx.GuessObjectInArray(f, from, size); found {
			starts = append(starts, off)
		}
	}
	if len(starts) == 0 {
		return nil, false
	}
	tl, err = readTraceParts(f, size, file, starts)
	if err != nil {
		return nil, false
	}
	return tl, true
}

// partResult is one part's events, or why it failed.
type partResult struct {
	st    *traceState
	endAt int64 // the last part: the offset of the array's closing ']'
	err   error
}

// readTraceParts reads part 0 (the file's start, through readChromeTrace) in this
// goroutine and the parts beginning at starts in others; part 0, on reaching starts[0],
// waits for the others, takes in their events and jumps to the last part's ']' to read
// the rest of the file. Any failure is errSplitFailed or a parse error: the caller reads
// the file alone then.
func readTraceParts(f io.ReaderAt, size int64, file string, starts []int64) (*traceTimeline, error) {
	results := make([]partResult, len(starts))
	var wg sync.WaitGroup
	for k, start := range starts {
		stopAt := int64(-1)
		if k+1 < len(starts) {
			stopAt = starts[k+1]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[k] = readPart(f, size, file, start, stopAt)
		}()
	}
	st := newTraceState(file)
	s := jsonx.NewStream(io.NewSectionReader(f, 0, size))
	defer s.Release()
	joined := false
	s.ChunkEnd = func(s *jsonx.Stream) (jsonx.ChunkNext, error) {
		switch off := s.Offset(); {
		case joined || off < starts[0]:
			return jsonx.ChunkRead, nil
		case off > starts[0]:
			return 0, errSplitFailed
		}
		wg.Wait()
		for _, res := range results {
			if res.err != nil {
				return 0, errSplitFailed
			}
			if !st.absorb(res.st) {
				return 0, errSplitFailed
			}
		}
		joined = true
		s.MoveTo(io.NewSectionReader(f, 0, size), results[len(results)-1].endAt)
		return jsonx.ChunkMoved, nil
	}
	err := st.read(s)
	if !joined {
		wg.Wait() // the array ended before the first part's start: the guess was wrong
		return nil, errSplitFailed
	}
	if err != nil {
		return nil, err
	}
	return st.finish(), nil
}

// readPart reads the events from start (an event's '{') to stopAt (the next part's
// first event), or to the array's end when stopAt is -1.
func readPart(f io.ReaderAt, size int64, file string, start, stopAt int64) partResult {
	st := newTraceState(file)
	s := jsonx.NewStream(io.NewSectionReader(f, start, size-start))
	defer s.Release()
	s.Base = start
	s.ChunkEnd = func(s *jsonx.Stream) (jsonx.ChunkNext, error) {
		switch off := s.Offset(); {
		case stopAt < 0 || off < stopAt:
			return jsonx.ChunkRead, nil
		case off == stopAt:
			return jsonx.ChunkStop, nil
		}
		return 0, errSplitFailed
	}
	if err := readEventList(s, file, st.event, 0); err != nil {
		return partResult{err: err}
	}
	if stopAt >= 0 {
		if s.Offset() != stopAt {
			return partResult{err: errSplitFailed} // the array ended before the next part
		}
		return partResult{st: st}
	}
	// readEventList consumed the closing ']'.
	return partResult{st: st, endAt: s.Offset() - 1}
}

// absorb appends the events of o, read from the part of the file after st's, as if
// st had read them itself. It refuses (false) what cannot be joined exactly: string
// pids (numbered in the order first seen) and dropped events (named by their number).
func (st *traceState) absorb(o *traceState) bool {
	if len(o.strPids) > 0 || len(st.strPids) > 0 || o.noDur > 0 || o.noPid > 0 {
		return false
	}
	st.events += o.events
	maps.Copy(st.procName, o.procName)
	maps.Copy(st.threadName, o.threadName)
	maps.Copy(st.threadSort, o.threadSort)
	maps.Copy(st.flowStarts, o.flowStarts)
	// o's ids of names, strings and rows, as st's; its records are rewritten (in place,
	// or as a packed chunk is read: see chunks.update) and their chunks joined to
	// st's, not copied.
	taskTypes, names, strs := st.taskTypes.Merge(&o.taskTypes), st.names.Merge(&o.names), st.strs.Merge(&o.strs)
	rows := make([]uint32, len(o.rows))
	for i, at := range o.rows {
		rows[i] = st.rowID(at.pid, at.tid)
	}
	for pid, n := range o.hwByPid.counts() {
		st.hwByPid.add(pid, n)
	}
	for i, n := range o.genericByRow {
		*growTo(&st.genericByRow, rows[i]) += n
	}
	for i, byKind := range o.overlapByRow {
		mine := growTo(&st.overlapByRow, rows[i])
		for k, n := range byKind {
			mine[k] += n
		}
	}
	o.hw.Update(func(part []hwRec) {
		for i := range part {
			h := &part[i]
			h.taskType, h.name = taskTypes[h.taskType], names[h.name]
		}
	})
	o.tasks.Update(func(part []taskRec) {
		for i := range part {
			t := &part[i]
			t.row, t.name, t.transport, t.link = rows[t.row], strs[t.name], strs[t.transport], strs[t.link]
		}
	})
	for _, list := range []*jsonx.Chunks[genRec]{&o.generic, &o.overlap} {
		list.Update(func(part []genRec) {
			for i := range part {
				g := &part[i]
				g.row, g.name = rows[g.row], strs[g.name]
			}
		})
	}
	o.flowEnds.Update(func(part []flowEnd) {
		for i := range part {
			if f := &part[i]; !f.isNum {
				f.str = strs[f.str]
			}
		}
	})
	st.hw.Join(&o.hw)
	st.ops.Join(&o.ops)
	st.tasks.Join(&o.tasks)
	st.generic.Join(&o.generic)
	st.overlap.Join(&o.overlap)
	st.flowEnds.Join(&o.flowEnds)
	st.flowNums.Join(&o.flowNums)
	st.steps = append(st.steps, o.steps...)
	return true
}
