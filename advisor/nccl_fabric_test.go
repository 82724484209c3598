package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
)

// Issue 37: h100-slow-ib-2node (node 1's InfiniBand at 15% of its bandwidth, 16 GPUs
// in one data-parallel ring) got bucket-size and accumulation advice and no finding,
// with --hardware H100 too: its one group crosses the nodes, no peer shows the slow
// NIC, and NCCL's kernels have no links. Held against NCCL's model of the DGX H100
// the user named, its AllReduces run at about a third of it: the fabric is named and
// nothing is tuned before it is fixed. Without the product (the trace says "NVIDIA
// H100 80GB HBM3", not how many NICs a node has) nothing is claimed.
func TestSlowFabricAgainstNCCLModel(t *testing.T) {
	sc, err := scenario.Builtin("h100-slow-ib-2node")
	require.NoError(t, err)
	h100, err := hardware.Lookup("H100")
	require.NoError(t, err)
	res, env := generateOn(t, sc, &h100)
	a := advisor.Advise(res, env, advisor.DefaultOptions)
	require.Len(t, a.Detections.SlowServers, 1, "%+v", a.Findings)
	s := a.Detections.SlowServers[0]
	assert.Equal(t, -1, s.Server, "the fabric: no server can be told apart")
	assert.InDelta(t, 0.35, s.Fraction, 0.1, "about a third of NCCL's model")
	f := byID(a, "slow_server")
	require.Len(t, f, 1)
	assert.Equal(t, advisor.High, f[0].Severity)
	assert.Contains(t, f[0].Title, "of NCCL's model of H100")
	assert.Contains(t, f[0].Evidence, "nccl-tests")
	assert.Empty(t, a.Recommendations, "no setting is tuned before the fabric is fixed")
	assertOnlyRealKnobs(t, a)

	// Healthy, the same job's AllReduces are within the model's reach: nothing named.
	healthy, err := scenario.Builtin("h100-dp16-2node")
	require.NoError(t, err)
	res, env = generateOn(t, healthy, &h100)
	assert.Empty(t, advisor.Advise(res, env, advisor.DefaultOptions).Detections.SlowServers)

	// Without the product named, the same slow job names no fabric.
	res, env = generateOn(t, sc, nil)
	assert.Empty(t, advisor.Advise(res, env, advisor.DefaultOptions).Detections.SlowServers)
}
