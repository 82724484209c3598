package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unique"

	"gonum.org/v1/gonum/stat"

	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/profile"
)

// Retransmission is an RDMA transfer that took longer than the retransmission limit.
type Retransmission struct {
	Src, Dst int
	Step     int
	Op       string
	TimeNs   int64
	LimitNs  int64 // the retransmission limit it exceeded (Limits.RetransmissionNs)
	// FromOpTotal marks one found on a rank without HCCL task rows, from its op's
	// RDMA time in the profiler's per-op analysis, by msprof-analyze's rule: the op
	// spent more than the limit in RDMA transfers, and on every profiled rank it took
	// at least the limit (so it is not one rank's late arrival). The transfer itself is
	// not listed: Dst is -1, TimeNs is the op's RDMA time and Bytes its RDMA bytes.
	FromOpTotal bool
	Bytes       int64
}

// Link names where the retransmission was: "src→dst", or the rank alone when its
// peer is not known (Dst -1: only its op's total is known, or its group's members).
func (r Retransmission) Link() string {
	if r.Dst < 0 {
		return fmt.Sprintf("rank %d (peer not recorded)", r.Src)
	}
	return fmt.Sprintf("%d→%d", r.Src, r.Dst)
}

// LinkID names a link: its source and destination ranks and its transport.
type LinkID struct {
	Src, Dst  int
	Transport string
}

// peerGroups holds each transfer beside its peers': the transfers of the same op
// (group and name) over the same transport with the same size, which cross the same
// kind of link at the same time, so that message size cancels out. The groups are
// cut from one array of references to the ranks' transfers, counted first: a slice of
// copies per group held a cluster's transfers twice over, and more, at the end of a
// 4096-rank load.
type peerGroups struct {
	ranks   []rankComm
	keys    []peerKey // sorted, so that float sums do not depend on map order
	starts  []int     // group i is members[starts[i]:starts[i+1]]
	members []transferRef
}

// transferRef is ranks[rank].transfers[index].
type transferRef struct{ rank, index int32 }

func (p peerGroups) transfer(m transferRef) transfer { return p.ranks[m.rank].transfers[m.index] }

type peerKey struct {
	group, op, transport string
	bytes                int64
}

// groupPeers gathers the ranks' transfers by peer key, each group in rank order.
func groupPeers(ranks []rankComm) peerGroups {
	index := map[unique.Handle[peerKey]]int{}
	var handles []unique.Handle[peerKey]
	var counts []int
	total := 0
	for _, rc := range ranks {
		for _, t := range rc.transfers {
			i, ok := index[t.peer]
			if !ok {
				i = len(handles)
				index[t.peer] = i
				handles = append(handles, t.peer)
				counts = append(counts, 0)
			}
			counts[i]++
			total++
		}
	}
	order := make([]int, len(handles))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return comparePeerKeys(handles[a].Value(), handles[b].Value()) })
	g := peerGroups{ranks: ranks, keys: make([]peerKey, len(handles)), starts: make([]int, len(handles)+1), members: make([]transferRef, total)}
	next := make([]int, len(handles)) // where each group's next transfer goes
	at := 0
	for pos, i := range order {
		g.keys[pos] = handles[i].Value()
		g.starts[pos] = at
		next[i] = at
		at += counts[i]
	}
	g.starts[len(handles)] = at
	for ri, rc := range ranks {
		for ti, t := range rc.transfers {
			i := index[t.peer]
			g.members[next[i]] = transferRef{int32(ri), int32(ti)}
			next[i]++
		}
	}
	return g
}

func comparePeerKeys(a, b peerKey) int {
	return cmp.Or(strings.Compare(a.group, b.group), strings.Compare(a.op, b.op),
		strings.Compare(a.transport, b.transport), cmp.Compare(a.bytes, b.bytes))
}

// minPayloadShare bounds the latency taken off a transfer's time: at least this share
// of it is left as payload time, so a transfer the fit says is all latency neither
// divides by zero nor swings the ratio.
const minPayloadShare = 0.1

