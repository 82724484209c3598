// Command repeat writes the benchmarks' big timeline at any size: the real rank-0
// trace of imagenet-2rank-level1 (../shared/realdata) repeated -times times, as a
// one-rank directory under -o (see benchtrace.Repeat). make scale-trace uses it; it
// is a development tool, not part of hcclprof.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hcclprof/hcclprof/internal/benchtrace"
	"github.com/hcclprof/hcclprof/internal/realdata"
)

func main() {
	times := flag.Int("times", 60, "copies of the source trace")
	out := flag.String("o", "", "output directory (a one-rank cluster)")
	flag.Parse()
	root := realdata.Root()
	if *out == "" || *times < 1 {
		fmt.Fprintln(os.Stderr, "usage: repeat -times N -o DIR")
		os.Exit(2)
	}
	if root == "" {
		fmt.Fprintln(os.Stderr, "repeat: ../shared/realdata is absent")
		os.Exit(2)
	}
	src := filepath.Join(root, "imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	p, err := benchtrace.Repeat(src, *out, *times)
	if err != nil {
		fmt.Fprintln(os.Stderr, "repeat:", err)
		os.Exit(1)
	}
	fmt.Println(p)
}
