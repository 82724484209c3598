package driver

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/units"
)

// GenFlags is gen's flags.
type GenFlags struct {
	List     bool
	Show     bool
	Output   string
	Format   string
	Seed     int64
	Steps    int
	Ranks    int
	Workers  int
	Force    bool
	Omit     []string
	MaxBytes string
	// ClusterOutput also writes msprof-analyze's cluster output (text format only).
	ClusterOutput bool
}

// Gen is hcclprof gen: a synthetic cluster profile from a scenario, with its ground
// truth; with List, the built-in scenarios; with Show, the scenario itself.
func Gen(env Env, args []string, f GenFlags) error {
	usage := usageError
	out := env.Stdout
	if f.List {
		return genList(out)
	}
	sc, err := loadScenario(args[0])
	if err != nil {
		return usage(err)
	}
	if f.Show {
		if text, err := scenario.BuiltinYAML(args[0]); err == nil {
			_, err = out.Write(text)
			return err
		}
		_, err := out.Write(append(sc.JSON(), '\n'))
		return err
	}
	if f.Output == "" {
		return usage(errors.New("gen needs an output directory: -o DIR"))
	}
	// An NVIDIA product's job is written as Kineto traces unless --format says
	// otherwise (and then refused: CheckFormat).
	format := render.DefaultFormat(sc)
	if f.Format != "" && (env.changed("format") || !sc.NVIDIA()) {
		if format, err = render.ParseFormat(f.Format); err != nil {
			return usage(err)
		}
	}
	if err := render.CheckFormat(sc, format); err != nil {
		return usage(err)
	}
	if f.ClusterOutput && format != render.FormatText {
		return usage(fmt.Errorf("--cluster-output needs --format text (msprof-analyze's output is written from the text export), not %s", format))
	}
	maxBytes, err := parseByteSize(f.MaxBytes)
	if err != nil {
		return usage(fmt.Errorf("--max-bytes: %w", err))
	}
	if err := overrideScenario(env, sc, f); err != nil {
		return err
	}
	if entries, err := os.ReadDir(f.Output); err == nil && len(entries) > 0 && !f.Force {
		return usage(fmt.Errorf("%s is not empty (use --force to write into it)", f.Output))
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
	truth, st, err := render.WriteCluster(run, f.Output, render.Options{Format: format, Workers: f.Workers, Version: env.Version, MaxBytes: maxBytes})
	if err != nil {
		return err
	}
	if f.ClusterOutput {
		if err := render.WriteMsprofAnalyzeOutput(f.Output, filepath.Join(f.Output, "cluster_analysis_output")); err != nil {
			return err
		}
	}
	secs := st.Elapsed.Seconds()
	fmt.Fprintf(env.Stderr, "hcclprof gen: %s: %s × %s, %s format, %s, %.1f MB in %.2f s (%.0f MB/s, %.1f ranks/s)\n",
		sc.Name, units.Count(st.Ranks, "rank"), units.Count(sc.Steps, "step"), format, units.Count(st.Files, "file"), float64(st.Bytes)/1e6, secs, float64(st.Bytes)/1e6/secs, float64(st.Ranks)/secs)
	fmt.Fprintf(out, "wrote %s: comm_share %.4f, step %.1f us, %s (ground truth in %s)\n",
		f.Output, truth.Summary.CommShare, truth.Summary.StepTimeUs, units.Count(len(truth.Problems), "problem"), f.Output+"/ground_truth.json")
	return nil
}

// genList lists the built-in scenarios with their descriptions.
func genList(out io.Writer) error {
	for _, name := range scenario.BuiltinNames() {
		sc, err := scenario.Builtin(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-24s %s\n", name, sc.Description)
	}
	return nil
}

// overrideScenario applies the flags that change the scenario: --seed, --steps,
// --ranks and --omit.
func overrideScenario(env Env, sc *scenario.Scenario, f GenFlags) error {
	if f.Seed != 0 {
		sc.Seed = f.Seed
	}
	for _, o := range []struct {
		flag  string
		value int
		field *int
	}{{"steps", f.Steps, &sc.Steps}, {"ranks", f.Ranks, &sc.Ranks}} {
		if env.changed(o.flag) {
			if o.value < 1 {
				return usageError(fmt.Errorf("--%s %d: must be at least 1", o.flag, o.value))
			}
			*o.field = o.value
			sc.Overridden(o.flag)
		}
	}
	if env.changed("omit") {
		sc.Omit = nil
		for _, o := range f.Omit {
			if o != "none" {
				sc.Omit = append(sc.Omit, o)
			}
		}
	}
	return nil
}

// loadScenario takes a built-in name or a scenario file. A directory is never a
// scenario: 'gen straggler-64rank -o straggler-64rank' makes one of a built-in's name
// in the working directory, and the next run of the same command must still find the
// built-in.
func loadScenario(arg string) (*scenario.Scenario, error) {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.HasSuffix(arg, ".json") {
		return scenario.Load(arg)
	}
	fi, err := os.Stat(arg)
	if err == nil && !fi.IsDir() {
		return scenario.Load(arg)
	}
	sc, berr := scenario.Builtin(arg)
	if berr != nil && err == nil {
		return nil, fmt.Errorf("%s is a directory, not a scenario file or a built-in name (hcclprof gen --list shows them)", arg)
	}
	return sc, berr
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
