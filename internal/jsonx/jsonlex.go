package jsonx

import (
	"bytes"
	"fmt"
)

// This file is the JSON lexer under both of hcclprof's JSON readers: the streaming
// scanner of traces (jsonscan.go), which only needs where each token ends, and the
// position-keeping tree of summary files (jsontree.go), which checks the grammar
// strictly. Each token's rules live here once, with a strict and a lenient reading.

// LexError is a token that does not lex: at is the byte where it goes wrong.
// truncated means b ended inside the token, which may go on past it.
type LexError struct {
	at        int
	msg       string
	truncated bool
}

func (e *LexError) Error() string { return e.msg }

// LexString returns the index after the string that starts at b[i] (a '"'). strict
// rejects raw control characters, as RFC 8259 does; the trace scanner reads leniently,
// only the string's end (escapes are decoded later, by Unquote).
func LexString(b []byte, i int, strict bool) (int, *LexError) {
	j := i + 1
	if strict {
		for ; j < len(b); j++ {
			switch c := b[j]; {
			case c == '"':
				return j + 1, nil
			case c == '\\':
				j++ // the escaped byte; \u sequences are checked when decoding
			case c < 0x20:
				return 0, &LexError{at: j, msg: "control character in a string"}
			}
		}
		return 0, &LexError{at: len(b), msg: fmt.Sprintf("unterminated string at +%d", i), truncated: true}
	}
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, &LexError{at: len(b), msg: fmt.Sprintf("unterminated string at +%d", i), truncated: true}
		}
		j += k
		bs := 0
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// LexNumber returns the index after the number that starts at b[i] (a '-' or a digit).
// strict follows JSON's grammar (-?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?); lenient takes the
// run of number bytes, as a scanner that only needs the token's end.
func LexNumber(b []byte, i int, strict bool) (int, *LexError) {
	j := i
	if !strict {
		for j++; j < len(b); j++ {
			if d := b[j]; (d < '0' || d > '9') && d != '.' && d != 'e' && d != 'E' && d != '+' && d != '-' {
				break
			}
		}
		return j, nil
	}
	digits := func() int {
		n := 0
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
			n++
		}
		return n
	}
	if j < len(b) && b[j] == '-' {
		j++
	}
	if j < len(b) && b[j] == '0' {
		j++
	} else if digits() == 0 {
		return 0, &LexError{at: j, msg: "bad number: expected a digit", truncated: j >= len(b)}
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return 0, &LexError{at: j, msg: "bad number: expected a digit after '.'", truncated: j >= len(b)}
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return 0, &LexError{at: j, msg: "bad number: expected a digit in the exponent", truncated: j >= len(b)}
		}
	}
	return j, nil
}

// LexLiteral returns the index after lit (true, false, null, or Python's NaN,
// Infinity, -Infinity) at b[i]; ok is false when b does not hold it there. b may end
// inside it: a truncated LexError.
func LexLiteral(b []byte, i int, lit string) (int, bool, *LexError) {
	rest := b[i:]
	if len(rest) >= len(lit) {
		if string(rest[:len(lit)]) == lit {
			return i + len(lit), true, nil
		}
		return 0, false, nil
	}
	if string(rest) == lit[:len(rest)] {
		return 0, false, &LexError{at: len(b), msg: "unterminated " + lit, truncated: true}
	}
	return 0, false, nil
}
