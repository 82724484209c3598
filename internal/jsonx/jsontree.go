package jsonx

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
// to ns through units.NsFromUsText without a float64 round trip.

// Kind is the kind of a JSON value in a tree.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// String names the kind in an error message ("a number").
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "an array"
	case Object:
		return "an object"
	}
	return "?"
}

// Node is one JSON value and the byte offset of its first byte in the file.
type Node struct {
	Kind    Kind
	Off     int64
	Text    string // the decoded string, or a number's literal text
	Boolean bool
	Elems   []*Node  // array elements
	Ints    []int64  // an array of plain integers, when read so (readJSONTreeWith): elems is nil
	Members []Member // object members in file order; a repeated key keeps its first position and its last value, as Python's json.load does
}

// Member is an object member of a tree: its key, the key's offset in the file, and
// its value.
type Member struct {
	Key    string
	KeyOff int64
	Val    *Node
}

// Get returns the value of key in an object, or nil when n is not an object or has no
// such key.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := range n.Members {
		if n.Members[i].Key == key {
			return n.Members[i].Val
		}
	}
	return nil
}

// IsNull reports whether n is absent or JSON null.
func (n *Node) IsNull() bool { return n == nil || n.Kind == Null }

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

// ReadTree reads all of r and parses it as one JSON value. A UTF-8 byte-order mark
// is skipped. Errors are *SyntaxError values naming file.
func ReadTree(r io.Reader, file string) (*Node, error) {
	return readJSONTreeWith(r, file, false)
}

// readJSONTreeWith is ReadTree; with intArrays, an array of plain integers is one
// node holding them (ints), for readers that expect long rank lists and handle ints.
func readJSONTreeWith(r io.Reader, file string, intArrays bool) (*Node, error) {
	p := &TreeParser{nodes: slab[Node]{min: 256}, members: slab[Member]{min: 512}, elems: slab[*Node]{min: 512}}
	return p.Read(r, file, intArrays)
}

// WithTree is ReadTree for a reader that keeps nothing of the tree (no node,
// member list or element list; strings are copies and may be kept) once fn returns:
// the tree's memory then serves the next file.
func WithTree(r io.Reader, file string, fn func(root *Node) error) error {
	p := NewTreeParser()
	defer p.Recycle()
	root, err := p.Read(r, file, false)
	if err != nil {
		return err
	}
	return fn(root)
}

// Read reads r (file names it in errors) whole as a tree in p's slabs; with
// intArrays, an array of plain integers is read as one node (Node.Ints).
func (p *TreeParser) Read(r io.Reader, file string, intArrays bool) (*Node, error) {
	// A tree takes about ten times its file: a file past the bound is refused by its
	// size, or where reading it passes the bound, rather than read.
	size := SizeOf(r)
	if size > MaxTreeBytes {
		return nil, ErrAtOffset(file, -1, "%d bytes: over the %d MiB this reader holds in memory (read whole as a JSON tree): refused", size, MaxTreeBytes>>20)
	}
	if size < 0 {
		r = io.LimitReader(r, MaxTreeBytes+1)
	}
	data, err := readAll(p.buf, r)
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", file, err)
	}
	if int64(len(data)) > MaxTreeBytes {
		return nil, ErrAtOffset(file, -1, "more than %d bytes: over the %d MiB this reader holds in memory (read whole as a JSON tree): refused", MaxTreeBytes, MaxTreeBytes>>20)
	}
	p.buf = data
	base := 0
	if bytes.HasPrefix(data, BOM) {
		base = len(BOM)
	}
	p.b, p.i, p.intArrays = data, base, intArrays
	p.ws()
	if p.i >= len(p.b) {
		return nil, ErrAtOffset(file, int64(p.i), "empty file: expected a JSON value")
	}
	n, perr := p.value(0)
	if perr == nil {
		p.ws()
		if p.i < len(p.b) {
			perr = &treeSyntaxError{int64(p.i), fmt.Sprintf("unexpected %s after the top-level value", quoteByte(p.b[p.i]))}
		}
	}
	if perr != nil {
		return nil, ErrAtOffset(file, perr.off, "%s", perr.msg)
	}
	return n, nil
}

// BOM is the UTF-8 byte order mark, skipped at the start of a file.
var BOM = []byte{0xEF, 0xBB, 0xBF}

// MaxTreeBytes bounds the files read whole into a tree (communication_matrix.json,
// msprof-analyze's cluster_communication*.json, info files): about ten times as much
// memory is taken while one is read. communication.json and the timelines are streamed,
// not bounded. A variable for tests only.
var MaxTreeBytes int64 = 256 << 20

