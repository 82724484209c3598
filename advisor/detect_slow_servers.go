package advisor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// SlowServer is a server whose links of one transport are slow while the same
// transport's links elsewhere are not: its NICs (RDMA) or its fabric, rather than one
// cable. Server −1 is every server alike, held against the hardware's peak
// (fabricBelowPeak): no healthy server to compare with.
type SlowServer struct {
	Server    int
	Host      string
	Transport string
	Fraction  float64 // the median peer ratio of the server's slow links
	Evidence  string
}

// slowServers rolls slow links up to servers. A server all of whose links of a
// transport to other servers run slow, or which every slow link of the transport
// touches (two or more, with no other server common to them all), has a slow NIC or
// fabric, not a bad cable; when the slow links also share one rank, it is that rank's
// NIC. Either way some link of the transport elsewhere must be fine: with every link
// slow (two servers, one slow NIC) the data cannot say whose NIC it is. The links a
// server explains are returned apart, to be left out of the slow links.
func slowServers(links []analysis.Link, slow []SlowLink, ratios map[analysis.LinkID]float64, serverOf map[int]int, hosts []string, th SlowLinkThresholds) ([]SlowServer, map[analysis.LinkID]bool) {
	touching, healthy := interServerRatios(links, ratios, serverOf, th.Fraction)
	// The servers every slow link of a transport touches, and the ranks.
	slowBy := map[string][]SlowLink{}
	for _, l := range slow {
		ns, okS := serverOf[l.Src]
		nd, okD := serverOf[l.Dst]
		if okS && okD && ns != nd {
			slowBy[l.Transport] = append(slowBy[l.Transport], l)
		}
	}
	common := commonSlowServer(slowBy, serverOf)
	var out []SlowServer
	explained := map[analysis.LinkID]bool{}
	for k, rs := range touching {
		if !healthy[k.transport] || len(rs) < 2 {
			continue
		}
		sort.Float64s(rs)
		rank, shared := common[k]
		if !shared && rs[len(rs)-1] >= th.Fraction { // some link of the server is fine
			continue
		}
		var mine []float64
		for _, l := range slowBy[k.transport] {
			if serverOf[l.Src] == k.server || serverOf[l.Dst] == k.server {
				explained[linkID(l.Src, l.Dst, l.Transport)] = true
				mine = append(mine, l.BandwidthGBps/l.PeerMedianGBps)
			}
		}
		if len(mine) == 0 {
			continue
		}
		sort.Float64s(mine)
		frac := stats.MedianSorted(mine)
		host := ""
		if k.server < len(hosts) {
			host = hosts[k.server]
		}
		what := fmt.Sprintf("all %d of its %s links to other servers are slow", len(rs), k.transport)
		if shared {
			what = fmt.Sprintf("every slow %s link (%d) has an end on it, while its other links and the %s links elsewhere are fine", k.transport, len(mine), k.transport)
			if rank >= 0 {
				what += fmt.Sprintf("; they all run to or from rank %d: its NIC", rank)
			}
		}
		out = append(out, SlowServer{Server: k.server, Host: host, Transport: k.transport, Fraction: frac,
			Evidence: fmt.Sprintf("server %d (%s) %s at %.0f%% of its peers' bandwidth: %s",
				k.server, host, k.transport, 100*frac, what)})
	}
	// Built from a map: equal fractions are ordered by server and transport, so the
	// report is the same from run to run.
	slices.SortFunc(out, func(a, b SlowServer) int {
		return cmp.Or(cmp.Compare(a.Fraction, b.Fraction), cmp.Compare(a.Server, b.Server), strings.Compare(a.Transport, b.Transport))
	})
	return out, explained
}

// serverTransport is one server's links of one transport.
type serverTransport struct {
	server    int
	transport string
}

// interServerRatios are the bandwidth ratios of the links between servers that each
// server's links of a transport touch, and the transports with some fine link
// (a ratio of fraction or more) between servers.
func interServerRatios(links []analysis.Link, ratios map[analysis.LinkID]float64, serverOf map[int]int, fraction float64) (map[serverTransport][]float64, map[string]bool) {
	touching := map[serverTransport][]float64{}
	healthy := map[string]bool{} // a transport with some fine link between servers
	for _, l := range links {
		r, ok := ratios[linkID(l.Src, l.Dst, l.Transport)]
		ns, okS := serverOf[l.Src]
		nd, okD := serverOf[l.Dst]
		if !ok || !okS || !okD || ns == nd {
			continue
		}
		touching[serverTransport{ns, l.Transport}] = append(touching[serverTransport{ns, l.Transport}], r)
		touching[serverTransport{nd, l.Transport}] = append(touching[serverTransport{nd, l.Transport}], r)
		healthy[l.Transport] = healthy[l.Transport] || r >= fraction
	}
	return touching, healthy
}

