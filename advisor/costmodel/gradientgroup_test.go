package costmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
)

// The gradients' group is the data-parallel one when the profile names it, in
// torch_npu's words (dp) or in Megatron's as Kineto records them
// (DATA_PARALLEL_GROUP), even when a tensor-parallel group moves more AllReduce
// bytes; without names, the group with the most. Megatron's names were taken for no
// dimension: a TP × DP job on NVIDIA GPUs priced its buckets on the TP group.
func TestGradientGroupNamed(t *testing.T) {
	bytesBy := map[string]int64{"tp": 8 << 30, "dp": 1 << 30}
	for _, tc := range []struct {
		name      string
		tp, dp    analysis.Group
		wantGroup string
	}{
		{"torch_npu", analysis.Group{Key: "tp", Kind: "tp"}, analysis.Group{Key: "dp", Kind: "dp"}, "dp"},
		{"megatron in kineto",
			analysis.Group{Key: "tp", Kind: "TENSOR_MODEL_PARALLEL_GROUP", Parallel: analysis.KindTP, ParallelSource: `profile ("TENSOR_MODEL_PARALLEL_GROUP")`},
			analysis.Group{Key: "dp", Kind: "DATA_PARALLEL_GROUP", Parallel: analysis.KindDP, ParallelSource: `profile ("DATA_PARALLEL_GROUP")`}, "dp"},
		{"unnamed, dp only inferred",
			analysis.Group{Key: "tp", Parallel: analysis.KindTP, ParallelSource: "inferred from its ranks"},
			analysis.Group{Key: "dp", Parallel: analysis.KindDP, ParallelSource: "inferred from its ranks"}, "tp"},
	} {
		res := &analysis.Result{}
		res.Communication.Groups = []analysis.Group{tc.tp, tc.dp}
		got, err := gradientGroup(res, bytesBy)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.wantGroup, got, tc.name)
	}
}
