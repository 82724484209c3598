package parser

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

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
// and the plain decoder reads the summary again (readRankSummaryPlain): its result and
// its messages are the reference, and a fuzz test holds the two to the same results.

// errNotFast makes the fast path give up.
var errNotFast = errors.New("not on the fast path")

// summaryBuffers are the decompressed summaries' buffers, reused.
var summaryBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readRankSummaryFast reads the summary in data (the compressed file); ok is false
// when it gave up. It inflates with klauspost/compress (already in the build, by
// Arrow), a tenth faster per summary than compress/gzip; the plain reader keeps the
// standard library's, and its messages.
func readRankSummaryFast(data []byte) (r *profile.Rank, ok bool) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, false
	}
	buf := summaryBuffers.Get().(*bytes.Buffer)
	defer summaryBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(zr); err != nil {
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
	body := text[nl+1:]
	end, err := decodeFast(body, skipWS(body, 0), reflect.ValueOf(&b).Elem(), 0)
	if err != nil || skipWS(body, end) != len(body) {
		return nil, false
	}
	r, err = b.rank(h.Rank)
	return r, err == nil
}

var (
	intColumnType      = reflect.TypeFor[intColumn]()
	int64ColumnType    = reflect.TypeFor[int64Column]()
	rankListColumnType = reflect.TypeFor[rankListColumn]()
)

// decodeFast decodes the JSON value at data[i] into v (settable, at its zero value)
// and returns the index after it.
func decodeFast(data []byte, i int, v reflect.Value, depth int) (int, error) {
	if i >= len(data) || depth > maxJSONDepth {
		return 0, errNotFast
	}
	t := v.Type()
	if data[i] == 'n' {
		end, ok, _ := lexLiteral(data, i, "null")
		if !ok {
			return 0, errNotFast
		}
		v.SetZero() // encoding/json: nil for slices, maps, pointers; others are left (at zero)
		return end, nil
	}
	switch t {
	case intColumnType:
		col, end, err := decodeIntList(data, i, []int(nil), math.MinInt, math.MaxInt)
		if err != nil {
			return 0, errNotFast
		}
		v.Set(reflect.ValueOf(intColumn(col)))
		return end, nil
	case rankListColumnType:
		list, end, err := decodeRankList(data, i)
		if err != nil {
			return 0, errNotFast
		}
		v.Set(reflect.ValueOf(rankListColumn(list)))
		return end, nil
	case int64ColumnType:
		col, end, err := decodeIntList(data, i, []int64(nil), math.MinInt64, math.MaxInt64)
		if err != nil {
			return 0, errNotFast
		}
		v.Set(reflect.ValueOf(int64Column(col)))
		return end, nil
	}
	if customDecoding(t) {
		return 0, errNotFast
	}
	switch t.Kind() {
	case reflect.String:
		s, end, err := decodeFastString(data, i)
		if err != nil {
			return 0, err
		}
		v.SetString(s)
		return end, nil
	case reflect.Bool:
		for _, lit := range []string{"true", "false"} {
			if end, ok, _ := lexLiteral(data, i, lit); ok {
				v.SetBool(lit == "true")
				return end, nil
			}
		}
		return 0, errNotFast
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		lo := int64(-1) << (t.Bits() - 1)
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
		end, lerr := lexNumber(data, i, true)
		if lerr != nil || end < len(data) && isNumberByte(data[end]) {
			return 0, errNotFast
		}
		f, err := strconv.ParseFloat(string(data[i:end]), 64)
		if err != nil {
			return 0, errNotFast
		}
		v.SetFloat(f)
		return end, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return 0, errNotFast // encoding/json reads base64 into []byte
		}
		v.Set(reflect.MakeSlice(t, 0, 0))
		return walkFastArray(data, i, depth, func(j int) (int, error) {
			n := v.Len()
			if n == v.Cap() {
				v.Grow(1)
			}
			v.SetLen(n + 1)
			return decodeFast(data, j, v.Index(n), depth+1)
		})
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key() != reflect.TypeFor[string]() {
			return 0, errNotFast
		}
		m := reflect.MakeMap(t)
		v.Set(m)
		return walkFastObject(data, i, func(name string, j int) (int, error) {
			if m.MapIndex(reflect.ValueOf(name)).IsValid() {
				return 0, errNotFast // a repeated key
			}
			elem := reflect.New(t.Elem()).Elem()
			end, err := decodeFast(data, j, elem, depth+1)
			if err != nil {
				return 0, err
			}
			m.SetMapIndex(reflect.ValueOf(name), elem)
			return end, nil
		})
	case reflect.Struct:
		fields := fastFieldsOf(t)
		if fields == nil {
			return 0, errNotFast
		}
		var seen uint64
		return walkFastObject(data, i, func(name string, j int) (int, error) {
			k, ok := fields.byName[name]
			if !ok || seen&(1<<k) != 0 {
				return 0, errNotFast // unknown (or cased otherwise), or repeated
			}
			seen |= 1 << k
			return decodeFast(data, j, v.FieldByIndex(fields.index[k]), depth+1)
		})
	case reflect.Pointer:
		if t.Elem().Kind() != reflect.Struct {
			return 0, errNotFast
		}
		p := reflect.New(t.Elem())
		end, err := decodeFast(data, i, p.Elem(), depth)
		if err != nil {
			return 0, err
		}
		v.Set(p)
		return end, nil
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return 0, errNotFast
		}
		end, err := skipValue(data, i, depth)
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

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

