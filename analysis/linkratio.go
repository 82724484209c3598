package analysis

import (
	"math"
	"sort"
	"strings"

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
}

// LinkID names a link: its source and destination ranks and its transport.
type LinkID struct {
	Src, Dst  int
	Transport string
}

// peerSamples holds each transfer beside its peers': the transfers of the same op
// (group and name) over the same transport with the same size, which cross the same
// kind of link at the same time, so that message size cancels out.
type peerSamples map[peerKey][]peerSample

type peerKey struct {
	group, op, transport string
	bytes                int64
}

type peerSample struct {
	link   linkKey
	bytes  int64 // what the op moved over the link at this size (its weight)
	timeNs int64
	count  int // transfers summed in it
}

func (p peerSamples) addTransfer(t transfer) {
	p[t.peer] = append(p[t.peer], peerSample{t.link, t.bytes, t.timeNs, t.count})
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
func (p peerSamples) linkRatios(alphaNs map[string]float64) map[linkKey]float64 {
	weighted := map[linkKey]float64{}
	bytes := map[linkKey]float64{}
	// Sum in a fixed order: float sums must not depend on map iteration.
	keys := make([]peerKey, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.op != b.op {
			return a.op < b.op
		}
		if a.transport != b.transport {
			return a.transport < b.transport
		}
		return a.bytes < b.bytes
	})
	for _, k := range keys {
		samples := p[k]
		if len(samples) < 3 {
			continue
		}
		alpha := alphaNs[k.transport]
		bw := make([]float64, len(samples))
		for i, s := range samples {
			t := float64(s.timeNs)
			if s.timeNs <= 0 {
				continue
			}
			bw[i] = float64(s.bytes) / max(t-float64(s.count)*alpha, minPayloadShare*t)
		}
		sorted := append([]float64(nil), bw...)
		sort.Float64s(sorted)
		ref := stats.QuantileSorted(sorted, 0.75)
		if ref <= 0 {
			continue
		}
		for i, s := range samples {
			weighted[s.link] += float64(s.bytes) * bw[i] / ref
			bytes[s.link] += float64(s.bytes)
		}
	}
	out := map[linkKey]float64{}
	for k, b := range bytes {
		if b > 0 {
			out[k] = weighted[k] / b
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
		host := hostOfDir(r.Dir)
		if host == "" {
			continue
		}
		i, ok := index[host]
		if !ok {
			i = len(hosts)
			index[host] = i
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
