package ranksummary

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/profile"
)

// A summary is mostly long lists of integers (its tasks' columns, its packed times, the
// group rank lists in every rank's metadata). The fast path (summaryfast.go) knows
// these types and decodes each list in one loop; encoding/json, the plain reader,
// decodes them as the plain slices they are, so its results, and the byte and field
// its errors name, are the reference. They encode as plain slices too.

// intColumn is a JSON array of integers.
type intColumn []int

// int64Column is a JSON array of int64.
type int64Column []int64

// decodeIntArray appends to dst the integers of b, a JSON array or null (nil). Any
// other JSON, or a value that is not an integer in [lo, hi], is an error, as
// encoding/json's would be.
func decodeIntArray[T int | int64](b []byte, dst []T, lo, hi int64) ([]T, error) {
	i := jsonx.SkipWS(b, 0)
	if end, ok, _ := jsonx.LexLiteral(b, i, "null"); ok && jsonx.SkipWS(b, end) == len(b) {
		return nil, nil
	}
	out, end, err := decodeIntList(b, i, dst, lo, hi)
	if err != nil {
		return nil, err
	}
	if end = jsonx.SkipWS(b, end); end != len(b) {
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
	i = jsonx.SkipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return dst, i + 1, nil
	}
	for k := 0; ; k++ {
		v, next, err := decodeJSONInt(b, i, lo, hi)
		if err != nil {
			return nil, 0, fmt.Errorf("item %d: %w", k, err)
		}
		dst = append(dst, T(v))
		i = jsonx.SkipWS(b, next)
		if i >= len(b) {
			return nil, 0, errors.New("json: unexpected end of a list of integers")
		}
		if b[i] == ']' {
			return dst, i + 1, nil
		}
		if b[i] != ',' {
			return nil, 0, fmt.Errorf("json: invalid character %q in a list of integers", b[i])
		}
		i = jsonx.SkipWS(b, i+1)
	}
}

// decodeJSONInt reads the integer at b[i:], returning it and the index after it.
func decodeJSONInt(b []byte, i int, lo, hi int64) (int64, int, error) {
	start := i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var u uint64 // 19 digits cannot overflow it; a 20th (no leading zero) is out of range
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		u = u*10 + uint64(b[i]-'0')
		digits++
	}
	if digits > 19 {
		return 0, i, fmt.Errorf("json: cannot unmarshal number %s into an integer: out of range", numberText(b, start))
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

// summaryRankLists are the rank lists read from summaries, by their text: written as
// ranks (version 1), and as steps (version 2).
var summaryRankLists, summaryRankSteps jsonx.IntArrayCache[int]

// decodeRankList decodes the rank list at b[i] (a '['), written as ranks or, when
// steps, as steps (rankSteps); a long one is shared.
func decodeRankList(b []byte, i int, steps bool) ([]int, int, error) {
	decode := func() ([]int, int, error) {
		list, end, err := decodeIntList(b, i, []int(nil), math.MinInt, math.MaxInt)
		if err == nil && steps {
			list = ranksFromSteps(list)
		}
		return list, end, err
	}
	last := bytes.IndexByte(b[i:], ']')   // a list of integers ends at its first ']'
	if last < jsonx.MinSharedIntArray/8 { // steps of 1 take 2 bytes a rank
		return decode()
	}
	key, cache := b[i:i+last+1], &summaryRankLists
	if steps {
		cache = &summaryRankSteps
	}
	if list, ok := cache.Get(key); ok {
		return list, i + last + 1, nil // the same text as a list decoded before
	}
	list, end, err := decode()
	if err != nil || end != i+last+1 {
		return list, end, err
	}
	cache.Put(key, list)
	return list, end, nil
}

// summaryMetadata is profile.Metadata as a summary holds it: the same fields (a test
// holds them to profile's), the group rank lists decoded as columns.
type summaryMetadata struct {
	Env             map[string]string
	ParallelGroups  []summaryParallelGroup
	DistributedArgs map[string]any
}

// summaryParallelGroup is profile.ParallelGroup with its rank list as a column:
// GlobalRanks as version 1 wrote it, RankSteps as version 2 writes it.
type summaryParallelGroup struct {
	HCCLName    string
	Name        string
	GroupRank   int
	GlobalRanks rankListColumn `json:",omitempty"`
	// RankSteps is the rank list as its first rank and the steps between
	// neighbours: the world group's 0, 1, ..., 4095 was two thirds of a 4096-rank
	// job's summary as ranks, and compresses to almost nothing as steps of 1.
	RankSteps rankSteps // null for none, [] for an empty list: both read back as written
	Key       string
	Size      int
	Source    string
}

// rankSteps is a rank list, held as the ranks and written as steps (see
// summaryParallelGroup.RankSteps).
type rankSteps []int

func (r rankSteps) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	out := make([]byte, 0, 2+3*len(r))
	out = append(out, '[')
	prev := 0
	for i, v := range r {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, int64(v-prev), 10) // wraps for ranks far apart; so does the reader
		prev = v
	}
	return append(out, ']'), nil
}

