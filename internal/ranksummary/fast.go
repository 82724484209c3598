package ranksummary

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/profile"
)

// The fast reading of a rank summary. encoding/json reads every byte of a summary
// twice (its decoder finds a value's end before decoding it, by a state machine
// stepped per byte) and every value by reflection; an analyze over thousands of
// gathered summaries spent most of its time there. The fast path decodes in one pass
// with the trace scanner's lexer, into the plain kinds a summary holds (strings,
// bools, integers, floats, slices, string-keyed maps, structs, pointers to them), the
// integer columns in one loop each. It is only a shortcut: on anything else (an error,
// an unknown, repeated or differently cased member name, another kind) it gives up,
// and the plain decoder reads the summary again (readPlain): its result and
// its messages are the reference, and a fuzz test holds the two to the same results.

// errNotFast makes the fast path give up.
var errNotFast = errors.New("not on the fast path")

// summaryBuffers are the decompressed summaries' buffers, and summaryReaders their
// decompressors (tens of KB of tables each), reused.
var (
	summaryBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	summaryReaders sync.Pool
)

// readFast reads the summary in data (the compressed file); ok is false
// when it gave up. It inflates with klauspost/compress (already in the build, by
// Arrow), a tenth faster per summary than compress/gzip; the plain reader keeps the
// standard library's, and its messages.
//
// size is what the text decompresses to (read learns it first); it gives
// up past that many bytes (the plain reader says why), having allocated no more.
func readFast(data []byte, size int64, known func(profile.Format) bool) (r *profile.Rank, ok bool) {
	zr, _ := summaryReaders.Get().(*gzip.Reader)
	if zr == nil {
		zr = new(gzip.Reader)
	}
	defer summaryReaders.Put(zr)
	if zr.Reset(bytes.NewReader(data)) != nil {
		return nil, false
	}
	buf := summaryBuffers.Get().(*bytes.Buffer)
	defer summaryBuffers.Put(buf)
	buf.Reset()
	buf.Grow(int(size) + bytes.MinRead) // once: ReadFrom would double it as it fills
	if n, err := buf.ReadFrom(io.LimitReader(zr, size+1)); err != nil || n > size {
		return nil, false
	}
	text := buf.Bytes()
	nl := bytes.IndexByte(text, '\n')
	if nl < 0 || nl+1 > maxSummaryHeader {
		return nil, false
	}
	h, err := checkSummaryHeader("", text[:nl+1])
	if err != nil {
		return nil, false
	}
	var b summaryBody
	if decodeSummaryBody(text[nl+1:], &b) != nil {
		return nil, false
	}
	r, err = b.rank(h.Rank, h.Version, known)
	return r, err == nil
}

// inflatedSize decompresses a gzip file keeping nothing, and returns its size, or
// limit and errInflateLimit as soon as it passes limit; another error (damage) is
// left to the reader that words it.
func inflatedSize(data []byte, limit int64) (int64, error) {
	zr, _ := summaryReaders.Get().(*gzip.Reader)
	if zr == nil {
		zr = new(gzip.Reader)
	}
	defer summaryReaders.Put(zr)
	if err := zr.Reset(bytes.NewReader(data)); err != nil {
		return 0, err
	}
	n, err := io.Copy(io.Discard, io.LimitReader(zr, limit+1))
	if n > limit {
		return limit, errInflateLimit
	}
	return n, err
}

var (
	intColumnType      = reflect.TypeFor[intColumn]()
	int64ColumnType    = reflect.TypeFor[int64Column]()
	rankListColumnType = reflect.TypeFor[rankListColumn]()
	rankStepsType      = reflect.TypeFor[rankSteps]()
)

// decodeSummaryBody decodes a summary's body (the text after the header line) on the
// fast path; errNotFast when it gives up.
func decodeSummaryBody(body []byte, b *summaryBody) error {
	end, err := decodeFast(body, jsonx.SkipWS(body, 0), reflect.ValueOf(b).Elem(), summaryBodyPlan, 0)
	if err != nil || jsonx.SkipWS(body, end) != len(body) {
		return errNotFast
	}
	return nil
}

// fastPlan is how the fast path decodes one type, worked out once (planOf): looking
// the type's members and methods up for every value was a tenth of the work.
type fastPlan struct {
	kind   reflect.Kind
	column reflect.Type // intColumn, int64Column, rankListColumn or rankSteps, else nil
	bits   int          // integers' size
	custom bool         // encoding/json would call the type's own methods: give up
	elem   *fastPlan    // of a slice's, map's or pointer's elements
	fields *fastFields  // of a struct
}

// summaryBodyPlan decodes summaryBody; made at start, read only after.
var summaryBodyPlan = planOf(reflect.TypeFor[summaryBody](), map[reflect.Type]*fastPlan{})

