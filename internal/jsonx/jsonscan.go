package parser

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
// lies in the stream's buffer (readEvent), objIter walking its keys without
// allocating; the tokens' rules are the lexer's (jsonlex.go).

// jsonStream reads consecutive JSON values from r with a sliding buffer. Byte offsets
// are tracked so that errors can name the position in the file.
type jsonStream struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread byte in buf
	end  int   // end of valid data in buf
	base int64 // file offset of buf[0]
	eof  bool
	rerr error // a read error other than io.EOF
	// chunkEnd, when set, is asked before each event of a trace's event array whether
	// the stream's chunk ends there (a trace read in parallel, traceparallel.go).
	chunkEnd func(s *jsonStream) (chunkNext, error)
}

// chunkNext is what a stream of one chunk of a trace does at an event.
type chunkNext int

const (
	chunkRead  chunkNext = iota // read the event
	chunkStop                   // the chunk ends here: return
	chunkMoved                  // the stream was moved past the other chunks: go on from there
)

const streamChunk = 1 << 20

func newJSONStream(r io.Reader) *jsonStream {
	select {
	case b := <-streamBufs:
		return &jsonStream{r: r, buf: b}
	default:
		return &jsonStream{r: r, buf: make([]byte, 4*streamChunk)}
	}
}

// newMappedStream reads a mapped file (mapFile): the whole file is the buffer, so it
// is never filled, copied into or recycled.
func newMappedStream(data []byte) *jsonStream {
	s := &jsonStream{buf: data, end: len(data), eof: true}
	if bytes.HasPrefix(data, bomUTF8) {
		s.pos = len(bomUTF8) // as the CSV reader and jsontree skip it
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

// dropStreamBuffers leaves the recycled buffers to the collector once a load is done:
// kept, they were 8 MiB or more of the heap while a cluster's figures are made.
func dropStreamBuffers() {
	for {
		select {
		case <-streamBufs:
		default:
			return
		}
	}
}

// release gives the buffer back for the next stream; s must not be used after it, nor
// any bytes it handed out. A buffer grown for a huge value is left to the collector.
func (s *jsonStream) release() {
	if s.buf != nil && len(s.buf) == 4*streamChunk {
		select {
		case streamBufs <- s.buf:
		default:
		}
	}
	s.buf = nil
}

// offset is the file offset of the next unread byte.
func (s *jsonStream) offset() int64 { return s.base + int64(s.pos) }

// fill reads more input, keeping buf[keep:] (keep ≤ pos) and moving it to the front.
// It returns false when no more input arrives.
func (s *jsonStream) fill(keep int) bool {
	if s.eof {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end = n
	}
	if len(s.buf)-s.end < streamChunk {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if !errors.Is(err, io.EOF) {
				s.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			// A UTF-8 byte-order mark before the document (an editor's, or a Windows
			// tool's) is skipped, as the CSV reader and jsontree skip it; offsets
			// still count it.
			if s.base == 0 && s.pos == 0 && bytes.HasPrefix(s.buf[:s.end], bomUTF8) {
				s.pos = len(bomUTF8)
			}
			return true
		}
	}
}

// peek skips white space and returns the next byte without consuming it.
func (s *jsonStream) peek() (byte, bool) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, true
			}
			s.pos++
		}
		if !s.fill(s.pos) {
			return 0, false
		}
	}
}

// consume skips white space and consumes the byte c, or fails.
func (s *jsonStream) consume(c byte) error {
	got, ok := s.peek()
	if !ok {
		return s.eofErr(fmt.Sprintf("expected %q", c))
	}
	if got != c {
		return fmt.Errorf("byte %d: expected %q, found %q", s.offset(), c, got)
	}
	s.pos++
	return nil
}

func (s *jsonStream) eofErr(what string) error {
	if s.rerr != nil {
		return fmt.Errorf("byte %d: read error: %w", s.offset(), s.rerr)
	}
	return fmt.Errorf("byte %d: unexpected end of file (%s): the file is truncated", s.offset(), what)
}