// UnmarshalJSON is the plain reader's: only it turns steps into ranks, so its errors
// name the member themselves (encoding/json places them where it stopped reading).
func (r *rankSteps) UnmarshalJSON(b []byte) error {
	steps, err := decodeIntArray(b, []int(nil), math.MinInt, math.MaxInt)
	if err != nil {
		return fmt.Errorf("RankSteps: %w", err)
	}
	*r = ranksFromSteps(steps)
	return nil
}

// ranksFromSteps turns steps into ranks in place. The sums wrap as the writer's
// differences did (MarshalJSON), so every rank list, however far apart its ranks,
// reads back exactly.
func ranksFromSteps(steps []int) []int {
	prev := 0
	for i, d := range steps {
		prev += d
		steps[i] = prev
	}
	return steps
}

// toSummaryMetadata is m as version 2 writes it, its rank lists as steps.
func toSummaryMetadata(m profile.Metadata) summaryMetadata {
	out := summaryMetadata{Env: m.Env, DistributedArgs: m.DistributedArgs}
	if m.ParallelGroups != nil {
		out.ParallelGroups = make([]summaryParallelGroup, len(m.ParallelGroups))
		for i, g := range m.ParallelGroups {
			out.ParallelGroups[i] = summaryParallelGroup{HCCLName: g.HCCLName, Name: g.Name, GroupRank: g.GroupRank,
				RankSteps: g.GlobalRanks, Key: g.Key, Size: g.Size, Source: g.Source}
		}
	}
	return out
}

// metadata is m, of a summary of version, as profile holds it. A group's ranks are
// in GlobalRanks (version 1) or RankSteps (version 2), never both.
func (m summaryMetadata) metadata(version int) (profile.Metadata, error) {
	out := profile.Metadata{Env: m.Env, DistributedArgs: m.DistributedArgs}
	if m.ParallelGroups != nil {
		out.ParallelGroups = make([]profile.ParallelGroup, len(m.ParallelGroups))
		for i, g := range m.ParallelGroups {
			ranks := []int(g.GlobalRanks)
			if g.RankSteps != nil {
				if version < 2 {
					return out, fmt.Errorf("Metadata.ParallelGroups[%d] (%s): RankSteps in a version %d summary", i, g.Name, version)
				}
				if g.GlobalRanks != nil {
					return out, fmt.Errorf("Metadata.ParallelGroups[%d] (%s): both GlobalRanks and RankSteps", i, g.Name)
				}
				ranks = g.RankSteps
			}
			out.ParallelGroups[i] = profile.ParallelGroup{HCCLName: g.HCCLName, Name: g.Name, GroupRank: g.GroupRank,
				GlobalRanks: ranks, Key: g.Key, Size: g.Size, Source: g.Source}
		}
	}
	return out, nil
}
