package parser

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/order"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// traceTimeline is what hcclprof keeps of a Chrome-trace timeline (torch_npu's
// trace_view.json, msprof's msprof_*.json): step markers, device compute tasks, HCCL
// ops and tasks, the profiler's Overlap Analysis rows, and host→device flows.
type traceTimeline struct {
	profile.Timeline
	Overlap profile.OverlapLayer // the trace's Overlap Analysis rows
	Events  int                  // events read
	// Problems name the events dropped as damaged (a complete event without the dur or
	// the pid it must carry), by file and event number.
	Problems []string
}

// Process and thread names of the layers, as written by torch_npu and msprof
// (docs/formats.md §2.4, §11).
const (
	procAscendHardware = "Ascend Hardware"
	procOverlap        = "Overlap Analysis"
)

func isHCCLProcess(name string) bool { return name == "HCCL" || name == "Communication" }

var planeRe = regexp.MustCompile(`^Plane (\d+)$`)

// computeTaskTypes are the Ascend Hardware task types that count as computation.
// msprof-analyze's set plus DSA_SQE (the dropout mask generator), which torch_npu's
// Overlap Analysis counts as Computing (checked on imagenet-2rank-level1).
var computeTaskTypes = map[string]bool{
	"AI_CORE": true, "AI_VECTOR_CORE": true, "AI_CPU": true, "MIX_AIC": true,
	"MIX_AIV": true, "FFTS_PLUS": true, "DSA_SQE": true,
}

// nonComputeTaskTypes are hardware task types that are copies, synchronisation or the
// hardware view of HCCL tasks.
var nonComputeTaskTypes = map[string]bool{
	"SDMA": true, "Write Value": true, "Notify Wait": true, "Notify Record": true,
	"Notify_Wait": true, "Notify_Record": true, "EVENT_RECORD_SQE": true,
	"EVENT_WAIT_SQE": true, "PCIE_DMA_SQE": true, "SDMA_SQE": true,
	"PLACE_HOLDER_SQE": true, "WRITE_VALUE_SQE": true, "NOTIFY_RECORD_SQE": true,
	"NOTIFY_WAIT_SQE": true, "CAPTURE_RECORD_SQE": true, "CAPTURE_WAIT_SQE": true,
	"RDMA": true, "RDMA_SQE": true, "COND_SQE": true, "END_SQE": true,
	// Older msprof (CANN ≤ 7) names the runtime tasks themselves: the hardware view of
	// HCCL tasks and stream events, as in msprof-mindspore-alexnet (REDUCE_ASYNC, the
	// pre-V2 name, is not seen there). Counting them would put every HCCL task into
	// Computing; AI_CORE + AI_CPU alone reproduce that trace's Overlap Analysis.
	"NOTIFY_RECORD": true, "NOTIFY_WAIT": true, "EVENT_RECORD": true, "EVENT_WAIT": true,
	"EVENT_RESET": true, "MEMCPY_ASYNC": true, "REDUCE_ASYNC": true, "REDUCE_ASYNC_V2": true,
	// The profiler's own switch tasks (torchnpu-910b3-cann9-5step).
	"PROFILING_ENABLE": true, "PROFILING_DISABLE": true,
}

// nonComputeTaskNames are the names, upper-cased without spaces and underscores, of
// hardware tasks that are never computation whatever their Task Type says: HCCL's own
// tasks as its layer and the hardware layer name them (Notify_Wait and "Notify Wait",
// Memcpy, Reduce_Inline, RDMASend, "Write Value", SDMA, ...), stream events and the
// runtime's copies. A 2024 torch_npu export typed every hardware task "Other" and put
// HCCL's tasks in the hardware layer; read by type alone they were computation.
var nonComputeTaskNames = map[string]bool{
	"NOTIFYWAIT": true, "NOTIFYRECORD": true, "MEMCPY": true, "MEMCPYASYNC": true,
	"REDUCEINLINE": true, "REDUCETBE": true, "INLINEREDUCE": true, "REDUCEASYNC": true,
	"REDUCEASYNCV2": true, "RDMASEND": true, "RDMA": true, "RDMASQE": true, "WRITEVALUE": true,
	"SDMA": true, "SDMASQE": true, "LOCALCOPY": true, "EVENTRECORD": true, "EVENTWAIT": true,
	"EVENTRESET": true, "PROFILINGENABLE": true, "PROFILINGDISABLE": true,
}

// taskNameFolder drops the spaces and underscores task names are spelled with; built
// once, since every hardware task's name passes through it.
var taskNameFolder = strings.NewReplacer(" ", "", "_", "")

func normalTaskName(name string) string {
	return strings.ToUpper(taskNameFolder.Replace(name))
}

// isCommTaskName reports whether a hardware task's name says it is HCCL's (or another
// non-compute runtime task) rather than a kernel.
func isCommTaskName(name string) bool {
	if strings.HasPrefix(name, "hcom_") || strings.HasPrefix(name, "HCCL") {
		return true
	}
	return nonComputeTaskNames[normalTaskName(name)]
}

// hwTaskClass is what the hardware layer around a task says of it: whether it runs on
// a stream that carries HCCL tasks, or belongs to the launch of an HCCL op.
type hwTaskClass struct {
	onCommStream bool
	tiedToCommOp bool
}

// isComputeTask decides whether a hardware task is computation, first by what it is
// (on a communication stream, launched for an HCCL op, named as an HCCL or runtime
// task: not computation, whatever its Task Type), then by its Task Type. Older traces
// label most kernels "Other" (torchnpu-1rank-nohccl); there the Overlap Analysis
// counts every kernel except memory copies.
func isComputeTask(taskType, name string, c hwTaskClass) bool {
	if c.onCommStream || c.tiedToCommOp || isCommTaskName(name) {
		return false
	}
	if computeTaskTypes[taskType] {
		return true
	}
	if nonComputeTaskTypes[taskType] {
		return false
	}
	u := strings.ToUpper(name)
	return !strings.Contains(u, "MEMCPY") && !strings.Contains(u, "MEMSET_ASYNC")
}

type pidTid struct{ pid, tid int64 }

// pidNames looks up process names, remembering the last: a trace's events come in long
// runs of one process, and a map lookup per event was a fifth of finish's time.
type pidNames struct {
	names map[int64]string
	pid   int64
	name  string
	known bool
}

func (p *pidNames) of(pid int64) string {
	if !p.known || pid != p.pid {
		p.pid, p.name, p.known = pid, p.names[pid], true
	}
	return p.name
}

// hwNameKind is what a hardware task's name says of it under one task type.
type hwNameKind struct {
	taskType                 uint16
	known, compute, backward bool
}

type hwRec struct {
	pid      int64
	iv       profile.Interval
	stream   int64 // the stream id argument, else the row's tid (rows are "Stream N")
	conn     int64 // connection_id; noConn when absent
	taskType uint16
	name     uint32
}

// noConn marks an event without a connection_id.
const noConn = math.MinInt64

