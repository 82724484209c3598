package parser

import (
	"io"
	"strconv"

	"github.com/hcclprof/hcclprof/internal/jsonx"
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

// commStream walks communication.json's objects down to its ops.
// treeReader is jsonx's TreeReader with the readers of the communication files'
// members (communication.go, info.go, matrix.go, msprofanalyze.go).
type treeReader struct{ jsonx.TreeReader }

type commStream struct {
	*jsonx.TreeStream
	d treeReader
}

// readCommOpsStream reads communication.json's ops from r, in either layout (see
// parseCommunicationJSON), unsorted.
func readCommOpsStream(r io.Reader, file string) ([]profile.CommOpStats, error) {
	var ops []profile.CommOpStats
	err := jsonx.ReadTreeStream(r, file, func(t *jsonx.TreeStream) error {
		c := &commStream{TreeStream: t, d: treeReader{jsonx.TreeReader{File: file}}}
		var err error
		ops, err = c.ops()
		return err
	})
	return ops, err
}

func (c *commStream) ops() ([]profile.CommOpStats, error) {
	set := commOpSet{at: map[commOpKey]int{}, dropped: map[int]bool{}, containerKeys: map[string][]string{}}
	if ch, ok := c.S.Peek(); !ok {
		return nil, errAtOffset(c.File, c.S.Offset(), "empty file: expected a JSON value")
	} else if ch != '{' {
		n, err := c.Value(0)
		if err != nil {
			return nil, err
		}
		return nil, c.d.Object(n, "communication.json")
	}
	layout := 0 // 0 not known yet, 1 flat, 2 nested
	err := c.Members(0, nil, func(key string, keyOff int64) error {
		var n *jsonx.Node // the first member's value, when read to learn the layout
		if layout == 0 {
			layout = 2
			if _, err := c.d.stepKey(jsonx.Member{Key: key}); err != nil {
				var err error
				if n, err = c.Value(1); err != nil {
					return err
				}
				if n.Get(cjTimeInfo) != nil {
					layout = 1
				}
			}
		}
		if layout == 1 {
			var err error
			if n == nil {
				n, err = c.Value(1)
			}
			if err != nil || isTotalKey(key) {
				return err
			}
			op, err := c.d.commOp(jsonx.Member{Key: key, KeyOff: keyOff, Val: n}, -1, profile.IsP2P(opKeyName(key)))
			if err != nil {
				return err
			}
			set.add("", key, op)
			return nil
		}
		return c.stepOps(key, keyOff, &set)
	})
	if err != nil {
		return nil, err
	}
	return set.kept(), nil
}

// stepOps reads one step's p2p and collective ops (the nested layout) into set.
func (c *commStream) stepOps(key string, keyOff int64, set *commOpSet) error {
	step, err := c.d.stepKey(jsonx.Member{Key: key, KeyOff: keyOff})
	if err != nil {
		return err
	}
	stepWhat := "step " + strconv.Quote(key)
	for _, kind := range [...]string{cjP2P, cjCollective} {
		set.reopen(key + "\x00" + kind)
	}
	return c.Members(1, func(n *jsonx.Node) error { return c.d.Object(n, stepWhat) }, func(kind string, _ int64) error {
		if kind != cjP2P && kind != cjCollective {
			_, err := c.Value(2)
			return err
		}
		container := key + "\x00" + kind
		set.reopen(container)
		if ch, ok := c.S.Peek(); ok && ch == 'n' { // null: no ops of this kind
			n, err := c.Value(2)
			if err != nil || n.IsNull() {
				return err
			}
		}
		what := strconv.Quote(key) + "." + kind
		return c.Members(2, func(n *jsonx.Node) error { return c.d.Object(n, what) }, func(opName string, opOff int64) error {
			n, err := c.Value(3)
			if err != nil || isTotalKey(opName) {
				return err
			}
			op, err := c.d.commOp(jsonx.Member{Key: opName, KeyOff: opOff, Val: n}, step, kind == cjP2P)
			if err != nil {
				return err
			}
			set.add(container, opName, op)
			return nil
		})
	})
}

// commOpKey is where an op is: its container (a top-level value, or a step's p2p or
// collective) and key.
type commOpKey struct{ container, key string }

// commOpSet holds the ops read, by where each kept op is: a repeated key replaces
// its op, a repeated container drops the ops of the earlier one.
type commOpSet struct {
	ops           []profile.CommOpStats
	at            map[commOpKey]int
	dropped       map[int]bool        // ops of a container met again
	containerKeys map[string][]string // the op keys read in each container
}

func (s *commOpSet) add(container, key string, op profile.CommOpStats) {
	k := commOpKey{container, key}
	if i, ok := s.at[k]; ok {
		s.ops[i] = op
		return
	}
	s.at[k] = len(s.ops)
	s.containerKeys[container] = append(s.containerKeys[container], key)
	s.ops = append(s.ops, op)
}

// reopen drops the ops read so far in the container: it is met again.
func (s *commOpSet) reopen(container string) {
	for _, key := range s.containerKeys[container] {
		k := commOpKey{container, key}
		s.dropped[s.at[k]] = true
		delete(s.at, k)
	}
	delete(s.containerKeys, container)
}

// kept are the ops not dropped, in the order read.
func (s *commOpSet) kept() []profile.CommOpStats {
	if len(s.dropped) == 0 {
		return s.ops
	}
	kept := s.ops[:0]
	for i, op := range s.ops {
		if !s.dropped[i] {
			kept = append(kept, op)
		}
	}
	return kept
}
