package analysis

import (
	"testing"

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

	peers := peerSamples{}
	for i, factor := range []float64{1, 1, 1, 0.5} {
		link := linkKey{i, i + 8, "RDMA"}
		peers.addTransfer(transfer{link: link, peer: peerKey{"g", "op", "RDMA", 800_000}, bytes: 800_000, timeNs: timeNs(800_000, factor), count: 1})
	}
	whole := peers.linkRatios(nil)[linkKey{3, 11, "RDMA"}]
	payload := peers.linkRatios(alpha)[linkKey{3, 11, "RDMA"}]
	assert.InDelta(t, 70.0/110, whole, 0.01, "with the latency in, the slow link looks a third slower")
	assert.InDelta(t, 0.5, payload, 0.01)
	assert.InDelta(t, 1, peers.linkRatios(alpha)[linkKey{0, 8, "RDMA"}], 1e-9)
}

// TestTransferLatencyNeedsTwoSizes: one size cannot separate latency from bandwidth,
// and the times are then compared whole.
func TestTransferLatencyNeedsTwoSizes(t *testing.T) {
	assert.Empty(t, transferLatencyNs([]TransferSample{{Transport: "HCCS", SizeBytes: 1 << 20, MedianNs: 80_000, Count: 10}}))
}