type opRec struct {
	pid, tid int64
	conn     int64 // connection_id, shared with the hardware tasks of its launch; noConn when absent
	op       profile.CommOp
}

// taskRec is an HCCL task as read, before its row's process is known to be HCCL's.
// Its strings are ids in traceState.strs and its row an id in traceState.rows:
// a big trace holds hundreds of thousands of these until finish, and as a whole
// CommTask with its process and thread a record took 136 bytes where this takes 56.
type taskRec struct {
	iv                    profile.Interval
	stream                int64 // the "stream id" argument; noConn when absent
	size                  int64
	row                   uint32
	name, transport, link uint32
	src, dst              int32 // -1 for none
}

// genRec is another complete event (an HCCL row without task arguments, a CANN
// event, an Overlap Analysis row), its name an id in traceState.strs.
type genRec struct {
	iv   profile.Interval
	row  uint32
	name uint32
}

// flowStart is the host start of a host→device flow with an integer id.
type flowStart struct {
	id, hostNs int64
}

// flowStartsByID is st's integer-id flow starts sorted by id, the last read of each
// id kept (as a map's last write); st's list is let go.
func (st *traceState) flowStartsByID() []flowStart {
	out := make([]flowStart, 0, st.flowNums.Len())
	for part := range st.flowNums.All() {
		out = append(out, part...)
	}
	done(st, &st.flowNums)
	slices.SortStableFunc(out, func(a, b flowStart) int { return cmp.Compare(a.id, b.id) })
	kept := out[:0]
	for i, s := range out {
		if i+1 < len(out) && out[i+1].id == s.id {
			continue // a later start of the same id
		}
		kept = append(kept, s)
	}
	return kept
}

// flowEnd is the device end of a host→device flow. An id written as a canonical
// integer (torch_npu's are) is kept as that integer, another as a string id.
type flowEnd struct {
	deviceNs int64
	num      int64
	str      uint32
	isNum    bool
}

// An interval's end is packed as its difference from its own start (jsonx.Chunks).
func init() { jsonx.PackAsSpan[profile.Interval]() }

// traceState accumulates candidate events until the process and thread names (which
// may come after the events they name) are all known.
type traceState struct {
	file       string
	procName   map[int64]string
	threadName map[pidTid]string
	threadSort map[pidTid]int64 // thread_sort_index
	planeOf    map[pidTid]int   // plane of a thread, from its name (see plane)
	strPids    map[string]int64
	hw         jsonx.Chunks[hwRec]
	ops        jsonx.Chunks[opRec]
	tasks      jsonx.Chunks[taskRec]
	generic    jsonx.Chunks[genRec]
	overlap    jsonx.Chunks[genRec]
	steps      []profile.StepMarker
	flowStarts map[string]int64 // flow starts by id, for ids not kept as integers
	// Flow starts of integer ids, in the order read (the last of an id counts): a
	// big trace has hundreds of thousands, and as a map they took 6.6 of the 37 MB
	// live when a 1.96 GB trace's file ended; as a packed list, a fraction.
	flowNums  jsonx.Chunks[flowStart]
	flowEnds  jsonx.Chunks[flowEnd]
	taskTypes jsonx.StringIDs[uint16] // of the hardware tasks
	names     jsonx.StringIDs[uint32] // the hardware tasks' names, as written (escapes kept)
	strs      jsonx.StringIDs[uint32] // every other string kept, decoded (see strID)
	rowIDs    map[pidTid]uint32       // see rowID
	// What finish sizes its lists by, counted as the candidates are read: a big
	// trace's candidates are packed, and a pass to count them unpacked them all.
	hwByPid      runCounts // hardware tasks by process
	genericByRow []int     // generic events by row
	overlapByRow [][4]int  // Overlap Analysis rows by row and kind (overlapKind)
	rows         []pidTid
	lastRow      pidTid
	lastRowID    uint32
	lastRowOK    bool
	keepScratch  bool     // the lists go to the next trace (recycle) when finished
	raw          rawEvent // the event being read (see parseRawEventInto)
	events       int
	// Complete events dropped for lacking dur or pid: how many, and the first.
	noDur, noPid           int
	firstNoDur, firstNoPid string
}

// parseTraceView reads a Chrome-trace timeline: a bare JSON array of events or an
// object with "traceEvents". On a syntax error or truncation it returns what was read
// up to that point together with a *SyntaxError naming the byte offset, so callers can
// report a partial result.
func parseTraceView(r io.Reader, file string) (*traceTimeline, error) {
	if tl, ok := parseTraceParallel(r, file); ok {
		return tl, nil
	}
	st := newTraceState(file)
	st.keepScratch = true
	err := jsonx.ReadStream(r, file, st.read)
	tl := st.finish()
	st.recycle()
	return tl, err
}

// traceScratch is the candidate lists of a traceState, kept for the next trace: on a
// cluster, growing them anew for each rank was a quarter of the bytes a parse
// allocated. finish empties them as it is done with each (see chunks.reset).
type traceScratch struct {
	hw               jsonx.Chunks[hwRec]
	ops              jsonx.Chunks[opRec]
	tasks            jsonx.Chunks[taskRec]
	generic, overlap jsonx.Chunks[genRec]
	flowEnds         jsonx.Chunks[flowEnd]
	flowNums         jsonx.Chunks[flowStart]
}

// traceScratches holds a few sets of lists (the ranks read at once).
var traceScratches = make(chan traceScratch, 4)

// scratchKeepBytes is what each list keeps for the next trace: the chunks of a small
// trace, the first chunks of a big one (the rest go to the collector when finish is
// done with them, before the timeline is analysed).
const scratchKeepBytes = 2 << 20

// recycle gives st's lists to the next trace; st must not be used after it.
func (st *traceState) recycle() {
	st.hw.Reset(scratchKeepBytes)
	st.ops.Reset(scratchKeepBytes)
	st.tasks.Reset(scratchKeepBytes)
	st.generic.Reset(scratchKeepBytes)
	st.overlap.Reset(scratchKeepBytes)
	st.flowEnds.Reset(scratchKeepBytes)
	st.flowNums.Reset(scratchKeepBytes)
	sc := traceScratch{hw: st.hw, ops: st.ops, tasks: st.tasks, generic: st.generic, overlap: st.overlap, flowEnds: st.flowEnds, flowNums: st.flowNums}
	st.hw, st.ops, st.tasks, st.generic, st.overlap, st.flowEnds, st.flowNums = jsonx.Chunks[hwRec]{}, jsonx.Chunks[opRec]{}, jsonx.Chunks[taskRec]{}, jsonx.Chunks[genRec]{}, jsonx.Chunks[genRec]{}, jsonx.Chunks[flowEnd]{}, jsonx.Chunks[flowStart]{}
	select {
	case traceScratches <- sc:
	default:
	}
}

