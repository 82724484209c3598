package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/progress"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// analysisFlags are the flags that tune the analysis and the advice, shared by the
// commands that analyse a run; options() turns them into options in one place.
type analysisFlags struct {
	workers      int
	skipSteps    []int
	microbatches int
	config       string
	hardware     string
	peaks        []string
	quiet        bool
	keepRank     int // a rank whose timeline to keep (-1: none), for the HTML report
	framework    string
	accumulation int
	allowPartial bool
}

func (f *analysisFlags) register(fl *pflag.FlagSet) {
	f.keepRank = -1
	fl.IntVar(&f.workers, "workers", 0, "ranks parsed in parallel (0: one per CPU)")
	fl.IntSliceVar(&f.skipSteps, "skip-steps", nil, "leave these step numbers out of every figure (warm-up steps), e.g. --skip-steps 1,2")
	fl.IntVar(&f.microbatches, "microbatches", 0, "pipeline micro-batches per step, for the theoretical bubble (0: inferred from the receives)")
	fl.StringVar(&f.config, "config", "", "YAML file of thresholds, hardware and link peaks (see hcclprof.example.yaml)")
	fl.StringVar(&f.hardware, "hardware", "", "the product for link peaks: "+strings.Join(hardware.Names(), ", ")+" (default: detected, else A2)")
	fl.StringArrayVar(&f.peaks, "peak", nil, "override a link peak, TRANSPORT=GBPS (e.g. RDMA=12.5); repeatable")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr (it shows only when stderr is a terminal)")
	fl.StringVar(&f.framework, "framework", "", "how the advice is applied: ddp, megatron, deepspeed or mindspore (default: detected; DeepSpeed cannot be told from a profile)")
	fl.IntVar(&f.accumulation, "grad-accumulation", 0, "micro-batches per optimizer step in the profiled run, for the advice's predictions (0: inferred from the backward passes in the timeline)")
	fl.BoolVar(&f.allowPartial, "allow-partial", false, "exit 0/1 even when some input could not be read in full")
}

// partial is the exit-3 error of every command whose input is incomplete (a rank
// could not be read in full, or held values it cannot hold), after its output was
// written: the output says what is missing, and the exit code makes sure no script
// takes it for a whole run. --allow-partial accepts it.
func partial(c *profile.Cluster, res *analysis.Result, allow bool) error {
	if allow {
		return nil
	}
	fail := func(rank int, problem string) error {
		return &exitError{code: exitIncomplete, err: fmt.Errorf("input incomplete (rank %d: %s); use --allow-partial to accept a partial result", rank, problem)}
	}
	if c != nil {
		for _, r := range c.Ranks {
			if r.Incomplete() {
				return fail(r.Rank, r.Problems[0])
			}
		}
	}
	if res != nil {
		// The analysis' own problems: a recomputation the profiler's figures contradict.
		for _, rr := range res.Ranks {
			if len(rr.Problems) > 0 {
				return fail(rr.Rank, rr.Problems[0])
			}
		}
		// A rank read without error but with no step to measure, beside ranks that
		// have steps: its figures are missing from every average.
		for _, rr := range res.Ranks {
			if len(rr.Steps) == 0 {
				return fail(rr.Rank, fmt.Sprintf("%s: no step could be measured from its files", rr.Dir))
			}
		}
		if res.Summary.Incomplete {
			return &exitError{code: exitIncomplete, err: fmt.Errorf("input incomplete (see the warnings); use --allow-partial to accept a partial result")}
		}
	}
	return nil
}

// nothingToAnalyse is the exit-2 error of a run with no step to measure: no rank
// holds one, or --skip-steps left every one out. Such a run has no figure, so it
// passes no gate.
func nothingToAnalyse(c *profile.Cluster, res *analysis.Result, skipped []int) error {
	return noSteps(c, res.Summary.Steps, skipped)
}

// noSteps refuses a run in which steps steps were found.
func noSteps(c *profile.Cluster, steps int, skipped []int) error {
	if steps > 0 {
		return nil
	}
	if len(skipped) > 0 {
		return usageError(fmt.Errorf("nothing to analyse: --skip-steps left out every step of the run"))
	}
	why := ""
	for _, r := range c.Ranks {
		if len(r.Problems) > 0 {
			why = fmt.Sprintf(" (rank %d: %s)", r.Rank, r.Problems[0])
			break
		}
	}
	return usageError(fmt.Errorf("nothing to analyse: no step found in the %d rank(s) read%s", len(c.Ranks), why))
}

