package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
)

func checkMap(cs []Check) map[string]Check {
	out := map[string]Check{}
	for _, c := range cs {
		out[c.ID] = c
	}
	return out
}

// TestChecksAtTheirThresholds decides on the samples of one rank whose single op
// copies over SDMA while a kernel runs (analysis' TestCheckSamplesAtTheirLimits), and
// moves the thresholds across their values.
func TestChecksAtTheirThresholds(t *testing.T) {
	ex := func(step int, text string) analysis.CheckExample {
		return analysis.CheckExample{Ref: analysis.CheckRef{Rank: 0, Step: step, Op: "op", StartNs: 100_000}, Text: text, Set: true}
	}
	samples := analysis.CheckSamples{SDMAOps: 1, SmallSDMA: 1, SmallSDMAEx: ex(-1, "op moves 4.194 MB over SDMA"),
		ContendedBytes: 2_097_152, ContendedNs: 200_000, ContendedTransfers: 1, SDMATransfers: 2, TimedSDMATransfers: 2, ContentionEx: ex(-1, "slow copy"),
		Misaligned: 1, AlignmentEx: ex(-1, "op copies 2097252 bytes (100 mod 512)"),
		OverBuffer: 1, SizedOps: 1, BufferEx: ex(-1, "op carries 100.0 MiB against HCCL_BUFFSIZE=64: 2 rounds")}
	lim, th := analysis.DefaultLimits, defaultCheckThresholds
	got := checkMap(evaluateChecks(samples, nil, lim, th))

	assert.True(t, got["small_packets_sdma"].Fired, "1 of 1 ops small: over 20%")
	assert.Equal(t, [2]int{1, 1}, [2]int{got["small_packets_sdma"].Count, got["small_packets_sdma"].Total})
	assert.Equal(t, "ops moving < 16 MB over SDMA in over 20% of SDMA ops", got["small_packets_sdma"].Threshold)
	assert.False(t, got["small_packets_rdma"].Fired, "no RDMA")
	assert.False(t, got["small_packets_rdma"].Evaluated())
	c := got["bandwidth_contention"]
	assert.True(t, c.Fired, "2 MiB in 200 µs under the kernel = 10.5 GB/s < 14.4: %+v", c)
	assert.Equal(t, int64(100_000), c.Where.StartNs)
	assert.Contains(t, c.Threshold, "at < 14.4 GB/s (here 10.49 GB/s over 1 transfers")
	assert.Equal(t, 2, c.Total)
	a := got["byte_alignment"]
	assert.True(t, a.Fired)
	assert.Equal(t, "rank 0 step -: op copies 2097252 bytes (100 mod 512)", a.Evidence)
	assert.True(t, got["over_buffsize"].Fired)
	assert.Equal(t, analysis.CheckRef{Rank: -1, Step: -1}, got["rdma_retransmission"].Where)
	assert.False(t, got["rdma_retransmission"].Fired)

	// Copies from the profiler's Size Distribution (no task rows) are examined for
	// alignment, but their overlap with compute is not known: contention is not
	// evaluated rather than found clean.
	bins := analysis.CheckSamples{SDMATransfers: 112, Misaligned: 8, AlignmentEx: ex(50, "op copies 1937312 bytes")}
	fromBins := checkMap(evaluateChecks(bins, nil, lim, th))
	assert.True(t, fromBins["byte_alignment"].Fired)
	assert.False(t, fromBins["bandwidth_contention"].Evaluated())

	// At the other side of each threshold.
	th.SmallShare, th.ContentionGBps = 1, 10
	got = checkMap(evaluateChecks(samples, []analysis.Retransmission{{Src: 1, Dst: 9, Step: 3, Op: "x", TimeNs: 5e9}}, lim, th))
	assert.False(t, got["small_packets_sdma"].Fired, "100% of the ops is not over 100%")
	assert.False(t, got["bandwidth_contention"].Fired, "10.5 GB/s is not < 10")
	require.True(t, got["rdma_retransmission"].Fired)
	assert.Equal(t, "1→9 in x, step 3: 5.000 s", got["rdma_retransmission"].Evidence)
	assert.Equal(t, "an RDMA transfer longer than the retransmission limit (4 s)", got["rdma_retransmission"].Threshold)
	// The limit the check names is the configured one (retransmission_s), not a fixed 4 s.
	lim.RetransmissionNs = 2_500_000_000
	got = checkMap(evaluateChecks(analysis.CheckSamples{}, nil, lim, th))
	assert.Equal(t, "an RDMA transfer longer than the retransmission limit (2.5 s)", got["rdma_retransmission"].Threshold)
}