// newTraceState starts an empty timeline. Several files read into one state (with
// file set to each in turn) make one timeline, as msprof's sliced exports need: the
// process names of one slice name the events of the others.
func newTraceState(file string) *traceState {
	var sc traceScratch
	select {
	case sc = <-traceScratches:
	default:
	}
	return &traceState{
		hw:         sc.hw,
		ops:        sc.ops,
		tasks:      sc.tasks,
		generic:    sc.generic,
		overlap:    sc.overlap,
		flowEnds:   sc.flowEnds,
		file:       file,
		procName:   map[int64]string{},
		threadName: map[pidTid]string{},
		threadSort: map[pidTid]int64{},
		strPids:    map[string]int64{},
		flowStarts: map[string]int64{},
		flowNums:   sc.flowNums,
		rowIDs:     map[pidTid]uint32{},
	}
}

func (st *traceState) read(s *jsonx.Stream) error {
	return readChromeTrace(s, st.file, st.event, nil)
}

// readChromeTrace reads a Chrome trace from s: a bare JSON array of events, or an
// object whose "traceEvents" member is that array. event parses each event in the
// stream's buffer (see readEvent); an error it returns is reported as a bad event at
// the event's offset. member, when not nil, is given the object's other members (name,
// raw value, offset); otherwise they are skipped. Errors are *SyntaxError naming file.
func readChromeTrace(s *jsonx.Stream, file string, event eventFunc, member func(name string, v []byte, off int64) error) error {
	c, ok := s.Peek()
	if !ok {
		return errAtOffset(file, s.Offset(), "empty file: expected a JSON array of trace events")
	}
	switch c {
	case '[':
		return readTraceEvents(s, file, event)
	case '{':
		s.Pos++
		found := false
		for n := 0; ; n++ {
			c, ok := s.Peek()
			if !ok {
				return errAtOffset(file, s.Offset(), "unexpected end of file: the file is truncated")
			}
			if c == '}' {
				s.Pos++
				break
			}
			if n > 0 {
				if err := s.Consume(','); err != nil {
					return wrapSyntax(file, err)
				}
			}
			key, _, err := s.ReadValue()
			if err != nil {
				return wrapSyntax(file, err)
			}
			name, ok := jsonx.Unquote(key)
			if !ok {
				return errAtOffset(file, s.Offset(), "expected a member name")
			}
			if err := s.Consume(':'); err != nil {
				return wrapSyntax(file, err)
			}
			if name == "traceEvents" {
				found = true
				if err := readTraceEvents(s, file, event); err != nil {
					return err
				}
				continue
			}
			v, off, err := s.ReadValue()
			if err != nil {
				return wrapSyntax(file, err)
			}
			if member != nil {
				if err := member(name, v, off); err != nil {
					return err
				}
			}
		}
		if !found {
			return errAtOffset(file, 0, "a JSON object without \"traceEvents\": not a trace")
		}
		return nil
	default:
		return errAtOffset(file, s.Offset(), "expected '[' or '{' at the start of a trace, found %q", c)
	}
}

func wrapSyntax(file string, err error) error { return jsonx.WrapSyntax(file, err) }

func readTraceEvents(s *jsonx.Stream, file string, event eventFunc) error {
	if err := s.Consume('['); err != nil {
		return wrapSyntax(file, err)
	}
	return readEventList(s, file, event, 0)
}

// readEventList reads the events of an array whose '[' is consumed, from its event n
// (0 at the start: no comma before it), to the closing ']'. A stream of one chunk of a
// trace read in parallel stops earlier, at its chunk's end (see chunkEnd).
func readEventList(s *jsonx.Stream, file string, event eventFunc, n int) error {
	for ; ; n++ {
		c, ok := s.Peek()
		if !ok {
			return wrapSyntax(file, s.EOFErr("expected an event or ']'"))
		}
		if c == ']' {
			s.Pos++
			return nil
		}
		if n > 0 {
			if c != ',' {
				return errAtOffset(file, s.Offset(), "expected ',' or ']' after an event, found %q", c)
			}
			s.Pos++
			if c, ok := s.Peek(); ok && c == ']' { // tolerate a trailing comma
				s.Pos++
				return nil
			}
		}
		if s.ChunkEnd != nil {
			switch next, err := s.ChunkEnd(s); {
			case err != nil:
				return err
			case next == jsonx.ChunkStop:
				return nil
			case next == jsonx.ChunkMoved:
				continue // the stream now stands at the array's ']'
			}
		}
		if err := s.ReadInPlace(file, event); err != nil {
			return err
		}
	}
}

// eventFunc parses the trace event at the start of b, which may go on past it (then
// it returns a jsonx.TruncatedError and acts on nothing), and returns the event's length.
type eventFunc func(b []byte) (int, error)

// wholeEvent makes an eventFunc of a function that wants exactly one event's bytes.
func wholeEvent(fn func(ev []byte) error) eventFunc {
	return func(b []byte) (int, error) {
		end, err := jsonx.SkipValue(b, 0, 0)
		if err != nil {
			return 0, err
		}
		return end, fn(b[:end])
	}
}

// rawEvent holds the fields of one event that hcclprof reads, raw (JSON bytes), and
// the members of its args object that it reads.
type rawEvent struct {
	ph, name, cat, ts, dur, pid, tid, id, args []byte
	argsObject                                 bool // args is an object (its members below are read)
	arg                                        rawArgs
}

// rawArgs are the members of an event's args that hcclprof reads, raw.
type rawArgs struct {
	name, sortIndex, labels, iterationID []byte
	taskType, hcclTaskType               []byte
	dataType, algType, count             []byte
	src, dst, size, transport, link      []byte
	stream, hcclStream, conn             []byte
	isOp                                 bool // data_type, alg_type or count: an op event
}

// parseRawEvent splits the event object at the start of b (which may hold more bytes
// after it) into the fields hcclprof reads, raw, and returns its length. Its args are
// walked in the same pass: each byte is read once.
func parseRawEvent(b []byte) (rawEvent, int, error) {
	var e rawEvent
	n, err := parseRawEventInto(b, &e)
	return e, n, err
}

// parseRawEventInto is parseRawEvent into e, which it clears first. A trace's reader
// keeps one rawEvent for all its events: returned by value, the 650-byte struct was
// cleared and copied on the stack for each event, and at some stack alignments those
// stores alone cost a tenth of the parse.
func parseRawEventInto(b []byte, e *rawEvent) (int, error) {
	*e = rawEvent{}
	it := jsonx.NewObjIter(b)
	if it.Err != nil && len(b) == jsonx.SkipWS(b, 0) {
		it.Err = jsonx.TruncatedError("expected an event")
	}
	for {
		k, ok := it.NextKey()
		if !ok {
			break
		}
		if string(k) == "args" {
			if ai, isObject := it.ObjectValue(); isObject {
				e.arg.read(&ai)
				if e.args, ok = it.After(&ai); !ok {
					break
				}
				e.argsObject = true
				continue
			}
		}
		start := it.I // skipped here, not by it.Value (not inlined): a call less per member
		end, err := jsonx.SkipValue(b, start, it.Depth)
		if err != nil {
			it.Err = err
			break
		}
		it.I = end
		v := b[start:end]
		switch string(k) {
		case "ph":
			e.ph = v
		case "name":
			e.name = v
		case "cat":
			e.cat = v
		case "ts":
			e.ts = v
		case "dur":
			e.dur = v
		case "pid":
			e.pid = v
		case "tid":
			e.tid = v
		case "id":
			e.id = v
		case "args":
			e.args, e.argsObject, e.arg = v, false, rawArgs{}
		}
	}
	return it.I, it.Err
}

