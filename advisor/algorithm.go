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

// defaultAlgorithmThresholds are algorithm_not_best's defaults.
var defaultAlgorithmThresholds = AlgorithmThresholds{MinGainShare: 0.05, MinStepShare: 0.01, HiddenCommShare: 0.05}

func (t *AlgorithmThresholds) keys() []thresholdKey {
	return []thresholdKey{{"min_gain_share", &t.MinGainShare, 0, 1}, {"min_step_share", &t.MinStepShare, 0, 1}, {"hidden_comm_share", &t.HiddenCommShare, 0, 1}}
}

// algorithmFindings flags a group whose level-1 algorithm (the ops' alg_type) the
// cost model, with the run's calibrated links, prices clearly above another that
// HCCL_ALGO may name on the product: typically HCCL_ALGO forcing one, or an
// automatic choice made with HCCL's fixed 60 µs / 20 GiB/s figures rather than the
// links the run shows. One rank's ops of each step are priced per algorithm.
func algorithmFindings(res *analysis.Result, det Detections, facts RunFacts, fit *costmodel.RunFit, th AlgorithmThresholds) []Finding {
	opsBy, groups, names := firstRankOpsByStep(res.Communication)
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	topologies := fit.Topologies()
	var out []Finding
	for _, g := range names {
		topo := topologies[g]
		if topo.Servers < 2 || topo.Level1Source != "profile" || topo.NCCL {
			continue
		}
		ap, ok := priceLevel1(g, topo, groups[g], opsBy, facts.Deterministic, facts.BuffsizeBytes)
		if !ok {
			continue
		}
		cur, best := ap.cur, ap.best
		savedPerStepUs := (cur - ap.cost[best]) / ap.steps
		if best == topo.Level1 || cur-ap.cost[best] < th.MinGainShare*cur || savedPerStepUs < th.MinStepShare*stepUs {
			continue
		}
		out = append(out, ap.finding(res, det, facts, th, savedPerStepUs, stepUs))
	}
	return out
}

// groupStepKey keys a group's ops of one step.
type groupStepKey struct {
	group string
	step  int
}

// firstRankOpsByStep collects, per group and step, the sized AllReduces,
// AllGathers and ReduceScatters of the group's first rank; each group's keys in step
// order (sums and the evidence's op stay the same run to run) and the groups' names,
// sorted.
func firstRankOpsByStep(c analysis.Communication) (map[groupStepKey][]analysis.OpStat, map[string][]groupStepKey, []string) {
	firstRank := map[string]int{}
	for _, o := range c.Ops {
		if r, ok := firstRank[o.Group]; !ok || o.Rank < r {
			firstRank[o.Group] = o.Rank
		}
	}
	opsBy := map[groupStepKey][]analysis.OpStat{}
	for _, o := range c.Ops {
		switch o.Type {
		case "allreduce", "allgather", "reducescatter":
		default:
			continue
		}
		if o.Rank == firstRank[o.Group] && o.Bytes > 0 {
			opsBy[groupStepKey{o.Group, o.Step}] = append(opsBy[groupStepKey{o.Group, o.Step}], o)
		}
	}
	groups := map[string][]groupStepKey{}
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
	return opsBy, groups, names
}

// level1Pricing is one group's ops priced per level-1 algorithm.
type level1Pricing struct {
	group     string
	topo      costmodel.Topology
	options   []string           // the algorithms HCCL_ALGO may name on the product
	cost      map[string]float64 // per algorithm the model can price every op with, their summed time (µs)
	nOps      int
	steps     float64
	biggest   analysis.OpStat // the group's largest op
	choice    costmodel.Choice
	errChoice error   // HCCL's own choice for the largest op, or why there is none
	cur       float64 // the run's algorithm's cost
	best      string  // the cheapest algorithm (the run's on a tie)
}

