//go:build !unix

package parser

import "io"

// mapFile maps nothing where there is no mmap: the caller reads the file.
func mapFile(io.Reader) (data []byte, unmap func(), ok bool) { return nil, nil, false }