// read walks an args object's members, keeping those hcclprof reads.
func (a *rawArgs) read(it *jsonx.ObjIter) {
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		switch string(k) {
		case "name":
			a.name = v
		case "sort_index":
			a.sortIndex = v
		case "labels":
			a.labels = v
		case "Iteration ID":
			a.iterationID = v
		case "Task Type":
			a.taskType = v
		case "task type":
			a.hcclTaskType = v
		case "data_type":
			a.dataType, a.isOp = v, true
		case "alg_type":
			a.algType, a.isOp = v, true
		case "count":
			a.count, a.isOp = v, true
		case "src rank":
			a.src = v
		case "dst rank":
			a.dst = v
		case "size(Byte)":
			a.size = v
		case "transport type":
			a.transport = v
		case "link type":
			a.link = v
		case "Physic Stream Id", "Stream Id":
			a.stream = v
		case "stream id":
			a.hcclStream = v
		case "connection_id":
			a.conn = v
		}
	}
}

func (st *traceState) event(b []byte) (int, error) {
	e := &st.raw
	n, err := parseRawEventInto(b, e)
	if err != nil {
		return 0, err
	}
	st.events++
	if len(e.ph) != 3 { // `"X"`: all the phases we use are one letter
		return n, nil
	}
	switch e.ph[1] {
	case 'M':
		err = st.meta(e)
	case 'X':
		err = st.complete(e)
	case 's', 'f':
		err = st.flow(e)
	}
	return n, err
}

func (st *traceState) pidOf(v []byte) (int64, error) {
	if len(v) == 0 {
		return 0, nil
	}
	if v[0] == '"' {
		s, _ := jsonx.Unquote(v)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		id, ok := st.strPids[s]
		if !ok {
			id = math.MinInt64 + int64(len(st.strPids)) // string pids (Kineto) get ids no int pid uses
			st.strPids[s] = id
		}
		return id, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil {
			return 0, fmt.Errorf("bad pid/tid %q", v)
		}
		n = int64(f)
	}
	return n, nil
}

// ids parses an event's pid and tid.
func (st *traceState) ids(e *rawEvent) (pid, tid int64, err error) {
	if pid, err = st.pidOf(e.pid); err != nil {
		return 0, 0, err
	}
	tid, err = st.pidOf(e.tid)
	return pid, tid, err
}

func (st *traceState) meta(e *rawEvent) error {
	name, _ := jsonx.Unquote(e.name)
	if name != "process_name" && name != "thread_name" && name != "thread_sort_index" {
		return nil
	}
	pid, tid, err := st.ids(e)
	if err != nil {
		return err
	}
	label, _ := jsonx.Unquote(e.arg.name)
	sortIndex, hasSort := jsonx.OptInt(e.arg.sortIndex)
	switch {
	case name == "thread_sort_index":
		if hasSort {
			st.threadSort[pidTid{pid, tid}] = sortIndex
		}
	case name == "process_name":
		st.procName[pid] = label
	default:
		st.threadName[pidTid{pid, tid}] = label
	}
	return nil
}

// timeNs parses a ts value: a string or a number of µs.
func timeNs(v []byte) (int64, error) {
	if len(v) == 0 {
		return 0, fmt.Errorf("missing ts")
	}
	if ns, ok := units.NsFromPlainUs(jsonx.RawStringBody(v)); ok {
		return ns, nil
	}
	if v[0] == '"' {
		s, ok := jsonx.Unquote(v)
		if !ok {
			return 0, fmt.Errorf("bad ts %s", v)
		}
		return units.NsFromUsText(s)
	}
	return units.NsFromUsText(string(v))
}

// durNs parses a dur value (float µs, sometimes a string) to ns.
func durNs(v []byte) (int64, error) {
	if len(v) == 0 {
		return 0, nil
	}
	s := v
	if s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil || f < 0 || math.IsNaN(f) || f > 1e13 {
		return 0, fmt.Errorf("bad dur %s", v)
	}
	return int64(math.Round(f * 1000)), nil
}

// str decodes a JSON string, sharing one copy of each distinct value: task names,
// transports and link types repeat on every one of a rank's hundreds of thousands of
// events, and allocating each anew was most of the objects a cluster's parse made.
func (st *traceState) str(v []byte) string { return st.strs.Values[st.strID(v)] }

// strID is the id of a JSON string's decoded value in st.strs ("" for what is not a
// string).
func (st *traceState) strID(v []byte) uint32 {
	inner := jsonx.RawStringBody(v)
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(inner, '\\') >= 0 {
		out, _ := jsonx.Unquote(v)
		return st.strs.ID(out)
	}
	return st.strs.IDOfBytes(inner)
}

// runCounts counts events by process: a map, with the run of the last process
// counted apart (a process's tasks come in runs, and a map update per task was not
// free).
type runCounts struct {
	byPid map[int64]int
	run   int64 // the process of the current run
	runN  int
}

func (c *runCounts) add(pid int64, n int) {
	if c.runN > 0 && pid != c.run {
		c.flush()
	}
	c.run = pid
	c.runN += n
}

func (c *runCounts) flush() {
	if c.runN == 0 {
		return
	}
	if c.byPid == nil {
		c.byPid = map[int64]int{}
	}
	c.byPid[c.run] += c.runN
	c.runN = 0
}

// counts is the counts by process, the current run included.
func (c *runCounts) counts() map[int64]int {
	c.flush()
	return c.byPid
}

// growTo is the element i of *s, grown to hold it.
func growTo[T any](s *[]T, i uint32) *T {
	if int(i) >= len(*s) {
		*s = append(*s, make([]T, int(i)+1-len(*s))...)
	}
	return &(*s)[i]
}

// rowID is the id of a process and thread in st.rows. Events come in long runs of
// one row, so the last is remembered.
func (st *traceState) rowID(pid, tid int64) uint32 {
	at := pidTid{pid, tid}
	if st.lastRowOK && at == st.lastRow {
		return st.lastRowID
	}
	id, ok := st.rowIDs[at]
	if !ok {
		id = uint32(len(st.rows))
		st.rowIDs[at] = id
		st.rows = append(st.rows, at)
	}
	st.lastRow, st.lastRowID, st.lastRowOK = at, id, true
	return id
}

var profilerStepPrefix = []byte(`"ProfilerStep#`)