// commonSlowServer finds, per transport with two or more slow links, the one server
// every slow link touches, if there is one, and the rank all of them share (-1: none).
func commonSlowServer(slowBy map[string][]SlowLink, serverOf map[int]int) map[serverTransport]int {
	common := map[serverTransport]int{} // → the rank all of them share, or -1
	for transport, ls := range slowBy {
		if len(ls) < 2 {
			continue
		}
		servers := map[int]int{}
		ranks := map[int]int{}
		for _, l := range ls {
			servers[serverOf[l.Src]]++
			servers[serverOf[l.Dst]]++
			ranks[l.Src]++
			ranks[l.Dst]++
		}
		var all []int
		for n, c := range servers {
			if c == len(ls) {
				all = append(all, n)
			}
		}
		if len(all) != 1 {
			continue
		}
		rank := -1
		for r, c := range ranks {
			if c == len(ls) {
				rank = r
			}
		}
		common[serverTransport{all[0], transport}] = rank
	}
	return common
}

// fabricBelowPeak holds the inter-server links against the hardware when no server
// has a healthy peer to be compared with (two servers, or every server's NICs slow
// alike: the peer detector sees every link alike). The run's own calibration of the
// transport (costmodel.Calibrate: α and bandwidth fitted on its transfers, so latency
// is taken off) is compared with the peak; a fitted bandwidth below Fraction of it,
// on transfers that reach the bandwidth-bound sizes (the largest at least n½ = α·BW)
// and a fit whose error leaves it there, says the NICs or the fabric are slow
// everywhere. The result is one SlowServer with Server −1: the data cannot say whose
// NIC it is.
//
// Only against a product the profile names: an assumed one's peak (A2's, for a
// profile that does not say) may not be this cluster's.
func fabricBelowPeak(c analysis.Communication, links func() []costmodel.LinkFit, th SlowLinkThresholds) []SlowServer {
	if c.Hardware.Assumed {
		return nil
	}
	servers := map[int]bool{}
	crosses := map[string]bool{} // transports with links between servers
	for _, l := range c.Links {
		ns, okS := c.ServerOf[l.Src]
		nd, okD := c.ServerOf[l.Dst]
		switch {
		case okS && okD && ns != nd:
			crosses[l.Transport] = true
			servers[ns], servers[nd] = true, true
		case (!okS || !okD) && l.Transport == "RDMA":
			// Ranks known only from summaries (msprof-analyze's output) have no
			// server; RDMA only ever runs between servers.
			crosses[l.Transport] = true
		}
	}
	if len(crosses) == 0 {
		return nil
	}
	var out []SlowServer
	for _, f := range links() {
		peak, ok := c.Hardware.Peak(f.Transport)
		if !crosses[f.Transport] || !ok || peak <= 0 || f.Confidence == "none" || f.BWGBps <= 0 || f.Points < 2 {
			continue
		}
		nHalf := f.AlphaUs * f.BWGBps * 1e3 // µs × GB/s = 1e3 bytes
		upper := f.BWGBps
		if !math.IsNaN(f.BWSEGBps) {
			upper += 2 * f.BWSEGBps
		}
		if float64(f.MaxBytes) < nHalf || upper >= th.Fraction*peak {
			continue
		}
		out = append(out, SlowServer{Server: -1, Transport: f.Transport, Fraction: f.BWGBps / peak,
			Evidence: fmt.Sprintf("the %s links between the %s run at %.2f GB/s, %.0f%% of %s's %.1f GB/s peak, fitted on this run's transfers with their latency (α %.1f µs) taken off; "+
				"no server is healthy to compare with, so the data cannot say whose NICs: a slow NIC (with two servers every link has both ends' NICs in it), a port's speed or its PFC/ECN settings, or a congested fabric. Measure pairs of servers with hccl_test before tuning",
				f.Transport, serversPhrase(len(servers)), f.BWGBps, 100*f.BWGBps/peak, c.Hardware.Name, peak, f.AlphaUs)})
	}
	return out
}

// serversPhrase names the servers a fabric joins: "2 servers", or "servers" when the
// profiles do not say which server a rank is on.
func serversPhrase(n int) string {
	if n < 2 {
		return "servers"
	}
	return fmt.Sprintf("%d servers", n)
}
