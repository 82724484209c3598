package parser

import (
	"fmt"
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