// TreeParser reads JSON into trees whose nodes live in its slabs, reused from file to
// file (NewTreeParser, Recycle).
type TreeParser struct {
	b         []byte
	i         int
	intArrays bool // see readJSONTreeWith
	nodes     slab[Node]
	// The members and elements of the objects and arrays being read are stacked here
	// and copied out, at their exact length, into slabs when each ends: appending to
	// each object's own slice was a third of the bytes a cluster's summary files took.
	memberStack []Member
	elemStack   []*Node
	members     slab[Member]
	elems       slab[*Node]
	keys        map[string]string // member names, one copy each (see key)
	buf         []byte            // the file's bytes (kept with the parser: nodes copy their text)
}

// treeParsers keeps a few parsers, with their slabs, for the next file (WithTree).
var treeParsers = make(chan *TreeParser, 4)

// NewTreeParser is a parser kept by an earlier Recycle, else a new one.
func NewTreeParser() *TreeParser {
	select {
	case p := <-treeParsers:
		return p
	default:
		return &TreeParser{nodes: slab[Node]{min: 256}, members: slab[Member]{min: 512}, elems: slab[*Node]{min: 512}}
	}
}

// Recycle clears p and keeps it for the next file, unless its slabs grew past 8 MiB
// (a big file's): those are left to the collector.
func (p *TreeParser) Recycle() {
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

func (p *TreeParser) ws() { p.i = SkipWS(p.b, p.i) }

func (p *TreeParser) fail(msg string) *treeSyntaxError {
	return &treeSyntaxError{int64(p.i), msg}
}

func (p *TreeParser) failEOF(what string) *treeSyntaxError {
	return &treeSyntaxError{int64(p.i), "unexpected end of file, expected " + what + ": the file is truncated"}
}

// quoteByte names the byte c in an error message.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// value parses the value at p.i (white space already skipped).
func (p *TreeParser) value(depth int) (*Node, *treeSyntaxError) {
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
		return p.node(Node{Kind: String, Off: off, Text: s}), nil
	case c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I':
		t, err := p.number()
		if err != nil {
			return nil, err
		}
		return p.node(Node{Kind: Number, Off: off, Text: t}), nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if end, ok, _ := LexLiteral(p.b, p.i, lit); ok {
				p.i = end
				if lit == "null" {
					return p.node(Node{Kind: Null, Off: off}), nil
				}
				return p.node(Node{Kind: Bool, Off: off, Boolean: lit == "true"}), nil
			}
		}
	}
	return nil, p.fail(fmt.Sprintf("unexpected %s, expected a value", quoteByte(p.b[p.i])))
}

func (p *TreeParser) object(depth int) (*Node, *treeSyntaxError) {
	n := p.node(Node{Kind: Object, Off: int64(p.i)})
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
			n.Members = unstack(&p.memberStack, base, &p.members)
			return n, nil
		}
		if !first {
			if p.b[p.i] != ',' {
				return nil, p.fail(fmt.Sprintf("unexpected %s, expected ',' or '}'", quoteByte(p.b[p.i])))
			}
			p.i++
			p.ws()
			if p.i >= len(p.b) {
				return nil, p.failEOF("a member name")
			}
		}
		if p.b[p.i] != '"' {
			return nil, p.fail(fmt.Sprintf("unexpected %s, expected a member name", quoteByte(p.b[p.i])))
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
			return nil, p.fail(fmt.Sprintf("unexpected %s, expected ':'", quoteByte(p.b[p.i])))
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
				if members[j].Key == key {
					dup = j
					break
				}
			}
		}
		if dup >= 0 {
			members[dup].Val = v
			continue
		}
		p.memberStack = append(p.memberStack, Member{Key: key, KeyOff: keyOff, Val: v})
		members = p.memberStack[base:]
		if index == nil && len(members) > 16 {
			index = make(map[string]int, 2*len(members))
			for j := range members {
				index[members[j].Key] = j
			}
		} else if index != nil {
			index[key] = len(members) - 1
		}
	}
}