func (st *traceState) complete(e *rawEvent) error {
	// Host events (they carry a cat) matter only as step markers.
	if len(e.cat) > 0 && !bytes.HasPrefix(e.name, profilerStepPrefix) {
		return nil
	}
	// A complete event has a length and a process: one without is damaged, and is
	// dropped and counted rather than read as 0 µs long or as process 0.
	if len(e.dur) == 0 {
		if st.noDur++; st.noDur == 1 {
			st.firstNoDur = st.eventLabel(e)
		}
		return nil
	}
	if len(e.cat) == 0 && len(e.pid) == 0 {
		if st.noPid++; st.noPid == 1 {
			st.firstNoPid = st.eventLabel(e)
		}
		return nil
	}
	if len(e.cat) > 0 {
		name, _ := jsonx.Unquote(e.name)
		n, err := strconv.Atoi(strings.TrimPrefix(name, "ProfilerStep#"))
		if err != nil {
			return nil
		}
		iv, err := interval(e)
		if err != nil {
			return err
		}
		st.steps = append(st.steps, profile.StepMarker{Step: n, Interval: iv})
		return nil
	}
	pid, tid, err := st.ids(e)
	if err != nil {
		return err
	}
	iv, err := interval(e)
	if err != nil {
		return err
	}
	if len(e.args) > 0 && !e.argsObject {
		return fmt.Errorf("args: expected an object")
	}
	a := &e.arg
	taskType, hcclTaskType, isOp := a.taskType, a.hcclTaskType, a.isOp
	dataType, algType, count := a.dataType, a.algType, a.count
	src, dst, size, transport, link := a.src, a.dst, a.size, a.transport, a.link
	stream, hcclStream, conn := a.stream, a.hcclStream, a.conn
	switch {
	case taskType != nil:
		tt := st.str(taskType)
		hs := tid
		if n, ok := jsonx.OptInt(stream); ok {
			hs = n
		}
		st.hwByPid.add(pid, 1)
		st.hw.Add(hwRec{pid: pid, iv: iv, stream: hs, conn: connArg(conn), taskType: st.taskTypes.ID(tt), name: st.names.IDOfBytes(jsonx.RawStringBody(e.name))})
	case hcclTaskType != nil:
		name := st.strID(hcclTaskType)
		if st.strs.Values[name] == "" {
			name = st.strID(e.name)
		}
		st.tasks.Add(taskRec{iv: iv, stream: connArg(hcclStream), size: jsonx.IntOrZero(size), row: st.rowID(pid, tid),
			name: name, transport: st.strID(transport), link: st.strID(link), src: int32(rankArg(src)), dst: int32(rankArg(dst))})
	case isOp:
		name, _ := jsonx.Unquote(e.name)
		op := profile.CommOp{Step: -1, Name: name, Type: profile.OpType(name), Group: profile.GroupIDFromName(name), Interval: iv, Count: jsonx.IntOrZero(count)}
		op.DataType = st.str(dataType)
		op.AlgType = st.str(algType)
		st.ops.Add(opRec{pid: pid, tid: tid, conn: connArg(conn), op: op})
	default:
		name := st.strID(e.name)
		rec := genRec{iv: iv, row: st.rowID(pid, tid), name: name}
		if k := overlapKind(st.strs.Values[name]); k >= 0 {
			growTo(&st.overlapByRow, rec.row)[k]++
			st.overlap.Add(rec)
		} else {
			*growTo(&st.genericByRow, rec.row)++
			st.generic.Add(rec)
		}
	}
	return nil
}

func interval(e *rawEvent) (profile.Interval, error) {
	start, err := timeNs(e.ts)
	if err != nil {
		return profile.Interval{}, err
	}
	d, err := durNs(e.dur)
	if err != nil {
		return profile.Interval{}, err
	}
	return profile.Interval{StartNs: start, EndNs: start + d}, nil
}

// connArg parses a connection_id or stream id; noConn when absent.
func connArg(v []byte) int64 {
	if n, ok := jsonx.OptInt(v); ok {
		return n
	}
	return noConn
}

// rankArg parses a src/dst rank; 4294967295 (and anything absent) means none: -1.
func rankArg(v []byte) int {
	if len(v) == 0 {
		return -1
	}
	n := jsonx.IntOrZero(v)
	if n < 0 || n >= 4294967295 || n > math.MaxInt32 {
		return -1
	}
	return int(n)
}

func (st *traceState) flow(e *rawEvent) error {
	if !bytes.Equal(e.cat, asyncNpuCat) {
		if bytes.IndexByte(e.cat, '\\') < 0 {
			return nil
		}
		if cat, _ := jsonx.Unquote(e.cat); cat != "async_npu" {
			return nil
		}
	}
	ts, err := timeNs(e.ts)
	if err != nil {
		return err
	}
	id := jsonx.RawStringBody(e.id)
	num, isNum := jsonx.CanonicalInt(id)
	switch {
	case e.ph[1] == 's' && isNum:
		st.flowNums.Add(flowStart{id: num, hostNs: ts})
	case e.ph[1] == 's':
		st.flowStarts[string(id)] = ts
	case isNum:
		st.flowEnds.Add(flowEnd{deviceNs: ts, num: num, isNum: true})
	default:
		st.flowEnds.Add(flowEnd{deviceNs: ts, str: st.strs.ID(string(id))})
	}
	return nil
}

var asyncNpuCat = []byte(`"async_npu"`)

// finish classifies the candidates now that every process and thread name is known.
// eventLabel names the event being read: its name and its number in the file.
func (st *traceState) eventLabel(e *rawEvent) string {
	name, _ := jsonx.Unquote(e.name)
	return fmt.Sprintf("event %d (%q)", st.events, name)
}

func (st *traceState) finish() *traceTimeline {
	st.raw = rawEvent{} // it points into the stream's buffer, another trace's or unmapped now
	tl := &traceTimeline{Events: st.events, Timeline: profile.Timeline{Steps: st.steps}}
	st.noteDropped(tl)
	rowKinds := st.rowKinds()
	nOps, nTasks := st.countCommEvents(rowKinds)
	st.collectCompute(tl)
	// Each list is let go once read, the hardware tasks (the most), the Overlap rows
	// and the flows before the HCCL lists are made, so that a big trace's candidates
	// and its timeline are not all held at once. (Collecting them at once, forced,
	// lowered the peak RSS of a 1.96 GB trace's analyze by 3%, 157 against 162 MiB:
	// not worth a collection that, in a cluster's load, marks every rank's summaries.)
	done(st, &st.hw)
	st.collectOverlap(tl)
	done(st, &st.overlap)
	st.collectFlows(tl)
	done(st, &st.flowEnds)
	st.flowStarts = nil
	tl.CommOps = make([]profile.CommOp, 0, nOps)
	tl.CommTasks = make([]profile.CommTask, 0, nTasks)
	// HCCL's op and task records (their args say so) anywhere but in HCCL's process: a
	// release that renamed the process would otherwise lose every op and task of the
	// rank without a word (ops from communication.json stood in, unsized).
	strayProcs := map[string]int{}
	st.collectCommOps(tl, strayProcs)
	done(st, &st.ops)
	// Each task's labels are found once per row and strings, by their ids.
	var labels profile.TaskLabelCache[traceTaskLabelKey]
	st.collectCommTasks(tl, rowKinds, strayProcs, &labels)
	done(st, &st.tasks)
	st.collectGenericComm(tl, rowKinds, &labels)
	done(st, &st.generic)
	if len(strayProcs) > 0 {
		var procsText []string
		for _, name := range slices.Sorted(maps.Keys(strayProcs)) {
			procsText = append(procsText, fmt.Sprintf("%q (%d)", name, strayProcs[name]))
		}
		tl.Problems = append(tl.Problems, fmt.Sprintf("%s: HCCL op and task events (with HCCL's arguments) in processes not named %q or %q, which hcclprof reads as HCCL's: %s: not read",
			st.file, "HCCL", "Communication", strings.Join(procsText, ", ")))
	}
	sortTimeline(tl)
	return tl
}

