package jsonx

import (
	"bytes"
	"io"
	"io/fs"
	"slices"
)

// SizeOf is r's size when r is a file, else -1: the readers of whole files size their
// buffers by it rather than grow them.
func SizeOf(r io.Reader) int64 {
	f, ok := r.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return -1
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

// readAll is io.ReadAll into dst's memory (dst[:0]), grown once to the file's size
// when r is a file (io.ReadAll grows it from 512 bytes, copying and allocating twice
// the file on the way).
func readAll(dst []byte, r io.Reader) ([]byte, error) {
	n := SizeOf(r)
	if n < 0 || n > 1<<30 {
		if dst == nil {
			return io.ReadAll(r)
		}
		n = 0
	}
	buf := bytes.NewBuffer(slices.Grow(dst[:0], int(n)+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
