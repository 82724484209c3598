package advisor

import (
	"fmt"
	"sort"

	"github.com/hcclprof/hcclprof/analysis"
)

// SlowLinkThresholds decide which links, and which servers' links, are slow
// (slowLinks, slowServers): the configuration file's slow_link section.
type SlowLinkThresholds struct {
	// A link is slow when its transfers run below Fraction of the upper quartile of
	// the same ops' transfers over the same transport and size.
	Fraction float64
	// GroupFraction: where the kernels are opaque (NCCL), a group is slow when its
	// peer groups do the same collectives in less than GroupFraction of its time
	// (slowGroups). A group's time is a sum over many collectives, each its fastest
	// member's, so it is steadier than one transfer's bandwidth: its peers are alike
	// to within a percent in the generator's jobs, and a quarter longer is a link.
	GroupFraction float64
}

// defaultSlowLinkThresholds is a conservative choice: well below the peers, not a
// little.
var defaultSlowLinkThresholds = SlowLinkThresholds{Fraction: 0.6, GroupFraction: 0.8}

// SlowLink is a link well below the bandwidth of its peers.
type SlowLink struct {
	Src, Dst       int
	Transport      string
	BandwidthGBps  float64
	PeerMedianGBps float64 // the link's bandwidth at its peers' reference (upper quartile) ratio
	Server         int     // the server of Src; -1 when unknown
	Evidence       string
}

// slowLinks are the links whose transfers run below Fraction of their
// peers' in the same ops.
func slowLinks(links []analysis.Link, ratios map[analysis.LinkID]float64, serverOf map[int]int, th SlowLinkThresholds) []SlowLink {
	var out []SlowLink
	for _, l := range links {
		r, ok := ratios[linkID(l.Src, l.Dst, l.Transport)]
		if !ok || r >= th.Fraction {
			continue
		}
		bw := l.BandwidthGBps()
		server, known := serverOf[l.Src]
		if !known {
			server = -1
		}
		out = append(out, SlowLink{Src: l.Src, Dst: l.Dst, Transport: l.Transport, BandwidthGBps: bw, PeerMedianGBps: bw / r, Server: server,
			Evidence: fmt.Sprintf("%d→%d %s moves data at %.0f%% of the bandwidth of the same ops' other %s transfers of its size, latency taken off (%.2f GB/s over %d transfers)",
				l.Src, l.Dst, l.Transport, 100*r, l.Transport, bw, l.Transfers)})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].BandwidthGBps/out[i].PeerMedianGBps < out[j].BandwidthGBps/out[j].PeerMedianGBps
	})
	return out
}
