package parser

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

// This file is a small in-memory JSON tree for the summary files (communication.json,
// communication_matrix.json, profiler_info_N.json, profiler_metadata.json). These are
// small (kB to a few MB), nested maps whose values change type between profiler
// versions (rank_id is 0 or "0", _export_type is "text" or ["text"], zeros are 0 or
// 0.0). Decoding into a tree that remembers each value's byte offset lets the typed
// readers accept those variants and still say where a bad value is. Why not
// encoding/json: its errors for nested values give no absolute offset, it rejects the
// NaN/Infinity that Python's json.dump writes, and a tree of `any` loses positions.
// Numbers keep their literal text, so a µs timestamp such as 1736408883732241.5 goes
// to ns through MicrosToNs without a float64 round trip.

type treeKind uint8

const (
	treeNull treeKind = iota
	treeBool
	treeNumber
	treeString
	treeArray
	treeObject
)

func (k treeKind) String() string {
	switch k {
	case treeNull:
		return "null"
	case treeBool:
		return "a boolean"
	case treeNumber:
		return "a number"
	case treeString:
		return "a string"
	case treeArray:
		return "an array"
	case treeObject:
		return "an object"
	}
	return "?"
}

// treeNode is one JSON value and the byte offset of its first byte in the file.
type treeNode struct {
	kind    treeKind
	off     int64
	text    string // the decoded string, or a number's literal text
	boolean bool
	elems   []*treeNode  // array elements
	ints    []int64      // an array of plain integers, when read so (readJSONTreeWith): elems is nil
	members []treeMember // object members in file order; a repeated key keeps its first position and its last value, as Python's json.load does
}

type treeMember struct {
	key    string
	keyOff int64
	val    *treeNode
}

