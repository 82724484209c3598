package parser

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/profile"
)

// communication.json is read as a stream (readCommOpsStream): a big job's file is
// hundreds of MB, and its tree took about ten times that (a 349 MB file, 4.7 GB peak
// RSS); only one op's value is held as a tree at a time, and memory follows the ops
// kept. What is read equals what the tree reader read (TestCommStreamEqualsTree), but
// for two choices a stream must make early: the layout is the first member's (a
// step key, "step<N>" or "step", makes it torch_npu's nested one; anything else
// msprof's flat one), where the tree looked for any member holding "Communication
// Time Info"; and a damaged op is reported where it is met, before a syntax error
// further on. A repeated key keeps its last value, as Python's json.load (and the
// tree) does.

// parseAt parses b, one JSON value read whole from a stream where it began at file
// offset base, into p's slabs; offsets in the nodes and errors are the file's.
func (p *treeParser) parseAt(b []byte, base int64, depth int) (*treeNode, *treeSyntaxError) {
	p.b, p.i = b, 0
	n, err := p.value(depth)
	if err == nil {
		if p.ws(); p.i < len(p.b) {
			err = p.fail(fmt.Sprintf("unexpected %s after a value", treeQuoteByte(p.b[p.i])))
		}
	}
	if err != nil {
		err.off += base
		return nil, err
	}
	shiftOffsets(n, base)
	return n, nil
}

func shiftOffsets(n *treeNode, base int64) {
	if n == nil {
		return
	}
	n.off += base
	for _, e := range n.elems {
		shiftOffsets(e, base)
	}
	for i := range n.members {
		n.members[i].keyOff += base
		shiftOffsets(n.members[i].val, base)
	}
}

// commStream walks communication.json's objects down to its ops.
type commStream struct {
	s    *jsonStream
	file string
	d    treeReader
	p    *treeParser
}

// syntax places the stream's error ("byte N: ...") at its offset.
func (c *commStream) syntax(err error) error {
	var off int64
	var rest string
	msg := err.Error()
	if n, _ := fmt.Sscanf(msg, "byte %d:", &off); n == 1 {
		if i := strings.IndexByte(msg, ':'); i >= 0 {
			rest = strings.TrimSpace(msg[i+1:])
			return &SyntaxError{File: c.file, Offset: off, Msg: rest}
		}
	}
	return wrapSyntax(c.file, err)
}

// value reads the next value, at nesting depth, whole as a tree (an op, or a value
// skipped, whose syntax is checked all the same). The tree lives until the next call.
func (c *commStream) value(depth int) (*treeNode, error) {
	c.p.nodes.reset()
	c.p.members.reset()
	c.p.elems.reset()
	raw, off, err := c.s.readValue()
	if err != nil {
		// A value cut short: the tree's words for what is wrong in what is there
		// (too deep, a bad byte), else the stream's.
		if i := off - c.s.base; c.s.eof && c.s.rerr == nil && i >= 0 && i < int64(c.s.end) {
			if _, perr := c.p.parseAt(c.s.buf[i:c.s.end], off, depth); perr != nil {
				return nil, errAtOffset(c.file, perr.off, "%s", perr.msg)
			}
		}
		return nil, c.syntax(err)
	}
	n, perr := c.p.parseAt(raw, off, depth)
	if perr != nil {
		return nil, errAtOffset(c.file, perr.off, "%s", perr.msg)
	}
	return n, nil
}

// members calls fn for each member of the object that comes next, fn reading the
// member's value. A value that is not an object is read whole and handed to notObject.
func (c *commStream) members(depth int, notObject func(n *treeNode) error, fn func(key string, keyOff int64) error) error {
	ch, ok := c.s.peek()
	if !ok {
		return c.syntax(c.s.eofErr("expected a value"))
	}
	if ch != '{' {
		n, err := c.value(depth)
		if err != nil {
			return err
		}
		return notObject(n)
	}
	c.s.pos++
	for i := 0; ; i++ {
		ch, ok := c.s.peek()
		if !ok {
			return c.syntax(c.s.eofErr("expected a member or '}'"))
		}
		if ch == '}' {
			c.s.pos++
			return nil
		}
		if i > 0 {
			if err := c.s.consume(','); err != nil {
				return c.syntax(err)
			}
		}
		raw, keyOff, err := c.s.readValue()
		if err != nil {
			return c.syntax(err)
		}
		key, ok := jsonString(raw)
		if !ok {
			return errAtOffset(c.file, keyOff, "expected a member name (a string)")
		}
		if err := c.s.consume(':'); err != nil {
			return c.syntax(err)
		}
		if err := fn(key, keyOff); err != nil {
			return err
		}
	}
}

