package analysis

import (
	"fmt"
	"strings"

	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// localRetransmission is a retransmission whose ranks are group-local ones of group,
// until the merge maps them (mapGroupLocalRanks).
type localRetransmission struct {
	group string
	Retransmission
}

// groupLocalIndex is the rank's own index in each of its communicators that its
// metadata does not map (no parallel_group_info: msprof's PROF_* directories, older
// exports), read as msprof-analyze reads it: the on-chip LOCAL self-link "k-k" of the
// rank's communication matrix is the rank itself, local index k; without one, the
// source of its other links, which on every rank is the rank itself. A group whose
// entries name more than one index is left out.
func groupLocalIndex(links []profile.MatrixLink, mapped map[string][]int) map[string]int {
	var self, src map[string]int
	note := func(m *map[string]int, group string, k int) {
		if *m == nil {
			*m = map[string]int{}
		}
		if prev, ok := (*m)[group]; ok && prev != k {
			(*m)[group] = -1 // two indices: not one rank's
			return
		}
		(*m)[group] = k
	}
	for _, l := range links {
		if _, ok := mapped[l.Group]; ok || l.Group == "" || l.SrcLocal < 0 {
			continue
		}
		if strings.EqualFold(l.Transport, "LOCAL") || l.SrcLocal == l.DstLocal {
			note(&self, l.Group, l.SrcLocal)
		} else {
			note(&src, l.Group, l.SrcLocal)
		}
	}
	if self == nil && src == nil {
		return nil // every group mapped: nothing to keep (a cluster's usual case)
	}
	out := map[string]int{}
	for g, k := range src {
		if k >= 0 {
			out[g] = k
		}
	}
	for g, k := range self { // the self-link wins over the links' sources
		if k >= 0 {
			out[g] = k
		} else {
			delete(out, g)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mapGroupLocalRanks maps the group-local ranks of the ranks' transfers and
// retransmissions in communicators without parallel_group_info to global ranks, from
// each profiled rank's own index in them (groupLocalIndex). A transfer to a member no
// profiled rank claims (not profiled, or two ranks claiming one index) stays
// unmapped; a retransmission keeps its rank, with its peer unknown.
func mapGroupLocalRanks(ranks []rankComm) {
	owners := map[string]map[int]int{} // group → local index → global rank
	clash := map[string]bool{}
	for i := range ranks {
		for g, k := range ranks[i].selfIndex {
			m := owners[g]
			if m == nil {
				m = map[int]int{}
				owners[g] = m
			}
			if prev, ok := m[k]; ok && prev != ranks[i].rank {
				clash[g] = true
			}
			m[k] = ranks[i].rank
		}
	}
	global := func(group string, local int) (int, bool) {
		if clash[group] {
			return 0, false
		}
		g, ok := owners[group][local]
		return g, ok
	}
	for i := range ranks {
		rc := &ranks[i]
		for _, t := range rc.localTransfers {
			group := t.peer.Value().group
			src, okSrc := global(group, int(t.src))
			dst, okDst := global(group, int(t.dst))
			if !okSrc || !okDst || int(int32(src)) != src || int(int32(dst)) != dst {
				rc.unmappedBytes += t.bytes
				continue
			}
			t.src, t.dst = int32(src), int32(dst)
			rc.transfers = append(rc.transfers, t)
		}
		for _, lr := range rc.localRetransmissions {
			rt := lr.Retransmission
			src, okSrc := global(lr.group, rt.Src)
			dst, okDst := global(lr.group, rt.Dst)
			if okSrc && okDst {
				rt.Src, rt.Dst = src, dst
			} else {
				rt.Src, rt.Dst = rc.rank, -1 // the rank whose RDMA task it was; its peer unknown
			}
			rc.retransmissions = append(rc.retransmissions, rt)
		}
		rc.localTransfers, rc.localRetransmissions = nil, nil
	}
}

// unmappedLinksWarning says how much of the transfers no link could hold: their
// group-local ranks map to no global rank (no parallel_group_info for the group and
// no profiled rank claiming the member, or a member beyond the group's list). Those
// bytes are in no link, and no slow link or server is looked for on them.
func unmappedLinksWarning(c Communication) string {
	if c.UnmappedLinkBytes <= 0 {
		return ""
	}
	var mapped int64
	for _, l := range c.Links {
		mapped += l.Bytes
	}
	return fmt.Sprintf("%s of HCCL transfers (%.1f%% of all) go between group-local ranks that map to no global rank "+
		"(their group has no parallel_group_info, and no profiled rank's communication matrix names itself as that member): "+
		"they are in no link, and no slow link, server or retransmission is looked for on them",
		units.FormatBytes(c.UnmappedLinkBytes), 100*float64(c.UnmappedLinkBytes)/float64(mapped+c.UnmappedLinkBytes))
}