// linkRatios returns, per link, how fast its transfers ran against their peers': the
// mean of bandwidth / peers' reference over its transfers, weighted by bytes. The
// bandwidth is the payload's, with the transport's fitted latency taken off each
// transfer (bytes / (time − α)): a link at half the bandwidth takes twice the payload
// time, but with α left in, a transfer of a few n½ looks only a third slower (0.63
// where it is 0.5). The reference is the peers' upper quartile, not their median,
// because one slow server can touch half the transfers of a phase (a 4-server ring
// passes through it twice), and the median would then sit between the slow and the
// healthy links. Only groups of 3 or more transfers count.
func (p peerGroups) linkRatios(alphaNs map[string]float64) map[LinkID]float64 {
	type sums struct{ weighted, bytes float64 }
	perLink := map[linkKey]sums{}
	var bw, sorted []float64
	for gi, k := range p.keys {
		samples := p.members[p.starts[gi]:p.starts[gi+1]]
		if len(samples) < 3 {
			continue
		}
		alpha := alphaNs[k.transport]
		bw = append(bw[:0], make([]float64, len(samples))...)
		for i, m := range samples {
			s := p.transfer(m)
			t := float64(s.timeNs)
			if s.timeNs <= 0 {
				continue
			}
			bw[i] = float64(s.bytes) / max(t-float64(s.count)*alpha, minPayloadShare*t)
		}
		sorted = append(sorted[:0], bw...)
		sort.Float64s(sorted)
		ref := stats.QuantileSorted(sorted, 0.75)
		if ref <= 0 {
			continue
		}
		for i, m := range samples {
			s := p.transfer(m)
			link := s.link()
			sum := perLink[link]
			sum.weighted += float64(s.bytes) * bw[i] / ref
			sum.bytes += float64(s.bytes)
			perLink[link] = sum
		}
	}
	out := make(map[LinkID]float64, len(perLink))
	for k, sum := range perLink {
		if sum.bytes > 0 {
			out[LinkID{k.src, k.dst, k.transport}] = sum.weighted / sum.bytes
		}
	}
	return out
}

// transferLatencyNs fits each transport's per-transfer latency α from the typical
// transfer times per size (TransferSamples: medians over ranks, which a slow link does
// not move): the intercept of time = α + bytes/BW, weighted by transfers, over copies
// (reductions add a per-byte cost of their own) where at least two sizes were seen. No
// fit (one size, a non-positive slope) leaves α at 0: times are then compared whole,
// as before the fit.
func transferLatencyNs(samples []TransferSample) map[string]float64 {
	by := map[string][]TransferSample{}
	for _, s := range samples {
		if !s.Reduce && s.SizeBytes > 0 && s.MedianNs > 0 && s.Count > 0 {
			by[s.Transport] = append(by[s.Transport], s)
		}
	}
	out := map[string]float64{}
	for transport, pts := range by {
		x := make([]float64, len(pts))
		y := make([]float64, len(pts))
		w := make([]float64, len(pts))
		sizes := map[int64]bool{}
		smallest := math.Inf(1)
		for i, p := range pts {
			x[i], y[i], w[i] = float64(p.SizeBytes), p.MedianNs, float64(p.Count)
			sizes[p.SizeBytes] = true
			smallest = min(smallest, p.MedianNs)
		}
		if len(sizes) < 2 {
			continue
		}
		alpha, beta := stat.LinearRegression(x, y, w, false)
		if beta <= 0 || alpha <= 0 {
			continue
		}
		out[transport] = min(alpha, smallest)
	}
	return out
}

// serversOf numbers the servers from the rank directories' host names
// ({host}_{pid}_{timestamp}_ascend_pt), in order of their lowest rank.
func serversOf(c *profile.Cluster) (map[int]int, []string) {
	serverOf := map[int]int{}
	var hosts []string
	index := map[string]int{}
	for _, r := range c.Ranks {
		// The rank directory's host; else msprof's info.json, where hostUid tells
		// apart servers that share a hostname (shown by the hostname).
		host := hostOfDir(r.Dir)
		key := host
		if id := cmp.Or(r.Info.HostUID, r.Info.Host); host == "" && id != "" {
			key, host = "info.json:"+id, cmp.Or(r.Info.Host, r.Info.HostUID) // never a directory's host
		}
		if key == "" {
			continue
		}
		i, ok := index[key]
		if !ok {
			i = len(hosts)
			index[key] = i
			hosts = append(hosts, host)
		}
		serverOf[r.Rank] = i
	}
	return serverOf, hosts
}

func hostOfDir(dir string) string {
	base := dir
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if !strings.HasSuffix(base, "_ascend_pt") && !strings.HasSuffix(base, "_ascend_ms") {
		return ""
	}
	parts := strings.Split(base, "_")
	if len(parts) < 5 { // host, pid, timestamp, ascend, pt
		return ""
	}
	return strings.Join(parts[:len(parts)-4], "_")
}
