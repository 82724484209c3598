// Package sanitize makes text from untrusted profiles safe to print: op, group and
// file names are copied from the profiler's output, so they may hold bytes that are not
// UTF-8 or control characters and line breaks that would start a line of their own (a
// GitHub workflow command such as "::warning::", a forged report line). Every report
// writer cleans its input here, in one place, so no format copies them raw.
package sanitize

import (
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// String returns s on one line and in valid UTF-8: line breaks and tabs (CR, LF, tab,
// vertical tab, form feed, NEL, the Unicode line and paragraph separators) become a
// space, so a name reads as before and cannot start a line; every other control
// character (C0, DEL, C1) and every byte that is not part of valid UTF-8 becomes
// U+FFFD, one per byte, as encoding/json does with invalid bytes. So do the Unicode
// bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to
// U+2069): kept, U+202E in an op name reversed the text after it on a terminal or
// web page, so a printed line could read other than what it holds.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s { // an invalid byte ranges as RuneError, width 1
		switch {
		case isBreak(r):
			b.WriteByte(' ')
		case r == utf8.RuneError || unsafeRune(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Lines cleans each line of a text made of several lines and keeps the line breaks:
// for the multi-line text hcclprof writes itself (a recommendation's commands).
func Lines(s string) string {
	if clean(s) {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = String(p)
	}
	return strings.Join(parts, "\n")
}

func isBreak(r rune) bool {
	return (r >= '\t' && r <= '\r') || r == '\u0085' || r == '\u2028' || r == '\u2029'
}

func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' || bidiControl(r)
}

// bidiControl reports whether r is one of Unicode's bidirectional formatting
// characters (embeddings, overrides, isolates and the directional marks).
func bidiControl(r rune) bool {
	return r == '\u061c' || r == '\u200e' || r == '\u200f' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// clean is the fast path: most names are printable ASCII.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			return cleanUnicode(s[i:])
		}
	}
	return true
}

func cleanUnicode(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			return false
		}
	}
	return true
}

// multiLine names the struct fields that hold hcclprof's own multi-line text: their
// lines are cleaned one by one and their line breaks kept.
var multiLine = map[string]bool{"Apply": true}

// Value cleans, in place, every string reachable from ptr (a pointer): struct fields,
// slice and array elements, map keys and values, through pointers and interfaces.
// Unexported fields are left alone (no writer prints them). Cleaning is idempotent.
func Value(ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	w := walker{seen: map[seenKey]bool{}}
	w.walk(v.Elem(), false)
}

type walker struct {
	seen map[seenKey]bool // pointers already walked: shared values and cycles
}

// seenKey is a pointer with its type: a struct and its first field share an address.
type seenKey struct {
	t reflect.Type
	p uintptr
}

// walk cleans v, which must be settable when it is a string.
func (w *walker) walk(v reflect.Value, lines bool) {
	if !mayHoldStrings(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		c := String(s)
		if lines {
			c = Lines(s)
		}
		if c != s && v.CanSet() {
			v.SetString(c)
		}
	case reflect.Pointer:
		k := seenKey{v.Type(), v.Pointer()}
		if v.IsNil() || w.seen[k] {
			return
		}
		w.seen[k] = true
		w.walk(v.Elem(), false)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if !mayHoldStrings(e.Type()) || !v.CanSet() {
			if e.Kind() == reflect.Pointer || e.Kind() == reflect.Map || e.Kind() == reflect.Slice {
				w.walk(e, false) // reaches through without setting the interface
			}
			return
		}
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		w.walk(c, false)
		v.Set(c)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				w.walk(v.Field(i), multiLine[t.Field(i).Name])
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), false)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), false)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		w.walkMap(v)
	}
}

// walkMap cleans a map's keys and values; map entries are not addressable, so each is
// copied, cleaned and stored back.
func (w *walker) walkMap(m reflect.Value) {
	kt, vt := m.Type().Key(), m.Type().Elem()
	keys := m.MapKeys()
	for _, k := range keys {
		val := m.MapIndex(k)
		nk, nv := k, val
		if mayHoldStrings(kt) {
			nk = reflect.New(kt).Elem()
			nk.Set(k)
			w.walk(nk, false)
		}
		if mayHoldStrings(vt) {
			nv = reflect.New(vt).Elem()
			nv.Set(val)
			w.walk(nv, false)
		}
		if !nk.Equal(k) {
			m.SetMapIndex(k, reflect.Value{})
		}
		m.SetMapIndex(nk, nv)
	}
}

var holds sync.Map // reflect.Type -> bool

// mayHoldStrings reports whether a value of type t can reach a string, so the walk
// skips the long timelines of intervals that hold none.
func mayHoldStrings(t reflect.Type) bool {
	if b, ok := holds.Load(t); ok {
		return b.(bool)
	}
	holds.Store(t, true) // a recursive type is assumed to; the answer below replaces it
	b := computeHolds(t)
	holds.Store(t, b)
	return b
}

func computeHolds(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return mayHoldStrings(t.Elem())
	case reflect.Map:
		return mayHoldStrings(t.Key()) || mayHoldStrings(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() && mayHoldStrings(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
