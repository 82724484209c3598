package jsonx

import (
	"fmt"
	"io"
	"strings"
)

// TreeStream reads a file of one big JSON value as a stream, each value it is asked
// for read whole as a tree (Value) and each object walked a member at a time
// (Members): only one value's tree is held at a time.
type TreeStream struct {
	S    *Stream
	File string
	P    *TreeParser
}

// ReadTreeStream runs read over a TreeStream of r (of its mapped file when it can be
// mapped), then checks that nothing but white space follows the value read and that
// the file was read without error.
func ReadTreeStream(r io.Reader, file string, read func(t *TreeStream) error) error {
	return ReadStream(r, file, func(s *Stream) error {
		c := &TreeStream{S: s, File: file, P: NewTreeParser()}
		defer c.P.Recycle()
		if err := read(c); err != nil {
			return err
		}
		if _, ok := s.Peek(); ok {
			return ErrAtOffset(file, s.Offset(), "unexpected %s after the top-level value", quoteByte(s.Buf[s.Pos]))
		}
		if s.ReadErr != nil {
			return c.Syntax(s.EOFErr(""))
		}
		return nil
	})
}

// WrapSyntax is err as a SyntaxError of file at no known position.
func WrapSyntax(file string, err error) error {
	return &SyntaxError{File: file, Offset: -1, Msg: err.Error()}
}

// parseAt parses b, one JSON value read whole from a stream where it began at file
// offset base, into p's slabs; offsets in the nodes and errors are the file's.
func (p *TreeParser) parseAt(b []byte, base int64, depth int) (*Node, *treeSyntaxError) {
	p.b, p.i = b, 0
	n, err := p.value(depth)
	if err == nil {
		if p.ws(); p.i < len(p.b) {
			err = p.fail(fmt.Sprintf("unexpected %s after a value", quoteByte(p.b[p.i])))
		}
	}
	if err != nil {
		err.off += base
		return nil, err
	}
	shiftOffsets(n, base)
	return n, nil
}

func shiftOffsets(n *Node, base int64) {
	if n == nil {
		return
	}
	n.Off += base
	for _, e := range n.Elems {
		shiftOffsets(e, base)
	}
	for i := range n.Members {
		n.Members[i].KeyOff += base
		shiftOffsets(n.Members[i].Val, base)
	}
}

// Syntax places the stream's error ("byte N: ...") at its offset.
func (c *TreeStream) Syntax(err error) error {
	var off int64
	var rest string
	msg := err.Error()
	if n, _ := fmt.Sscanf(msg, "byte %d:", &off); n == 1 {
		if i := strings.IndexByte(msg, ':'); i >= 0 {
			rest = strings.TrimSpace(msg[i+1:])
			return &SyntaxError{File: c.File, Offset: off, Msg: rest}
		}
	}
	return WrapSyntax(c.File, err)
}

// Value reads the next value, at nesting depth, whole as a tree (an op, or a value
// skipped, whose syntax is checked all the same). The tree lives until the next call.
func (c *TreeStream) Value(depth int) (*Node, error) {
	c.P.nodes.reset()
	c.P.members.reset()
	c.P.elems.reset()
	raw, off, err := c.S.ReadValue()
	if err != nil {
		// A value cut short: the tree's words for what is wrong in what is there
		// (too deep, a bad byte), else the stream's.
		if i := off - c.S.Base; c.S.EOF && c.S.ReadErr == nil && i >= 0 && i < int64(c.S.End) {
			if _, perr := c.P.parseAt(c.S.Buf[i:c.S.End], off, depth); perr != nil {
				return nil, ErrAtOffset(c.File, perr.off, "%s", perr.msg)
			}
		}
		return nil, c.Syntax(err)
	}
	n, perr := c.P.parseAt(raw, off, depth)
	if perr != nil {
		return nil, ErrAtOffset(c.File, perr.off, "%s", perr.msg)
	}
	return n, nil
}

// Members calls fn for each member of the object that comes next, fn reading the
// member's value. A value that is not an object is read whole and handed to notObject.
func (c *TreeStream) Members(depth int, notObject func(n *Node) error, fn func(key string, keyOff int64) error) error {
	ch, ok := c.S.Peek()
	if !ok {
		return c.Syntax(c.S.EOFErr("expected a value"))
	}
	if ch != '{' {
		n, err := c.Value(depth)
		if err != nil {
			return err
		}
		return notObject(n)
	}
	c.S.Pos++
	for i := 0; ; i++ {
		ch, ok := c.S.Peek()
		if !ok {
			return c.Syntax(c.S.EOFErr("expected a member or '}'"))
		}
		if ch == '}' {
			c.S.Pos++
			return nil
		}
		if i > 0 {
			if err := c.S.Consume(','); err != nil {
				return c.Syntax(err)
			}
		}
		raw, keyOff, err := c.S.ReadValue()
		if err != nil {
			return c.Syntax(err)
		}
		key, ok := Unquote(raw)
		if !ok {
			return ErrAtOffset(c.File, keyOff, "expected a member name (a string)")
		}
		if err := c.S.Consume(':'); err != nil {
			return c.Syntax(err)
		}
		if err := fn(key, keyOff); err != nil {
			return err
		}
	}
}

// ReadInPlace hands event the buffer from the event at the stream's position on; event
// parses one event there and says how long it was. Parsing in place, rather than
// finding the event's end first and parsing its bytes after, reads each byte of a
// trace once. When the buffer ends inside the event (a TruncatedError, before event
// acts on anything), more is read and event is called again.
func (s *Stream) ReadInPlace(file string, event func(b []byte) (int, error)) error {
	off := s.Offset()
	for {
		n, err := event(s.Buf[s.Pos:s.End])
		if err == nil {
			s.Pos += n
			return nil
		}
		if !isTruncated(err) {
			return ErrAtOffset(file, off, "bad event: %v", err)
		}
		if !s.fill(s.Pos) {
			if s.ReadErr != nil {
				return WrapSyntax(file, fmt.Errorf("byte %d: read error: %w", off, s.ReadErr))
			}
			return WrapSyntax(file, fmt.Errorf("byte %d: unexpected end of file inside the value that starts here: the file is truncated", off))
		}
	}
}

// MoveTo makes the stream read r from the file offset off.
func (s *Stream) MoveTo(r io.ReadSeeker, off int64) {
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		s.ReadErr, s.EOF = err, true
		return
	}
	s.r, s.Base, s.Pos, s.End, s.EOF, s.ReadErr = r, off, 0, 0, false, nil
}