func planOf(t reflect.Type, plans map[reflect.Type]*fastPlan) *fastPlan {
	if p, ok := plans[t]; ok {
		return p
	}
	p := &fastPlan{kind: t.Kind()}
	plans[t] = p
	switch t {
	case intColumnType, int64ColumnType, rankListColumnType, rankStepsType:
		p.column = t
		return p
	}
	ptr := reflect.PointerTo(t)
	p.custom = t.Implements(jsonUnmarshalerType) || ptr.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || ptr.Implements(textUnmarshalerType)
	switch p.kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.bits = t.Bits()
	case reflect.Float32:
		p.kind = reflect.Invalid // encoding/json rounds to float32: left to it
	case reflect.Slice, reflect.Pointer:
		p.elem = planOf(t.Elem(), plans)
		if p.kind == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			p.kind = reflect.Invalid // encoding/json reads base64 into []byte
		}
		if p.kind == reflect.Pointer && t.Elem().Kind() != reflect.Struct {
			p.kind = reflect.Invalid
		}
	case reflect.Map:
		p.elem = planOf(t.Elem(), plans)
		if t.Key() != reflect.TypeFor[string]() {
			p.kind = reflect.Invalid
		}
	case reflect.Struct:
		p.fields = fastFieldsOf(t, plans)
		if p.fields == nil {
			p.kind = reflect.Invalid
		}
	case reflect.Interface:
		if t.NumMethod() != 0 {
			p.kind = reflect.Invalid
		}
	}
	return p
}

