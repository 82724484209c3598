package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// TestLatencyBoundLinks: a link is latency-bound when its mean transfer is below its
// transport's n½ = α·BW (10 µs × 20 GB/s = 200 kB here), or below 64 KiB where the
// transport has no usable fit; a link whose transfers are not counted is judged by
// its bytes.
func TestLatencyBoundLinks(t *testing.T) {
	fits := func() []costmodel.LinkFit {
		return []costmodel.LinkFit{{Transport: "HCCS", AlphaUs: 10, BWGBps: 20, Confidence: "high"},
			{Transport: "PCIE", AlphaUs: 10, BWGBps: 20, Confidence: "none"}}
	}
	links := []analysis.Link{
		{Src: 0, Dst: 1, Transport: "HCCS", Bytes: 10 * 150_000, Transfers: 10}, // 150 kB each: bound
		{Src: 1, Dst: 0, Transport: "HCCS", Bytes: 10 * 250_000, Transfers: 10}, // 250 kB each: not
		{Src: 0, Dst: 2, Transport: "RDMA", Bytes: 10 * 60_000, Transfers: 10},  // no fit, below 64 KiB
		{Src: 2, Dst: 0, Transport: "RDMA", Bytes: 10 * 70_000, Transfers: 10},  // no fit, above
		{Src: 0, Dst: 3, Transport: "PCIE", Bytes: 96},                          // fit of no confidence, uncounted: its bytes
		{Src: 3, Dst: 0, Transport: "HCCS", Bytes: 1 << 30, Transfers: 10},      // far above any n½
	}
	got := latencyBoundLinks(links, fits)
	assert.Equal(t, map[analysis.LinkID]bool{{Src: 0, Dst: 1, Transport: "HCCS"}: true, {Src: 0, Dst: 2, Transport: "RDMA"}: true,
		{Src: 0, Dst: 3, Transport: "PCIE"}: true}, got)
	called := false
	assert.Nil(t, latencyBoundLinks(links[5:], func() []costmodel.LinkFit { called = true; return nil }))
	assert.False(t, called, "no calibration when every link is far above any n½")
}
