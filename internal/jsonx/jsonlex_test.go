package jsonx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The lexer's tokens, read strictly (the summary files' tree) and leniently (the trace
// scanner): where each ends, where a bad one goes wrong, and which stop at the end of
// the bytes (truncated: a stream reads more and tries again).
func TestLexTokens(t *testing.T) {
	for _, tc := range []struct {
		in        string
		strict    bool
		end, at   int // end when it lexes; at when not (-1: it lexes)
		truncated bool
		lexer     func(b []byte, i int, strict bool) (int, *LexError)
		msg       string
		name      string
	}{
		{name: "string", in: `"ab\"c" x`, strict: true, end: 7, at: -1, lexer: LexString},
		{name: "string lenient", in: `"ab\\"c`, end: 6, at: -1, lexer: LexString},
		{name: "control char strict", in: "\"a\tb\"", strict: true, at: 2, lexer: LexString, msg: "control character in a string"},
		{name: "control char lenient", in: "\"a\tb\"", end: 5, at: -1, lexer: LexString},
		{name: "cut string", in: `"abc`, strict: true, at: 4, truncated: true, lexer: LexString},
		{name: "cut string lenient", in: `"abc\"`, at: 6, truncated: true, lexer: LexString},
		{name: "number", in: `-12.5e+3,`, strict: true, end: 8, at: -1, lexer: LexNumber},
		{name: "leading zero", in: `0123`, strict: true, end: 1, at: -1, lexer: LexNumber},
		{name: "no digit after dot", in: `1.x`, strict: true, at: 2, lexer: LexNumber, msg: "bad number: expected a digit after '.'"},
		{name: "cut exponent", in: `1e`, strict: true, at: 2, truncated: true, lexer: LexNumber},
		{name: "lenient run", in: `1.2.3e-x`, end: 7, at: -1, lexer: LexNumber},
	} {
		end, err := tc.lexer([]byte(tc.in), 0, tc.strict)
		if tc.at < 0 {
			if assert.Nil(t, err, tc.name) {
				assert.Equal(t, tc.end, end, tc.name)
			}
			continue
		}
		if assert.NotNil(t, err, tc.name) {
			assert.Equal(t, tc.at, err.at, tc.name)
			assert.Equal(t, tc.truncated, err.truncated, tc.name)
			if tc.msg != "" {
				assert.Equal(t, tc.msg, err.msg, tc.name)
			}
		}
	}
	for _, tc := range []struct {
		in, lit       string
		end           int
		ok, truncated bool
	}{
		{"true,", "true", 4, true, false},
		{"tru", "true", 0, false, true},
		{"trux", "true", 0, false, false},
		{"-Infinity]", "-Infinity", 9, true, false},
		{"NaN", "NaN", 3, true, false},
	} {
		end, ok, err := LexLiteral([]byte(tc.in), 0, tc.lit)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.end, end, tc.in)
		assert.Equal(t, tc.truncated, err != nil && err.truncated, tc.in)
	}
}