// noteDropped says, on tl, which events were dropped: complete events without dur,
// device events without pid, events of processes never named.
func (st *traceState) noteDropped(tl *traceTimeline) {
	if st.noDur > 0 {
		tl.Problems = append(tl.Problems, fmt.Sprintf("%s: %d complete events without dur, the first %s: dropped", st.file, st.noDur, st.firstNoDur))
	}
	if st.noPid > 0 {
		tl.Problems = append(tl.Problems, fmt.Sprintf("%s: %d device events without pid, the first %s: dropped", st.file, st.noPid, st.firstNoPid))
	}
	if p := st.unnamedProcessEvents(); p != "" {
		tl.Problems = append(tl.Problems, p)
	}
}

// isOpRow says whether a thread is a row of HCCL ops (its name holds
// "Communication"), and returns the name.
func (st *traceState) isOpRow(pid, tid int64) (string, bool) {
	tn := st.threadName[pidTid{pid, tid}]
	return tn, strings.Contains(tn, "Communication")
}

// traceRowKind is what a row is: in HCCL's process, a row of ops.
type traceRowKind struct{ hccl, opRow bool }

// rowKinds finds what each row is, once per row rather than once per event.
func (st *traceState) rowKinds() []traceRowKind {
	rowKinds := make([]traceRowKind, len(st.rows))
	for i, at := range st.rows {
		_, op := st.isOpRow(at.pid, at.tid)
		rowKinds[i] = traceRowKind{hccl: isHCCLProcess(st.procName[at.pid]), opRow: op}
	}
	return rowKinds
}

// countCommEvents counts the ops and tasks the timeline's lists are sized for up
// front: grown by append, these copies were most of what finish allocated. The
// generic events are counted to the list they join: sized for all of them (most are
// on other processes), the ops a cluster's analysis keeps of each rank were mostly
// spare capacity. (ops and tasks are HCCL's but for a few.)
func (st *traceState) countCommEvents(rowKinds []traceRowKind) (nOps, nTasks int) {
	nOps, nTasks = st.ops.Len(), st.tasks.Len()
	for row, n := range st.genericByRow {
		if k := rowKinds[row]; k.hccl {
			if k.opRow {
				nOps += n
			} else {
				nTasks += n
			}
		}
	}
	return nOps, nTasks
}

// collectCompute collects the compute (and backward) kernels from the hardware
// tasks: those of the Ascend Hardware process that are neither on a communication
// stream or connection nor of a non-compute kind.
func (st *traceState) collectCompute(tl *traceTimeline) {
	commStreams, commConns := st.commStreams()
	procs := pidNames{names: st.procName}
	nCompute := 0
	for pid, n := range st.hwByPid.counts() {
		if procs.of(pid) == procAscendHardware {
			nCompute += n
		}
	}
	tl.Compute = make([]profile.Interval, 0, nCompute)
	kinds := make([]hwNameKind, len(st.names.Values))
	for part := range st.hw.All() {
		for i := range part {
			h := &part[i]
			if procs.of(h.pid) != procAscendHardware {
				continue
			}
			if commStreams[h.stream] || h.conn != noConn && commConns[h.conn] {
				continue // communication, whatever its name
			}
			k := &kinds[h.name]
			if !k.known || k.taskType != h.taskType { // the kind of a name under one task type, memoised
				name := st.names.Values[h.name]
				*k = hwNameKind{known: true, taskType: h.taskType, compute: isComputeTask(st.taskTypes.Values[h.taskType], name, hwTaskClass{}),
					backward: profile.IsBackwardKernel(name)}
			}
			if k.compute {
				tl.Compute = append(tl.Compute, h.iv)
				if k.backward {
					tl.BackwardCompute = append(tl.BackwardCompute, h.iv)
				}
			}
		}
	}
}

// collectOverlap collects the Overlap Analysis rows, counted first: grown by append,
// a big trace's lists were allocated five times over.
func (st *traceState) collectOverlap(tl *traceTimeline) {
	var nOverlap [4]int
	for row, byKind := range st.overlapByRow {
		if st.procName[st.rows[row].pid] == procOverlap {
			for k, n := range byKind {
				nOverlap[k] += n
			}
		}
	}
	overlap := [4]*[]profile.Interval{&tl.Overlap.Computing, &tl.Overlap.Communication, &tl.Overlap.CommNotOverlapped, &tl.Overlap.Free}
	for k, n := range nOverlap {
		if n > 0 {
			*overlap[k] = make([]profile.Interval, 0, n)
		}
	}
	for part := range st.overlap.All() {
		for i := range part {
			if g := &part[i]; st.procName[st.rows[g.row].pid] == procOverlap {
				if k := overlapKind(st.strs.Values[g.name]); k >= 0 {
					*overlap[k] = append(*overlap[k], g.iv)
				}
			}
		}
	}
}

// collectFlows collects the host→device flows whose start is known, counted first.
func (st *traceState) collectFlows(tl *traceTimeline) {
	flowNums := st.flowStartsByID()
	flowStart := func(f *flowEnd) (int64, bool) {
		if f.isNum {
			i, ok := slices.BinarySearchFunc(flowNums, f.num, func(s flowStart, id int64) int { return cmp.Compare(s.id, id) })
			if !ok {
				return 0, false
			}
			return flowNums[i].hostNs, true
		}
		host, ok := st.flowStarts[st.strs.Values[f.str]]
		return host, ok
	}
	nFlows := 0
	for part := range st.flowEnds.All() {
		for i := range part {
			if _, ok := flowStart(&part[i]); ok {
				nFlows++
			}
		}
	}
	if nFlows > 0 {
		tl.Flows = make([]profile.DeviceFlow, 0, nFlows)
	}
	for part := range st.flowEnds.All() {
		for i := range part {
			if host, ok := flowStart(&part[i]); ok {
				tl.Flows = append(tl.Flows, profile.DeviceFlow{DeviceNs: part[i].deviceNs, HostNs: host})
			}
		}
	}
}

// collectCommOps collects HCCL's op records in HCCL's process; those elsewhere are
// counted per process in strayProcs.
func (st *traceState) collectCommOps(tl *traceTimeline, strayProcs map[string]int) {
	procs := pidNames{names: st.procName}
	for part := range st.ops.All() {
		for _, o := range part {
			if !isHCCLProcess(procs.of(o.pid)) {
				st.countStray(strayProcs, o.pid)
				continue
			}
			o.op.GroupRow, _ = st.isOpRow(o.pid, o.tid)
			tl.CommOps = append(tl.CommOps, o.op)
		}
	}
}