// get returns the value of key in an object, or nil when n is not an object or has no
// such key.
func (n *treeNode) get(key string) *treeNode {
	if n == nil || n.kind != treeObject {
		return nil
	}
	for i := range n.members {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// isNull reports whether n is absent or JSON null.
func (n *treeNode) isNull() bool { return n == nil || n.kind == treeNull }

// maxTreeDepth bounds nesting: the summary files are at most 7 levels deep, and the
// bound keeps the recursive parser's stack small on hostile input.
const maxTreeDepth = 64

// treeSyntaxError is a parse failure at a byte offset; readers turn it into a
// *SyntaxError carrying the file name.
type treeSyntaxError struct {
	off int64
	msg string
}

func (e *treeSyntaxError) Error() string { return fmt.Sprintf("byte %d: %s", e.off, e.msg) }

// readJSONTree reads all of r and parses it as one JSON value. A UTF-8 byte-order mark
// is skipped. Errors are *SyntaxError values naming file.
func readJSONTree(r io.Reader, file string) (*treeNode, error) {
	return readJSONTreeWith(r, file, false)
}

// readJSONTreeWith is readJSONTree; with intArrays, an array of plain integers is one
// node holding them (ints), for readers that expect long rank lists and handle ints.
func readJSONTreeWith(r io.Reader, file string, intArrays bool) (*treeNode, error) {
	p := &treeParser{nodes: slab[treeNode]{min: 256}, members: slab[treeMember]{min: 512}, elems: slab[*treeNode]{min: 512}}
	return p.read(r, file, intArrays)
}

// withJSONTree is readJSONTree for a reader that keeps nothing of the tree (no node,
// member list or element list; strings are copies and may be kept) once fn returns:
// the tree's memory then serves the next file.
func withJSONTree(r io.Reader, file string, fn func(root *treeNode) error) error {
	p := newTreeParser()
	defer p.recycle()
	root, err := p.read(r, file, false)
	if err != nil {
		return err
	}
	return fn(root)
}

func (p *treeParser) read(r io.Reader, file string, intArrays bool) (*treeNode, error) {
	// A tree takes about ten times its file: a file past the bound is refused by its
	// size, or where reading it passes the bound, rather than read.
	size := sizeOf(r)
	if size > maxJSONTreeBytes {
		return nil, errAtOffset(file, -1, "%d bytes: over the %d MiB this reader holds in memory (read whole as a JSON tree): refused", size, maxJSONTreeBytes>>20)
	}
	if size < 0 {
		r = io.LimitReader(r, maxJSONTreeBytes+1)
	}
	data, err := readAll(p.buf, r)
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", file, err)
	}
	if int64(len(data)) > maxJSONTreeBytes {
		return nil, errAtOffset(file, -1, "more than %d bytes: over the %d MiB this reader holds in memory (read whole as a JSON tree): refused", maxJSONTreeBytes, maxJSONTreeBytes>>20)
	}
	p.buf = data
	base := 0
	if bytes.HasPrefix(data, bomUTF8) {
		base = len(bomUTF8)
	}
	p.b, p.i, p.intArrays = data, base, intArrays
	p.ws()
	if p.i >= len(p.b) {
		return nil, errAtOffset(file, int64(p.i), "empty file: expected a JSON value")
	}
	n, perr := p.value(0)
	if perr == nil {
		p.ws()
		if p.i < len(p.b) {
			perr = &treeSyntaxError{int64(p.i), fmt.Sprintf("unexpected %s after the top-level value", treeQuoteByte(p.b[p.i]))}
		}
	}
	if perr != nil {
		return nil, errAtOffset(file, perr.off, "%s", perr.msg)
	}
	return n, nil
}

var bomUTF8 = []byte{0xEF, 0xBB, 0xBF}

// maxJSONTreeBytes bounds the files read whole into a tree (communication_matrix.json,
// msprof-analyze's cluster_communication*.json, info files): about ten times as much
// memory is taken while one is read. communication.json and the timelines are streamed,
// not bounded. A variable for tests only.
var maxJSONTreeBytes int64 = 256 << 20

type treeParser struct {
	b         []byte
	i         int
	intArrays bool // see readJSONTreeWith
	nodes     slab[treeNode]
	// The members and elements of the objects and arrays being read are stacked here
	// and copied out, at their exact length, into slabs when each ends: appending to
	// each object's own slice was a third of the bytes a cluster's summary files took.
	memberStack []treeMember
	elemStack   []*treeNode
	members     slab[treeMember]
	elems       slab[*treeNode]
	keys        map[string]string // member names, one copy each (see key)
	buf         []byte            // the file's bytes (kept with the parser: nodes copy their text)
}

// treeParsers keeps a few parsers, with their slabs, for the next file (withJSONTree).
var treeParsers = make(chan *treeParser, 4)

func newTreeParser() *treeParser {
	select {
	case p := <-treeParsers:
		return p
	default:
		return &treeParser{nodes: slab[treeNode]{min: 256}, members: slab[treeMember]{min: 512}, elems: slab[*treeNode]{min: 512}}
	}
}

// recycle clears p and keeps it for the next file, unless its slabs grew past 8 MiB
// (a big file's): those are left to the collector.
func (p *treeParser) recycle() {
	p.nodes.reset()
	p.members.reset()
	p.elems.reset()
	clear(p.memberStack[:cap(p.memberStack)])
	clear(p.elemStack[:cap(p.elemStack)])
	p.memberStack, p.elemStack = p.memberStack[:0], p.elemStack[:0]
	p.b, p.i, p.intArrays, p.keys = nil, 0, false, nil
	if p.nodes.bytes()+p.members.bytes()+p.elems.bytes()+cap(p.buf) > 8<<20 {
		return
	}
	select {
	case treeParsers <- p:
	default:
	}
}

func (p *treeParser) ws() { p.i = skipWS(p.b, p.i) }

func (p *treeParser) fail(msg string) *treeSyntaxError {
	return &treeSyntaxError{int64(p.i), msg}
}

func (p *treeParser) failEOF(what string) *treeSyntaxError {
	return &treeSyntaxError{int64(p.i), "unexpected end of file, expected " + what + ": the file is truncated"}
}

func treeQuoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// value parses the value at p.i (white space already skipped).
func (p *treeParser) value(depth int) (*treeNode, *treeSyntaxError) {
	if p.i >= len(p.b) {
		return nil, p.failEOF("a value")
	}
	if depth > maxTreeDepth {
		return nil, p.fail(fmt.Sprintf("nesting deeper than %d levels", maxTreeDepth))
	}
	off := int64(p.i)
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.node(treeNode{kind: treeString, off: off, text: s}), nil
	case c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I':
		t, err := p.number()
		if err != nil {
			return nil, err
		}
		return p.node(treeNode{kind: treeNumber, off: off, text: t}), nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if end, ok, _ := lexLiteral(p.b, p.i, lit); ok {
				p.i = end
				if lit == "null" {
					return p.node(treeNode{kind: treeNull, off: off}), nil
				}
				return p.node(treeNode{kind: treeBool, off: off, boolean: lit == "true"}), nil
			}
		}
	}
	return nil, p.fail(fmt.Sprintf("unexpected %s, expected a value", treeQuoteByte(p.b[p.i])))
}