// options builds the analysis and advisor options: defaults, then the config file,
// then the flags.
func (f *analysisFlags) options() (analysis.Options, advisor.Options, error) {
	ao := analysis.Options{}
	adv := advisor.DefaultOptions
	if f.config != "" {
		c, err := analysis.LoadConfig(f.config)
		if err != nil {
			return ao, adv, err
		}
		if ao, err = c.Options(); err != nil {
			return ao, adv, fmt.Errorf("%s: %w", f.config, err)
		}
		if err := advisor.ApplyConfig(c, &adv); err != nil {
			return ao, adv, fmt.Errorf("%s: %w", f.config, err)
		}
	}
	ao.Workers, ao.SkipSteps, ao.Microbatches = f.workers, f.skipSteps, f.microbatches
	if f.framework != "" {
		fw, err := advisor.ParseFramework(f.framework)
		if err != nil {
			return ao, adv, fmt.Errorf("--framework: %w", err)
		}
		adv.Framework = fw
	}
	if f.accumulation < 0 {
		return ao, adv, fmt.Errorf("--grad-accumulation %d: want ≥ 1 (0: inferred)", f.accumulation)
	}
	adv.Accumulation = f.accumulation
	if keep := f.keepRank; keep >= 0 {
		ao.KeepTimeline = func(rank int) bool { return rank == keep }
	}
	if f.hardware != "" {
		p, err := hardware.Lookup(f.hardware)
		if err != nil {
			return ao, adv, fmt.Errorf("--hardware: %w", err)
		}
		p.Source = "--hardware " + f.hardware
		ao.Hardware = &p
	}
	// --peak overrides the config file's peaks, on the named or detected product.
	for _, kv := range f.peaks {
		k, v, ok := strings.Cut(kv, "=")
		gbps, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || gbps <= 0 || strings.TrimSpace(k) == "" {
			return ao, adv, fmt.Errorf("--peak %q: want TRANSPORT=GBPS with a positive bandwidth, e.g. RDMA=12.5", kv)
		}
		ao.PeaksGBps = maps.Clone(ao.PeaksGBps)
		if ao.PeaksGBps == nil {
			ao.PeaksGBps = map[string]float64{}
		}
		ao.PeaksGBps[strings.TrimSpace(k)] = gbps
	}
	return ao, adv, nil
}

// withFramework fills the advisor's framework from the data when not given.
func withFramework(o advisor.Options, c *profile.Cluster) advisor.Options {
	if o.Framework == "" {
		o.Framework = advisor.DetectFramework(c)
	}
	return o
}

// usageError marks an error as a usage or input error (exit 2).
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

// checkFormat accepts text or json.
func checkFormat(format string) error {
	if format != "text" && format != "json" {
		return usageError(fmt.Errorf("unknown --format %q: want text or json", format))
	}
	return nil
}

// loaded is a run read and analysed with the flags' options.
type loaded struct {
	cluster *profile.Cluster
	result  *analysis.Result
	advisor advisor.Options
}

// load reads the runs under args, summarising each rank as it is read.
func (f *analysisFlags) load(args []string) (*loaded, error) {
	return f.loadWith(args, nil)
}

// rankHooks give a command its own work on each rank as it is read (parser.LoadOptions'
// OnRank and InOrder), from the accumulator that summarises the ranks: onRank must
// call acc.Add.
type rankHooks func(acc *analysis.Accumulator) (onRank, inOrder func(*profile.Rank))

// loadWith is load with hooks (nil: none).
func (f *analysisFlags) loadWith(args []string, hooks rankHooks) (*loaded, error) {
	opts, advOpts, err := f.options()
	if err != nil {
		return nil, usageError(err)
	}
	prog := progress.New(os.Stderr, f.quiet)
	acc := analysis.NewAccumulator(opts)
	onRank := acc.Add
	var inOrder func(*profile.Rank) // none: the ranks' order does not matter to analyze
	if hooks != nil {
		onRank, inOrder = hooks(acc)
	}
	prog.Phase("discovering and parsing ranks")
	cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: opts.Workers, OnRank: onRank, InOrder: inOrder,
		Progress: func(done, total int) { prog.Count("parsed ranks", done, total) }})
	if err != nil {
		return nil, usageError(err)
	}
	prog.Phase("analysing")
	res := acc.Result(cluster)
	if err := nothingToAnalyse(cluster, res, opts.SkipSteps); err != nil {
		return nil, err
	}
	return &loaded{cluster: cluster, result: res, advisor: withFramework(advOpts, cluster)}, nil
}

// write renders with the text or the JSON writer; a failed write is exit 2.
func write(cmd *cobra.Command, format string, text, json func(io.Writer) error) error {
	w := cmd.OutOrStdout()
	var err error
	if format == "json" {
		err = json(w)
	} else {
		err = text(w)
	}
	if err != nil {
		return usageError(err)
	}
	return nil
}
