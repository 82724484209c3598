package advisor

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
)

// AlgorithmThresholds decide algorithm_not_best: another level-1 algorithm prices
// at least MinGainShare below the group's collectives' time and MinStepShare of the
// step per step; with exposed communication under HiddenCommShare of the step the
// finding is only Info (the step would not get shorter).
type AlgorithmThresholds struct {
	MinGainShare    float64
	MinStepShare    float64
	HiddenCommShare float64
}

// DefaultAlgorithmThresholds are algorithm_not_best's defaults.
var DefaultAlgorithmThresholds = AlgorithmThresholds{MinGainShare: 0.05, MinStepShare: 0.01, HiddenCommShare: 0.05}

func (t *AlgorithmThresholds) keys() []thresholdKey {
	return []thresholdKey{{"min_gain_share", &t.MinGainShare, 0, 1}, {"min_step_share", &t.MinStepShare, 0, 1}, {"hidden_comm_share", &t.HiddenCommShare, 0, 1}}
}

// algorithmFindings flags a group whose level-1 algorithm (the ops' alg_type) the
// cost model, with the run's calibrated links, prices clearly above another that
// HCCL_ALGO may name on the product: typically HCCL_ALGO forcing one, or an
// automatic choice made with HCCL's fixed 60 µs / 20 GiB/s figures rather than the
// links the run shows. One rank's ops of each step are priced per algorithm.
func algorithmFindings(res *analysis.Result, det Detections, facts RunFacts, fit *costmodel.RunFit, th AlgorithmThresholds) []Finding {
	c := res.Communication
	type key struct {
		group string
		step  int
	}
	firstRank := map[string]int{}
	for _, o := range c.Ops {
		if r, ok := firstRank[o.Group]; !ok || o.Rank < r {
			firstRank[o.Group] = o.Rank
		}
	}
	opsBy := map[key][]analysis.OpStat{}
	for _, o := range c.Ops {
		switch o.Type {
		case "allreduce", "allgather", "reducescatter":
		default:
			continue
		}
		if o.Rank == firstRank[o.Group] && o.Bytes > 0 {
			opsBy[key{o.Group, o.Step}] = append(opsBy[key{o.Group, o.Step}], o)
		}
	}
	groups := map[string][]key{}
	for k := range opsBy {
		groups[k.group] = append(groups[k.group], k)
	}
	for _, ks := range groups { // steps in order: sums and the evidence's op stay the same run to run
		sort.Slice(ks, func(i, j int) bool { return ks[i].step < ks[j].step })
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	deterministic := facts.Deterministic
	buffer := facts.BuffsizeBytes
	topologies := fit.Topologies()
	var out []Finding
	for _, g := range names {
		topo := topologies[g]
		if topo.Servers < 2 || topo.Level1Source != "profile" || topo.NCCL {
			continue
		}
		options := topo.Level1Options(deterministic)
		candidates := slices.Clone(options)
		if !slices.Contains(candidates, topo.Level1) {
			candidates = append(candidates, topo.Level1)
		}
		cost := map[string]float64{}
		unpriced := map[string]bool{} // an algorithm the model cannot price for some op is left out
		var nOps int
		var biggest analysis.OpStat
		for _, k := range groups[g] {
			for _, o := range opsBy[k] {
				nOps++
				if o.Bytes > biggest.Bytes {
					biggest = o
				}
				for _, a := range candidates {
					t := topo
					t.Level1 = a
					if cst, err := t.OpCost(o.Type, o.Bytes, buffer); err == nil {
						cost[a] += cst.TimeUs
					} else {
						unpriced[a] = true
					}
				}
			}
		}
		for a := range unpriced {
			delete(cost, a)
		}
		cur, ok := cost[topo.Level1]
		if !ok || cur <= 0 {
			continue
		}
		// HCCL's own choice for the group's largest op, considered first so that a tie
		// goes to it: forcing an algorithm that only equals it gains nothing.
		choice, errChoice := topo.HCCLChoice(biggest.Type, biggest.Bytes, buffer, deterministic)
		order := options
		if errChoice == nil && slices.Contains(options, choice.Algo) {
			order = append([]string{choice.Algo}, slices.DeleteFunc(slices.Clone(options), func(a string) bool { return a == choice.Algo })...)
		}
		best := topo.Level1
		for _, a := range order {
			if _, ok := cost[a]; !ok {
				continue
			}
			if cost[a] < cost[best]*(1-1e-9) {
				best = a
			}
		}
		steps := float64(len(groups[g]))
		savedPerStepUs := (cur - cost[best]) / steps
		if best == topo.Level1 || cur-cost[best] < th.MinGainShare*cur || savedPerStepUs < th.MinStepShare*stepUs {
			continue
		}
		sev := Medium
		hidden := ""
		saving := savedPerStepUs / stepUs // none while the step would not get shorter, or a fault comes first
		// gain is what the title says the change would save: once a slow rank, link or
		// server is fixed when one is found, for no tuning is recommended before.
		gain := fmt.Sprintf("would save %.2f ms %s (%.0f%% of its collectives' time)", savedPerStepUs/1e3, perStepPhrase(res), 100*(cur-cost[best])/cur)
		switch {
		case res.Summary.CommShare < th.HiddenCommShare:
			sev, hidden, saving = Info, " Communication is almost all hidden behind computation here, so the step would not get shorter.", 0
		case det.faulty(c):
			saving = 0
			sev, hidden = Low, " A slow rank, link or server is found: fix it first, it costs more than the algorithm, and no tuning is recommended before."
			gain = fmt.Sprintf("would save %.2f ms %s (%.0f%% of its collectives' time) once the slow rank, link or server found is fixed", savedPerStepUs/1e3, perStepPhrase(res), 100*(cur-cost[best])/cur)
		case strings.HasPrefix(topo.InterSource, "hardware") || strings.HasPrefix(topo.IntraSource, "hardware"):
			sev = Low
		}
		forced := ""
		forcedAlgo := ""
		if v := facts.HCCLAlgo; strings.TrimSpace(v) != "" {
			forced = fmt.Sprintf("; HCCL_ALGO=%s forces it", v)
			forcedAlgo = ForcedLevel1(v, biggest.Type)
		}
		hcclSays := ""
		if errChoice == nil {
			hcclSays = fmt.Sprintf(" HCCL's own choice for its largest %s (%s) with HCCL_ALGO unset: %s (%s).",
				biggest.Type, units.FormatBytes(biggest.Bytes), costmodel.HCCLAlgoName(choice.Algo), choice.Reason)
			if best != choice.Algo {
				hcclSays += fmt.Sprintf(" HCCL's selector prices with fixed figures (δ = 60 µs per step, 20 GiB/s); with this run's links %s prices %.2f ms per step below it.",
					costmodel.HCCLAlgoName(best), (cost[choice.Algo]-cost[best])/float64(len(groups[g]))/1e3)
			}
		}
		// HCCL's levels are said as "between servers" and "within a server": the
		// profiler's own "Level1" (its collection level) sits beside them in reports.
		title := fmt.Sprintf("The between-server algorithm %s is not the model's best for group %s: %s %s",
			costmodel.HCCLAlgoName(topo.Level1), shortGroup(g), costmodel.HCCLAlgoName(best), gain)
		switch {
		case forcedAlgo != "" && errChoice == nil && best == choice.Algo:
			title = fmt.Sprintf("HCCL_ALGO forces the between-server algorithm %s for group %s, where HCCL's own choice, %s, %s: unset HCCL_ALGO",
				costmodel.HCCLAlgoName(topo.Level1), shortGroup(g), costmodel.HCCLAlgoName(best), gain)
		case forcedAlgo == "" && errChoice == nil && best == choice.Algo:
			title = fmt.Sprintf("The between-server algorithm %s is not HCCL's own choice for group %s: HCCL picks %s for these sizes, which %s; something the profile does not record forces %s",
				costmodel.HCCLAlgoName(topo.Level1), shortGroup(g), costmodel.HCCLAlgoName(best), gain, costmodel.HCCLAlgoName(topo.Level1))
		}
		var alts, named []string
		for _, a := range options {
			if cost[a] > 0 {
				alts = append(alts, fmt.Sprintf("%s %.2f ms", costmodel.HCCLAlgoName(a), cost[a]/steps/1e3))
				named = append(named, a)
			}
		}
		out = append(out, Finding{ID: "algorithm_not_best", Severity: sev, Saving: saving,
			Title: title,
			Evidence: fmt.Sprintf("%d servers × %d NPUs, %s within a server; the ops' alg_type says %s between servers (HCCL's level 1, HCCL_ALGO's \"level1\")%s. %s in %s priced per step with the links %s and %s: %s%s.%s The model's gap is a prediction: measure after changing (hcclprof diff).%s",
				topo.Servers, topo.RanksPerServer, topo.Level0, costmodel.HCCLAlgoName(topo.Level1), forced, units.Count(nOps, "op"), units.Count(int(steps), "step"),
				topo.IntraSource, topo.InterSource, strings.Join(alts, ", "), algoLegend(append(named, topo.Level1)), hcclSays, hidden),
			Refs: []Ref{{Rank: biggest.Rank, Step: biggest.Step, Op: biggest.Name, StartUs: float64(biggest.StartNs) / 1e3, StartNs: biggest.StartNs, DurUs: float64(biggest.ElapseNs) / 1e3}}})
	}
	return out
}

// algoLegend says in a few words what HCCL's between-server algorithms among algos
// are, each once, in the order of HCCL's names: " (H-D_R: recursive halving-doubling;
// ...)", or "" when none needs saying.
func algoLegend(algos []string) string {
	what := map[string]string{
		"ring":     "ring: each server passes a share to the next, p−1 steps each way",
		"rhd":      "H-D_R: recursive halving-doubling, log2 p steps, extra data when p is not a power of two",
		"nhr":      "NHR: nonuniform hierarchical ring, ⌈log2 p⌉ steps, no extra data",
		"nb":       "NB: nonuniform Bruck, ⌈log2 p⌉ steps",
		"pipeline": "pipeline: within- and between-server transfers overlapped slice by slice",
	}
	var parts []string
	for _, a := range []string{"ring", "rhd", "nhr", "nb", "pipeline"} {
		for _, b := range algos {
			if costmodel.NormaliseAlgo(b) == a {
				parts = append(parts, what[a])
				break
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// isDeterministic reports HCCL_DETERMINISTIC=true or strict, under which A2's
// pipeline is not available.
func isDeterministic(env Env) bool {
	v := strings.ToLower(strings.TrimSpace(env["HCCL_DETERMINISTIC"]))
	return v == "true" || v == "strict"
}

// shortGroup is a group key cut for a title.
func shortGroup(g string) string {
	if len(g) > 12 {
		return "…" + g[len(g)-6:]
	}
	return analysis.GroupKeyText(g)
}
