package jsonx

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// readMapped runs read over a mapped file's bytes. A file that shrinks while it is
// mapped (a profiler or a copy still writing it), or a page the storage fails to
// read (a network file system's error), faults when touched: the fault becomes an
// error naming the file, so the rank is reported incomplete instead of the process
// crashing.
func readMapped(file string, read func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if re, isRuntime := p.(runtime.Error); isRuntime {
			if _, isFault := p.(interface{ Addr() uintptr }); isFault {
				err = fmt.Errorf("%s: the file could not be read to its end: it shrank while it was read, or the storage failed (%v)", file, re)
				return
			}
		}
		panic(p)
	}()
	return read()
}

// ReadStream runs read over a stream of r: of its mapped file when it can be mapped
// (MapFile), read in place, else of its reads. Nothing read hands out may be kept past
// it, as for any stream (Stream.release).
func ReadStream(r io.Reader, file string, read func(s *Stream) error) error {
	if data, unmap, ok := MapFile(r); ok {
		defer unmap()
		return readMapped(file, func() error { return read(newMappedStream(data)) })
	}
	s := NewStream(r)
	defer s.Release()
	return read(s)
}
