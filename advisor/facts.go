package advisor

import (
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
)

// Env is the union of the ranks' profiler_metadata.json ENV_VARIABLES, for the
// environment checks (a value set on any rank counts).
type Env map[string]string

// EnvOf collects the ranks' environment variables.
func EnvOf(c *profile.Cluster) Env {
	out := Env{}
	if c == nil {
		return out
	}
	for _, r := range c.Ranks {
		for k, v := range r.Metadata.Env {
			if v != "" {
				out[k] = v
			}
		}
	}
	return out
}

// RunFacts are what the advisor needs to know of the run beyond the analysis, derived
// once per run (Facts) and read by every rule and by the cost model's fit.
type RunFacts struct {
	Framework    string
	Accumulation int // micro-batches per optimizer step (1 when unknown)
	// AccumulationNote says how Accumulation was inferred, or why it could not be;
	// AccumulationSpan is the range it may lie in when the profile does not settle
	// it ([0, 0]: settled or given).
	AccumulationNote string
	AccumulationSpan [2]int
	BuffsizeBytes    int64 // HCCL_BUFFSIZE in effect
	Deterministic    bool  // HCCL_DETERMINISTIC true or strict (no A2 pipeline)
	HCCLAlgo         string
	Product          string // the hardware profile's name (910A, A2, A3, NVIDIA)
}

// factsOf reads the framework and HCCL_BUFFSIZE of a run from its environment;
// lim are the limits the run was measured at, whose DefaultBuffsizeMB is
// HCCL_BUFFSIZE when the environment does not set it (analysis.Limits.BuffsizeBytes).
func factsOf(env Env, framework string, lim analysis.Limits) RunFacts {
	return RunFacts{Framework: framework, Accumulation: 1, BuffsizeBytes: lim.BuffsizeBytes(env), Deterministic: isDeterministic(env), HCCLAlgo: env["HCCL_ALGO"]}
}

// Facts derives the run's facts once: the environment's (factsOf, with the
// default HCCL_BUFFSIZE the analysis used), the framework (opts', else PyTorch DDP), the
// micro-batches per optimizer step (opts', else inferred from the compute pattern)
// and the product.
func Facts(res *analysis.Result, env Env, opts Options) RunFacts {
	framework := opts.Framework
	if framework == "" {
		framework = FrameworkDDP
	}
	facts := factsOf(env, framework, res.Communication.Limits)
	facts.Accumulation = max(opts.Accumulation, 1)
	if opts.Accumulation < 1 {
		// Not given: read from the compute pattern.
		var n int
		if n, facts.AccumulationSpan, facts.AccumulationNote = InferAccumulation(res); n > 0 {
			facts.Accumulation = n
		}
	}
	facts.Product = res.Communication.Hardware.Name
	return facts
}
