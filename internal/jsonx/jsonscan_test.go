package jsonx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeyEndAgreesWithTheLexer: the member names' short path ends a name where the
// lexer does, or hands it over (-1): escapes, names over 32 bytes, names cut off by
// the end of the bytes.
func TestKeyEndAgreesWithTheLexer(t *testing.T) {
	long := `"` + strings.Repeat("n", 40) + `": 1`
	for _, tc := range []struct {
		in   string
		want int // -1: handed to the lexer
	}{
		{`"ph": "X"`, 4},
		{`"": 1`, 2},
		{`"Task Type": "AI_CORE"`, 11},
		{`"size(Byte)": 4`, 12},
		{`"a\"b": 1`, -1},
		{`"a\\": 1`, -1},
		{`"` + strings.Repeat("n", 31) + `": 1`, 33},
		{`"` + strings.Repeat("n", 32) + `": 1`, -1},
		{long, -1},
		{`"unterminated`, -1},
		{`"`, -1},
	} {
		b := []byte(tc.in)
		got := keyEnd(b, 0)
		assert.Equal(t, tc.want, got, tc.in)
		if end, err := LexString(b, 0, false); err == nil && got >= 0 {
			assert.Equal(t, end, got, "the lexer's end of %s", tc.in)
		}
	}
	// Through the iterator: the same members with or without the short path.
	for _, obj := range []string{`{"a\"b": 1, "ph": "X"}`, `{` + long + `, "b": 2}`} {
		it := NewObjIter([]byte(obj))
		var keys []string
		for {
			k, _, ok := it.Next()
			if !ok {
				break
			}
			keys = append(keys, string(k))
		}
		assert.NoError(t, it.Err, obj)
		assert.Len(t, keys, 2, obj)
	}
	it := NewObjIter([]byte(`{"ph": 1, "na`))
	it.Next()
	_, _, ok := it.Next()
	assert.False(t, ok)
	var trunc TruncatedError
	assert.ErrorAs(t, it.Err, &trunc, "a name cut off by the end of the bytes is truncated, as the lexer says")
}
