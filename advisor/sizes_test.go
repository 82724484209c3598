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
	run := factsOf(Env{"HCCL_BUFFSIZE": "400"}, "", analysis.DefaultLimits)
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
