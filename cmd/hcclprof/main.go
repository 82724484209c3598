// Command hcclprof analyses the communication of Ascend NPU (and GPU) training jobs
// from their profiler output: how much of each step is communication, how much of it
// is exposed, why, and what to change. This package only defines the flags; the
// driver package (internal/driver) runs the commands and decides the exit code.
package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newRootCmd(in invocation) *cobra.Command {
	root := &cobra.Command{
		Use:           "hcclprof",
		Short:         "Communication analysis of Ascend NPU training profiles",
		Long:          "hcclprof reads the output of the Ascend profilers (torch_npu, MindSpore, msprof, msprof-analyze's cluster output) and of PyTorch's profiler on NVIDIA GPUs (Kineto), for one rank or a whole cluster, and reports how much of each training step is communication, how much of it is exposed, why (moving data, or waiting: for a slower rank, the other pipeline stage, ranks that were not profiled, the host) and what to change.",
		Version:       toolVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newAnalyzeCmd(in), newInspectCmd(in), newGenCmd(in), newSummarizeCmd(in))
	root.AddCommand(newAdviseCmd(in), newModelCmd(in), newCalibrateCmd(in), newWhatIfCmd(in), newExportCmd(in), newDiffCmd(in))
	registerCompletions(root)
	addProfilingFlags(root, in.stderr)
	return root
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args (without the program's name) with its output on
// stdout and stderr, and returns the exit code: the whole program, in-process.
func run(args []string, stdout, stderr io.Writer) int {
	in := invocation{args: args, stdout: stdout, stderr: stderr}
	root := newRootCmd(in)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	stop()
	return driver.ExitCode(err, stderr)
}

// invocation is what every command hands the driver besides its flags.
type invocation struct {
	args           []string
	stdout, stderr io.Writer
}

// env is the driver's view of cmd's invocation.
func (in invocation) env(cmd *cobra.Command) driver.Env {
	return driver.Env{Stdout: in.stdout, Stderr: in.stderr, Args: in.args, Version: toolVersion(), Changed: cmd.Flags().Changed}
}
