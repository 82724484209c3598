package advisor

import (
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// latencyBoundFloorBytes is the mean transfer below which a link is latency-bound
// where its transport has no calibrated fit: HCCL's links take several µs to start a
// transfer and move 10 GB/s or more, so n½ = α·BW is above 50 KB on all of them.
const latencyBoundFloorBytes = 64 << 10

// latencyBoundLinks are the links whose mean transfer is smaller than their
// transport's n½ = α·BW, calibrated on the run (below latencyBoundFloorBytes where the
// transport has no fit): their time is mostly the fixed latency, so their bandwidth
// says nothing of the link (a link that moved 96 bytes in 1.7 µs runs at 0.06 GB/s
// over a healthy 18 GB/s HCCS). A link whose transfers are not counted is judged by
// its bytes, an upper bound of its mean transfer.
func latencyBoundLinks(links []analysis.Link, fits func() []costmodel.LinkFit) map[analysis.LinkID]bool {
	var nHalf map[string]float64
	var out map[analysis.LinkID]bool
	for _, l := range links {
		mean := float64(l.Bytes)
		if l.Transfers > 0 {
			mean /= float64(l.Transfers)
		}
		if mean >= latencyBoundFloorBytes*256 { // above any n½ seen: no fit needed
			continue
		}
		if nHalf == nil {
			nHalf = map[string]float64{}
			for _, f := range fits() {
				if f.Confidence != "none" && f.AlphaUs > 0 && f.BWGBps > 0 {
					nHalf[f.Transport] = f.AlphaUs * f.BWGBps * 1e3 // µs × GB/s = 1e3 bytes
				}
			}
		}
		bound, ok := nHalf[l.Transport]
		if !ok {
			bound = latencyBoundFloorBytes
		}
		if mean < bound {
			if out == nil {
				out = map[analysis.LinkID]bool{}
			}
			out[linkID(l.Src, l.Dst, l.Transport)] = true
		}
	}
	return out
}
