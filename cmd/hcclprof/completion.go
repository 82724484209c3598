package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/compare"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/internal/driver"
)

// setKnobs are whatif's --set knobs, algoNames the values of algo=.
var (
	setKnobs  = []string{"bucket=", "accumulation=", "buffsize=", "overlap=", "algo=", "dp="}
	algoNames = []string{"ring", "nhr", "rhd", "nb", "pipeline"}
)

// registerCompletions gives shell completion (hcclprof completion bash|zsh|fish|powershell)
// the values of the flags that take a fixed set, gen's built-in scenarios and
// whatif's knobs; paths keep the shell's file completion.
func registerCompletions(root *cobra.Command) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	for _, c := range root.Commands() {
		fl := c.Flags()
		if formats := driver.Formats(c.Name()); formats != nil {
			_ = c.RegisterFlagCompletionFunc(driver.FormatFlag(c.Name()), fixed(formats...))
		}
		for _, name := range []string{"hardware", "product"} {
			if fl.Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fixed(hardware.Names()...))
			}
		}
		if fl.Lookup("framework") != nil {
			_ = c.RegisterFlagCompletionFunc("framework", fixed("ddp", "megatron", "deepspeed", "mindspore"))
		}
		if fl.Lookup("set") != nil {
			_ = c.RegisterFlagCompletionFunc("set", completeSet)
		}
		if fl.Lookup("fail-on") != nil {
			metrics := analysis.MetricNames
			if c.Name() == "diff" {
				metrics = compare.GateMetricNames
			}
			_ = c.RegisterFlagCompletionFunc("fail-on", prefixes(metrics))
		}
		if fl.Lookup("peak") != nil {
			peaks := make([]string, len(hardware.Transports))
			for i, t := range hardware.Transports {
				peaks[i] = t + "="
			}
			_ = c.RegisterFlagCompletionFunc("peak", prefixes(peaks))
		}
		switch c.Name() {
		case "gen":
			c.ValidArgsFunction = completeScenario
			_ = c.RegisterFlagCompletionFunc("format", fixed(genFormats()...))
			_ = c.RegisterFlagCompletionFunc("omit", fixed("trace", "none"))
		case "model":
			_ = c.RegisterFlagCompletionFunc("op", fixed(costmodel.Ops()...))
			_ = c.RegisterFlagCompletionFunc("algo", fixed(modelAlgorithms()...))
			_ = c.RegisterFlagCompletionFunc("expansion", fixed(costmodel.ExpansionAICPU, costmodel.ExpansionAIV))
		}
	}
}

// genFormats are the formats gen writes for an Ascend product, which its --format
// offers (the generator checks the value itself, with its aliases and kineto).
func genFormats() []string {
	out := make([]string, len(render.Formats))
	for i, f := range render.Formats {
		out[i] = string(f)
	}
	return out
}

// prefixes offers values a user goes on typing after (a gate's metric before its
// operator, a transport before its figure): no space after them.
func prefixes(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(values, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// modelAlgorithms are the algorithms model --algo prices, over every op.
func modelAlgorithms() []string {
	seen := map[string]bool{}
	var out []string
	for _, op := range costmodel.Ops() {
		for _, a := range costmodel.Algorithms(op) {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return out
}

// completeSet offers the knobs with their '=' (no space after), then algo's values.
func completeSet(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if strings.HasPrefix(toComplete, "algo=") || strings.HasPrefix(toComplete, "algorithm=") {
		key := toComplete[:strings.IndexByte(toComplete, '=')+1]
		out := make([]string, len(algoNames))
		for i, a := range algoNames {
			out[i] = key + a
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(setKnobs, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeScenario offers the built-in scenarios; a scenario file completes as a path.
func completeScenario(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if list, _ := cmd.Flags().GetBool("list"); list {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(scenario.BuiltinNames(), toComplete), cobra.ShellCompDirectiveDefault
}

func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