// readCommOpsStream reads communication.json's ops from r, in either layout (see
// ParseCommunicationJSON), unsorted.
func readCommOpsStream(r io.Reader, file string) ([]profile.CommOpStats, error) {
	var ops []profile.CommOpStats
	err := readStream(r, file, func(s *jsonStream) error {
		c := &commStream{s: s, file: file, d: treeReader{file}, p: newTreeParser()}
		defer c.p.recycle()
		var err error
		ops, err = c.ops()
		if err != nil {
			return err
		}
		if _, ok := s.peek(); ok {
			return errAtOffset(file, s.offset(), "unexpected %s after the top-level value", treeQuoteByte(s.buf[s.pos]))
		}
		if s.rerr != nil {
			return c.syntax(s.eofErr(""))
		}
		return nil
	})
	return ops, err
}

func (c *commStream) ops() ([]profile.CommOpStats, error) {
	var ops []profile.CommOpStats
	// Where each kept op is, by container (a top-level value, or a step's p2p or
	// collective) and key: a repeated key replaces its op, a repeated container
	// drops the ops of the earlier one.
	type opKey struct{ container, key string }
	at := map[opKey]int{}
	dropped := map[int]bool{}              // ops of a container met again
	containerKeys := map[string][]string{} // the op keys read in each container
	add := func(container, key string, op profile.CommOpStats) {
		k := opKey{container, key}
		if i, ok := at[k]; ok {
			ops[i] = op
			return
		}
		at[k] = len(ops)
		containerKeys[container] = append(containerKeys[container], key)
		ops = append(ops, op)
	}
	reopen := func(container string) {
		for _, key := range containerKeys[container] {
			k := opKey{container, key}
			dropped[at[k]] = true
			delete(at, k)
		}
		delete(containerKeys, container)
	}
	if ch, ok := c.s.peek(); !ok {
		return nil, errAtOffset(c.file, c.s.offset(), "empty file: expected a JSON value")
	} else if ch != '{' {
		n, err := c.value(0)
		if err != nil {
			return nil, err
		}
		return nil, c.d.object(n, "communication.json")
	}
	layout := 0 // 0 not known yet, 1 flat, 2 nested
	err := c.members(0, nil, func(key string, keyOff int64) error {
		var n *treeNode // the first member's value, when read to learn the layout
		if layout == 0 {
			layout = 2
			if _, err := c.d.stepKey(treeMember{key: key}); err != nil {
				var err error
				if n, err = c.value(1); err != nil {
					return err
				}
				if n.get(cjTimeInfo) != nil {
					layout = 1
				}
			}
		}
		if layout == 1 {
			var err error
			if n == nil {
				n, err = c.value(1)
			}
			if err != nil || isTotalKey(key) {
				return err
			}
			op, err := c.d.commOp(treeMember{key: key, keyOff: keyOff, val: n}, -1, profile.IsP2P(opKeyName(key)))
			if err != nil {
				return err
			}
			add("", key, op)
			return nil
		}
		step, err := c.d.stepKey(treeMember{key: key, keyOff: keyOff})
		if err != nil {
			return err
		}
		stepWhat := "step " + strconv.Quote(key)
		for _, kind := range [...]string{cjP2P, cjCollective} {
			reopen(key + "\x00" + kind)
		}
		return c.members(1, func(n *treeNode) error { return c.d.object(n, stepWhat) }, func(kind string, _ int64) error {
			if kind != cjP2P && kind != cjCollective {
				_, err := c.value(2)
				return err
			}
			container := key + "\x00" + kind
			reopen(container)
			if ch, ok := c.s.peek(); ok && ch == 'n' { // null: no ops of this kind
				n, err := c.value(2)
				if err != nil || n.isNull() {
					return err
				}
			}
			what := strconv.Quote(key) + "." + kind
			return c.members(2, func(n *treeNode) error { return c.d.object(n, what) }, func(opName string, opOff int64) error {
				n, err := c.value(3)
				if err != nil || isTotalKey(opName) {
					return err
				}
				op, err := c.d.commOp(treeMember{key: opName, keyOff: opOff, val: n}, step, kind == cjP2P)
				if err != nil {
					return err
				}
				add(container, opName, op)
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	if len(dropped) == 0 {
		return ops, nil
	}
	kept := ops[:0]
	for i, op := range ops {
		if !dropped[i] {
			kept = append(kept, op)
		}
	}
	return kept, nil
}