// priceLevel1 prices the group's ops (the keys' steps) with each level-1 algorithm
// and finds the cheapest; ok is false when the run's own algorithm cannot be priced.
func priceLevel1(g string, topo costmodel.Topology, ks []groupStepKey, opsBy map[groupStepKey][]analysis.OpStat, deterministic bool, buffer int64) (level1Pricing, bool) {
	ap := level1Pricing{group: g, topo: topo, options: topo.Level1Options(deterministic), cost: map[string]float64{}, steps: float64(len(ks))}
	options := ap.options
	candidates := slices.Clone(options)
	if !slices.Contains(candidates, topo.Level1) {
		candidates = append(candidates, topo.Level1)
	}
	cost := ap.cost
	unpriced := map[string]bool{} // an algorithm the model cannot price for some op is left out
	for _, k := range ks {
		for _, o := range opsBy[k] {
			ap.nOps++
			if o.Bytes > ap.biggest.Bytes {
				ap.biggest = o
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
		return ap, false
	}
	ap.cur = cur
	// HCCL's own choice for the group's largest op, considered first so that a tie
	// goes to it: forcing an algorithm that only equals it gains nothing.
	biggest := ap.biggest
	ap.choice, ap.errChoice = topo.HCCLChoice(biggest.Type, biggest.Bytes, buffer, deterministic)
	order := options
	if ap.errChoice == nil && slices.Contains(options, ap.choice.Algo) {
		order = append([]string{ap.choice.Algo}, slices.DeleteFunc(slices.Clone(options), func(a string) bool { return a == ap.choice.Algo })...)
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
	ap.best = best
	return ap, true
}

// finding is algorithm_not_best for the group: its severity and saving (none while
// communication is hidden or a fault comes first), the title that says what to
// change, and the evidence with every algorithm's price.
func (ap level1Pricing) finding(res *analysis.Result, det Detections, facts RunFacts, th AlgorithmThresholds, savedPerStepUs, stepUs float64) Finding {
	g, topo, cost, cur, best, biggest, choice, errChoice := ap.group, ap.topo, ap.cost, ap.cur, ap.best, ap.biggest, ap.choice, ap.errChoice
	sev := Medium
	hidden := ""
	saving := savedPerStepUs / stepUs // none while the step would not get shorter, or a fault comes first
	// gain is what the title says the change would save: once a slow rank, link or
	// server is fixed when one is found, for no tuning is recommended before.
	gain := fmt.Sprintf("would save %.2f ms %s (%.0f%% of its collectives' time)", savedPerStepUs/1e3, perStepPhrase(res), 100*(cur-cost[best])/cur)
	switch {
	case res.Summary.CommShare < th.HiddenCommShare:
		sev, hidden, saving = Info, " Communication is almost all hidden behind computation here, so the step would not get shorter.", 0
	case det.faulty(res.Communication):
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
				costmodel.HCCLAlgoName(best), (cost[choice.Algo]-cost[best])/ap.steps/1e3)
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
	for _, a := range ap.options {
		if cost[a] > 0 {
			alts = append(alts, fmt.Sprintf("%s %.2f ms", costmodel.HCCLAlgoName(a), cost[a]/ap.steps/1e3))
			named = append(named, a)
		}
	}
	return Finding{ID: "algorithm_not_best", Severity: sev, Saving: saving,
		Title: title,
		Evidence: fmt.Sprintf("%d servers × %d NPUs, %s within a server; the ops' alg_type says %s between servers (HCCL's level 1, HCCL_ALGO's \"level1\")%s. %s in %s priced per step with the links %s and %s: %s%s.%s The model's gap is a prediction: measure after changing (hcclprof diff).%s",
			topo.Servers, topo.RanksPerServer, topo.Level0, costmodel.HCCLAlgoName(topo.Level1), forced, units.Count(ap.nOps, "op"), units.Count(int(ap.steps), "step"),
			topo.IntraSource, topo.InterSource, strings.Join(alts, ", "), algoLegend(append(named, topo.Level1)), hcclSays, hidden),
		Refs: []Ref{{Rank: biggest.Rank, Step: biggest.Step, Op: biggest.Name, StartUs: float64(biggest.StartNs) / 1e3, StartNs: biggest.StartNs, DurUs: float64(biggest.ElapseNs) / 1e3}}}
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
