package profile

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDoubleHash(t *testing.T) {
	// Test vectors of docs/formats.md §10.1; the first is a real group of imagenet-2rank-db.
	for name, want := range map[string]uint64{
		"90.91.105.46%enp189s0f0_60000_0_1736410538306028": 17148521525495523210,
		"group_name_1":     5862276097510448909,
		"hccl_world_group": 7415574198778220483,
	} {
		assert.Equal(t, want, DoubleHash(name), name)
	}
	h := strconv.FormatUint(DoubleHash("90.91.105.46%enp189s0f0_60000_0_1736410538306028"), 10)
	assert.Equal(t, "210", h[len(h)-3:], "the op-name group id is the hash's last 3 digits")
}

func TestOpNames(t *testing.T) {
	for name, want := range map[string]string{
		"hcom_allReduce__586_0_1":   "allreduce",
		"hcom_reduceScatter__1_2_1": "reducescatter",
		"hcom_broadcast__445_0":     "broadcast",
		"Default/AllReduce-op534_0": "allreduce",
	} {
		assert.Equal(t, want, OpType(name), name)
	}
	assert.Equal(t, "586", GroupIDFromName("hcom_allReduce__586_0_1"))
	assert.Equal(t, "", GroupIDFromName("Default/AllReduce-op534_0"))
	assert.True(t, IsP2P("hcom_batchSendRecv__1_0_1"))
	assert.True(t, IsP2P("hcom_receive__1_0_1"))
	assert.False(t, IsP2P("hcom_allReduce__586_0_1"))
	assert.True(t, isReceive("hcom_receive__1_0_1"))
	assert.False(t, isReceive("hcom_batchSendRecv__1_0_1"), "batchSendRecv is not counted as Bubble")
}

func TestSizesAndFactors(t *testing.T) {
	assert.Equal(t, 4, DataTypeSize("FP32"))
	assert.Equal(t, 2, DataTypeSize("BFP16"))
	assert.Equal(t, 1, DataTypeSize("INT8"))
	assert.Equal(t, 0, DataTypeSize("INVALID_TYPE"))
	assert.Equal(t, int64(4097000*4), CommOp{DataType: "FP32", Count: 4097000}.Bytes())
	assert.InDelta(t, 2*7.0/8, BusBandwidthFactor("allreduce", 8), 1e-12)
	assert.InDelta(t, 7.0/8, BusBandwidthFactor("allgather", 8), 1e-12)
	assert.InDelta(t, 3.0/4, BusBandwidthFactor("reducescatter", 4), 1e-12)
	assert.Equal(t, 1.0, BusBandwidthFactor("broadcast", 8))
	assert.Equal(t, 0.0, BusBandwidthFactor("allreduce", 1))
}