func (p *treeParser) object(depth int) (*treeNode, *treeSyntaxError) {
	n := p.node(treeNode{kind: treeObject, off: int64(p.i)})
	p.i++ // '{'
	var index map[string]int
	base := len(p.memberStack)
	for first := true; ; first = false {
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.failEOF("a member or '}'")
		}
		if p.b[p.i] == '}' {
			p.i++
			n.members = unstack(&p.memberStack, base, &p.members)
			return n, nil
		}
		if !first {
			if p.b[p.i] != ',' {
				return nil, p.fail(fmt.Sprintf("unexpected %s, expected ',' or '}'", treeQuoteByte(p.b[p.i])))
			}
			p.i++
			p.ws()
			if p.i >= len(p.b) {
				return nil, p.failEOF("a member name")
			}
		}
		if p.b[p.i] != '"' {
			return nil, p.fail(fmt.Sprintf("unexpected %s, expected a member name", treeQuoteByte(p.b[p.i])))
		}
		keyOff := int64(p.i)
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.failEOF("':'")
		}
		if p.b[p.i] != ':' {
			return nil, p.fail(fmt.Sprintf("unexpected %s, expected ':'", treeQuoteByte(p.b[p.i])))
		}
		p.i++
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// Repeated keys: last value wins, at the first position.
		members := p.memberStack[base:]
		dup := -1
		if index != nil {
			if j, ok := index[key]; ok {
				dup = j
			}
		} else {
			for j := range members {
				if members[j].key == key {
					dup = j
					break
				}
			}
		}
		if dup >= 0 {
			members[dup].val = v
			continue
		}
		p.memberStack = append(p.memberStack, treeMember{key: key, keyOff: keyOff, val: v})
		members = p.memberStack[base:]
		if index == nil && len(members) > 16 {
			index = make(map[string]int, 2*len(members))
			for j := range members {
				index[members[j].key] = j
			}
		} else if index != nil {
			index[key] = len(members) - 1
		}
	}
}

func (p *treeParser) array(depth int) (*treeNode, *treeSyntaxError) {
	if p.intArrays {
		if n := p.intArray(); n != nil {
			return n, nil
		}
	}
	n := p.node(treeNode{kind: treeArray, off: int64(p.i)})
	p.i++ // '['
	base := len(p.elemStack)
	for first := true; ; first = false {
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.failEOF("a value or ']'")
		}
		if p.b[p.i] == ']' {
			p.i++
			n.elems = unstack(&p.elemStack, base, &p.elems)
			return n, nil
		}
		if !first {
			if p.b[p.i] != ',' {
				return nil, p.fail(fmt.Sprintf("unexpected %s, expected ',' or ']'", treeQuoteByte(p.b[p.i])))
			}
			p.i++
			p.ws()
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.elemStack = append(p.elemStack, v)
	}
}

// intArray reads the array at p.i when it holds plain integers only (at least one,
// each of at most 15 digits: exact in an int64 and in a float64), as one node; else it
// returns nil and leaves p.i. Every rank's profiler_metadata.json lists its groups'
// global ranks, thousands of numbers that would each be a node.
func (p *treeParser) intArray() *treeNode {
	b, i := p.b, p.i+1
	// Every rank of a job lists the same groups: an array whose bytes were read before
	// (in any file) is not read again. Its ints are shared, read-only.
	end := bytes.IndexByte(b[i:], ']')
	if end < 0 {
		return nil
	}
	raw := b[p.i : i+end+1]
	if len(raw) >= minSharedIntArray {
		if ints, ok := sharedIntArrays.get(raw); ok {
			n := p.node(treeNode{kind: treeArray, off: int64(p.i), ints: ints})
			p.i += len(raw)
			return n
		}
	}
	ints := make([]int64, 0, bytes.Count(raw, []byte{','})+1)
	for {
		i = skipWS(b, i)
		neg := i < len(b) && b[i] == '-'
		if neg {
			i++
		}
		start := i
		var v int64
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			v = 10*v + int64(b[i]-'0')
			i++
		}
		if n := i - start; n == 0 || n > 15 || (n > 1 && b[start] == '0') {
			return nil
		}
		if neg {
			v = -v
		}
		ints = append(ints, v)
		i = skipWS(b, i)
		if i >= len(b) {
			return nil
		}
		switch b[i] {
		case ',':
			i++
			continue
		case ']':
			n := p.node(treeNode{kind: treeArray, off: int64(p.i), ints: ints})
			if len(raw) >= minSharedIntArray {
				sharedIntArrays.put(raw, ints)
			}
			p.i = i + 1
			return n
		}
		return nil
	}
}

