package costmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis/hardware"
)

func TestNCCLModel(t *testing.T) {
	h100, err := hardware.Lookup("H100")
	require.NoError(t, err)
	// One node, 8 GPUs, 8 bytes: ring/LL, tuning.cc's 6.6 µs base + 14 steps × 0.6 µs.
	p, err := PriceOnProduct(h100, ProductQuery{Op: "allreduce", Bytes: 8, Servers: 1})
	require.NoError(t, err)
	assert.Equal(t, "ring/LL", p.Choice.Algo)
	assert.Equal(t, "NCCL", p.Choice.Library)
	assert.InDelta(t, 6.6+14*0.6, p.Cost.LatencyUs, 1e-9)
	assert.Len(t, p.Choice.CostUs, 6, "ring and tree × LL, LL128, Simple")
	// 8 GiB: ring/Simple at 18 × 20.6 GB/s of bus bandwidth, 8/14 of it algorithm
	// bandwidth; latency 8.4 + 14 × 3.4 µs.
	p, err = PriceOnProduct(h100, ProductQuery{Op: "allreduce", Bytes: 8 << 30, Servers: 1})
	require.NoError(t, err)
	assert.Equal(t, "ring/Simple", p.Choice.Algo)
	assert.InDelta(t, 8.4+14*3.4, p.Cost.LatencyUs, 1e-9)
	assert.InDelta(t, float64(8<<30)/(1000*18*20.6*8/14), p.Cost.BandwidthUs, 1e-6)
	assert.InDelta(t, 18*20.6, p.Cost.BusBwGBps, 1)
	// AllGather and ReduceScatter: ring only, the total bytes.
	p, err = PriceOnProduct(h100, ProductQuery{Op: "allgather", Bytes: 1 << 30, Servers: 2})
	require.NoError(t, err)
	assert.Len(t, p.Choice.CostUs, 3)
	assert.Equal(t, 16, p.Cost.Ranks)
	// A100 across 16 nodes: the nodes' eight HDR NICs (200 GB/s) bound the ring
	// below NVLink's 240; small AllReduces take the tree.
	a100, err := hardware.Lookup("A100")
	require.NoError(t, err)
	p, err = PriceOnProduct(a100, ProductQuery{Op: "allreduce", Bytes: 8, Servers: 16})
	require.NoError(t, err)
	assert.Equal(t, "tree/LL", p.Choice.Algo)
	assert.InDelta(t, 6.8+2*(7*0.6+4*5.0), p.Cost.LatencyUs, 1e-9)
	p, err = PriceOnProduct(a100, ProductQuery{Op: "allreduce", Bytes: 8 << 30, Servers: 16})
	require.NoError(t, err)
	assert.Equal(t, "ring/Simple", p.Choice.Algo)
	assert.InDelta(t, 194.3, p.Cost.BusBwGBps, 0.1, "200 GB/s less the ring's 2.5 ms latency (254 steps, 1.8 ms × the 1.4 plateau)")

	nv, err := hardware.Lookup("NVIDIA")
	require.NoError(t, err)
	_, err = PriceOnProduct(nv, ProductQuery{Op: "allreduce", Bytes: 8, Servers: 1})
	assert.ErrorContains(t, err, "H100 or A100")
	_, err = PriceOnProduct(h100, ProductQuery{Op: "alltoall", Bytes: 8, Servers: 1})
	assert.ErrorContains(t, err, "AlltoAll")
}