func (p *TreeParser) array(depth int) (*Node, *treeSyntaxError) {
	if p.intArrays {
		if n := p.intArray(); n != nil {
			return n, nil
		}
	}
	n := p.node(Node{Kind: Array, Off: int64(p.i)})
	p.i++ // '['
	base := len(p.elemStack)
	for first := true; ; first = false {
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.failEOF("a value or ']'")
		}
		if p.b[p.i] == ']' {
			p.i++
			n.Elems = unstack(&p.elemStack, base, &p.elems)
			return n, nil
		}
		if !first {
			if p.b[p.i] != ',' {
				return nil, p.fail(fmt.Sprintf("unexpected %s, expected ',' or ']'", quoteByte(p.b[p.i])))
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
func (p *TreeParser) intArray() *Node {
	b, i := p.b, p.i+1
	// Every rank of a job lists the same groups: an array whose bytes were read before
	// (in any file) is not read again. Its ints are shared, read-only.
	end := bytes.IndexByte(b[i:], ']')
	if end < 0 {
		return nil
	}
	raw := b[p.i : i+end+1]
	if len(raw) >= MinSharedIntArray {
		if ints, ok := sharedIntArrays.Get(raw); ok {
			n := p.node(Node{Kind: Array, Off: int64(p.i), Ints: ints})
			p.i += len(raw)
			return n
		}
	}
	ints := make([]int64, 0, bytes.Count(raw, []byte{','})+1)
	for {
		i = SkipWS(b, i)
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
		i = SkipWS(b, i)
		if i >= len(b) {
			return nil
		}
		switch b[i] {
		case ',':
			i++
			continue
		case ']':
			n := p.node(Node{Kind: Array, Off: int64(p.i), Ints: ints})
			if len(raw) >= MinSharedIntArray {
				sharedIntArrays.Put(raw, ints)
			}
			p.i = i + 1
			return n
		}
		return nil
	}
}

// key parses a member name at p.i: str, with one copy of each name per file (a
// summary file repeats a few names thousands of times).
func (p *TreeParser) key() (string, *treeSyntaxError) {
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

// MinSharedIntArray is the size (bytes) from which int arrays are shared: rank lists
// of large groups, not a tuple of two numbers.
const MinSharedIntArray = 256

// sharedIntArrays maps an int array's bytes to its ints (see intArray).
var sharedIntArrays IntArrayCache[int64]

// IntArrayCache maps the text of large int arrays to their values, so that ranks
// repeating the same rank list share one. It keeps at most 64 arrays, and forgets them
// all when full: a job has a few large groups. The zero value is empty and ready.
type IntArrayCache[T int | int64] struct {
	mu sync.Mutex
	m  map[string][]T
}

// Get returns the ints kept for raw, an array's text.
func (c *IntArrayCache[T]) Get(raw []byte) ([]T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ints, ok := c.m[string(raw)]
	return ints, ok
}

// Put keeps ints as raw's values.
func (c *IntArrayCache[T]) Put(raw []byte, ints []T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]T{}
	}
	if len(c.m) >= 64 {
		clear(c.m)
	}
	c.m[string(raw)] = ints
}

// str parses the string at p.i (p.b[p.i] == '"').
func (p *TreeParser) str() (string, *treeSyntaxError) {
	start := p.i
	end, lerr := LexString(p.b, p.i, true)
	if lerr != nil {
		p.i = lerr.at
		if lerr.truncated {
			return "", p.failEOF("the end of the string that starts at byte " + strconv.Itoa(start))
		}
		return "", p.fail(lerr.msg)
	}
	p.i = end
	s, ok := Unquote(p.b[start:end]) // the trace scanner's decoder (jsonscan.go)
	if !ok {
		return "", &treeSyntaxError{int64(start), "bad string escape"}
	}
	return s, nil
}

// number parses a JSON number, or Python's NaN, Infinity and -Infinity, and returns
// its literal text.
func (p *TreeParser) number() (string, *treeSyntaxError) {
	start := p.i
	for _, lit := range [...]string{"NaN", "Infinity", "-Infinity"} {
		if end, ok, _ := LexLiteral(p.b, p.i, lit); ok {
			p.i = end
			return lit, nil
		}
	}
	b := p.b
	i, lerr := LexNumber(b, p.i, true)
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
func (p *TreeParser) node(n Node) *Node {
	out := &p.nodes.alloc(1)[0]
	*out = n
	return out
}

// TreeReader converts tree values to Go values, reporting bad ones at their offset in
// file.
type TreeReader struct{ File string }

// ErrAt is a SyntaxError at n's offset in d.File.
func (d TreeReader) ErrAt(n *Node, format string, args ...any) error {
	off := int64(-1)
	if n != nil {
		off = n.Off
	}
	return ErrAtOffset(d.File, off, format, args...)
}

// Object checks that n is an object; what names it in the error.
func (d TreeReader) Object(n *Node, what string) error {
	if n == nil || n.Kind != Object {
		got := "nothing"
		if n != nil {
			got = n.Kind.String()
		}
		return d.ErrAt(n, "%s: expected an object, found %s", what, got)
	}
	return nil
}

// Float reads a number (or a numeric string, as hand-made files have). Absent and null
// give 0. NaN and ±Infinity, which Python writes for 0/0, read as 0: they carry no
// measurement.
func (d TreeReader) Float(n *Node, what string) (float64, error) {
	if n == nil {
		return 0, nil // absent: an older layout without the field
	}
	if n.Kind == Null {
		// The profilers write every figure (0 for none): a null read as 0 made an
		// op's Transit Time, or a link's bytes, "measured" zeros.
		return 0, d.ErrAt(n, "%s: null where the profiler writes a number", what)
	}
	var t string
	switch n.Kind {
	case Number:
		t = n.Text
	case String:
		t = strings.TrimSpace(n.Text)
	default:
		return 0, d.ErrAt(n, "%s: expected a number, found %s", what, n.Kind)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, d.ErrAt(n, "%s: number %q out of range", what, t)
		}
		return 0, d.ErrAt(n, "%s: bad number %q", what, t)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, nil
	}
	return f, nil
}

// MaxScaled bounds a value converted to int64 units: beyond it the conversion would
// overflow, and no real time (ns) or size (bytes) comes near it (9e18 ns ≈ 285 years).
const MaxScaled = 9e18

// Scaled reads a number and converts it to an int64 count of 1/scale units (ms with
// scale 1e6 → ns; MB with scale 1e6 → bytes), rounding to nearest.
func (d TreeReader) Scaled(n *Node, scale float64, what string) (int64, error) {
	f, err := d.Float(n, what)
	if err != nil {
		return 0, err
	}
	x := math.Round(f * scale)
	if math.IsInf(x, 0) || math.Abs(x) > MaxScaled {
		return 0, d.ErrAt(n, "%s: %v out of range", what, f)
	}
	return int64(x), nil
}

// MsNs reads a millisecond figure as ns.
func (d TreeReader) MsNs(n *Node, what string) (int64, error) { return d.Scaled(n, 1e6, what) }

// MbBytes reads an MB (10^6 bytes) figure as bytes.
func (d TreeReader) MbBytes(n *Node, what string) (int64, error) {
	return d.Scaled(n, 1e6, what)
}

// IntVal reads an integer written as a number (0, 0.0) or a string ("0"). Absent and
// null give def.
func (d TreeReader) IntVal(n *Node, def int, what string) (int, error) {
	if n.IsNull() {
		return def, nil
	}
	var t string
	switch n.Kind {
	case Number:
		t = n.Text
	case String:
		t = strings.TrimSpace(n.Text)
	default:
		return 0, d.ErrAt(n, "%s: expected an integer, found %s", what, n.Kind)
	}
	if v, err := strconv.Atoi(t); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, d.ErrAt(n, "%s: expected an integer, found %q", what, t)
	}
	return int(f), nil
}

// Text reads a scalar as a string: strings as they are, numbers as written, booleans
// as true/false, null and absent as "". Arrays and objects are errors.
func (d TreeReader) Text(n *Node, what string) (string, error) {
	if n.IsNull() {
		return "", nil
	}
	switch n.Kind {
	case String, Number:
		return n.Text, nil
	case Bool:
		return strconv.FormatBool(n.Boolean), nil
	}
	return "", d.ErrAt(n, "%s: expected a string, found %s", what, n.Kind)
}

// ToAny converts n to the values encoding/json's Unmarshal gives for `any`
// (float64, string, bool, nil, []any, map[string]any). NaN and ±Infinity stay float64
// NaN and ±Inf.
func ToAny(n *Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case Bool:
		return n.Boolean
	case Number:
		f, _ := strconv.ParseFloat(n.Text, 64)
		return f
	case String:
		return n.Text
	case Array:
		if n.Ints != nil {
			out := make([]any, len(n.Ints))
			for i, v := range n.Ints {
				out[i] = float64(v)
			}
			return out
		}
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = ToAny(e)
		}
		return out
	case Object:
		out := make(map[string]any, len(n.Members))
		for _, m := range n.Members {
			out[m.Key] = ToAny(m.Val)
		}
		return out
	}
	return nil
}
