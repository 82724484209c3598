package jsonx

import "fmt"

// SyntaxError is a problem in an input file at a known position. Line is 1-based
// (0 when unknown); Offset is the byte offset (-1 when unknown).
type SyntaxError struct {
	File   string
	Line   int
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.Offset >= 0:
		return fmt.Sprintf("%s: byte %d: %s", e.File, e.Offset, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

// ErrAtLine is a SyntaxError at a 1-based line of file.
func ErrAtLine(file string, line int, format string, args ...any) error {
	return &SyntaxError{File: file, Line: line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// ErrAtOffset is a SyntaxError at a byte offset of file.
func ErrAtOffset(file string, offset int64, format string, args ...any) error {
	return &SyntaxError{File: file, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// plainDigits reports whether s is only ASCII digits.
func plainDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
