package parser

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// readMapped runs read over a mapped file's bytes. A file that shrinks while it is
// mapped (a profiler or a copy still writing it, a file system that truncates it)
// faults when its lost pages are touched: the fault becomes an error naming the file,
// so the rank is reported incomplete instead of the process crashing.
func readMapped(file string, read func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if re, isRuntime := p.(runtime.Error); isRuntime {
			if _, isFault := p.(interface{ Addr() uintptr }); isFault {
				err = fmt.Errorf("%s: the file changed while it was read (it is shorter than when it was opened): %v", file, re)
				return
			}
		}
		panic(p)
	}()
	return read()
}
