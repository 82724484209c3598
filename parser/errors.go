package parser

import "github.com/hcclprof/hcclprof/internal/jsonx"

// SyntaxError is a problem in an input file at a known position. Line is 1-based
// (0 when unknown); Offset is the byte offset (-1 when unknown).
type SyntaxError = jsonx.SyntaxError

func errAtLine(file string, line int, format string, args ...any) error {
	return jsonx.ErrAtLine(file, line, format, args...)
}

func errAtOffset(file string, offset int64, format string, args ...any) error {
	return jsonx.ErrAtOffset(file, offset, format, args...)
}
