package jsonx

import (
	"bytes"
	"errors"
	"io"
)

// GuessObjectInArray finds, at or after from, the '{' of an object that follows
// another in an array: '}' ',' '{' with white space between. It is a guess, made
// from the bytes alone (the three may stand inside a string), which the caller
// proves by reading up to it from a known start; it looks at a few MB only.
func GuessObjectInArray(f io.ReaderAt, from, size int64) (int64, bool) {
	const window = 4 << 20
	buf := make([]byte, min(window, size-from))
	n, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	buf = buf[:n]
	for i := 0; i < len(buf); {
		j := bytes.IndexByte(buf[i:], ',')
		if j < 0 {
			return 0, false
		}
		c := i + j
		i = c + 1
		before := bytes.TrimRight(buf[:c], " \t\r\n")
		if len(before) == 0 || before[len(before)-1] != '}' {
			continue
		}
		if after := SkipWS(buf, c+1); after < len(buf) && buf[after] == '{' {
			return from + int64(after), true
		}
	}
	return 0, false
}