var customDecodingCache sync.Map // reflect.Type → bool

// customDecoding reports whether encoding/json would decode t by its own methods.
func customDecoding(t reflect.Type) bool {
	if c, ok := customDecodingCache.Load(t); ok {
		return c.(bool)
	}
	p := reflect.PointerTo(t)
	c := t.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
	customDecodingCache.Store(t, c)
	return c
}

// decodeFastString decodes the JSON string at data[i].
func decodeFastString(data []byte, i int) (string, int, error) {
	if data[i] != '"' {
		return "", 0, errNotFast
	}
	end, lerr := lexString(data, i, true)
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
func walkFastArray(data []byte, i, depth int, elem func(j int) (int, error)) (int, error) {
	if data[i] != '[' {
		return 0, errNotFast
	}
	j := skipWS(data, i+1)
	if j < len(data) && data[j] == ']' {
		return j + 1, nil
	}
	for {
		end, err := elem(j)
		if err != nil {
			return 0, err
		}
		j = skipWS(data, end)
		if j >= len(data) {
			return 0, errNotFast
		}
		switch data[j] {
		case ']':
			return j + 1, nil
		case ',':
			j = skipWS(data, j+1)
		default:
			return 0, errNotFast
		}
	}
}

// walkFastObject calls member with each member of the JSON object at data[i] (its
// name and the index of its value); member returns the index after the value.
func walkFastObject(data []byte, i int, member func(name string, j int) (int, error)) (int, error) {
	if data[i] != '{' {
		return 0, errNotFast
	}
	j := skipWS(data, i+1)
	if j < len(data) && data[j] == '}' {
		return j + 1, nil
	}
	for {
		if j >= len(data) {
			return 0, errNotFast
		}
		name, end, err := decodeFastString(data, j)
		if err != nil {
			return 0, err
		}
		j = skipWS(data, end)
		if j >= len(data) || data[j] != ':' {
			return 0, errNotFast
		}
		if end, err = member(name, skipWS(data, j+1)); err != nil {
			return 0, err
		}
		j = skipWS(data, end)
		if j >= len(data) {
			return 0, errNotFast
		}
		switch data[j] {
		case '}':
			return j + 1, nil
		case ',':
			j = skipWS(data, j+1)
		default:
			return 0, errNotFast
		}
	}
}

// fastFields are the members of a struct type as encoding/json names them.
type fastFields struct {
	byName map[string]int
	index  [][]int
}

var fastFieldCache sync.Map // reflect.Type → *fastFields (nil: not on the fast path)

// fastFieldsOf is t's members, or nil when t has what the fast path leaves to
// encoding/json: a ",string" option, more than 64 members, or embedded structs
// whose members collide.
func fastFieldsOf(t reflect.Type) *fastFields {
	if f, ok := fastFieldCache.Load(t); ok {
		return f.(*fastFields)
	}
	f := &fastFields{byName: map[string]int{}}
	if !f.add(t, nil) || len(f.index) > 64 {
		f = nil
	}
	fastFieldCache.Store(t, f)
	return f
}

func (f *fastFields) add(t reflect.Type, at []int) bool {
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
			if !f.add(ft, index) {
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
	}
	return true
}
