package analysis

import (
	"testing"
	"unique"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinkRatioTakesLatencyOff: four links move 800 KB per transfer over a 20 GB/s
// transport with 30 µs of latency; one runs at half the bandwidth. Its time is 70 µs
// against 110 µs (ratio 0.64 with the latency in); with the latency fitted from two
// sizes and taken off, its bandwidth is half its peers'.
func TestLinkRatioTakesLatencyOff(t *testing.T) {
	const alphaNs, gbPerS = 30_000.0, 20.0
	timeNs := func(bytes int64, factor float64) int64 { return int64(alphaNs + float64(bytes)/(gbPerS*factor)) }
	samples := []TransferSample{
		{Transport: "RDMA", SizeBytes: 200_000, MedianNs: float64(timeNs(200_000, 1)), Count: 8},
		{Transport: "RDMA", SizeBytes: 800_000, MedianNs: float64(timeNs(800_000, 1)), Count: 8},
		{Transport: "RDMA", SizeBytes: 800_000, MedianNs: 1, Count: 8, Reduce: true}, // reductions are left out of the fit
	}
	alpha := transferLatencyNs(samples)
	require.Contains(t, alpha, "RDMA")
	assert.InDelta(t, alphaNs, alpha["RDMA"], 1)

	var rank rankComm
	for i, factor := range []float64{1, 1, 1, 0.5} {
		rank.transfers = append(rank.transfers, transfer{src: int32(i), dst: int32(i + 8), peer: unique.Make(peerKey{"g", "op", "RDMA", 800_000}), bytes: 800_000, timeNs: timeNs(800_000, factor), count: 1})
	}
	peers := groupPeers([]rankComm{rank})
	whole := peers.linkRatios(nil)[LinkID{3, 11, "RDMA"}]
	payload := peers.linkRatios(alpha)[LinkID{3, 11, "RDMA"}]
	assert.InDelta(t, 70.0/110, whole, 0.01, "with the latency in, the slow link looks a third slower")
	assert.InDelta(t, 0.5, payload, 0.01)
	assert.InDelta(t, 1, peers.linkRatios(alpha)[LinkID{0, 8, "RDMA"}], 1e-9)
}

// TestTransferLatencyNeedsTwoSizes: one size cannot separate latency from bandwidth,
// and the times are then compared whole.
func TestTransferLatencyNeedsTwoSizes(t *testing.T) {
	assert.Empty(t, transferLatencyNs([]TransferSample{{Transport: "HCCS", SizeBytes: 1 << 20, MedianNs: 80_000, Count: 10}}))
}

// TestGroupPeers: transfers from several ranks are grouped by peer key, the groups in
// key order and each group's transfers in the ranks' order (the order the link
// ratios' float sums take).
func TestGroupPeers(t *testing.T) {
	key := func(op, transport string, bytes int64) unique.Handle[peerKey] {
		return unique.Make(peerKey{"g", op, transport, bytes})
	}
	tr := func(src int32, k unique.Handle[peerKey]) transfer {
		return transfer{src: src, dst: src + 1, peer: k, bytes: 1, timeNs: 1, count: 1}
	}
	b, a1, a2 := key("b", "HCCS", 8), key("a", "RDMA", 16), key("a", "HCCS", 16)
	ranks := []rankComm{
		{transfers: []transfer{tr(0, b), tr(0, a1), tr(1, a2)}},
		{},
		{transfers: []transfer{tr(2, a1), tr(2, b)}},
	}
	g := groupPeers(ranks)
	require.Equal(t, []peerKey{a2.Value(), a1.Value(), b.Value()}, g.keys)
	require.Equal(t, []int{0, 1, 3, 5}, g.starts)
	var srcs []int32
	for _, m := range g.members {
		srcs = append(srcs, g.transfer(m).src)
	}
	assert.Equal(t, []int32{1, 0, 2, 0, 2}, srcs)
	assert.Equal(t, transferRef{2, 1}, g.members[4])
	assert.Equal(t, linkKey{2, 3, "HCCS"}, g.transfer(g.members[4]).link())
	assert.Empty(t, groupPeers(nil).members)
}

// TestTransferIsCompact: every rank's transfers are kept until the cluster's figures
// are made (a 4096-rank cluster keeps about 540,000), so a transfer must stay small:
// three strings in it made transfers half of what such a cluster kept.
func TestTransferIsCompact(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(transfer{}), uintptr(40))
}
