package jsonx

import (
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// EncodeMembers writes v as json.Encoder's Encode writes it (the same bytes, and a
// newline), a member at a time: a big trace's summary body is 10 MB of JSON, which
// Encode holds whole, with the copies of its growth, while summarize's peak memory
// is reached. Structs (and pointers to them) are written member by member
// themselves; other values by json.Marshal. It knows the struct tags the summaries
// use (a name, ",omitempty", "-") and refuses others (",string", embedding).
func EncodeMembers(w io.Writer, v any) error {
	if err := writeMembers(w, reflect.ValueOf(v)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// streamable reports whether v is a struct, or a non-nil pointer to one, that
// encoding/json writes member by member (no marshaling method of its own).
func streamable(v reflect.Value) bool {
	if !v.IsValid() {
		return false // nil
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		if v.IsNil() {
			return false
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	for _, m := range []reflect.Type{jsonMarshalerType, textMarshalerType} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return false
		}
	}
	return true
}

func writeMembers(w io.Writer, v reflect.Value) error {
	if !streamable(v) {
		var x any
		if v.IsValid() {
			x = v.Interface()
		}
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	v = reflect.Indirect(v)
	t := v.Type()
	sep := "{"
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		key, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous || opts != "" && opts != "omitempty" || strings.ContainsAny(key, `"\`) {
			return fmt.Errorf("EncodeMembers: %s.%s: tag %q or embedding not supported", t, f.Name, tag)
		}
		fv := v.Field(i)
		if opts == "omitempty" && isEmptyJSON(fv) {
			continue
		}
		if key == "" {
			key = f.Name
		}
		name, _ := json.Marshal(key)
		if _, err := io.WriteString(w, sep+string(name)+":"); err != nil {
			return err
		}
		sep = ","
		if err := writeMembers(w, fv); err != nil {
			return err
		}
	}
	if sep == "{" {
		_, err := io.WriteString(w, "{}")
		return err
	}
	_, err := io.WriteString(w, "}")
	return err
}

// isEmptyJSON is encoding/json's rule for omitempty (a float of -0 is empty too).
func isEmptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
