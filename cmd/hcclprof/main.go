// Command hcclprof analyses the communication of Ascend NPU (and GPU) training jobs
// from their profiler output: how much of each step is communication, how much of it
// is exposed, why, and what to change. This package only wires flags to the parser,
// analysis, advisor, report and generator (fixtures) packages.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes, documented in the README.
const (
	exitOK         = 0
	exitGateFailed = 1
	exitUsage      = 2 // usage or input error
	exitIncomplete = 3 // input incomplete (a rank unreadable) without --allow-partial
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "hcclprof",
		Short:         "Communication analysis of Ascend NPU training profiles",
		Long:          "hcclprof reads the output of the Ascend profilers (torch_npu, MindSpore, msprof, msprof-analyze's cluster output) and of PyTorch's profiler on NVIDIA GPUs (Kineto), for one rank or a whole cluster, and reports how much of each training step is communication, how much of it is exposed, why (moving data, or waiting: for a slower rank, the other pipeline stage, ranks that were not profiled, the host) and what to change.",
		Version:       toolVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newAnalyzeCmd(), newInspectCmd(), newGenCmd(), newSummarizeCmd())
	root.AddCommand(newAdviseCmd(), newModelCmd(), newCalibrateCmd(), newWhatIfCmd(), newExportCmd(), newDiffCmd())
	registerCompletions(root)
	addProfilingFlags(root)
	return root
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	stop()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != exitGateFailed {
			fmt.Fprintln(os.Stderr, "hcclprof:", ee.err)
		}
		return ee.code
	}
	// Errors from cobra itself: unknown flags, wrong arguments.
	fmt.Fprintln(os.Stderr, "hcclprof:", err)
	return exitUsage
}