// traceTaskLabelKey keys a task's labels: its row and strings, by their ids.
type traceTaskLabelKey struct{ row, name, transport, link uint32 }

// collectCommTasks collects HCCL's task records in HCCL's process, with their plane
// and group row; those elsewhere are counted per process in strayProcs.
func (st *traceState) collectCommTasks(tl *traceTimeline, rowKinds []traceRowKind, strayProcs map[string]int, labels *profile.TaskLabelCache[traceTaskLabelKey]) {
	rowOf := st.planeGroupRows(st.isOpRow)
	var last struct {
		row        uint32
		plane      int
		group      string
		known, hcl bool
	}
	for part := range st.tasks.All() {
		for i := range part {
			t := &part[i]
			if !last.known || t.row != last.row { // tasks come in runs of one row
				last.row, last.known, last.hcl = t.row, true, rowKinds[t.row].hccl
				if last.hcl {
					at := st.rows[t.row]
					last.plane, last.group = st.plane(at.pid, at.tid), rowOf[at]
				}
			}
			if !last.hcl {
				st.countStray(strayProcs, st.rows[t.row].pid)
				continue
			}
			taskLabels := labels.Of(traceTaskLabelKey{row: t.row, name: t.name, transport: t.transport, link: t.link}, func() profile.TaskLabels {
				return profile.TaskLabels{GroupRow: last.group, Name: st.strs.Values[t.name],
					TransportType: st.strs.Values[t.transport], LinkType: st.strs.Values[t.link]}
			})
			tl.CommTasks = append(tl.CommTasks, profile.CommTask{Plane: last.plane, TaskLabels: taskLabels,
				Interval: t.iv, SrcRank: int(t.src), DstRank: int(t.dst), SizeBytes: t.size})
		}
	}
}

// collectGenericComm collects the generic events of HCCL's rows: an op on an op row
// (its step not known), else a task.
func (st *traceState) collectGenericComm(tl *traceTimeline, rowKinds []traceRowKind, labels *profile.TaskLabelCache[traceTaskLabelKey]) {
	for part := range st.generic.All() {
		for i := range part {
			g := &part[i]
			if !rowKinds[g.row].hccl {
				continue
			}
			at, name := st.rows[g.row], st.strs.Values[g.name]
			if row, ok := st.isOpRow(at.pid, at.tid); ok {
				tl.CommOps = append(tl.CommOps, profile.CommOp{Step: -1, Name: name, Type: profile.OpType(name),
					Group: profile.GroupIDFromName(name), GroupRow: row, Interval: g.iv})
			} else {
				tl.CommTasks = append(tl.CommTasks, profile.CommTask{TaskLabels: labels.Labels(profile.TaskLabels{Name: name}), Interval: g.iv,
					Plane: st.plane(at.pid, at.tid), SrcRank: -1, DstRank: -1})
			}
		}
	}
}

// sortTimeline puts the timeline's lists in time order (ops and tasks stably).
func sortTimeline(tl *traceTimeline) {
	sortByStart := func(ivs []profile.Interval) {
		sort.Slice(ivs, func(i, j int) bool { return ivs[i].StartNs < ivs[j].StartNs })
	}
	sort.Slice(tl.Steps, func(i, j int) bool { return tl.Steps[i].StartNs < tl.Steps[j].StartNs })
	sortByStart(tl.Compute)
	sortByStart(tl.BackwardCompute)
	order.StableByKey(tl.CommOps, func(o *profile.CommOp) int64 { return o.StartNs })
	order.StableByKey(tl.CommTasks, func(t *profile.CommTask) int64 { return t.StartNs })
	for _, ivs := range [][]profile.Interval{tl.Overlap.Computing, tl.Overlap.Communication, tl.Overlap.CommNotOverlapped, tl.Overlap.Free} {
		sortByStart(ivs)
	}
	sort.Slice(tl.Flows, func(i, j int) bool { return tl.Flows[i].DeviceNs < tl.Flows[j].DeviceNs })
}

// overlapKind is the Overlap Analysis row an event's name puts it on: 0 Computing, 1
// Communication, 2 Communication(Not Overlapped), 3 Free; -1 none.
func overlapKind(name string) int {
	switch name {
	case "Computing", "Compute":
		return 0
	case "Communication":
		return 1
	case "Communication(Not Overlapped)":
		return 2
	case "Free":
		return 3
	}
	return -1
}

// done empties a list finish has read: its first chunks are kept when st's lists go
// to the next trace (keepScratch), the rest are let go.
func done[T any](st *traceState, c *jsonx.Chunks[T]) {
	if st.keepScratch {
		c.Reset(scratchKeepBytes)
	} else {
		c.Release()
	}
}

// commStreams finds the hardware streams that carry communication and the
// connection ids of HCCL ops' launches. A stream carries communication when HCCL's
// layer puts one of its tasks on it ("stream id"), or when most of its hardware tasks
// share an HCCL op's connection_id (the op's launch). HCCL runs on streams of its own,
// so every task on them is communication, whatever its Task Type says.
func (st *traceState) commStreams() (streams, conns map[int64]bool) {
	streams, conns = map[int64]bool{}, map[int64]bool{}
	procs := pidNames{names: st.procName}
	for part := range st.tasks.All() {
		for i := range part {
			if t := &part[i]; t.stream != noConn && isHCCLProcess(procs.of(st.rows[t.row].pid)) {
				streams[t.stream] = true
			}
		}
	}
	var ops []profile.Interval
	for part := range st.ops.All() {
		for i := range part {
			o := &part[i]
			if !isHCCLProcess(procs.of(o.pid)) {
				continue
			}
			if o.conn != noConn {
				conns[o.conn] = true
			}
			if o.op.EndNs > o.op.StartNs {
				ops = append(ops, o.op.Interval)
			}
		}
	}
	if len(ops) == 0 && len(conns) == 0 {
		return streams, conns
	}
	within := newIntervalSet(ops)
	// One pass: a big trace's hardware tasks are packed (chunks), and each pass
	// unpacks them. A run of one stream's tasks is counted at its end.
	//
	// An op's launch may also touch another stream (an event on the compute stream
	// it waits for), so a stream is the op's only when most of its tasks are
	// launches of HCCL ops. And a stream every task of which lies inside an HCCL op
	// is HCCL's side stream: a 2024 torch_npu export named them on no HCCL task row
	// and typed their tasks "Other", so neither stream nor type said so, and counted
	// as computation they made Computing 7.6 times the profiler's. A stream that
	// computes also runs outside the collectives (a step's forward pass at least).
	tied, all := map[int64]int{}, map[int64]int{}
	outside := map[int64]bool{}
	run, runLen, runOutside := int64(0), 0, false
	for part := range st.hw.All() {
		for i := range part {
			h := &part[i]
			if procs.of(h.pid) != procAscendHardware {
				continue
			}
			if runLen > 0 && h.stream != run {
				all[run] += runLen
				if runOutside {
					outside[run] = true
				}
				runLen, runOutside = 0, false
			}
			run = h.stream
			runLen++
			if h.conn != noConn && conns[h.conn] {
				tied[h.stream]++
			}
			if !runOutside && !within.holds(h.iv) {
				runOutside = true
			}
		}
	}
	if runLen > 0 {
		all[run] += runLen
		if runOutside {
			outside[run] = true
		}
	}
	for s, n := range all {
		if 2*tied[s] > n || !outside[s] {
			streams[s] = true
		}
	}
	return streams, conns
}

