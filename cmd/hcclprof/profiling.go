package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

// Hidden --cpuprofile and --memprofile flags, as Go's own tools have: where hcclprof
// spends its time on a user's cluster is measured with the command they ran
// (go tool pprof bin/hcclprof FILE), not guessed from a benchmark.
func addProfilingFlags(root *cobra.Command, stderr io.Writer) {
	var cpuFile, memFile string
	var cpuOut *os.File
	pf := root.PersistentFlags()
	pf.StringVar(&cpuFile, "cpuprofile", "", "write a CPU profile to `FILE`")
	pf.StringVar(&memFile, "memprofile", "", "write a heap profile (allocations and what is live at the end) to `FILE`")
	_ = pf.MarkHidden("cpuprofile")
	_ = pf.MarkHidden("memprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if cpuFile == "" {
			return nil
		}
		f, err := os.Create(cpuFile)
		if err != nil {
			return driver.UsageError(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return driver.UsageError(err)
		}
		cpuOut = f
		return nil
	}
	stop = func() {
		if cpuOut != nil {
			pprof.StopCPUProfile()
			cpuOut.Close()
			cpuOut = nil
		}
		if memFile != "" {
			f, err := os.Create(memFile)
			if err != nil {
				fmt.Fprintln(stderr, "hcclprof: --memprofile:", err)
				return
			}
			runtime.GC()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintln(stderr, "hcclprof: --memprofile:", err)
			}
			f.Close()
			memFile = ""
		}
	}
}

// stop ends the profiles; run calls it whatever the command's outcome.
var stop = func() {}