// readValue consumes one JSON value and returns its bytes, valid until the next call.
// Only the value's boundaries are found here; objIter and skipValue check its syntax.
func (s *jsonStream) readValue() ([]byte, int64, error) {
	c, ok := s.peek()
	if !ok {
		return nil, s.offset(), s.eofErr("expected a value")
	}
	start := s.pos
	startOff := s.offset()
	i := s.pos
	depth := 0
	switch c {
	case '{', '[':
	case '"':
	default:
		// A scalar: read until a delimiter.
		for {
			for i < s.end {
				b := s.buf[i]
				if b == ',' || b == ']' || b == '}' || b == ' ' || b == '\n' || b == '\r' || b == '\t' {
					s.pos = i
					return s.buf[start:i], startOff, nil
				}
				i++
			}
			off := i - start
			if !s.fill(start) {
				s.pos = s.end
				return s.buf[0:s.end], startOff, nil
			}
			start = 0
			i = off
		}
	}
	for {
		for i < s.end {
			b := s.buf[i]
			switch b {
			case '"':
				// Find the closing quote, skipping escaped ones.
				j := i + 1
				for {
					k := bytes.IndexByte(s.buf[j:s.end], '"')
					if k < 0 {
						j = -1
						break
					}
					j += k
					bs := 0
					for m := j - 1; m > i && s.buf[m] == '\\'; m-- {
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
					s.pos = i
					return s.buf[start:i], startOff, nil
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos = i + 1
					return s.buf[start : i+1], startOff, nil
				}
			}
			i++
		}
	refill:
		// Restart the scan of the current value after refilling: strings may have been
		// cut, so rescan from the value start (values are small; this is rare).
		s.pos = start
		if !s.fill(start) {
			s.pos = s.end
			return nil, startOff, fmt.Errorf("byte %d: unexpected end of file inside the value that starts here: the file is truncated", startOff)
		}
		start = s.pos
		i = start
		depth = 0
	}
}

// objIter walks the members of one JSON object held in memory.
type objIter struct {
	b     []byte
	i     int
	err   error
	n     int // members read
	depth int
}

func newObjIter(b []byte) objIter {
	it := objIter{b: b}
	it.i = skipWS(b, 0)
	if it.i >= len(b) || b[it.i] != '{' {
		it.err = errors.New("expected an object")
		return it
	}
	it.i++
	return it
}

// next returns the next member's raw key (without quotes, escapes undecoded) and raw
// value. ok is false at the end of the object or on error (then it.err is set).
func (it *objIter) next() (key, val []byte, ok bool) {
	if key, ok = it.nextKey(); !ok {
		return nil, nil, false
	}
	start := it.i
	end, err := skipValue(it.b, start, it.depth)
	if err != nil {
		it.err = err
		return nil, nil, false
	}
	it.i = end
	return key, it.b[start:end], true
}

// nextKey reads the next member's raw key and the ':' after it, and leaves the
// iterator at the member's value, which the caller reads with next's skipValue or
// walks itself (parseRawEvent walks "args" in the same pass). ok is false at the end
// of the object or on error.
func (it *objIter) nextKey() (key []byte, ok bool) {
	if it.err != nil {
		return nil, false
	}
	b := it.b
	i := skipWS(b, it.i)
	if i >= len(b) {
		it.err = truncatedError("unterminated object")
		return nil, false
	}
	if b[i] == '}' {
		it.i = i + 1
		return nil, false
	}
	if it.n > 0 {
		if b[i] != ',' {
			it.err = fmt.Errorf("expected ',' or '}' at +%d", i)
			return nil, false
		}
		if i = skipWS(b, i+1); i >= len(b) {
			it.err = truncatedError("unterminated object")
			return nil, false
		}
	}
	if b[i] != '"' {
		it.err = fmt.Errorf("expected a member name at +%d", i)
		return nil, false
	}
	kend, err := skipString(b, i)
	if err != nil {
		it.err = err
		return nil, false
	}
	key = b[i+1 : kend-1]
	i = skipWS(b, kend)
	if i >= len(b) {
		it.err = truncatedError("unterminated object")
		return nil, false
	}
	if b[i] != ':' {
		it.err = fmt.Errorf("expected ':' at +%d", i)
		return nil, false
	}
	it.i = skipWS(b, i+1)
	it.n++
	return key, true
}

// truncatedError is a syntax error found at the end of the bytes given: the value may
// go on past them. A stream that handed out a part of its buffer reads more and tries
// again (readEventList); anywhere else it is the value's error.
type truncatedError string

func (e truncatedError) Error() string { return string(e) }

func isTruncated(err error) bool {
	_, ok := err.(truncatedError)
	return ok
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	end, err := lexString(b, i, false)
	if err != nil {
		return 0, truncatedError(err.msg) // only the end of b stops a lenient string
	}
	return end, nil
}

const maxJSONDepth = 512

// skipValue returns the index after the JSON value starting at b[i], checking its syntax.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, truncatedError("expected a value")
	}
	if depth > maxJSONDepth {
		return 0, errors.New("nesting too deep")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		it := objIter{b: b, i: i + 1, depth: depth + 1}
		for {
			if _, _, ok := it.next(); !ok {
				break
			}
		}
		return it.i, it.err
	case c == '[':
		j := skipWS(b, i+1)
		if j >= len(b) {
			return 0, truncatedError("unterminated array")
		}
		if b[j] == ']' {
			return j + 1, nil
		}
		for {
			end, err := skipValue(b, j, depth+1)
			if err != nil {
				return 0, err
			}
			j = skipWS(b, end)
			if j >= len(b) {
				return 0, truncatedError("unterminated array")
			}
			if b[j] == ']' {
				return j + 1, nil
			}
			if b[j] != ',' {
				return 0, fmt.Errorf("expected ',' or ']' at +%d", j)
			}
			j = skipWS(b, j+1)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		j, _ := lexNumber(b, i, false) // lenient: it cannot fail
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
// end inside it: that is a truncatedError, as for strings.
func skipLiteral(b []byte, i int, lit string) (int, error) {
	end, ok, err := lexLiteral(b, i, lit)
	switch {
	case err != nil:
		return 0, truncatedError(err.msg)
	case !ok:
		return 0, fmt.Errorf("unexpected %q at +%d", b[i], i)
	}
	return end, nil
}

// jsonString decodes a raw JSON string value (with quotes) into a Go string. Escapes
// are rare in traces, so they go through encoding/json.
func jsonString(v []byte) (string, bool) {
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
