package jsonx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGuessObjectInArray: the guess is the '{' after "}," (white space between
// allowed), at or after the offset asked; none when the bytes hold no such place.
func TestGuessObjectInArray(t *testing.T) {
	events := `[{"a": 1}, {"b": [1, 2]},` + "\n\t" + `{"c": {"d": 3}}]`
	for _, tc := range []struct {
		from int64
		want int64
		ok   bool
	}{
		{0, 11, true},
		{11, 27, true}, // the array's commas and the nested object's '}' do not count
		{28, 0, false},
	} {
		r := strings.NewReader(events)
		got, ok := GuessObjectInArray(r, tc.from, int64(len(events)))
		assert.Equal(t, tc.ok, ok, tc.from)
		assert.Equal(t, tc.want, got, tc.from)
	}
}
