package report

import (
	"bufio"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// writeIndentedJSON writes v as json.Encoder with SetIndent("", "  ") does, byte for
// byte, without building the whole document in memory: a cluster's report holds a
// row per rank and op (4096 ranks: 118 MB of JSON), and the encoder's two copies of
// it (marshalled, then indented) were most of analyze's peak memory. Structs whose
// fields are all plainly tagged, and the slices in them, are written member by member
// and element by element; anything else is marshalled whole.
func writeIndentedJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if err := streamValue(bw, reflect.ValueOf(v), ""); err != nil {
		return namedJSONError(v, err)
	}
	if err := bw.WriteByte('\n'); err != nil {
		return err
	}
	return bw.Flush()
}

const jsonIndent = "  "

func streamValue(w *bufio.Writer, v reflect.Value, prefix string) error {
	switch {
	case v.Kind() == reflect.Struct && plainStruct(v.Type()):
		return streamStruct(w, v, prefix)
	case v.Kind() == reflect.Slice && v.Len() > 0:
		inner := prefix + jsonIndent
		if _, err := w.WriteString("[\n"); err != nil {
			return err
		}
		for i := range v.Len() {
			b, err := json.MarshalIndent(v.Index(i).Interface(), inner, jsonIndent)
			if err != nil {
				return err
			}
			w.WriteString(inner)
			w.Write(b)
			if i+1 < v.Len() {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		w.WriteString(prefix)
		return w.WriteByte(']')
	}
	b, err := json.MarshalIndent(v.Interface(), prefix, jsonIndent)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func streamStruct(w *bufio.Writer, v reflect.Value, prefix string) error {
	t := v.Type()
	if t.NumField() == 0 {
		_, err := w.WriteString("{}")
		return err
	}
	inner := prefix + jsonIndent
	w.WriteString("{\n")
	for i := range t.NumField() {
		name, _ := json.Marshal(t.Field(i).Tag.Get("json"))
		w.WriteString(inner)
		w.Write(name)
		w.WriteString(": ")
		if err := streamValue(w, v.Field(i), inner); err != nil {
			return err
		}
		if i+1 < t.NumField() {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
	}
	w.WriteString(prefix)
	return w.WriteByte('}')
}

// plainStruct reports whether every field of t is exported, not embedded, and tagged
// with a bare name (no omitempty, no "-", no string option), so that writing its
// fields in order is what encoding/json would write.
func plainStruct(t reflect.Type) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || f.Anonymous || tag == "" || tag == "-" || strings.Contains(tag, ",") {
			return false
		}
	}
	return true
}
