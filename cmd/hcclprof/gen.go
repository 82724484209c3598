package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
)

type genFlags struct {
	list     bool
	show     bool
	output   string
	format   string
	seed     int64
	steps    int
	ranks    int
	workers  int
	force    bool
	omit     []string
	maxBytes string
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
	fl.StringVar(&f.maxBytes, "max-bytes", "64GiB", "refuse a scenario estimated above this size, and stop a run whose files pass it (bytes, or with KB, MB, GB, TB, KiB, MiB, GiB, TiB; 0: no limit)")
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
	maxBytes, err := parseByteSize(f.maxBytes)
	if err != nil {
		return usage(fmt.Errorf("--max-bytes: %w", err))
	}
	if f.seed != 0 {
		sc.Seed = f.seed
	}
	for _, o := range []struct {
		flag  string
		value int
		field *int
	}{{"steps", f.steps, &sc.Steps}, {"ranks", f.ranks, &sc.Ranks}} {
		if cmd.Flags().Changed(o.flag) {
			if o.value < 1 {
				return usage(fmt.Errorf("--%s %d: must be at least 1", o.flag, o.value))
			}
			*o.field = o.value
			sc.Overridden(o.flag)
		}
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
	// The limits again, after the flags changed the scenario, and its size: all
	// before simulating, which holds every rank's schedule in memory.
	if err := sc.Normalize(); err != nil {
		return usage(err)
	}
	if est := render.EstimateBytes(sc, format); maxBytes > 0 && est > float64(maxBytes) {
		return usage(fmt.Errorf("%s would write about %s in the %s format, above the limit of %s (--max-bytes raises it)",
			sc.Name, fmtBytes(est), format, fmtBytes(float64(maxBytes))))
	}
	if maxBytes == 0 {
		maxBytes = -1 // render's "no limit"
	}
	run, err := sim.Simulate(sc)
	if err != nil {
		return usage(err)
	}
	truth, st, err := render.WriteCluster(run, f.output, render.Options{Format: format, Workers: f.workers, Version: toolVersion(), MaxBytes: maxBytes})
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

// parseByteSize reads a size: a number of bytes, with an optional decimal (KB, MB,
// GB, TB) or binary (KiB, MiB, GiB, TiB) unit.
func parseByteSize(text string) (int64, error) {
	t := strings.TrimSpace(text)
	units := []struct {
		suffix string
		scale  float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	scale := 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) {
			t, scale = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v*scale >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with KB, MB, GB, TB, KiB, MiB, GiB or TiB)", text)
	}
	return int64(v * scale), nil
}

// fmtBytes writes a size in binary units.
func fmtBytes(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.1f TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f bytes", b)
}
