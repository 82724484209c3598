package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// namedJSONError is err, from encoding v as JSON, with the field that made it when
// it is a number JSON cannot hold (NaN, ±Inf): encoding/json says only
// "unsupported value: NaN", which names nothing a user or a developer can find. Inputs
// refuse such numbers where they are read; this says where one got through.
func namedJSONError(v any, err error) error {
	var uv *json.UnsupportedValueError
	if err == nil || !errors.As(err, &uv) {
		return err
	}
	if path, x, ok := nonFiniteField(reflect.ValueOf(v), "", 0); ok {
		return fmt.Errorf("JSON report: %s is %v, which JSON cannot hold (a bug: please report it with the input)", strings.TrimPrefix(path, "."), x)
	}
	return err
}

// nonFiniteField finds the first NaN or infinite number in v, by its JSON path.
func nonFiniteField(v reflect.Value, path string, depth int) (string, float64, bool) {
	if depth > 64 || !v.IsValid() {
		return "", 0, false
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
			return path, x, true
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nonFiniteField(v.Elem(), path, depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p, x, ok := nonFiniteField(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); ok {
				return p, x, true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if p, x, ok := nonFiniteField(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), depth+1); ok {
				return p, x, true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			p := path
			if !f.Anonymous || name != "" {
				if name == "" {
					name = f.Name
				}
				p = path + "." + name
			}
			if q, x, ok := nonFiniteField(v.Field(i), p, depth+1); ok {
				return q, x, true
			}
		}
	}
	return "", 0, false
}
