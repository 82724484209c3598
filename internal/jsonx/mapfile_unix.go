//go:build unix

package jsonx

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxMappedBytes is the largest file mapped rather than read. A mapped file's pages
// count in the process's resident memory while it is read, so a big trace is read in
// parts instead (traceparallel.go), and a trace of a cluster's rank, a few MB, is
// mapped: reading copied every byte from the page cache, most of the 0.24 s of system
// time in the 1.7 s of CPU that 512 generated ranks took (0.14 s mapped).
const maxMappedBytes = 64 << 20

// MapFile maps r for reading when it is a regular file of 1 byte to maxMappedBytes
// positioned at its start; ok is false otherwise (then nothing of r was read), and the
// caller reads it. unmap releases the mapping: nothing of data may be used after it.
func MapFile(r io.Reader) (data []byte, unmap func(), ok bool) {
	f, isFile := r.(*os.File)
	if !isFile {
		return nil, nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= 0 || fi.Size() > maxMappedBytes {
		return nil, nil, false
	}
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		return nil, nil, false
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { _ = unix.Munmap(data) }, true
}
