//go:build !unix

package jsonx

import "io"

// MapFile maps nothing where there is no mmap: the caller reads the file.
func MapFile(io.Reader) (data []byte, unmap func(), ok bool) { return nil, nil, false }
