package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// This file is a small streaming JSON reader for Chrome-trace timelines. Why not
// encoding/json: a trace is hundreds of MB of events of which hcclprof keeps a few
// fields of a minority; decoding each event with encoding/json costs several times
// more than finding its boundaries and the handful of keys we need (see
// BenchmarkTraceView). The reader never builds a tree: each event is parsed where it
// lies in the stream's buffer (readEvent), ObjIter walking its keys without
// allocating; the tokens' rules are the lexer's (jsonlex.go).

// Stream reads consecutive JSON values from r with a sliding buffer. Byte offsets
// are tracked so that errors can name the position in the file.
type Stream struct {
	r       io.Reader
	Buf     []byte
	Pos     int   // next unread byte in buf
	End     int   // end of valid data in buf
	Base    int64 // file offset of buf[0]
	EOF     bool
	ReadErr error // a read error other than io.EOF
	// ChunkEnd, when set, is asked before each event of a trace's event array whether
	// the stream's chunk ends there (a trace read in parallel, traceparallel.go).
	ChunkEnd func(s *Stream) (ChunkNext, error)
}

// ChunkNext is what a stream of one chunk of a trace does at an event.
type ChunkNext int

const (
	ChunkRead  ChunkNext = iota // read the event
	ChunkStop                   // the chunk ends here: return
	ChunkMoved                  // the stream was moved past the other chunks: go on from there
)

const streamChunk = 1 << 20

// NewStream is a Stream of r's reads, in a buffer kept for the next stream (Release).
func NewStream(r io.Reader) *Stream {
	select {
	case b := <-streamBufs:
		return &Stream{r: r, Buf: b}
	default:
		return &Stream{r: r, Buf: make([]byte, 4*streamChunk)}
	}
}

// newMappedStream reads a mapped file (MapFile): the whole file is the buffer, so it
// is never filled, copied into or recycled.
func newMappedStream(data []byte) *Stream {
	s := &Stream{Buf: data, End: len(data), EOF: true}
	if bytes.HasPrefix(data, BOM) {
		s.Pos = len(BOM) // as the CSV reader and jsontree skip it
	}
	return s
}

// streamBufs recycles the streams' buffers: a cluster is thousands of small files,
// and a fresh 4 MiB buffer for each (cleared by the runtime) was two thirds of the
// bytes analyze allocated on 64 generated ranks, and with them much of its GC time. A
// channel rather than a sync.Pool, which every collection empties: a cluster's parse
// collects every few milliseconds, and the buffers were made anew ~30 times on 512
// ranks. It keeps at most 8 (32 MiB).
var streamBufs = make(chan []byte, 8)

// DropStreamBuffers leaves the recycled buffers to the collector once a load is done:
// kept, they were 8 MiB or more of the heap while a cluster's figures are made.
func DropStreamBuffers() {
	for {
		select {
		case <-streamBufs:
		default:
			return
		}
	}
}

// Release gives the buffer back for the next stream; s must not be used after it, nor
// any bytes it handed out. A buffer grown for a huge value is left to the collector.
func (s *Stream) Release() {
	if s.Buf != nil && len(s.Buf) == 4*streamChunk {
		select {
		case streamBufs <- s.Buf:
		default:
		}
	}
	s.Buf = nil
}

// Offset is the file offset of the next unread byte.
func (s *Stream) Offset() int64 { return s.Base + int64(s.Pos) }

// fill reads more input, keeping buf[keep:] (keep ≤ pos) and moving it to the front.
// It returns false when no more input arrives.
func (s *Stream) fill(keep int) bool {
	if s.EOF {
		return false
	}
	if keep > 0 {
		n := copy(s.Buf, s.Buf[keep:s.End])
		s.Base += int64(keep)
		s.Pos -= keep
		s.End = n
	}
	if len(s.Buf)-s.End < streamChunk {
		nb := make([]byte, 2*len(s.Buf))
		copy(nb, s.Buf[:s.End])
		s.Buf = nb
	}
	for {
		n, err := s.r.Read(s.Buf[s.End:])
		s.End += n
		if err != nil {
			s.EOF = true
			if !errors.Is(err, io.EOF) {
				s.ReadErr = err
			}
			return n > 0
		}
		if n > 0 {
			// A UTF-8 byte-order mark before the document (an editor's, or a Windows
			// tool's) is skipped, as the CSV reader and jsontree skip it; offsets
			// still count it.
			if s.Base == 0 && s.Pos == 0 && bytes.HasPrefix(s.Buf[:s.End], BOM) {
				s.Pos = len(BOM)
			}
			return true
		}
	}
}

// Peek skips white space and returns the next byte without consuming it.
func (s *Stream) Peek() (byte, bool) {
	for {
		for s.Pos < s.End {
			c := s.Buf[s.Pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, true
			}
			s.Pos++
		}
		if !s.fill(s.Pos) {
			return 0, false
		}
	}
}

