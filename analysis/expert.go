package analysis

import (
	"sort"
)

// ExpertRank is one rank's AlltoAll(v) traffic in an expert-parallel group, summed
// over the steps analysed.
type ExpertRank struct {
	Rank int
	Ops  int
	// Bytes is what the rank's AlltoAll(v) tasks moved (SDMA and RDMA, from the HCCL
	// tasks or the profiler's transport split); an op record's own size is the same on
	// every member of an AlltoAllv and says nothing of the routing. 0 when unknown.
	Bytes int64
	// ElapseNs is the ops' elapse, MovingNs their time moving data (OpStat.MovingNs)
	// and WaitNs their wait for the group's last member (OpStat.CrossWaitNs).
	ElapseNs, MovingNs, WaitNs int64
}

// ExpertGroup is the AlltoAll(v) imbalance of one expert-parallel group: the bytes
// and times per rank, and the rank whose experts take the most tokens (the most
// bytes moved, hence the longest transfers, and the last to arrive at the next
// AlltoAll, since its experts compute the most).
type ExpertGroup struct {
	Group string
	Ranks []ExpertRank // by rank
	// HotRank is the rank moving the most bytes (the slowest expert's rank); -1
	// when no rank's bytes are known.
	HotRank int
	// BytesSkew is HotRank's bytes over the group's median; MovingSkew the same of
	// the time moving data. 1 is a balanced routing.
	BytesSkew, MovingSkew float64
	// HotWaitsLeast says the hot rank waits least of the group's ranks in its
	// AlltoAlls: the others wait for it.
	HotWaitsLeast bool
}

// movedBytes is what an op's tasks moved: SDMA (the sum of its in-server links) and
// RDMA; the in-server links themselves where no SDMA sum is given.
func movedBytes(ts Transports) int64 {
	var sdma, rdma, links int64
	for _, t := range ts {
		switch t.Transport {
		case "SDMA":
			sdma = t.Bytes
		case "RDMA":
			rdma = t.Bytes
		default:
			links += t.Bytes
		}
	}
	if sdma == 0 {
		sdma = links
	}
	return sdma + rdma
}

// ExpertImbalance measures each expert-parallel group's AlltoAll(v) per rank (groups
// whose Parallel is KindEP, with at least two ranks seen).
func ExpertImbalance(res *Result) []ExpertGroup {
	ep := map[string]bool{}
	for _, g := range res.Communication.Groups {
		if g.Parallel == KindEP {
			ep[g.Key] = true
		}
	}
	if len(ep) == 0 {
		return nil
	}
	per := map[string]map[int]*ExpertRank{}
	for _, o := range res.Communication.Ops {
		if !ep[o.Group] || opFamily(o.Type, o.Name) != "alltoall" {
			continue
		}
		m := per[o.Group]
		if m == nil {
			m = map[int]*ExpertRank{}
			per[o.Group] = m
		}
		r := m[o.Rank]
		if r == nil {
			r = &ExpertRank{Rank: o.Rank}
			m[o.Rank] = r
		}
		r.Ops++
		r.Bytes += movedBytes(o.Transports)
		r.ElapseNs += o.ElapseNs
		r.MovingNs += o.MovingNs
		r.WaitNs += o.CrossWaitNs
	}
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []ExpertGroup
	for _, k := range keys {
		m := per[k]
		if len(m) < 2 {
			continue
		}
		g := ExpertGroup{Group: k, HotRank: -1}
		for _, r := range m {
			g.Ranks = append(g.Ranks, *r)
		}
		sort.Slice(g.Ranks, func(i, j int) bool { return g.Ranks[i].Rank < g.Ranks[j].Rank })
		var bytes, moving []float64
		hot := -1
		for i, r := range g.Ranks {
			bytes = append(bytes, float64(r.Bytes))
			moving = append(moving, float64(r.MovingNs))
			if r.Bytes > 0 && (hot < 0 || r.Bytes > g.Ranks[hot].Bytes) {
				hot = i
			}
		}
		if hot >= 0 {
			h := g.Ranks[hot]
			g.HotRank = h.Rank
			if med := median(bytes); med > 0 {
				g.BytesSkew = float64(h.Bytes) / med
			}
			if med := median(moving); med > 0 {
				g.MovingSkew = float64(h.MovingNs) / med
			}
			g.HotWaitsLeast = true
			for _, r := range g.Ranks {
				if r.Rank != h.Rank && r.WaitNs <= h.WaitNs {
					g.HotWaitsLeast = false
				}
			}
		}
		out = append(out, g)
	}
	return out
}
