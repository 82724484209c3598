package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// TestWhatIfSizesReadMBAsHCCL: a size given to whatif in MB is the one HCCL means by
// the same number (HCCL_BUFFSIZE=400 is 400 MiB, bucket_cap_mb=25 is 25 MiB); whatif
// read "400MB" as 400·10⁶ bytes, 4.6% less than the run's own HCCL_BUFFSIZE=400.
func TestWhatIfSizesReadMBAsHCCL(t *testing.T) {
	run := FactsOf(Env{"HCCL_BUFFSIZE": "400"}, "", DefaultBuffsizeBytes)
	for _, in := range []string{"buffsize=400MB", "buffsize=400MiB", "buffsize=400 mb"} {
		set, err := costmodel.ParseSetting(in)
		require.NoError(t, err, in)
		assert.Equal(t, float64(run.BuffsizeBytes), set.Value, in)
	}
	set, err := costmodel.ParseSetting("bucket=25MB")
	require.NoError(t, err)
	assert.Equal(t, float64(25<<20), set.Value, "bucket_cap_mb=25")
	set, err = costmodel.ParseSetting("bucket=1GB")
	require.NoError(t, err)
	assert.Equal(t, float64(1<<30), set.Value, "GB is GiB, as MB is MiB")
}

// The retransmission finding names the limit the transfer exceeded, as configured
// (retransmission_s), not a fixed 4 s.
func TestRetransmissionFindingNamesTheLimit(t *testing.T) {
	c := analysis.Communication{Retransmissions: []analysis.Retransmission{{Src: 1, Dst: 2, Step: 3, Op: "x", TimeNs: 9e8, LimitNs: 5e8}}}
	fs := slowFindings(c, DefaultStakeThresholds)
	require.Len(t, fs, 1)
	assert.Equal(t, "1 RDMA transfer(s) took over 0.5 s: packet loss and retransmission", fs[0].Title)
}
