package advisor

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// An NCCL kernel is opaque (docs/formats.md: Kineto has one kernel per collective and
// no task per link), and the members of one collective finish together, at the pace
// of its slowest link: no rank of a group shows the slow link. Groups of one
// parallel dimension do the same collectives over different links, though: the data
// parallel groups of a TP8 × DP2 job each cross the nodes on their own NIC pair
// (rail-aligned: local rank k to local rank k), the tensor-parallel groups each stay
// on their own node's NVLink. A group whose collectives take markedly longer than the
// same collectives of its peer groups has a slow link that those groups do not use
// (docs/diagnosis.md §5, "Slow link inside a group").

// groupCollective is one collective of one group in one step, timed as its transfer:
// the shortest elapse over the group's members, which is the last member's to arrive
// and so waits for no one.
type groupCollective struct {
	key        collectiveKey
	transferNs int64
}

// collectiveKey matches the same collective across peer groups: its type and bytes,
// the step, and its place among the group's collectives of that type and size in the
// step.
type collectiveKey struct {
	typ       string
	bytes     int64
	step, nth int
}

// slowGroup is a group whose collectives run slower than its peer groups'.
type slowGroup struct {
	group    analysis.Group
	fraction float64 // the peers' transfer time over the group's, summed over matched collectives
	matched  int     // collectives matched with peers
	steps    int     // steps in which the group ran below the fraction, of seen
	seen     int
	// ownNs and refNs are the matched collectives' summed transfer times, the group's
	// and its peers' (the median of theirs, per collective), and bytes their bytes.
	ownNs, refNs float64
	bytes        int64
}

// opaqueGroupCollectives returns, per group key, the collectives of groups whose ops
// are opaque NCCL kernels (split from the ranks' arrivals) and whose every member was
// profiled in the collective's step. NCCL names its kernels by what they do, not by
// a sequence number, so a collective is read on the group's first member: its
// elapse less its cross-rank wait is the fastest member's (analysis matched the
// members' kernels by their order), and its place among that member's collectives
// of its type and size in the step is its place in the group's.
func opaqueGroupCollectives(ops []analysis.OpStat, groups []analysis.Group) map[string][]groupCollective {
	size := map[string]int{}
	first := map[string]int{}
	for _, g := range groups {
		size[g.Key] = len(g.Ranks)
		if len(g.Ranks) > 0 {
			first[g.Key] = g.Ranks[0]
		}
	}
	type groupStep struct {
		group string
		step  int
	}
	members := map[groupStep]map[int]bool{}
	opaque := map[groupStep]bool{}
	var mine []analysis.OpStat
	for _, o := range ops {
		if size[o.Group] < 2 || !isCollective(o.Type) {
			continue
		}
		k := groupStep{o.Group, o.Step}
		if members[k] == nil {
			members[k] = map[int]bool{}
			opaque[k] = true
		}
		members[k][o.Rank] = true
		opaque[k] = opaque[k] && o.MovingSource == analysis.MovingCrossRank
		if o.Rank == first[o.Group] {
			mine = append(mine, o)
		}
	}
	// Ops are in start order within a rank; sorted again in case a reader does not.
	slices.SortStableFunc(mine, func(a, b analysis.OpStat) int { return cmp.Compare(a.StartNs, b.StartNs) })
	type nthKey struct {
		groupStep
		typ   string
		bytes int64
	}
	nth := map[nthKey]int{}
	out := map[string][]groupCollective{}
	for _, o := range mine {
		k := groupStep{o.Group, o.Step}
		if !opaque[k] || len(members[k]) != size[o.Group] || !o.CrossWaitKnown {
			continue
		}
		n := nthKey{k, o.Type, o.Bytes}
		t := o.ElapseNs - o.CrossWaitNs
		if t > 0 {
			out[o.Group] = append(out[o.Group], groupCollective{key: collectiveKey{typ: o.Type, bytes: o.Bytes, step: o.Step, nth: nth[n]}, transferNs: t})
		}
		nth[n]++
	}
	return out
}

// isCollective reports whether an op type is a collective (not a point-to-point send
// or receive, whose two ends are no group of peers).
func isCollective(typ string) bool {
	t := strings.ToLower(typ)
	return !strings.Contains(t, "send") && !strings.Contains(t, "recv") && !strings.Contains(t, "receive")
}

// Thresholds of slowGroups beyond SlowLinkThresholds.GroupFraction.
const (
	// slowGroupMinMatched is the least number of collectives a group must share with
	// its peers to be judged: a few could be one congested moment.
	slowGroupMinMatched = 4
	// slowGroupPersist is the least share of the steps in which the group is below
	// the fraction: a slow link is slow in every step, a burst of traffic is not.
	slowGroupPersist = 0.5
)