// Consume skips white space and consumes the byte c, or fails.
func (s *Stream) Consume(c byte) error {
	got, ok := s.Peek()
	if !ok {
		return s.EOFErr(fmt.Sprintf("expected %q", c))
	}
	if got != c {
		return fmt.Errorf("byte %d: expected %q, found %q", s.Offset(), c, got)
	}
	s.Pos++
	return nil
}

// EOFErr is the error of a stream that ended (or failed to read) where what was expected.
func (s *Stream) EOFErr(what string) error {
	if s.ReadErr != nil {
		return fmt.Errorf("byte %d: read error: %w", s.Offset(), s.ReadErr)
	}
	return fmt.Errorf("byte %d: unexpected end of file (%s): the file is truncated", s.Offset(), what)
}

// ReadValue consumes one JSON value and returns its bytes, valid until the next call.
// Only the value's boundaries are found here; ObjIter and SkipValue check its syntax.
func (s *Stream) ReadValue() ([]byte, int64, error) {
	c, ok := s.Peek()
	if !ok {
		return nil, s.Offset(), s.EOFErr("expected a value")
	}
	start := s.Pos
	startOff := s.Offset()
	i := s.Pos
	depth := 0
	switch c {
	case '{', '[':
	case '"':
	default:
		// A scalar: read until a delimiter.
		for {
			for i < s.End {
				b := s.Buf[i]
				if b == ',' || b == ']' || b == '}' || b == ' ' || b == '\n' || b == '\r' || b == '\t' {
					s.Pos = i
					return s.Buf[start:i], startOff, nil
				}
				i++
			}
			off := i - start
			if !s.fill(start) {
				s.Pos = s.End
				return s.Buf[0:s.End], startOff, nil
			}
			start = 0
			i = off
		}
	}
	for {
		for i < s.End {
			b := s.Buf[i]
			switch b {
			case '"':
				// Find the closing quote, skipping escaped ones.
				j := i + 1
				for {
					k := bytes.IndexByte(s.Buf[j:s.End], '"')
					if k < 0 {
						j = -1
						break
					}
					j += k
					bs := 0
					for m := j - 1; m > i && s.Buf[m] == '\\'; m-- {
						bs++
					}
					if bs%2 == 0 {
						break
					}
					j++
				}
				if j < 0 {
					goto refill
				}
				i = j + 1
				if depth == 0 {
					s.Pos = i
					return s.Buf[start:i], startOff, nil
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.Pos = i + 1
					return s.Buf[start : i+1], startOff, nil
				}
			}
			i++
		}
	refill:
		// Restart the scan of the current value after refilling: strings may have been
		// cut, so rescan from the value start (values are small; this is rare).
		s.Pos = start
		if !s.fill(start) {
			s.Pos = s.End
			return nil, startOff, fmt.Errorf("byte %d: unexpected end of file inside the value that starts here: the file is truncated", startOff)
		}
		start = s.Pos
		i = start
		depth = 0
	}
}

// ObjIter walks the members of one JSON object held in memory.
type ObjIter struct {
	B     []byte
	I     int
	Err   error
	n     int // members read
	Depth int
}

// NewObjIter iterates over the members of the object at the start of b (after white
// space); Err is set when b does not start with one.
func NewObjIter(b []byte) ObjIter {
	it := ObjIter{B: b}
	it.I = SkipWS(b, 0)
	if it.I >= len(b) || b[it.I] != '{' {
		it.Err = errors.New("expected an object")
		return it
	}
	it.I++
	return it
}

// Next returns the next member's raw key (without quotes, escapes undecoded) and raw
// value. ok is false at the end of the object or on error (then it.err is set).
func (it *ObjIter) Next() (key, val []byte, ok bool) {
	if key, ok = it.NextKey(); !ok {
		return nil, nil, false
	}
	val, ok = it.Value()
	return key, val, ok
}

// Value, after NextKey, skips the member's value and returns it; ok is false on error
// (then it.Err is set).
func (it *ObjIter) Value() (val []byte, ok bool) {
	start := it.I
	end, err := SkipValue(it.B, start, it.Depth)
	if err != nil {
		it.Err = err
		return nil, false
	}
	it.I = end
	return it.B[start:end], true
}

// ObjectValue, after NextKey, is an iterator over the members of the member's value
// when that is an object (ok is false for any other value, the iterator unmoved): the
// caller walks it to its end, in the same pass as the members around it, then passes
// it to After.
func (it *ObjIter) ObjectValue() (sub ObjIter, ok bool) {
	if it.I >= len(it.B) || it.B[it.I] != '{' {
		return ObjIter{}, false
	}
	return ObjIter{B: it.B, I: it.I + 1, Depth: it.Depth + 1}, true
}

// After moves the iterator past the object value that sub, from ObjectValue, has
// walked to its end, and returns the object; ok is false when sub met an error (then
// it.Err is set to it).
func (it *ObjIter) After(sub *ObjIter) (val []byte, ok bool) {
	if sub.Err != nil {
		it.Err = sub.Err
		return nil, false
	}
	start := it.I
	it.I = sub.I
	return it.B[start:sub.I], true
}

