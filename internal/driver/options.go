package driver

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/config"
	"github.com/hcclprof/hcclprof/internal/progress"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// AnalysisFlags are the flags that tune the analysis and the advice, shared by the
// commands that analyse a run; options() turns them into options in one place.
type AnalysisFlags struct {
	Workers      int
	SkipSteps    []int
	Microbatches int
	Config       string
	Hardware     string
	Peaks        []string
	Quiet        bool
	Framework    string
	Accumulation int
	AllowPartial bool
	// Calibration is a file written by calibrate --bench.
	Calibration string
	// KeepWarmup keeps the leading warm-up steps (advisor.WarmupSteps), which are
	// otherwise left out of every figure.
	KeepWarmup bool
	// keep names the ranks whose timelines are kept (nil: none): the HTML report's
	// rank, every rank for the Chrome trace.
	keep func(rank int) bool
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
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("input incomplete (rank %d: %s); use --allow-partial to accept a partial result", rank, problem)}
	}
	if c != nil {
		for _, r := range c.Ranks {
			if r.Incomplete() {
				return fail(r.Rank, r.Problems[0])
			}
		}
	}
	if res != nil {
		// The analysis' own problems: a recomputation the profiler's figures
		// contradict, a rank with no step beside ranks that have steps.
		for _, rr := range res.Ranks {
			if len(rr.Problems) > 0 {
				return fail(rr.Rank, rr.Problems[0])
			}
		}
		if res.Summary.Incomplete {
			return &exitError{code: ExitIncomplete, err: fmt.Errorf("input incomplete (see the warnings); use --allow-partial to accept a partial result")}
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
func (f *AnalysisFlags) options() (analysis.Options, advisor.Options, error) {
	// The config file is read here once; each package gets its own section.
	conf := config.Defaults()
	if f.Config != "" {
		var err error
		if conf, err = config.Load(f.Config); err != nil {
			return conf.Analysis, conf.Advisor, err
		}
	}
	ao, adv := conf.Analysis, conf.Advisor
	ao.Workers, ao.SkipSteps, ao.Microbatches = f.Workers, f.SkipSteps, f.Microbatches
	if f.Calibration != "" {
		cal, err := costmodel.ReadCalibration(f.Calibration)
		if err != nil {
			return ao, adv, err
		}
		adv.Calibration = cal
	}
	if f.Framework != "" {
		fw, err := advisor.ParseFramework(f.Framework)
		if err != nil {
			return ao, adv, fmt.Errorf("--framework: %w", err)
		}
		adv.Framework = fw
	}
	if f.Accumulation < 0 {
		return ao, adv, fmt.Errorf("--grad-accumulation %d: want ≥ 1 (0: inferred)", f.Accumulation)
	}
	adv.Accumulation = f.Accumulation
	ao.KeepTimeline = f.keep
	if f.Hardware != "" {
		p, err := hardware.Lookup(f.Hardware)
		if err != nil {
			return ao, adv, fmt.Errorf("--hardware: %w", err)
		}
		p.Source = "--hardware " + f.Hardware
		ao.Hardware = &p
	}
	// --peak overrides the config file's peaks, on the named or detected product.
	for _, kv := range f.Peaks {
		k, v, ok := strings.Cut(kv, "=")
		gbps, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || !(gbps > 0) || math.IsInf(gbps, 0) || strings.TrimSpace(k) == "" {
			return ao, adv, fmt.Errorf("--peak %q: want TRANSPORT=GBPS with a positive bandwidth, e.g. RDMA=12.5", kv)
		}
		if err := hardware.CheckPeakTransport(k); err != nil {
			return ao, adv, fmt.Errorf("--peak %q: %w", kv, err)
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

// loaded is a run read and analysed with the flags' options.
type loaded struct {
	cluster *profile.Cluster
	result  *analysis.Result
	advisor advisor.Options
	// warmup are the steps left out as warm-up, and leftOut says so for the report.
	warmup  []int
	leftOut string
}

// load reads the runs under args, summarising each rank as it is read.
func (f *AnalysisFlags) load(env Env, args []string) (*loaded, error) {
	return f.loadWith(env, args, nil)
}

// advise is the advisor's output on the run.
func (l *loaded) advise() advisor.Advice {
	return advisor.Advise(l.result, advisor.EnvOf(l.cluster), l.advisor)
}

// rankHooks give a command its own work on each rank as it is read (parser.LoadOptions'
// OnRank and InOrder), from the accumulator that summarises the ranks: onRank must
// call acc.Add.
type rankHooks func(acc *analysis.Accumulator) (onRank, inOrder func(*profile.Rank))

// loadWith is load with hooks (nil: none).
func (f *AnalysisFlags) loadWith(env Env, args []string, hooks rankHooks) (*loaded, error) {
	opts, advOpts, err := f.options()
	if err != nil {
		return nil, usageError(err)
	}
	prog := progress.New(env.Stderr, f.Quiet)
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
	// Warm-up steps are left out of every figure, check and piece of advice: the
	// run is read again without them (the ranks' summaries are made as they are
	// read, so a step cannot be taken out of them afterwards). Only runs with a
	// warm-up pay for the second read. Summaries (hooks) keep every step.
	if hooks == nil && !f.KeepWarmup {
		if warm := advisor.WarmupSteps(res, advOpts.Thresholds.Steps); len(warm) > 0 {
			again := *f
			again.KeepWarmup = true
			again.SkipSteps = append(slices.Clone(f.SkipSteps), warm...)
			run, err := again.loadWith(env, args, nil)
			if err != nil {
				return nil, err
			}
			run.warmup = warm
			run.leftOut = advisor.WarmupText(res, warm, advOpts.Thresholds.Steps) + " left out of every figure as warm-up (--keep-warmup keeps it)"
			return run, nil
		}
	}
	return &loaded{cluster: cluster, result: res, advisor: withFramework(advOpts, cluster)}, nil
}
