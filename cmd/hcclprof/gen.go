package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newGenCmd(in invocation) *cobra.Command {
	var f driver.GenFlags
	cmd := &cobra.Command{
		Use:   "gen SCENARIO -o DIR",
		Short: "Generate a synthetic cluster profile in the profilers' real formats, with its ground truth",
		Long: `Generate the profile of a synthetic training job from a scenario: a built-in name
(hcclprof gen --list) or a YAML/JSON file. Every rank is written in the chosen format
(text: torch_npu's text export; db: torch_npu's db export; msprof: PROF_* directories;
kineto: one PyTorch profiler trace per rank, an NVIDIA product's only format and its
default) beside DIR/ground_truth.json, which holds the scenario, the injected problems
and the exact step breakdown of every rank in the field names of 'hcclprof analyze --format json'.
The same scenario and seed always give the same files.

Scenarios beyond the generator's limits are refused before anything is simulated
(exit 2): at most 65536 ranks, 10000 steps, 1048576 ranks × steps, about 1000000
kernels per rank and step (compute time over model.kernel_us), 4000000 kernels and
communication tasks per rank, and an estimated output of 64 GiB (--max-bytes). The
run also stops if its files pass --max-bytes. Every number of a scenario is checked
(NaN, infinities, negatives, fractions outside [0, 1], an explicit 0 that would
become a default) and a bad one is named with its line. When writing fails, what
this run wrote is removed; with --force, what the directory held before stays.`,
		Example: `  hcclprof gen --list
  hcclprof gen straggler-64rank -o ./cluster
  hcclprof gen ./my-scenario.yaml -o ./cluster --format db --seed 7
  hcclprof gen straggler-64rank -o ./summaries --omit trace
  hcclprof gen seed-8card-bert --show > my-scenario.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.List {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return driver.Gen(in.env(cmd), args, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.List, "list", false, "list the built-in scenarios")
	fl.BoolVar(&f.Show, "show", false, "print the scenario (YAML for a built-in) instead of generating")
	fl.StringVarP(&f.Output, "output", "o", "", "directory to write the cluster into")
	fl.StringVar(&f.Format, "format", "text", "output format: text, db or msprof for an Ascend product; kineto (PyTorch profiler traces, the default there) for an NVIDIA one (h100, a100)")
	fl.Int64Var(&f.Seed, "seed", 0, "random seed (0: the scenario's own)")
	fl.IntVar(&f.Steps, "steps", 0, "override the number of steps")
	fl.IntVar(&f.Ranks, "ranks", 0, "override the number of ranks (a multiple of ranks_per_server)")
	fl.IntVar(&f.Workers, "workers", 0, "ranks written in parallel (0: one per CPU)")
	fl.BoolVar(&f.Force, "force", false, "write into a non-empty output directory")
	fl.StringVar(&f.MaxBytes, "max-bytes", "64GiB", "refuse a scenario estimated above this size, and stop a run whose files pass it (bytes, or with KB, MB, GB, TB, KiB, MiB, GiB, TiB; 0: no limit)")
	fl.BoolVar(&f.ClusterOutput, "cluster-output", false, "also write what msprof-analyze makes of the cluster (DIR/cluster_analysis_output; text format only)")
	fl.StringSliceVar(&f.Omit, "omit", nil, "parts not to write, overriding the scenario's omit: trace (every device timeline; the summaries stay), or none")
	return cmd
}