// slowGroups compares each group's collectives with the same collectives of its peer
// groups (the same parallel dimension and size): a group whose peers' summed
// transfer time is below GroupFraction of its own, over at least slowGroupMinMatched
// collectives and in at least slowGroupPersist of its steps, is slow. Each
// collective is held against the median of the other groups' (leave one out, so that
// with two groups each is compared with the other).
func slowGroups(ops []analysis.OpStat, groups []analysis.Group, th SlowLinkThresholds) []slowGroup {
	colls := opaqueGroupCollectives(ops, groups)
	if len(colls) < 2 {
		return nil
	}
	classes := map[string][]analysis.Group{}
	for _, g := range groups {
		if len(colls[g.Key]) > 0 {
			k := fmt.Sprintf("%s/%d", g.Parallel, len(g.Ranks))
			classes[k] = append(classes[k], g)
		}
	}
	var out []slowGroup
	for _, peers := range classes {
		if len(peers) < 2 {
			continue
		}
		times := make([]map[collectiveKey]int64, len(peers))
		for i, g := range peers {
			times[i] = map[collectiveKey]int64{}
			for _, c := range colls[g.Key] {
				times[i][c.key] = c.transferNs
			}
		}
		for i, g := range peers {
			var own, ref float64
			stepOwn, stepRef := map[int]float64{}, map[int]float64{}
			matched := 0
			var bytes int64
			for k, t := range times[i] {
				var others []float64
				for j := range peers {
					if o, ok := times[j][k]; ok && j != i {
						others = append(others, float64(o))
					}
				}
				if len(others) == 0 {
					continue
				}
				slices.Sort(others)
				m := stats.MedianSorted(others)
				own += float64(t)
				ref += m
				stepOwn[k.step] += float64(t)
				stepRef[k.step] += m
				matched++
				bytes += k.bytes
			}
			if matched < slowGroupMinMatched || own <= 0 || ref/own >= th.GroupFraction {
				continue
			}
			below := 0
			for s, t := range stepOwn {
				if stepRef[s]/t < th.GroupFraction {
					below++
				}
			}
			if float64(below) < slowGroupPersist*float64(len(stepOwn)) {
				continue
			}
			out = append(out, slowGroup{group: g, fraction: ref / own, matched: matched, steps: below, seen: len(stepOwn),
				ownNs: own, refNs: ref, bytes: bytes})
		}
	}
	slices.SortFunc(out, func(a, b slowGroup) int {
		return cmp.Or(cmp.Compare(a.fraction, b.fraction), strings.Compare(a.group.Key, b.group.Key))
	})
	return out
}

// SlowGroup is a group whose collectives run slower than its peer groups' and
// whose slow link cannot be named: a group of three or more members over two or
// more servers (a data-parallel ring over four nodes), any of whose links could be
// the one.
type SlowGroup struct {
	Parallel string // the group's parallel dimension, as analysis names it
	Group    string // its name, else its key
	Ranks    []int
	Servers  []int   // the servers its members are on, in order
	Fraction float64 // its peers' transfer time over its own, over the matched collectives
	Evidence string
}

// slowGroupPlaces names where a slow group's slow link is: a group inside one server
// is that server's NVLink (NCCL's ring inside a node: which GPU's link the kernels
// cannot say); a group of two members on two servers is the link between them (their
// NIC pair, or the fabric between them). A group over more servers is returned as
// such: any of its ring's links could be the one.
func slowGroupPlaces(sg []slowGroup, serverOf map[int]int, hosts []string) ([]SlowLink, []SlowServer, []SlowGroup) {
	var links []SlowLink
	var servers []SlowServer
	var groups []SlowGroup
	for _, s := range sg {
		g := s.group
		on := map[int]bool{}
		known := true
		for _, r := range g.Ranks {
			sv, ok := serverOf[r]
			known = known && ok
			on[sv] = true
		}
		what := fmt.Sprintf("%s group %s (ranks %s) runs its collectives at %.0f%% of the speed of the same collectives in the other %s groups of its size "+
			"(%d collectives matched by type, size and place in the step; slower in %d of %d steps), each timed as its fastest member's kernel, which waits for no one",
			g.Parallel, groupLabel(g), rankList(g.Ranks), 100*s.fraction, g.Parallel, s.matched, s.steps, s.seen)
		switch {
		case !known:
			continue
		case len(on) == 1:
			sv := serverOf[g.Ranks[0]]
			host := ""
			if sv < len(hosts) {
				host = hosts[sv]
			}
			servers = append(servers, SlowServer{Server: sv, Host: host, Transport: "NVLINK", Fraction: s.fraction,
				Evidence: fmt.Sprintf("server %d (%s): %s; the group stays inside the server, so a link there (a GPU's NVLink or its NVSwitch port) is slow: NCCL's kernels do not say which GPU's", sv, host, what)})
		case len(g.Ranks) == 2:
			a, b := g.Ranks[0], g.Ranks[1]
			// The group's algorithmic bandwidth (bytes over transfer time) and its
			// peers', over the matched collectives: what the link's ratio reads.
			links = append(links, SlowLink{Src: a, Dst: b, Transport: "NET", Server: serverOf[a],
				BandwidthGBps: float64(s.bytes) / s.ownNs, PeerMedianGBps: float64(s.bytes) / s.refNs,
				Evidence: fmt.Sprintf("%d↔%d NET: %s; the group's only link between servers is this pair's (their NICs, or the fabric between them)", a, b, what)})
		default:
			svs := slices.Sorted(maps.Keys(on))
			groups = append(groups, SlowGroup{Parallel: g.Parallel, Group: groupLabel(g), Ranks: slices.Clone(g.Ranks), Servers: svs, Fraction: s.fraction,
				Evidence: fmt.Sprintf("%s; the group spans servers %s: one of the links its collectives cross (a member's NIC, the fabric between two of its servers, or a link inside one) is slow, and NCCL's kernels do not say which; "+
					"its members' NICs and the switch ports between those servers are where to look", what, rankList(svs))})
		}
	}
	return links, servers, groups
}

// groupLabel is a group's name, else its key.
func groupLabel(g analysis.Group) string {
	if g.Name != "" {
		return g.Name
	}
	return g.Key
}

// rankList writes ranks as "8–15" when consecutive, else comma-separated.
func rankList(rs []int) string {
	if len(rs) > 2 && rs[len(rs)-1]-rs[0] == len(rs)-1 && slices.IsSorted(rs) {
		return fmt.Sprintf("%d–%d", rs[0], rs[len(rs)-1])
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprint(r)
	}
	return strings.Join(parts, ", ")
}
