package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/analysis"
)

// groupOps makes each group's members run `per` AllReduces of 64 MiB in each of
// `steps` steps as NCCL kernels: transfer(g, step, i) ns of transfer, the first member
// arriving 1 ms before the last.
func groupOps(groups []analysis.Group, steps, per int, transfer func(g, step, i int) int64) []analysis.OpStat {
	var ops []analysis.OpStat
	for gi, g := range groups {
		for s := 1; s <= steps; s++ {
			for i := 0; i < per; i++ {
				t := transfer(gi, s, i)
				for m, r := range g.Ranks {
					wait := int64(0)
					if m == 0 {
						wait = 1_000_000
					}
					ops = append(ops, analysis.OpStat{Rank: r, Step: s, Group: g.Key, Name: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
						Type: "allreduce", Bytes: 64 << 20, StartNs: int64(s)*1e9 + int64(i)*1e7, ElapseNs: t + wait,
						CrossWaitNs: wait, CrossWaitKnown: true, MovingSource: analysis.MovingCrossRank})
				}
			}
		}
	}
	return ops
}

func TestSlowGroups(t *testing.T) {
	serverOf := map[int]int{}
	for r := 0; r < 32; r++ {
		serverOf[r] = r / 8
	}
	hosts := []string{"node0", "node1", "node2", "node3"}
	dp := func(ranks ...int) analysis.Group {
		return analysis.Group{Key: "dp" + rankList(ranks), Ranks: ranks, Parallel: analysis.KindDP}
	}
	tp := func(node int) analysis.Group {
		g := analysis.Group{Key: "tp" + hosts[node], Parallel: analysis.KindSP}
		for r := node * 8; r < node*8+8; r++ {
			g.Ranks = append(g.Ranks, r)
		}
		return g
	}
	rails := []analysis.Group{dp(0, 8), dp(1, 9), dp(2, 10), dp(3, 11)}
	// ±3% of noise per collective, none of it a link's.
	noise := func(g, s, i int) int64 { return 10_000_000 * int64(97+(g*7+s*3+i*5)%7) / 100 }
	th := defaultSlowLinkThresholds

	t.Run("one rail slow", func(t *testing.T) {
		ops := groupOps(rails, 3, 6, func(g, s, i int) int64 {
			if g == 1 {
				return 3 * noise(g, s, i) / 2 // its peers take 2/3 of its time
			}
			return noise(g, s, i)
		})
		links, servers, _ := slowGroupPlaces(slowGroups(ops, rails, th), serverOf, hosts)
		assert.Empty(t, servers)
		if assert.Len(t, links, 1) {
			assert.Equal(t, [2]int{1, 9}, [2]int{links[0].Src, links[0].Dst})
			assert.Equal(t, "NET", links[0].Transport)
			assert.InDelta(t, 0.67, links[0].BandwidthGBps/links[0].PeerMedianGBps, 0.03)
		}
	})
	t.Run("noise alone", func(t *testing.T) {
		ops := groupOps(rails, 3, 6, noise)
		assert.Empty(t, slowGroups(ops, rails, th))
	})
	t.Run("slower by less than the line", func(t *testing.T) {
		ops := groupOps(rails, 3, 6, func(g, s, i int) int64 {
			if g == 2 {
				return 11 * noise(g, s, i) / 10
			}
			return noise(g, s, i)
		})
		assert.Empty(t, slowGroups(ops, rails, th))
	})
	t.Run("slow in one step of three", func(t *testing.T) {
		ops := groupOps(rails, 3, 6, func(g, s, i int) int64 {
			if g == 1 && s == 2 {
				return 3 * noise(g, s, i)
			}
			return noise(g, s, i)
		})
		assert.Empty(t, slowGroups(ops, rails, th), "a burst, not a link")
	})
	t.Run("a member not profiled", func(t *testing.T) {
		ops := groupOps(rails, 3, 6, func(g, s, i int) int64 {
			if g == 1 {
				return 2 * noise(g, s, i)
			}
			return noise(g, s, i)
		})
		var kept []analysis.OpStat
		for _, o := range ops {
			if o.Rank != 9 {
				kept = append(kept, o)
			}
		}
		assert.Empty(t, slowGroups(kept, rails, th), "rank 9's kernels are missing: the fastest member is unknown")
	})
	t.Run("HCCL ops are not compared", func(t *testing.T) {
		ops := groupOps(rails, 3, 6, func(g, s, i int) int64 {
			if g == 1 {
				return 2 * noise(g, s, i)
			}
			return noise(g, s, i)
		})
		for i := range ops {
			ops[i].MovingSource = "planes"
		}
		assert.Empty(t, slowGroups(ops, rails, th))
	})
	t.Run("one node's TP group of two", func(t *testing.T) {
		tps := []analysis.Group{tp(0), tp(1)}
		ops := groupOps(tps, 2, 8, func(g, s, i int) int64 {
			if g == 1 {
				return 2 * noise(g, s, i)
			}
			return noise(g, s, i)
		})
		links, servers, _ := slowGroupPlaces(slowGroups(ops, tps, th), serverOf, hosts)
		assert.Empty(t, links)
		if assert.Len(t, servers, 1) {
			assert.Equal(t, 1, servers[0].Server)
			assert.Equal(t, "node1", servers[0].Host)
			assert.Equal(t, "NVLINK", servers[0].Transport)
		}
	})
	t.Run("a ring over four nodes is named as its group", func(t *testing.T) {
		rings := []analysis.Group{dp(0, 8, 16, 24), dp(1, 9, 17, 25), dp(2, 10, 18, 26)}
		ops := groupOps(rings, 3, 6, func(g, s, i int) int64 {
			if g == 0 {
				return 2 * noise(g, s, i)
			}
			return noise(g, s, i)
		})
		sg := slowGroups(ops, rings, th)
		assert.Len(t, sg, 1, "the group is slow")
		links, servers, groups := slowGroupPlaces(sg, serverOf, hosts)
		assert.Empty(t, links, "any of its ring's links could be the one")
		assert.Empty(t, servers)
		if assert.Len(t, groups, 1) {
			assert.Equal(t, []int{0, 8, 16, 24}, groups[0].Ranks)
			assert.Equal(t, []int{0, 1, 2, 3}, groups[0].Servers)
			assert.InDelta(t, 0.5, groups[0].Fraction, 0.05)
		}
	})
}
