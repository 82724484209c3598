package jsonx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCanonicalInt: flow ids are matched as integers only where the integer's text is
// the id's text, so that ids equal as text are the ids equal as integers.
func TestCanonicalInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1736408883700059821", 1736408883700059821, true},
		{"-42", -42, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, // out of range
		{"-0", 0, false},
		{"007", 0, false},
		{"+7", 0, false},
		{"1.0", 0, false},
		{"1e3", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"abc", 0, false},
	} {
		n, ok := CanonicalInt([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, n, tc.in)
	}
}

// TestIntReadings: an integer written as a number or a string reads alike.
func TestIntReadings(t *testing.T) {
	assert.Equal(t, "12", string(RawStringBody([]byte(`"12"`))))
	assert.Equal(t, "12", string(RawStringBody([]byte(`12`))))
	for in, want := range map[string]int64{`7`: 7, `"7"`: 7, `"2.9"`: 2, `1e3`: 1000, `-3`: -3, `-2.5`: 0, `"x"`: 0, ``: 0} {
		assert.Equal(t, want, IntOrZero([]byte(in)), in)
	}
	for in, want := range map[string]bool{`7`: true, `"-7"`: true, `"2.9"`: false, ``: false, `null`: false} {
		_, ok := OptInt([]byte(in))
		assert.Equal(t, want, ok, in)
	}
}
