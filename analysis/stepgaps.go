package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcclprof/hcclprof/internal/ranklist"
)

// Ranks of one job may have profiled different steps: torch_npu's dynamic profiling
// starts on each rank at the step it sees its config change, and of a schedule's
// several cycles (repeat=N) a rank may have kept another one than the others. A
// collective of such a step is then seen on some of its group's profiled ranks only,
// and nothing measured says how long it waited for the others.

// stepsNotOnEveryRank warns of steps some ranks have and others do not, outside the
// gaps flagRanksMissingSteps already flags (a step missing between two of a rank's
// own): "step 50 only on rank 0". Ranks without any step are left out (flagged by
// flagRanksWithoutSteps). "" when every rank has the same steps.
func stepsNotOnEveryRank(ranks []RankResult) string {
	if sameSteps(ranks) {
		return ""
	}
	var withSteps, union []int
	for _, rr := range ranks {
		if len(rr.Steps) > 0 {
			withSteps = append(withSteps, rr.Rank)
			for _, st := range rr.Steps {
				union = append(union, st.Step)
			}
		}
	}
	slices.Sort(union)
	union = slices.Compact(union)
	onRanks := make(map[int][]int, len(union))
	for _, rr := range ranks {
		if len(rr.Steps) == 0 {
			continue
		}
		have := stepSet(rr)
		// A step missing between two of the rank's own is its problem already.
		lo, hi, flagged := missingStepRange(rr)
		for _, step := range union {
			if have[step] || flagged && step > lo && step < hi {
				onRanks[step] = append(onRanks[step], rr.Rank)
			}
		}
	}
	var partial []int
	anyCommon := false
	for step, on := range onRanks {
		if len(on) < len(withSteps) {
			partial = append(partial, step)
		} else {
			anyCommon = true
		}
	}
	if len(partial) == 0 {
		return ""
	}
	slices.Sort(partial)
	var parts []string
	for i, step := range partial {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("%d more", len(partial)-4))
			break
		}
		on := onRanks[step]
		name := fmt.Sprintf("step %d", step)
		if step < 0 {
			name = "the span without step markers" // a rank of a run without them
		}
		if 2*len(on) <= len(withSteps) {
			parts = append(parts, fmt.Sprintf("%s only on %s", name, ranksText(on)))
		} else {
			parts = append(parts, fmt.Sprintf("%s not on %s", name, ranksText(without(withSteps, on))))
		}
	}
	advice := "no step is on every rank: profile the same steps on every rank (one schedule for all, not dynamic profiling started rank by rank)"
	switch {
	case partial[0] < 0:
		advice = "ranks without step markers are not compared step by step with ranks that have them: analyse each kind apart"
	case anyCommon:
		advice = "--skip-steps " + intsComma(partial) + " keeps the steps every rank has"
	}
	return fmt.Sprintf("the ranks profiled different steps: %s (the profiler started or stopped at another step on some ranks: dynamic profiling, or profiling cycles of different times kept for different ranks). "+
		"A collective of those steps is measured on the ranks that have it only: the time they waited for the others is counted as waiting for ranks without a profile of the step; %s",
		strings.Join(parts, ", "), advice)
}

// groupStepGaps finds, for each group and step, the group's profiled ranks that have
// no profile of that step although they ran the group's ops in others: the ranks a
// collective of that step may have waited for unseen. Members are the ranks with an
// op in the group; ranks without steps are left out. Keyed by group, then step.
func groupStepGaps(ops []OpStat, ranks []RankResult) map[string]map[int][]int {
	if sameSteps(ranks) {
		return nil
	}
	stepsOf := make(map[int]map[int]bool, len(ranks))
	anyRank := map[int]bool{} // the steps analysed; an op outside them (before the first marker) is in none
	for _, rr := range ranks {
		if len(rr.Steps) == 0 {
			continue
		}
		stepsOf[rr.Rank] = stepSet(rr)
		for _, st := range rr.Steps {
			anyRank[st.Step] = true
		}
	}
	members := map[string][]int{}
	opSteps := map[string]map[int]bool{}
	for _, o := range ops {
		if _, ok := stepsOf[o.Rank]; !ok {
			continue
		}
		if l := members[o.Group]; len(l) == 0 || l[len(l)-1] != o.Rank { // ops come rank by rank
			members[o.Group] = append(l, o.Rank)
		}
		if !anyRank[o.Step] {
			continue
		}
		if opSteps[o.Group] == nil {
			opSteps[o.Group] = map[int]bool{}
		}
		opSteps[o.Group][o.Step] = true
	}
	for g, l := range members {
		slices.Sort(l)
		members[g] = slices.Compact(l)
	}
	var out map[string]map[int][]int
	for g, steps := range opSteps {
		for step := range steps {
			var absent []int
			for _, r := range members[g] {
				if !stepsOf[r][step] {
					absent = append(absent, r)
				}
			}
			if len(absent) == 0 {
				continue
			}
			if out == nil {
				out = map[string]map[int][]int{}
			}
			if out[g] == nil {
				out[g] = map[int][]int{}
			}
			out[g][step] = absent
		}
	}
	return out
}

// sameSteps reports whether every rank with steps has the same ones, in one order:
// the usual case, where neither the warning nor the gaps need their maps.
func sameSteps(ranks []RankResult) bool {
	var first []StepBreakdown
	for _, rr := range ranks {
		if len(rr.Steps) == 0 {
			continue
		}
		if first == nil {
			first = rr.Steps
			continue
		}
		if len(rr.Steps) != len(first) {
			return false
		}
		for i := range first {
			if rr.Steps[i].Step != first[i].Step {
				return false
			}
		}
	}
	return true
}

// stepSet is the steps a rank has.
func stepSet(rr RankResult) map[int]bool {
	have := make(map[int]bool, len(rr.Steps))
	for _, st := range rr.Steps {
		have[st.Step] = true
	}
	return have
}

func ranksText(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	return "ranks " + ranklist.Format(ranks)
}

// without is all less some; both sorted.
func without(all, some []int) []int {
	var out []int
	for _, r := range all {
		if _, found := slices.BinarySearch(some, r); !found {
			out = append(out, r)
		}
	}
	return out
}

func intsComma(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}
