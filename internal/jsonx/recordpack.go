package jsonx

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"unsafe"
)

// recordCodec packs records of a pointer-free struct type into bytes and back,
// exactly: each integer field is written as the zig-zag varint of its difference
// from the same field of the record before (an interval's end from its own start).
// A trace's candidate records are runs of one stream's tasks: ids repeat and times
// advance a little, so a 48-byte record packs into a fifth to a quarter of it.
type recordCodec struct {
	fields []packedField
}

type packedField struct {
	off    uintptr
	size   uintptr // 1, 2, 4 or 8 bytes
	signed bool
	// fromField ≥ 0: the field is written as its difference from that field of the
	// same record (an interval's end from its start), not from the record before.
	fromField int
}

var (
	codecsMu sync.Mutex
	codecs   = map[reflect.Type]*recordCodec{}
)

// codecOf is T's codec, nil when T holds pointers (strings, slices: their bytes
// cannot be written out and read back safely) or fields the codec does not know.
func codecOf[T any]() *recordCodec {
	t := reflect.TypeFor[T]()
	codecsMu.Lock()
	defer codecsMu.Unlock()
	if c, ok := codecs[t]; ok {
		return c
	}
	c := &recordCodec{}
	if !c.add(t, 0) || len(c.fields) > maxPackedFields {
		c = nil
	}
	codecs[t] = c
	return c
}

// spanTypes are the struct types of two integer fields, a start and an end, whose
// end is packed as its difference from the start (PackAsSpan).
var spanTypes sync.Map // reflect.Type → struct{}

// PackAsSpan declares T a span: a struct of two integer fields, a start then an end,
// whose end is packed as its difference from its own start rather than from the end
// of the record before. Call it before the first Chunks of a type holding a T is made.
func PackAsSpan[T any]() { spanTypes.Store(reflect.TypeFor[T](), struct{}{}) }

func isSpan(t reflect.Type) bool { _, ok := spanTypes.Load(t); return ok }

// add lists t's fields at base; false when one cannot be packed.
func (c *recordCodec) add(t reflect.Type, base uintptr) bool {
	switch t.Kind() {
	case reflect.Struct:
		first := len(c.fields)
		for i := range t.NumField() {
			f := t.Field(i)
			if !c.add(f.Type, base+f.Offset) {
				return false
			}
		}
		if isSpan(t) && len(c.fields) == first+2 {
			c.fields[first+1].fromField = first
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.fields = append(c.fields, packedField{off: base, size: t.Size(), signed: true, fromField: -1})
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Bool:
		c.fields = append(c.fields, packedField{off: base, size: t.Size(), fromField: -1})
		return true
	}
	return false
}

func (f *packedField) load(p unsafe.Pointer) uint64 {
	q := unsafe.Add(p, f.off)
	switch f.size {
	case 1:
		if f.signed {
			return uint64(int64(*(*int8)(q)))
		}
		return uint64(*(*uint8)(q))
	case 2:
		if f.signed {
			return uint64(int64(*(*int16)(q)))
		}
		return uint64(*(*uint16)(q))
	case 4:
		if f.signed {
			return uint64(int64(*(*int32)(q)))
		}
		return uint64(*(*uint32)(q))
	}
	return *(*uint64)(q)
}

func (f *packedField) store(p unsafe.Pointer, v uint64) {
	q := unsafe.Add(p, f.off)
	switch f.size {
	case 1:
		*(*uint8)(q) = uint8(v)
	case 2:
		*(*uint16)(q) = uint16(v)
	case 4:
		*(*uint32)(q) = uint32(v)
	default:
		*(*uint64)(q) = v
	}
}

// maxPackedFields bounds the fields of a packed type (the codec keeps the previous
// record's on the stack); a type with more is not packed.
const maxPackedFields = 16

// packRecords appends recs, packed, to dst.
func packRecords[T any](c *recordCodec, dst []byte, recs []T) []byte {
	var prev [maxPackedFields]uint64
	fields := c.fields
	// Room for a record's longest varints is made before each record, so that the
	// fields are written without checks; the buffer grows as append grows a slice.
	pos := len(dst)
	maxRecord := len(fields) * binary.MaxVarintLen64
	buf := dst[:cap(dst)]
	for i := range recs {
		if len(buf)-pos < maxRecord {
			buf = slices.Grow(buf[:pos], max(maxRecord, len(recs)-i)*2)
			buf = buf[:cap(buf)]
		}
		p := unsafe.Pointer(&recs[i])
		for k := range fields {
			f := &fields[k]
			var v uint64
			if f.size == 8 {
				v = *(*uint64)(unsafe.Add(p, f.off))
			} else {
				v = f.load(p)
			}
			// prev holds the record before's fields, but for those of this one
			// written already: an interval's start, when its end is written.
			base := prev[k]
			if f.fromField >= 0 {
				base = prev[f.fromField]
			}
			prev[k] = v
			d := int64(v - base)
			z := uint64(d<<1) ^ uint64(d>>63)
			for z >= 0x80 {
				buf[pos] = byte(z) | 0x80
				z >>= 7
				pos++
			}
			buf[pos] = byte(z)
			pos++
		}
	}
	return buf[:pos]
}

// unpackRecords appends the n records packed in src to dst.
func unpackRecords[T any](c *recordCodec, dst []T, src []byte, n int) []T {
	var prev [maxPackedFields]uint64
	fields := c.fields
	start := len(dst)
	dst = append(dst, make([]T, n)...)
	pos := 0
	for i := start; i < len(dst); i++ {
		p := unsafe.Pointer(&dst[i])
		for k := range fields {
			f := &fields[k]
			var z uint64
			if pos < len(src) && src[pos] < 0x80 { // most differences are small
				z = uint64(src[pos])
				pos++
			} else {
				v, w := binary.Uvarint(src[pos:])
				if w <= 0 {
					panic(fmt.Sprintf("packed records: damaged at record %d field %d", i-start, k)) // written by packRecords alone
				}
				z = v
				pos += w
			}
			base := prev[k]
			if f.fromField >= 0 {
				base = prev[f.fromField] // this record's, already read (see packRecords)
			}
			v := base + (z>>1 ^ -(z & 1))
			if f.size == 8 {
				*(*uint64)(unsafe.Add(p, f.off)) = v
				prev[k] = v
				continue
			}
			f.store(p, v)
			// The next base is what the field holds, widened as load widens it.
			if f.size < 8 {
				shift := 64 - 8*f.size
				if f.signed {
					v = uint64(int64(v<<shift) >> shift)
				} else {
					v = v << shift >> shift
				}
			}
			prev[k] = v
		}
	}
	return dst
}