// intervalSet is a union of intervals, merged and sorted, to ask whether an
// interval lies inside one of them.
type intervalSet []profile.Interval

func newIntervalSet(ivs []profile.Interval) intervalSet {
	if len(ivs) == 0 {
		return nil
	}
	slices.SortFunc(ivs, func(a, b profile.Interval) int { return cmp.Compare(a.StartNs, b.StartNs) })
	merged := ivs[:1]
	for _, iv := range ivs[1:] {
		if last := &merged[len(merged)-1]; iv.StartNs <= last.EndNs {
			last.EndNs = max(last.EndNs, iv.EndNs)
		} else {
			merged = append(merged, iv)
		}
	}
	return merged
}

// holds reports whether iv lies inside one of the set's intervals.
func (s intervalSet) holds(iv profile.Interval) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].EndNs >= iv.EndNs })
	return i < len(s) && s[i].StartNs <= iv.StartNs
}

// unnamedProcessEvents says how many device events (hardware tasks, HCCL ops and
// tasks, Overlap Analysis rows) sit in processes that no process_name event names, ""
// when none do. What such an event is comes from its process's name, so they are not
// read. Every process of the profilers' traces is named: a trace without the HCCL
// process's name lost its tasks and the checks that count them, with the report
// otherwise unchanged (its ops came from communication.json instead).
// countStray counts an HCCL op or task event of a named process that is not HCCL's
// (unnamedProcessEvents reports those of unnamed processes).
func (st *traceState) countStray(by map[string]int, pid int64) {
	if name, named := st.procName[pid]; named {
		by[name]++
	}
}

func (st *traceState) unnamedProcessEvents() string {
	n, first := 0, int64(0)
	count := func(pid int64, k int) {
		if _, named := st.procName[pid]; !named && k > 0 {
			if n == 0 || pid < first {
				first = pid
			}
			n += k
		}
	}
	for pid, k := range st.hwByPid.counts() {
		count(pid, k)
	}
	for part := range st.ops.All() {
		for i := range part {
			count(part[i].pid, 1)
		}
	}
	// Generic events (host API calls, counters) are not counted: hcclprof reads them
	// only from the HCCL process, so an unnamed process's are not missed.
	rowEvents := make([]int, len(st.rows))
	for row, byKind := range st.overlapByRow {
		rowEvents[row] += byKind[0] + byKind[1] + byKind[2] + byKind[3]
	}
	unnamedRow := false
	for _, at := range st.rows {
		if _, named := st.procName[at.pid]; !named {
			unnamedRow = true
			break
		}
	}
	if unnamedRow { // tasks are not counted by row: only counted when it can matter
		for part := range st.tasks.All() {
			for i := range part {
				rowEvents[part[i].row]++
			}
		}
	}
	for row, k := range rowEvents {
		count(st.rows[row].pid, k)
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d device events in processes no process_name event names (the first pid %d): what they are is read from that name, so they were not read", st.file, n, first)
}

// planeGroupRows assigns each plane row to its op row: a "Communication" row starts a
// group and the rows after it belong to it until the next one, as msprof-analyze's
// compare tool reads them (docs/formats.md §2.5). Rows are ordered by thread_sort_index
// when every row of the process has one, else by tid. The order differs in old msprof
// timelines: the "Communication Kernel" row is tid 70000 with sort index 0 and its
// planes tids 0..3 with sort indexes 70000..70003 (the real MindSpore AlexNet
// msprof_0_2_N.json and hccl_0_2_N.json), so by tid no plane would follow it.
// In a process with a single op row every plane belongs to it, whatever the order.
// Rows with events but no thread_name are planes too: left out, their tasks belonged
// to no op and were silently lost (a trace without Plane 3's name lost its tasks).
func (st *traceState) planeGroupRows(isOpRow func(pid, tid int64) (string, bool)) map[pidTid]string {
	byPid := map[int64][]int64{}
	seen := map[pidTid]bool{}
	add := func(k pidTid) {
		if !seen[k] && isHCCLProcess(st.procName[k.pid]) {
			seen[k] = true
			byPid[k.pid] = append(byPid[k.pid], k.tid)
		}
	}
	for k := range st.threadName {
		add(k)
	}
	for _, k := range st.rows {
		add(k)
	}
	out := map[pidTid]string{}
	for pid, tids := range byPid {
		// A row with neither a name nor a sort index has no place in the sort-index
		// order the named rows may share; it keeps to the tid order, or else to the
		// process's only op row (left out, when there are several).
		placeless := func(tid int64) bool {
			k := pidTid{pid, tid}
			_, named := st.threadName[k]
			_, sorted := st.threadSort[k]
			return !named && !sorted
		}
		bySort := true
		for _, tid := range tids {
			_, ok := st.threadSort[pidTid{pid, tid}]
			bySort = bySort && (ok || placeless(tid))
		}
		var unplaced []int64
		if bySort {
			tids = slices.DeleteFunc(tids, func(tid int64) bool {
				if placeless(tid) {
					unplaced = append(unplaced, tid)
					return true
				}
				return false
			})
		}
		key := func(tid int64) int64 {
			if bySort {
				return st.threadSort[pidTid{pid, tid}]
			}
			return tid
		}
		sort.Slice(tids, func(i, j int) bool {
			ki, kj := key(tids[i]), key(tids[j])
			return ki < kj || ki == kj && tids[i] < tids[j]
		})
		var opRows []string
		for _, tid := range tids {
			if name, ok := isOpRow(pid, tid); ok {
				opRows = append(opRows, name)
			}
		}
		row := ""
		if len(opRows) == 1 {
			row = opRows[0]
		}
		for _, tid := range tids {
			if name, ok := isOpRow(pid, tid); ok {
				row = name
				continue
			}
			out[pidTid{pid, tid}] = row
		}
		if len(opRows) == 1 {
			for _, tid := range unplaced {
				out[pidTid{pid, tid}] = opRows[0]
			}
		}
	}
	return out
}

// plane is a task row's plane number: "Plane 3" → 3; otherwise the tid.
func (st *traceState) plane(pid, tid int64) int {
	k := pidTid{pid, tid}
	if n, ok := st.planeOf[k]; ok {
		return n
	}
	n := int(tid)
	if m := planeRe.FindStringSubmatch(st.threadName[k]); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	if st.planeOf == nil {
		st.planeOf = map[pidTid]int{}
	}
	st.planeOf[k] = n // the name is matched once per thread, not once per task
	return n
}