// NextKey reads the next member's raw key and the ':' after it, and leaves the
// iterator at the member's value, which the caller reads with next's SkipValue or
// walks itself (parseRawEvent walks "args" in the same pass). ok is false at the end
// of the object or on error.
func (it *ObjIter) NextKey() (key []byte, ok bool) {
	if it.Err != nil {
		return nil, false
	}
	b := it.B
	i := SkipWS(b, it.I)
	if i >= len(b) {
		it.Err = TruncatedError("unterminated object")
		return nil, false
	}
	if b[i] == '}' {
		it.I = i + 1
		return nil, false
	}
	if it.n > 0 {
		if b[i] != ',' {
			it.Err = fmt.Errorf("expected ',' or '}' at +%d", i)
			return nil, false
		}
		if i = SkipWS(b, i+1); i >= len(b) {
			it.Err = TruncatedError("unterminated object")
			return nil, false
		}
	}
	if b[i] != '"' {
		it.Err = fmt.Errorf("expected a member name at +%d", i)
		return nil, false
	}
	kend := keyEnd(b, i)
	if kend < 0 {
		var err error
		if kend, err = skipString(b, i); err != nil {
			it.Err = err
			return nil, false
		}
	}
	key = b[i+1 : kend-1]
	i = SkipWS(b, kend)
	if i >= len(b) {
		it.Err = TruncatedError("unterminated object")
		return nil, false
	}
	if b[i] != ':' {
		it.Err = fmt.Errorf("expected ':' at +%d", i)
		return nil, false
	}
	it.I = SkipWS(b, i+1)
	it.n++
	return key, true
}

// TruncatedError is a syntax error found at the end of the bytes given: the value may
// go on past them. A stream that handed out a part of its buffer reads more and tries
// again (readEventList); anywhere else it is the value's error.
type TruncatedError string

func (e TruncatedError) Error() string { return string(e) }

// isTruncated reports whether err is a TruncatedError: the bytes ended inside a value.
func isTruncated(err error) bool {
	_, ok := err.(TruncatedError)
	return ok
}

// SkipWS returns the index of the first byte at or after b[i] that is not JSON white space.
func SkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// keyEnd is the index after the short plain string starting at b[i] == '"' (a
// member name: "ph", "Task Type"), or -1 for a longer one or one with an escape,
// which skipString reads. A byte loop finds a few bytes' end sooner than
// IndexByte's set-up: the names were a third of the parser's time reading a trace.
func keyEnd(b []byte, i int) int {
	for j, end := i+1, min(i+33, len(b)); j < end; j++ {
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			return -1
		}
	}
	return -1
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	end, err := LexString(b, i, false)
	if err != nil {
		return 0, TruncatedError(err.msg) // only the end of b stops a lenient string
	}
	return end, nil
}

// MaxDepth is the deepest nesting of arrays and objects the scanner reads.
const MaxDepth = 512

// SkipValue returns the index after the JSON value starting at b[i], checking its syntax.
func SkipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, TruncatedError("expected a value")
	}
	if depth > MaxDepth {
		return 0, errors.New("nesting too deep")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		it := ObjIter{B: b, I: i + 1, Depth: depth + 1}
		for {
			if _, _, ok := it.Next(); !ok {
				break
			}
		}
		return it.I, it.Err
	case c == '[':
		j := SkipWS(b, i+1)
		if j >= len(b) {
			return 0, TruncatedError("unterminated array")
		}
		if b[j] == ']' {
			return j + 1, nil
		}
		for {
			end, err := SkipValue(b, j, depth+1)
			if err != nil {
				return 0, err
			}
			j = SkipWS(b, end)
			if j >= len(b) {
				return 0, TruncatedError("unterminated array")
			}
			if b[j] == ']' {
				return j + 1, nil
			}
			if b[j] != ',' {
				return 0, fmt.Errorf("expected ',' or ']' at +%d", j)
			}
			j = SkipWS(b, j+1)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		j, _ := LexNumber(b, i, false) // lenient: it cannot fail
		return j, nil
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == 'N': // Python's json.dump writes these
		return skipLiteral(b, i, "NaN")
	case c == 'I':
		return skipLiteral(b, i, "Infinity")
	}
	return 0, fmt.Errorf("unexpected %q at +%d", b[i], i)
}

// skipLiteral returns the index after the literal lit at b[i]. The bytes given may
// end inside it: that is a TruncatedError, as for strings.
func skipLiteral(b []byte, i int, lit string) (int, error) {
	end, ok, err := LexLiteral(b, i, lit)
	switch {
	case err != nil:
		return 0, TruncatedError(err.msg)
	case !ok:
		return 0, fmt.Errorf("unexpected %q at +%d", b[i], i)
	}
	return end, nil
}

// Unquote decodes a raw JSON string value (with quotes) into a Go string. Escapes
// are rare in traces, so they go through encoding/json.
func Unquote(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var out string
	if err := json.Unmarshal(v, &out); err != nil {
		return "", false
	}
	return out, true
}
