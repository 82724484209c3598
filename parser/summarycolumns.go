package parser

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/hcclprof/hcclprof/profile"
)

// A summary is mostly long lists of integers (its tasks' columns, its packed times, the
// world group's rank list in every rank's metadata), and encoding/json decodes each
// number by reflection: over four thousand gathered summaries that was most of an
// analyze's time. The lists decode through these types instead; they encode as the
// plain slices they are, so the files are unchanged.

// intColumn is a JSON array of integers decoded in one pass.
type intColumn []int

// int64Column is a JSON array of int64 decoded in one pass.
type int64Column []int64

func (c *intColumn) UnmarshalJSON(b []byte) error {
	v, err := decodeIntArray(b, []int(*c)[:0], math.MinInt, math.MaxInt)
	*c = v
	return err
}

func (c *int64Column) UnmarshalJSON(b []byte) error {
	v, err := decodeIntArray(b, []int64(*c)[:0], math.MinInt64, math.MaxInt64)
	*c = v
	return err
}

// decodeIntArray appends to dst the integers of b, a JSON array or null (nil). Any
// other JSON, or a value that is not an integer in [lo, hi], is an error, as
// encoding/json's would be.
func decodeIntArray[T int | int64](b []byte, dst []T, lo, hi int64) ([]T, error) {
	i := skipJSONSpace(b, 0)
	if end, ok, _ := lexLiteral(b, i, "null"); ok && skipJSONSpace(b, end) == len(b) {
		return nil, nil
	}
	out, end, err := decodeIntList(b, i, dst, lo, hi)
	if err != nil {
		return nil, err
	}
	if end = skipJSONSpace(b, end); end != len(b) {
		return nil, fmt.Errorf("json: invalid character %q after a list of integers", b[end])
	}
	return out, nil
}

// decodeIntList appends to dst the integers of the JSON array at b[i] and returns the
// index after it. The syntax is checked here: the fast path (summaryfast.go) hands over
// unchecked bytes.
func decodeIntList[T int | int64](b []byte, i int, dst []T, lo, hi int64) ([]T, int, error) {
	if i >= len(b) || b[i] != '[' {
		return nil, 0, fmt.Errorf("json: cannot unmarshal %s into a list of integers", jsonKind(b[min(i, len(b)):]))
	}
	if dst == nil {
		n := 0 // the commas up to the list's end bound its length
		for _, c := range b[i:] {
			if c == ']' {
				break
			}
			if c == ',' {
				n++
			}
		}
		dst = make([]T, 0, n+1)
	}
	i = skipJSONSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return dst, i + 1, nil
	}
	for k := 0; ; k++ {
		v, next, err := decodeJSONInt(b, i, lo, hi)
		if err != nil {
			return nil, 0, fmt.Errorf("item %d: %w", k, err)
		}
		dst = append(dst, T(v))
		i = skipJSONSpace(b, next)
		if i >= len(b) {
			return nil, 0, errors.New("json: unexpected end of a list of integers")
		}
		if b[i] == ']' {
			return dst, i + 1, nil
		}
		if b[i] != ',' {
			return nil, 0, fmt.Errorf("json: invalid character %q in a list of integers", b[i])
		}
		i = skipJSONSpace(b, i+1)
	}
}

// decodeJSONInt reads the integer at b[i:], returning it and the index after it.
func decodeJSONInt(b []byte, i int, lo, hi int64) (int64, int, error) {
	start := i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var u uint64
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, i, fmt.Errorf("json: cannot unmarshal number %s into an integer: out of range", numberText(b, start))
		}
		u = u*10 + d
		digits++
	}
	// JSON has no leading zeros, fractions or exponents in an integer (the fast path
	// reads unchecked bytes).
	if digits == 0 || digits > 1 && b[i-digits] == '0' || i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, i, fmt.Errorf("json: cannot unmarshal %s into an integer", jsonKind(b[start:]))
	}
	var v int64
	switch {
	case !neg && u <= math.MaxInt64:
		v = int64(u)
	case neg && u <= 1<<63:
		v = int64(-u) // -(1<<63) wraps to itself, as it should
	default:
		return 0, i, fmt.Errorf("json: cannot unmarshal number %s into an integer: out of range", numberText(b, start))
	}
	if v < lo || v > hi {
		return 0, i, fmt.Errorf("json: cannot unmarshal number %s into an integer: out of range", numberText(b, start))
	}
	return v, i, nil
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// numberText is the JSON number starting at b[i].
func numberText(b []byte, i int) string {
	j := i
	for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] >= '0' && b[j] <= '9') {
		j++
	}
	return string(b[i:j])
}