// key parses a member name at p.i: str, with one copy of each name per file (a
// summary file repeats a few names thousands of times).
func (p *treeParser) key() (string, *treeSyntaxError) {
	start := p.i
	if end, err := skipString(p.b, start); err == nil {
		if raw := p.b[start+1 : end-1]; bytes.IndexByte(raw, '\\') < 0 && !hasControl(raw) {
			if k, ok := p.keys[string(raw)]; ok {
				p.i = end
				return k, nil
			}
			k, err := p.str()
			if err == nil {
				if p.keys == nil {
					p.keys = map[string]string{}
				}
				p.keys[k] = k
			}
			return k, err
		}
	}
	return p.str()
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// minSharedIntArray is the size (bytes) from which int arrays are shared: rank lists
// of large groups, not a tuple of two numbers.
const minSharedIntArray = 256

// sharedIntArrays maps an int array's bytes to its ints (see intArray).
var sharedIntArrays = intArrayCache[int64]{m: map[string][]int64{}}

// intArrayCache maps the text of large int arrays to their values, so that ranks
// repeating the same rank list share one. It keeps at most 64 arrays, and forgets them
// all when full: a job has a few large groups.
type intArrayCache[T int | int64] struct {
	mu sync.Mutex
	m  map[string][]T
}

func (c *intArrayCache[T]) get(raw []byte) ([]T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ints, ok := c.m[string(raw)]
	return ints, ok
}

func (c *intArrayCache[T]) put(raw []byte, ints []T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= 64 {
		clear(c.m)
	}
	c.m[string(raw)] = ints
}

// str parses the string at p.i (p.b[p.i] == '"').
func (p *treeParser) str() (string, *treeSyntaxError) {
	start := p.i
	end, lerr := lexString(p.b, p.i, true)
	if lerr != nil {
		p.i = lerr.at
		if lerr.truncated {
			return "", p.failEOF("the end of the string that starts at byte " + strconv.Itoa(start))
		}
		return "", p.fail(lerr.msg)
	}
	p.i = end
	s, ok := jsonString(p.b[start:end]) // the trace scanner's decoder (jsonscan.go)
	if !ok {
		return "", &treeSyntaxError{int64(start), "bad string escape"}
	}
	return s, nil
}

// number parses a JSON number, or Python's NaN, Infinity and -Infinity, and returns
// its literal text.
func (p *treeParser) number() (string, *treeSyntaxError) {
	start := p.i
	for _, lit := range [...]string{"NaN", "Infinity", "-Infinity"} {
		if end, ok, _ := lexLiteral(p.b, p.i, lit); ok {
			p.i = end
			return lit, nil
		}
	}
	b := p.b
	i, lerr := lexNumber(b, p.i, true)
	if lerr != nil {
		p.i = lerr.at
		return "", p.fail(lerr.msg)
	}
	p.i = i
	if lit := b[start:i]; len(lit) <= 4 && lit[0] != '-' && (len(lit) == 1 || lit[0] != '0') && plainDigits(string(lit)) {
		return smallInts[atoiSmall(lit)], nil
	}
	return string(b[start:i]), nil
}

// smallInts holds the text of 0…9999: rank lists of thousands of ranks (every rank's
// profiler_metadata.json lists its groups' global ranks) would otherwise allocate a
// string per number.
var smallInts = func() []string {
	out := make([]string, 10000)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

func atoiSmall(b []byte) int {
	n := 0
	for _, c := range b {
		n = 10*n + int(c-'0')
	}
	return n
}

// node returns a new tree node from a slab: a tree is thousands of small nodes that
// all die together, so one allocation serves many.
func (p *treeParser) node(n treeNode) *treeNode {
	out := &p.nodes.alloc(1)[0]
	*out = n
	return out
}

// treeReader converts tree values to Go values, reporting bad ones at their offset in
// file.
type treeReader struct{ file string }

func (d treeReader) errAt(n *treeNode, format string, args ...any) error {
	off := int64(-1)
	if n != nil {
		off = n.off
	}
	return errAtOffset(d.file, off, format, args...)
}

// object checks that n is an object; what names it in the error.
func (d treeReader) object(n *treeNode, what string) error {
	if n == nil || n.kind != treeObject {
		got := "nothing"
		if n != nil {
			got = n.kind.String()
		}
		return d.errAt(n, "%s: expected an object, found %s", what, got)
	}
	return nil
}

// float reads a number (or a numeric string, as hand-made files have). Absent and null
// give 0. NaN and ±Infinity, which Python writes for 0/0, read as 0: they carry no
// measurement.
func (d treeReader) float(n *treeNode, what string) (float64, error) {
	if n == nil {
		return 0, nil // absent: an older layout without the field
	}
	if n.kind == treeNull {
		// The profilers write every figure (0 for none): a null read as 0 made an
		// op's Transit Time, or a link's bytes, "measured" zeros.
		return 0, d.errAt(n, "%s: null where the profiler writes a number", what)
	}
	var t string
	switch n.kind {
	case treeNumber:
		t = n.text
	case treeString:
		t = strings.TrimSpace(n.text)
	default:
		return 0, d.errAt(n, "%s: expected a number, found %s", what, n.kind)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, d.errAt(n, "%s: number %q out of range", what, t)
		}
		return 0, d.errAt(n, "%s: bad number %q", what, t)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, nil
	}
	return f, nil
}

// treeMaxScaled bounds a value converted to int64 units: beyond it the conversion would
// overflow, and no real time (ns) or size (bytes) comes near it (9e18 ns ≈ 285 years).
const treeMaxScaled = 9e18

// scaled reads a number and converts it to an int64 count of 1/scale units (ms with
// scale 1e6 → ns; MB with scale 1e6 → bytes), rounding to nearest.
func (d treeReader) scaled(n *treeNode, scale float64, what string) (int64, error) {
	f, err := d.float(n, what)
	if err != nil {
		return 0, err
	}
	x := math.Round(f * scale)
	if math.IsInf(x, 0) || math.Abs(x) > treeMaxScaled {
		return 0, d.errAt(n, "%s: %v out of range", what, f)
	}
	return int64(x), nil
}

// msNs reads a millisecond figure as ns.
func (d treeReader) msNs(n *treeNode, what string) (int64, error) { return d.scaled(n, 1e6, what) }

// mbBytes reads an MB (10^6 bytes) figure as bytes.
func (d treeReader) mbBytes(n *treeNode, what string) (int64, error) {
	return d.scaled(n, 1e6, what)
}

// intVal reads an integer written as a number (0, 0.0) or a string ("0"). Absent and
// null give def.
func (d treeReader) intVal(n *treeNode, def int, what string) (int, error) {
	if n.isNull() {
		return def, nil
	}
	var t string
	switch n.kind {
	case treeNumber:
		t = n.text
	case treeString:
		t = strings.TrimSpace(n.text)
	default:
		return 0, d.errAt(n, "%s: expected an integer, found %s", what, n.kind)
	}
	if v, err := strconv.Atoi(t); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, d.errAt(n, "%s: expected an integer, found %q", what, t)
	}
	return int(f), nil
}

