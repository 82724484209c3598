package analysis

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// runsApartLimitNs is the least gap between two ranks' starts of one step read as two
// runs: clocks of one job agree within seconds, and a late rank starts a step at most
// a few steps after the others (runsApartWarning also waits for 10 median Stages).
const runsApartLimitNs = int64(time.Minute)

// runsApartWarning says when ranks started the same step far apart in wall-clock time,
// "" otherwise: rank directories of two runs gathered in one directory (a Level1 run's
// rank 0 beside another run's rank 1 started step 50 57 minutes apart) would have
// their ops compared as one collective's, and the waits, slow ranks and links read
// from unrelated runs without a word.
func runsApartWarning(ranks []RankResult, ops []OpStat) string {
	epoch := map[int]bool{}
	for _, r := range ranks {
		if r.EpochClock { // profile.Traits: wall-clock op start times
			epoch[r.Rank] = true
		}
	}
	if len(epoch) < 2 {
		return ""
	}
	var stages []int64
	for _, r := range ranks {
		for _, st := range r.Steps {
			stages = append(stages, st.StageNs)
		}
	}
	type rankStep struct{ rank, step int }
	first := map[rankStep]int64{}
	for _, o := range ops {
		if !epoch[o.Rank] || o.StartNs <= 0 {
			continue
		}
		k := rankStep{o.Rank, o.Step}
		if at, ok := first[k]; !ok || o.StartNs < at {
			first[k] = o.StartNs
		}
	}
	limit := runsApartLimitNs
	if len(stages) > 0 {
		slices.Sort(stages)
		limit = max(limit, 10*stages[len(stages)/2])
	}
	type span struct {
		early, late     rankStep
		earlyNs, lateNs int64
	}
	byStep := map[int]span{}
	for k, at := range first {
		s, seen := byStep[k.step]
		if !seen {
			s = span{early: k, late: k, earlyNs: at, lateNs: at}
		}
		if at < s.earlyNs || at == s.earlyNs && k.rank < s.early.rank {
			s.early, s.earlyNs = k, at
		}
		if at > s.lateNs || at == s.lateNs && k.rank < s.late.rank {
			s.late, s.lateNs = k, at
		}
		byStep[k.step] = s
	}
	var worst span
	apart := 0
	for _, step := range slices.Sorted(maps.Keys(byStep)) {
		s := byStep[step]
		if s.lateNs-s.earlyNs <= limit {
			continue
		}
		if apart++; apart == 1 || s.lateNs-s.earlyNs > worst.lateNs-worst.earlyNs {
			worst = s
		}
	}
	if apart == 0 {
		return ""
	}
	clock := func(ns int64) string { return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05 UTC") }
	return fmt.Sprintf("rank %d started step %s at %s and rank %d at %s, %s apart (%d step(s) over %s apart): profiles of different runs, or a clock far off? "+
		"Their ops are compared as one collective's, so the waits, slow ranks and links mix unrelated runs; analyse each run's ranks apart",
		worst.early.rank, StepLabel(worst.early.step), clock(worst.earlyNs), worst.late.rank, clock(worst.lateNs),
		time.Duration(worst.lateNs-worst.earlyNs).Round(time.Second), apart, time.Duration(limit).Round(time.Second))
}
