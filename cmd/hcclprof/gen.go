package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
)

type genFlags struct {
	list    bool
	show    bool
	output  string
	format  string
	seed    int64
	steps   int
	ranks   int
	workers int
	force   bool
	omit    []string
}

func newGenCmd() *cobra.Command {
	var f genFlags
	cmd := &cobra.Command{
		Use:   "gen SCENARIO -o DIR",
		Short: "Generate a synthetic cluster profile in the profilers' real formats, with its ground truth",
		Long: `Generate the profile of a synthetic training job from a scenario: a built-in name
(hcclprof gen --list) or a YAML/JSON file. Every rank is written in the chosen format
(text: torch_npu's text export; db: torch_npu's db export; msprof: PROF_* directories)
beside DIR/ground_truth.json, which holds the scenario, the injected problems and the
exact step breakdown of every rank in the field names of 'hcclprof analyze --format json'.
The same scenario and seed always give the same files.`,
		Example: `  hcclprof gen --list
  hcclprof gen straggler-64rank -o ./cluster
  hcclprof gen ./my-scenario.yaml -o ./cluster --format db --seed 7
  hcclprof gen straggler-64rank -o ./summaries --omit trace
  hcclprof gen seed-8card-bert --show > my-scenario.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.list {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runGen(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.list, "list", false, "list the built-in scenarios")
	fl.BoolVar(&f.show, "show", false, "print the scenario (YAML for a built-in) instead of generating")
	fl.StringVarP(&f.output, "output", "o", "", "directory to write the cluster into")
	fl.StringVar(&f.format, "format", "text", "output format: text, db or msprof")
	fl.Int64Var(&f.seed, "seed", 0, "random seed (0: the scenario's own)")
	fl.IntVar(&f.steps, "steps", 0, "override the number of steps")
	fl.IntVar(&f.ranks, "ranks", 0, "override the number of ranks (a multiple of ranks_per_node)")
	fl.IntVar(&f.workers, "workers", 0, "ranks written in parallel (0: one per CPU)")
	fl.BoolVar(&f.force, "force", false, "write into a non-empty output directory")
	fl.StringSliceVar(&f.omit, "omit", nil, "parts not to write, overriding the scenario's omit: trace (every device timeline; the summaries stay), or none")
	return cmd
}

func runGen(cmd *cobra.Command, args []string, f genFlags) error {
	usage := func(err error) error { return &exitError{code: exitUsage, err: err} }
	out := cmd.OutOrStdout()
	if f.list {
		for _, name := range scenario.BuiltinNames() {
			sc, err := scenario.Builtin(name)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%-24s %s\n", name, sc.Description)
		}
		return nil
	}
	sc, err := loadScenario(args[0])
	if err != nil {
		return usage(err)
	}
	if f.show {
		if text, err := scenario.BuiltinYAML(args[0]); err == nil {
			_, err = out.Write(text)
			return err
		}
		_, err := out.Write(append(sc.JSON(), '\n'))
		return err
	}
	if f.output == "" {
		return usage(errors.New("gen needs an output directory: -o DIR"))
	}
	format, err := render.ParseFormat(f.format)
	if err != nil {
		return usage(err)
	}
	if f.seed != 0 {
		sc.Seed = f.seed
	}
	if f.steps > 0 {
		sc.Steps = f.steps
	}
	if f.ranks > 0 {
		sc.Ranks = f.ranks
	}
	if cmd.Flags().Changed("omit") {
		sc.Omit = nil
		for _, o := range f.omit {
			if o != "none" {
				sc.Omit = append(sc.Omit, o)
			}
		}
	}
	if entries, err := os.ReadDir(f.output); err == nil && len(entries) > 0 && !f.force {
		return usage(fmt.Errorf("%s is not empty (use --force to write into it)", f.output))
	}
	run, err := sim.Simulate(sc)
	if err != nil {
		return usage(err)
	}
	truth, st, err := render.WriteCluster(run, f.output, render.Options{Format: format, Workers: f.workers, Version: toolVersion()})
	if err != nil {
		return err
	}
	secs := st.Elapsed.Seconds()
	fmt.Fprintf(cmd.ErrOrStderr(), "hcclprof gen: %s: %d ranks × %d steps, %s format, %d files, %.1f MB in %.2f s (%.0f MB/s, %.1f ranks/s)\n",
		sc.Name, st.Ranks, sc.Steps, format, st.Files, float64(st.Bytes)/1e6, secs, float64(st.Bytes)/1e6/secs, float64(st.Ranks)/secs)
	fmt.Fprintf(out, "wrote %s: comm_share %.4f, step %.1f us, %d problems (ground truth in %s)\n",
		f.output, truth.Summary.CommShare, truth.Summary.StepTimeUs, len(truth.Problems), f.output+"/ground_truth.json")
	return nil
}

// loadScenario takes a built-in name or a scenario file.
func loadScenario(arg string) (*scenario.Scenario, error) {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.HasSuffix(arg, ".json") {
		return scenario.Load(arg)
	}
	if _, err := os.Stat(arg); err == nil {
		return scenario.Load(arg)
	}
	return scenario.Builtin(arg)
}