// jsonKind names the JSON value b starts with, for an error.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number " + numberText(b, 0)
}

// rankListColumn is a group's rank list: an intColumn that the fast path shares
// between the summaries that hold the same list (every rank of a job holds its world
// group's), as the raw readers do (sharedRankLists). The lists are never written.
type rankListColumn []int

func (c *rankListColumn) UnmarshalJSON(b []byte) error {
	v, err := decodeIntArray(b, []int(*c)[:0], math.MinInt, math.MaxInt)
	*c = v
	return err
}

// summaryRankLists are the rank lists read from summaries, by their text.
var summaryRankLists = struct {
	sync.Mutex
	m map[string][]int
}{m: map[string][]int{}}

// decodeRankList decodes the rank list at b[i] (a '['), sharing a long one.
func decodeRankList(b []byte, i int) ([]int, int, error) {
	last := bytes.IndexByte(b[i:], ']') // a list of integers ends at its first ']'
	if last < minSharedIntArray {
		return decodeIntList(b, i, []int(nil), math.MinInt, math.MaxInt)
	}
	text := b[i : i+last+1]
	summaryRankLists.Lock()
	list, ok := summaryRankLists.m[string(text)]
	summaryRankLists.Unlock()
	if ok {
		return list, i + last + 1, nil // the same text as a list decoded before
	}
	list, end, err := decodeIntList(b, i, []int(nil), math.MinInt, math.MaxInt)
	if err != nil || end != i+last+1 {
		return list, end, err
	}
	summaryRankLists.Lock()
	if len(summaryRankLists.m) >= 64 { // a job has a few large groups
		clear(summaryRankLists.m)
	}
	summaryRankLists.m[string(text)] = list
	summaryRankLists.Unlock()
	return list, end, nil
}

// summaryMetadata is profile.Metadata as a summary holds it: the same fields (a test
// holds them to profile's), the group rank lists decoded as columns.
type summaryMetadata struct {
	Env             map[string]string
	ParallelGroups  []summaryParallelGroup
	DistributedArgs map[string]any
}

// summaryParallelGroup is profile.ParallelGroup with its rank list as a column.
type summaryParallelGroup struct {
	HCCLName    string
	Name        string
	GroupRank   int
	GlobalRanks rankListColumn
	Key         string
	Size        int
	Source      string
}

func toSummaryMetadata(m profile.Metadata) summaryMetadata {
	out := summaryMetadata{Env: m.Env, DistributedArgs: m.DistributedArgs}
	if m.ParallelGroups != nil {
		out.ParallelGroups = make([]summaryParallelGroup, len(m.ParallelGroups))
		for i, g := range m.ParallelGroups {
			out.ParallelGroups[i] = summaryParallelGroup{HCCLName: g.HCCLName, Name: g.Name, GroupRank: g.GroupRank,
				GlobalRanks: g.GlobalRanks, Key: g.Key, Size: g.Size, Source: g.Source}
		}
	}
	return out
}

func (m summaryMetadata) metadata() profile.Metadata {
	out := profile.Metadata{Env: m.Env, DistributedArgs: m.DistributedArgs}
	if m.ParallelGroups != nil {
		out.ParallelGroups = make([]profile.ParallelGroup, len(m.ParallelGroups))
		for i, g := range m.ParallelGroups {
			out.ParallelGroups[i] = profile.ParallelGroup{HCCLName: g.HCCLName, Name: g.Name, GroupRank: g.GroupRank,
				GlobalRanks: g.GlobalRanks, Key: g.Key, Size: g.Size, Source: g.Source}
		}
	}
	return out
}
