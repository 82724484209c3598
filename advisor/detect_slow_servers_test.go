package advisor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
)

// Servers whose every link runs at the same fraction come out in the same order every
// run (by server), although they are gathered in a map.
func TestSlowServersOrderIsStable(t *testing.T) {
	const servers, slowOnes = 12, 10 // one rank a server; servers 0..9 slow, 10 and 11 fine
	serverOf := map[int]int{}
	hosts := make([]string, servers)
	for s := range servers {
		serverOf[s] = s
	}
	var links []analysis.Link
	var slow []SlowLink
	ratios := map[analysis.LinkID]float64{}
	for src := range servers {
		for dst := range servers {
			if src == dst {
				continue
			}
			r := 1.0
			if src < slowOnes || dst < slowOnes {
				r = 0.3
				slow = append(slow, SlowLink{Src: src, Dst: dst, Transport: "RDMA", BandwidthGBps: 3, PeerMedianGBps: 10})
			}
			links = append(links, analysis.Link{Src: src, Dst: dst, Transport: "RDMA"})
			ratios[analysis.LinkID{Src: src, Dst: dst, Transport: "RDMA"}] = r
		}
	}
	for range 30 {
		got, _ := slowServers(links, slow, ratios, serverOf, hosts, SlowLinkThresholds{Fraction: 0.5})
		require.Len(t, got, slowOnes)
		for i, s := range got {
			require.Equal(t, i, s.Server)
			require.InDelta(t, 0.3, s.Fraction, 1e-9)
		}
	}
}
