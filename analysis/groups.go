package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/profile"
)

// GroupStep is one communicator's communication in one step, averaged over the
// group's ranks: how much of each step tp, dp or pp traffic costs, and how much of it
// is exposed.
type GroupStep struct {
	Group, Kind         string
	Step                int
	Ranks               int   // ranks of the group with the step
	CommunicationNs     int64 // mean over those ranks
	CommNotOverlappedNs int64 // mean exposed
	StageNs             int64 // mean Stage of those ranks
}

// ExposedShare is the group's exposed communication over the step's Stage.
func (g GroupStep) ExposedShare() float64 { return ratio(g.CommNotOverlappedNs, g.StageNs) }

// groupSteps averages each group's per-step communication over its ranks.
func groupSteps(ranks []RankResult, groups []Group) []GroupStep {
	kind := map[string]string{}
	for _, g := range groups {
		kind[g.Key] = g.Kind
	}
	type key struct {
		group string
		step  int
	}
	type acc struct {
		n                int64
		comm, exp, stage int64
	}
	sums := map[key]*acc{}
	for _, r := range ranks {
		for _, s := range r.Steps {
			for _, gc := range s.Groups {
				k := key{gc.Group, s.Step}
				a := sums[k]
				if a == nil {
					a = &acc{}
					sums[k] = a
				}
				a.n++
				a.comm += gc.CommunicationNs
				a.exp += gc.CommNotOverlappedNs
				a.stage += s.StageNs
			}
		}
	}
	out := make([]GroupStep, 0, len(sums))
	for k, a := range sums {
		out = append(out, GroupStep{Group: k.group, Kind: kind[k.group], Step: k.step, Ranks: int(a.n),
			CommunicationNs: a.comm / a.n, CommNotOverlappedNs: a.exp / a.n, StageNs: a.stage / a.n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Step < out[j].Step
	})
	return out
}

// inferGroups adds the groups the ops use but no parallel_group_info describes, with
// their ranks (those seen with the group's ops) and a kind guessed from the rank set,
// marked as a guess: point-to-point-only groups are "pp?"; the whole job is "world";
// consecutive ranks are "tp?" (Megatron puts tensor parallel fastest); evenly strided
// ranks are "dp?".
func inferGroups(groups []Group, ops []OpStat, world int) []Group {
	known := map[string]bool{}
	for _, g := range groups {
		known[g.Key] = true
	}
	members := map[string]map[int]bool{}
	p2pOnly := map[string]bool{}
	for _, o := range ops {
		if known[o.Group] {
			continue
		}
		if members[o.Group] == nil {
			members[o.Group] = map[int]bool{}
			p2pOnly[o.Group] = true
		}
		members[o.Group][o.Rank] = true
		if !profile.IsP2P(o.Name) && o.Type != "send" && o.Type != "receive" && o.Type != "batchsendrecv" {
			p2pOnly[o.Group] = false
		}
	}
	out := append([]Group(nil), groups...)
	for key, set := range members {
		rs := make([]int, 0, len(set))
		for r := range set {
			rs = append(rs, r)
		}
		sort.Ints(rs)
		out = append(out, Group{Key: key, Ranks: rs, Kind: guessKind(rs, world, p2pOnly[key]), Inferred: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func guessKind(ranks []int, world int, p2pOnly bool) string {
	switch {
	case p2pOnly:
		// Before "world": the ranks profiled may be one pipeline of a larger job
		// (two adjacent stages), whose group then holds all of them.
		return "pp?"
	case len(ranks) == world && world > 1:
		return "world"
	case len(ranks) < 2:
		return ""
	}
	stride := ranks[1] - ranks[0]
	for i := 2; i < len(ranks); i++ {
		if ranks[i]-ranks[i-1] != stride {
			return fmt.Sprintf("%d ranks", len(ranks))
		}
	}
	if stride == 1 {
		return "tp?"
	}
	return "dp?"
}

// groupMembersConflict says when two ranks' parallel_group_info give one group
// different members, "" when they agree: metadata of another run or job beside this
// one's. The first rank's members are used (clusterGroups, groupSizes); read without a
// word, a pp group of 2 became one of 3 and a link moved to another rank.
func groupMembersConflict(c *profile.Cluster) string {
	type claim struct {
		rank    int
		kind    string
		members []int
	}
	first := map[string]claim{}
	var conflicts []string
	n := 0
	for _, r := range c.Ranks {
		for _, g := range r.Metadata.ParallelGroups {
			key := g.OpsKey()
			f, ok := first[key]
			if !ok {
				first[key] = claim{r.Rank, g.Name, g.GlobalRanks}
				continue
			}
			if slices.Equal(f.members, g.GlobalRanks) {
				continue
			}
			if n++; n <= 3 {
				conflicts = append(conflicts, fmt.Sprintf("%s group …%s: rank %d says {%s}, rank %d {%s}",
					f.kind, key[max(0, len(key)-6):], f.rank, ranklist.Format(f.members), r.Rank, ranklist.Format(g.GlobalRanks)))
			}
		}
	}
	if n == 0 {
		return ""
	}
	more := ""
	if n > 3 {
		more = fmt.Sprintf(" (and %d more)", n-3)
	}
	return fmt.Sprintf("profiler_metadata.json's parallel_group_info differs between ranks on a group's members: %s%s; metadata of another run or job? The first rank's members are used",
		strings.Join(conflicts, "; "), more)
}
