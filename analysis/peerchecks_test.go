package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

func checkMap(cs []Check) map[string]Check {
	out := map[string]Check{}
	for _, c := range cs {
		out[c.ID] = c
	}
	return out
}

// TestPeerChecksAtTheirThresholds builds one rank whose single op copies over SDMA
// while a kernel runs, and moves the thresholds across its values.
func TestPeerChecksAtTheirThresholds(t *testing.T) {
	op := profile.CommOp{Name: "hcom_allReduce__1_0_1", Type: "allreduce", Group: "g", GroupRow: "row", Interval: iv(0, 1_000_000),
		DataType: "FP32", Count: 100 << 20 / 4} // 100 MiB
	task := func(start, end, size int64) profile.CommTask {
		return profile.CommTask{Plane: 0, GroupRow: "row", Name: "Memcpy", Interval: iv(start, end), SrcRank: 0, DstRank: 1,
			TransportType: "SDMA", LinkType: "HCCS", SizeBytes: size}
	}
	r := &profile.Rank{Rank: 0, HasTimeline: true,
		// The first copy (2 MiB) runs under the kernel at 10.5 GB/s, the second alone;
		// the second's size is not a multiple of 512.
		Metadata: profile.Metadata{Env: map[string]string{"HCCL_BUFFSIZE": "64"}},
		Timeline: profile.Timeline{
			CommOps:   []profile.CommOp{op},
			Compute:   []profile.Interval{iv(0, 400_000)},
			CommTasks: []profile.CommTask{task(100_000, 300_000, 2_097_152), task(500_000, 700_000, 2_097_252)},
		},
	}
	ops := []OpStat{{Rank: 0, Step: -1, Name: op.Name, Type: "allreduce", Bytes: op.Bytes(),
		Transports: map[string]TransportUse{"SDMA": {Bytes: 4_194_404}, "HCCS": {Bytes: 4_194_404}}}}
	th := DefaultCheckThresholds
	got := checkMap(evaluateChecks([]rankChecks{rankCheckSamples(r, indexRank(r), ops, th)}, nil, th, DefaultThresholds.RetransmissionNs))

	assert.True(t, got["small_packets_sdma"].Fired, "4 MB < 16 MB in 1 of 1 ops")
	assert.Equal(t, [2]int{1, 1}, [2]int{got["small_packets_sdma"].Count, got["small_packets_sdma"].Total})
	assert.False(t, got["small_packets_rdma"].Fired, "no RDMA")
	c := got["bandwidth_contention"]
	assert.True(t, c.Fired, "2 MiB in 200 µs under the kernel = 10.5 GB/s < 14.4: %+v", c)
	assert.Equal(t, 1, c.Count)
	assert.Equal(t, int64(100_000), c.Where.StartNs)
	a := got["byte_alignment"]
	assert.True(t, a.Fired)
	assert.Equal(t, [2]int{1, 2}, [2]int{a.Count, a.Total})
	assert.Contains(t, a.Evidence, "2097252 bytes (100 mod 512)")
	b := got["over_buffsize"]
	assert.True(t, b.Fired, "100 MiB > HCCL_BUFFSIZE=64")
	assert.Contains(t, b.Evidence, "HCCL_BUFFSIZE=64: 2 rounds")
	assert.False(t, got["rdma_retransmission"].Fired)

	// At the other side of each threshold.
	th.SmallSDMABytes = 4_000_000
	th.ContentionGBps = 10
	th.AlignmentBytes = 4
	r.Metadata.Env["HCCL_BUFFSIZE"] = "100"
	got = checkMap(evaluateChecks([]rankChecks{rankCheckSamples(r, indexRank(r), ops, th)}, []Retransmission{{Src: 1, Dst: 9, Step: 3, Op: "x", TimeNs: 5e9}}, th, DefaultThresholds.RetransmissionNs))
	assert.False(t, got["small_packets_sdma"].Fired, "4.19 MB is not < 4 MB")
	assert.False(t, got["bandwidth_contention"].Fired, "10.5 GB/s is not < 10")
	assert.False(t, got["byte_alignment"].Fired, "both sizes are multiples of 4")
	assert.False(t, got["over_buffsize"].Fired, "100 MiB is not above 100 MiB")
	require.True(t, got["rdma_retransmission"].Fired)
	assert.Equal(t, "1→9 in x, step 3: 5.000 s", got["rdma_retransmission"].Evidence)
	assert.Equal(t, "an RDMA transfer longer than the retransmission limit (4 s)", got["rdma_retransmission"].Threshold)
	// The limit the check names is the configured one (retransmission_s), not a fixed 4 s.
	got = checkMap(evaluateChecks(nil, nil, th, 2_500_000_000))
	assert.Equal(t, "an RDMA transfer longer than the retransmission limit (2.5 s)", got["rdma_retransmission"].Threshold)
}