// text reads a scalar as a string: strings as they are, numbers as written, booleans
// as true/false, null and absent as "". Arrays and objects are errors.
func (d treeReader) text(n *treeNode, what string) (string, error) {
	if n.isNull() {
		return "", nil
	}
	switch n.kind {
	case treeString, treeNumber:
		return n.text, nil
	case treeBool:
		return strconv.FormatBool(n.boolean), nil
	}
	return "", d.errAt(n, "%s: expected a string, found %s", what, n.kind)
}

// treeAny converts n to the values encoding/json's Unmarshal gives for `any`
// (float64, string, bool, nil, []any, map[string]any). NaN and ±Infinity stay float64
// NaN and ±Inf.
func treeAny(n *treeNode) any {
	if n == nil {
		return nil
	}
	switch n.kind {
	case treeBool:
		return n.boolean
	case treeNumber:
		f, _ := strconv.ParseFloat(n.text, 64)
		return f
	case treeString:
		return n.text
	case treeArray:
		if n.ints != nil {
			out := make([]any, len(n.ints))
			for i, v := range n.ints {
				out[i] = float64(v)
			}
			return out
		}
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			out[i] = treeAny(e)
		}
		return out
	case treeObject:
		out := make(map[string]any, len(n.members))
		for _, m := range n.members {
			out[m.key] = treeAny(m.val)
		}
		return out
	}
	return nil
}