// decodeFast decodes the JSON value at data[i] into v (settable, at its zero value)
// by plan p and returns the index after it.
func decodeFast(data []byte, i int, v reflect.Value, p *fastPlan, depth int) (int, error) {
	if i >= len(data) || depth > jsonx.MaxDepth {
		return 0, errNotFast
	}
	if data[i] == 'n' {
		end, ok, _ := jsonx.LexLiteral(data, i, "null")
		if !ok {
			return 0, errNotFast
		}
		v.SetZero() // encoding/json: nil for slices, maps, pointers; others are left (at zero)
		return end, nil
	}
	if p.column != nil {
		return decodeFastColumn(data, i, v, p)
	}
	if p.custom {
		return 0, errNotFast
	}
	switch p.kind {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Float64:
		return decodeFastScalar(data, i, v, p)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		return walkFastArray(data, i, func(j int) (int, error) {
			n := v.Len()
			if n == v.Cap() {
				v.Grow(1)
			}
			v.SetLen(n + 1)
			return decodeFast(data, j, v.Index(n), p.elem, depth+1)
		})
	case reflect.Map:
		t := v.Type()
		m := reflect.MakeMap(t)
		v.Set(m)
		return walkFastObject(data, i, func(name string, j int) (int, error) {
			if m.MapIndex(reflect.ValueOf(name)).IsValid() {
				return 0, errNotFast // a repeated key
			}
			elem := reflect.New(t.Elem()).Elem()
			end, err := decodeFast(data, j, elem, p.elem, depth+1)
			if err != nil {
				return 0, err
			}
			m.SetMapIndex(reflect.ValueOf(name), elem)
			return end, nil
		})
	case reflect.Struct:
		var seen uint64
		return walkFastObject(data, i, func(name string, j int) (int, error) {
			k, ok := p.fields.byName[name]
			if !ok || seen&(1<<k) != 0 {
				return 0, errNotFast // unknown (or cased otherwise), or repeated
			}
			seen |= 1 << k
			return decodeFast(data, j, v.FieldByIndex(p.fields.index[k]), p.fields.plans[k], depth+1)
		})
	case reflect.Pointer:
		ptr := reflect.New(v.Type().Elem())
		end, err := decodeFast(data, i, ptr.Elem(), p.elem, depth)
		if err != nil {
			return 0, err
		}
		v.Set(ptr)
		return end, nil
	case reflect.Interface:
		end, err := jsonx.SkipValue(data, i, depth)
		if err != nil {
			return 0, errNotFast
		}
		var x any
		if err := json.Unmarshal(data[i:end], &x); err != nil {
			return 0, errNotFast
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return end, nil
	}
	return 0, errNotFast
}

// decodeFastColumn decodes a column type's value (p.column) into v.
func decodeFastColumn(data []byte, i int, v reflect.Value, p *fastPlan) (int, error) {
	var col any
	var end int
	var err error
	switch p.column {
	case intColumnType:
		var c []int
		c, end, err = decodeIntList(data, i, c, math.MinInt, math.MaxInt)
		col = intColumn(c)
	case int64ColumnType:
		var c []int64
		c, end, err = decodeIntList(data, i, c, math.MinInt64, math.MaxInt64)
		col = int64Column(c)
	case rankListColumnType, rankStepsType:
		var c []int
		steps := p.column == rankStepsType
		c, end, err = decodeRankList(data, i, steps)
		col = rankListColumn(c)
		if steps {
			col = rankSteps(c)
		}
	}
	if err != nil {
		return 0, errNotFast
	}
	v.Set(reflect.ValueOf(col))
	return end, nil
}

// decodeFastScalar decodes a string, bool, integer or float64 into v.
func decodeFastScalar(data []byte, i int, v reflect.Value, p *fastPlan) (int, error) {
	switch p.kind {
	case reflect.String:
		s, end, err := decodeFastString(data, i)
		if err != nil {
			return 0, err
		}
		v.SetString(s)
		return end, nil
	case reflect.Bool:
		for _, lit := range []string{"true", "false"} {
			if end, ok, _ := jsonx.LexLiteral(data, i, lit); ok {
				v.SetBool(lit == "true")
				return end, nil
			}
		}
		return 0, errNotFast
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		lo := int64(-1) << (p.bits - 1)
		n, end, err := decodeJSONInt(data, i, lo, -(lo + 1))
		if err != nil || end < len(data) && isNumberByte(data[end]) {
			return 0, errNotFast
		}
		v.SetInt(n)
		return end, nil
	case reflect.Float64:
		if data[i] != '-' && (data[i] < '0' || data[i] > '9') {
			return 0, errNotFast
		}
		end, lerr := jsonx.LexNumber(data, i, true)
		if lerr != nil || end < len(data) && isNumberByte(data[end]) {
			return 0, errNotFast
		}
		f, err := strconv.ParseFloat(string(data[i:end]), 64)
		if err != nil {
			return 0, errNotFast
		}
		v.SetFloat(f)
		return end, nil
	}
	return 0, errNotFast
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodeFastString decodes the JSON string at data[i].
func decodeFastString(data []byte, i int) (string, int, error) {
	if data[i] != '"' {
		return "", 0, errNotFast
	}
	end, lerr := jsonx.LexString(data, i, true)
	if lerr != nil {
		return "", 0, errNotFast
	}
	inner := data[i+1 : end-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), end, nil
	}
	var s string // escapes and non-ASCII (which encoding/json checks for UTF-8)
	if err := json.Unmarshal(data[i:end], &s); err != nil {
		return "", 0, errNotFast
	}
	return s, end, nil
}

// walkFastArray calls elem at each value of the JSON array at data[i]; elem returns
// the index after the value.
func walkFastArray(data []byte, i int, elem func(j int) (int, error)) (int, error) {
	return walkFastList(data, i, '[', ']', elem)
}

// walkFastObject calls member with each member of the JSON object at data[i] (its
// name and the index of its value); member returns the index after the value.
func walkFastObject(data []byte, i int, member func(name string, j int) (int, error)) (int, error) {
	return walkFastList(data, i, '{', '}', func(j int) (int, error) {
		name, end, err := decodeFastString(data, j)
		if err != nil {
			return 0, err
		}
		j = jsonx.SkipWS(data, end)
		if j >= len(data) || data[j] != ':' {
			return 0, errNotFast
		}
		return member(name, jsonx.SkipWS(data, j+1))
	})
}

// walkFastList calls item at each item of the list between open and close at data[i],
// its items separated by commas; item returns the index after the item.
func walkFastList(data []byte, i int, open, close byte, item func(j int) (int, error)) (int, error) {
	if data[i] != open {
		return 0, errNotFast
	}
	j := jsonx.SkipWS(data, i+1)
	if j < len(data) && data[j] == close {
		return j + 1, nil
	}
	for {
		if j >= len(data) {
			return 0, errNotFast
		}
		end, err := item(j)
		if err != nil {
			return 0, err
		}
		j = jsonx.SkipWS(data, end)
		switch {
		case j >= len(data):
			return 0, errNotFast
		case data[j] == close:
			return j + 1, nil
		case data[j] == ',':
			j = jsonx.SkipWS(data, j+1)
		default:
			return 0, errNotFast
		}
	}
}

// fastFields are the members of a struct type as encoding/json names them.
type fastFields struct {
	byName map[string]int
	index  [][]int
	plans  []*fastPlan
}

// fastFieldsOf is t's members, or nil when t has what the fast path leaves to
// encoding/json: a ",string" option, more than 64 members, or embedded structs
// whose members collide.
func fastFieldsOf(t reflect.Type, plans map[reflect.Type]*fastPlan) *fastFields {
	f := &fastFields{byName: map[string]int{}}
	if !f.add(t, nil, plans) || len(f.index) > 64 {
		return nil
	}
	return f
}

func (f *fastFields) add(t reflect.Type, at []int, plans map[reflect.Type]*fastPlan) bool {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",string,") {
			return false
		}
		index := append(append([]int(nil), at...), i)
		if sf.Anonymous && (!hasTag || name == "") {
			ft := sf.Type
			if ft.Kind() != reflect.Struct {
				if !sf.IsExported() {
					continue
				}
				return false
			}
			if !f.add(ft, index, plans) {
				return false
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := f.byName[name]; dup {
			return false // Go's rules for colliding promoted names: left to encoding/json
		}
		f.byName[name] = len(f.index)
		f.index = append(f.index, index)
		f.plans = append(f.plans, planOf(sf.Type, plans))
	}
	return true
}
