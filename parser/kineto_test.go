package parser

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// miniKineto is a small trace in the shape PyTorch ≥ 2.4 writes with NCCL ≥ 2.19
// (ncclDevKernel_ names): distributedInfo with pg_config, two steps, a compute kernel
// with its launch and ac2g flow, memcpy/memset (not kernels), a GPU annotation, an
// AllReduce and an AllGather whose kernels carry the collective's arguments, and a
// SendRecv kernel that does not (its record_param_comms CPU op, matched by External
// id, does). Metadata events come last, as Kineto writes them.
const miniKineto = `{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912, "computeMajor": 9}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 4, "pg_count": 2,
    "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 4, "ranks": [0, 1, 2, 3]}],
    "nccl_version": "2.21.5"},
  "record_shapes": 1,
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 700, "tid": 700, "ts": 5000000000000.000, "dur": 1000.000, "args": {"External id": 1, "Record function id": 1, "Ev Idx": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 700, "tid": 700, "ts": 5000000000010.5, "dur": 20, "args": {"External id": 2, "Sequence number": 5, "Fwd thread id": 0, "Record function id": 0, "Ev Idx": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 700, "tid": 700, "ts": 5000000000012.5, "dur": 4.5, "args": {"External id": 2, "cbid": 211, "correlation": 501}},
  {"ph": "s", "id": 501, "pid": 700, "tid": 700, "ts": 5000000000012.5, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", "pid": 0, "tid": 7, "ts": 5000000000050.001, "dur": 100.25, "args": {"External id": 2, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 501, "registers per thread": 16, "shared memory": 0, "blocks per SM": 1.5, "warps per SM": 6.0, "grid": [132, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 9}},
  {"ph": "f", "id": 501, "pid": 0, "tid": 7, "ts": 5000000000050.001, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 5000000000160.000, "dur": 30, "args": {"External id": 3, "device": 0, "context": 1, "stream": 7, "correlation": 502, "bytes": 4096, "memory bandwidth (GB/s)": 0.13}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 5000000000195.000, "dur": 2, "args": {"External id": 4, "device": 0, "context": 1, "stream": 7, "correlation": 503, "bytes": 64, "memory bandwidth (GB/s)": 0.03}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 700, "tid": 700, "ts": 5000000000090.0, "dur": 30, "args": {"External id": 10, "Record function id": 0, "Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": 1048576, "Out msg nelems": 1048576, "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Group size": 4, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3]", "Ev Idx": 2}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 700, "tid": 700, "ts": 5000000000091.0, "dur": 25, "args": {"External id": 11, "Record function id": 0, "Ev Idx": 3}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "nccl:all_reduce", "pid": 0, "tid": 20, "ts": 5000000000100.000, "dur": 201, "args": {"External id": 11}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": 5000000000100.250, "dur": 200.5, "args": {"External id": 10, "queued": 0, "device": 0, "context": 1, "stream": 20, "correlation": 510, "registers per thread": 96, "shared memory": 0, "blocks per SM": 0.1, "warps per SM": 1.0, "grid": [16, 1, 1], "block": [640, 1, 1], "est. achieved occupancy %": 0, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 4, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3]"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": 5000000000700, "dur": 50, "args": {"External id": 20, "device": 0, "stream": 20, "correlation": 520, "Collective name": "_allgather_base", "In msg nelems": 512, "Out msg nelems": 1024, "Group size": 2, "dtype": "Float", "Process Group Name": "1", "Process Group Description": "tp", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 700, "tid": 700, "ts": 5000000000800.0, "dur": 10, "args": {"External id": 30, "Collective name": "send", "dtype": "Half", "In msg nelems": 256, "Out msg nelems": 256, "Group size": 2, "Process Group Name": "1", "Process Group Description": "tp", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 21, "ts": 5000000000990, "dur": 20, "args": {"External id": 30, "device": 0, "stream": 21, "correlation": 530}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 700, "tid": 700, "ts": 5000000001000.000, "dur": 500, "args": {"External id": 40}},
  {"ph": "X", "cat": "kernel", "name": "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)", "pid": 0, "tid": 7, "ts": 5000000001100, "dur": 300, "args": {"External id": 41, "stream": 7, "correlation": 541}},
  {"name": "process_name", "ph": "M", "ts": 5000000000000.000, "pid": 700, "tid": 0, "args": {"name": "python3"}},
  {"name": "process_labels", "ph": "M", "ts": 5000000000000.000, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"name": "thread_name", "ph": "M", "ts": 5000000000000.000, "pid": 0, "tid": 20, "args": {"name": "stream 20 "}},
  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 5000000002000.000}
  ],
  "traceName": "/tmp/trace.pt.trace.json",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000
}`

func TestParseKinetoMini(t *testing.T) {
	r, err := parseKineto(strings.NewReader(miniKineto), "mini.pt.trace.json")
	require.NoError(t, err)
	assert.Equal(t, 1, r.Rank)
	assert.Equal(t, 1, r.Info.RankID)
	assert.Equal(t, profile.FormatKineto, r.Format)
	assert.Equal(t, "mini.pt.trace.json", r.Dir)
	assert.Equal(t, []string{"mini.pt.trace.json"}, r.FilesUsed)
	assert.True(t, r.HasTimeline)
	assert.True(t, r.ClipToStepWindows)
	assert.Empty(t, r.Flows, "one clock: no flows needed")
	assert.Equal(t, []profile.StepMarker{
		{Step: 2, Interval: profile.Interval{StartNs: 5000000000000000, EndNs: 5000000001000000}},
		{Step: 3, Interval: profile.Interval{StartNs: 5000000001000000, EndNs: 5000000001500000}},
	}, r.Steps)
	// Two compute kernels (exact ns from the decimal text); memcpy, memset and the GPU
	// annotation are not kernels.
	assert.Equal(t, []profile.Interval{
		{StartNs: 5000000000050001, EndNs: 5000000000150251},
		{StartNs: 5000000001100000, EndNs: 5000000001400000},
	}, r.Compute)
	assert.Equal(t, []profile.CommOp{
		{Name: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", Type: "allreduce", Group: "0", Step: -1,
			Interval: profile.Interval{StartNs: 5000000000100250, EndNs: 5000000000300750}, DataType: "BF16", Count: 1048576, AlgType: "RING_LL"},
		{Name: "ncclDevKernel_AllGather_RING_LL", Type: "allgather", Group: "1", Step: -1,
			Interval: profile.Interval{StartNs: 5000000000700000, EndNs: 5000000000750000}, DataType: "FP32", Count: 1024, AlgType: "RING_LL"},
		{Name: "ncclDevKernel_SendRecv", Type: "send", Group: "1", Step: -1,
			Interval: profile.Interval{StartNs: 5000000000990000, EndNs: 5000000001010000}, DataType: "FP16", Count: 256},
	}, r.CommOps)
	assert.Equal(t, int64(1048576*2), r.CommOps[0].Bytes())
	assert.Equal(t, []profile.ParallelGroup{
		{Key: "0", Name: "default_pg", GroupRank: 1, GlobalRanks: []int{0, 1, 2, 3}, Size: 4, Source: "distributedInfo.pg_config"},
		{Key: "1", Name: "tp", GroupRank: 1, GlobalRanks: []int{0, 1}, Size: 2, Source: "process group args of the NCCL ops"},
	}, r.Metadata.ParallelGroups)
	assert.Equal(t, map[string]any{"backend": "nccl", "rank": 1.0, "world_size": 4.0, "pg_count": 2.0, "nccl_version": "2.21.5"},
		r.Metadata.DistributedArgs)
	assert.Empty(t, r.Problems)

	// The analysis: group sizes from the trace, busbw with nccl-tests' factors.
	r.Traits = formatTraits[r.Format] // as LoadRank gives every rank its format's traits
	res := analysis.Analyze(&profile.Cluster{Ranks: []*profile.Rank{r}}, analysis.Options{})
	// One rank of four: the NCCL kernels' exposed split, read from the ranks'
	// arrivals, needs every member of their groups, and the warning says so.
	require.Len(t, res.Warnings, 1, "%q", res.Warnings)
	assert.Contains(t, res.Warnings[0], "3 of 3 NCCL kernels (Kineto: no task rows) have no split into moving data and waiting")
	assert.Nil(t, res.Summary.ExposedTransferShare)
	require.Len(t, res.Ranks[0].Steps, 2)
	s := res.Ranks[0].Steps[0]
	assert.Equal(t, int64(1000000), s.StageNs, "the ProfilerStep window")
	assert.Equal(t, int64(100250), s.ComputingNs)
	assert.Equal(t, int64(200500+50000+10000), s.CommunicationNs, "the SendRecv kernel is clipped at the step's end")
	assert.Equal(t, int64(50001), s.OverlappedNs)
	byOp := map[string]analysis.Collective{}
	for _, c := range res.Collectives {
		byOp[c.Op] = c
	}
	assert.Equal(t, 4, byOp["allreduce"].GroupSize)
	assert.Equal(t, "default_pg", byOp["allreduce"].GroupName)
	assert.InDelta(t, float64(1048576*2)/200500*2*3/4, byOp["allreduce"].BusBwGBps, 1e-9)
	assert.Equal(t, 2, byOp["allgather"].GroupSize)
	assert.InDelta(t, 4096.0/50000/2, byOp["allgather"].BusBwGBps, 1e-12)
	assert.Equal(t, 2, byOp["send"].GroupSize)
}

// Older traces (NCCL ≤ 2.18 names): ncclKernel_ names, kernels without
// collective arguments, record_param_comms with "msg size" keys and no process
// group, distributedInfo without pg_config, ProfilerStep as a cpu_op; and
// older Kineto's capitalised "Kernel" and "Memcpy" categories.
const olderKineto = `{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#10", "pid": 9, "tid": 9, "ts": 100.0, "dur": 100.0, "args": {"External id": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 9, "tid": 9, "ts": 110.0, "dur": 5.0, "args": {"External id": 7, "Collective name": "reduce_scatter", "dtype": "Float", "In msg size": 4096, "Out msg size": 2048, "Group size": 2}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_ReduceScatter_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 13, "ts": 120.5, "dur": 10.25, "args": {"External id": 7, "stream": 13, "correlation": 77}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_TREE_LL128_Sum_half(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 13, "ts": 150, "dur": 10, "args": {"External id": 8, "stream": 13}},
 {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 100, "dur": 1},
 {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 100, "dur": 1}
 ]}`

func TestParseKinetoOlder(t *testing.T) {
	r, err := parseKineto(strings.NewReader(olderKineto), "old.json")
	require.NoError(t, err)
	assert.Equal(t, 0, r.Rank)
	assert.Equal(t, []profile.StepMarker{{Step: 10, Interval: profile.Interval{StartNs: 100000, EndNs: 200000}}}, r.Steps)
	assert.Equal(t, []profile.Interval{{StartNs: 100000, EndNs: 101000}}, r.Compute, "the Kernel, not the Memcpy")
	require.Len(t, r.CommOps, 2)
	assert.Equal(t, profile.CommOp{Name: "ncclKernel_ReduceScatter_RING_LL_Sum_float", Type: "reducescatter", Group: "world", Step: -1,
		Interval: profile.Interval{StartNs: 120500, EndNs: 130750}, DataType: "FP32", Count: 4096, AlgType: "RING_LL"}, r.CommOps[0])
	// No arguments anywhere: the type, algorithm and data type come from the name; the
	// size is unknown.
	assert.Equal(t, profile.CommOp{Name: "ncclKernel_AllReduce_TREE_LL128_Sum_half", Type: "allreduce", Group: "world", Step: -1,
		Interval: profile.Interval{StartNs: 150000, EndNs: 160000}, DataType: "FP16", AlgType: "TREE_LL128"}, r.CommOps[1])
	assert.Equal(t, []profile.ParallelGroup{{Key: "world", Name: "world", GroupRank: 0, GlobalRanks: []int{0, 1},
		Source: "distributedInfo.world_size (assumed: the ops name no process group)"}}, r.Metadata.ParallelGroups)
	res := analysis.Analyze(&profile.Cluster{Ranks: []*profile.Rank{r}}, analysis.Options{})
	require.Len(t, res.Collectives, 2)
	for _, c := range res.Collectives {
		assert.Equal(t, 2, c.GroupSize, c.Op)
	}
}

func TestParseKinetoVariants(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		rank        int
		steps, comp int
		ops         []string // op types
	}{
		{"bare event array, no distributedInfo", `[{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Broadcast_RING_LL(x)", "ts": 1, "dur": 1}]`,
			-1, 0, 0, []string{"broadcast"}},
		{"distributedInfo after the events, string numbers", `{"traceEvents": [], "distributedInfo": {"rank": "3", "world_size": "8"}}`,
			3, 0, 0, nil},
		// A marker written twice is kept for Rank.Normalize, which drops the second and
		// makes the rank incomplete (TestKinetoDamagedStepMarkers).
		{"duplicate step marker kept for Normalize to flag", `{"traceEvents": [
			{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 1, "dur": 5},
			{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "ts": 2, "dur": 1},
			{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#2", "ts": 2, "dur": 1},
			{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#x", "ts": 2, "dur": 1}]}`,
			-1, 2, 0, nil},
		{"escaped kernel names, string ts", `{"traceEvents": [
			{"ph": "X", "cat": "kernel", "name": "nccl\u0044evKernel_AllGather_RING_SIMPLE(a)", "ts": "7.5", "dur": "2"},
			{"ph": "X", "cat": "kernel", "name": "k\"1\"", "ts": 1, "dur": 1}]}`,
			-1, 0, 1, []string{"allgather"}},
		{"oldest NCCL names, Generic kernel", `{"traceEvents": [
			{"ph": "X", "cat": "kernel", "name": "ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)", "ts": 1, "dur": 1},
			{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "ts": 2, "dur": 1}]}`,
			-1, 0, 0, []string{"allreduce", "unknown"}},
		{"trailing comma and other phases", `{"traceEvents": [{"ph": "i", "name": "x", "ts": 1}, {"ph": "C", "name": "Memory", "ts": 1, "args": {"a": 1}},]}`,
			-1, 0, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseKineto(strings.NewReader(tc.in), "t.json")
			require.NoError(t, err)
			assert.Equal(t, tc.rank, r.Rank)
			assert.Len(t, r.Steps, tc.steps)
			assert.Len(t, r.Compute, tc.comp)
			var types []string
			for _, op := range r.CommOps {
				types = append(types, op.Type)
			}
			assert.Equal(t, tc.ops, types)
		})
	}
}

func TestNCCLKernelInfo(t *testing.T) {
	tests := []struct{ name, op, alg, dtype string }{
		{"ncclKernel_AllReduce_RING_LL_Sum_float", "allreduce", "RING_LL", "FP32"},
		{"ncclKernel_Broadcast_RING_LL_Sum_int8_t", "broadcast", "RING_LL", "INT8"},
		{"ncclKernel_AllGather_RING_LL_Sum_int8_t", "allgather", "RING_LL", "INT8"},
		{"ncclKernel_ReduceScatter_RING_SIMPLE_Sum___nv_bfloat16", "reducescatter", "RING_SIMPLE", "BF16"},
		{"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "sendrecv", "RING_SIMPLE", "INT8"},
		{"ncclKernel_AllReduce_COLLNET_DIRECT_SIMPLE_Sum_float", "allreduce", "COLLNET_DIRECT_SIMPLE", "FP32"},
		{"ncclKernel_Reduce_RING_LL_Sum_uint8_t", "reduce", "RING_LL", "UINT8"},
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "allreduce", "RING_LL", "FP32"},
		{"ncclDevKernel_AllReduce_Sum_bf16_TREE_LL128", "allreduce", "TREE_LL128", "BF16"},
		{"ncclDevKernel_AllReduce_Sum_f16_NVLS_TREE_SIMPLE", "allreduce", "NVLS_TREE_SIMPLE", "FP16"},
		{"ncclDevKernel_ReduceScatter_Sum_u32_PAT_SIMPLE", "reducescatter", "PAT_SIMPLE", "UINT32"},
		{"ncclDevKernel_AllGather_RING_LL", "allgather", "RING_LL", ""},
		{"ncclDevKernel_Broadcast_RING_LL", "broadcast", "RING_LL", ""},
		{"ncclDevKernel_SendRecv", "sendrecv", "", ""},
		{"ncclDevKernel_Generic", "", "", ""},
		{"ncclDevKernel_Generic_4", "", "", ""},
		{"ncclAllReduceRingLLKernel_sum_f32", "allreduce", "RING_LL", "FP32"},
		{"ncclBroadcastTreeLL128Kernel_copy_i8", "broadcast", "TREE_LL128", "INT8"},
		{"ncclSendRecvKernel_copy_i8", "sendrecv", "", "INT8"},
		{"ncclSomething", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op, alg, dt := ncclKernelInfo(tc.name)
			assert.Equal(t, []string{tc.op, tc.alg, tc.dtype}, []string{op, alg, dt})
		})
	}
}

func TestTorchCollectiveAndDataType(t *testing.T) {
	for in, want := range map[string]string{
		"allreduce": "allreduce", "allreduce_coalesced": "allreduce", "broadcast": "broadcast",
		"_allgather_base": "allgather", "allgather": "allgather", "allgather_into_tensor_coalesced": "allgather",
		"all_gather": "allgather", "reduce_scatter": "reducescatter", "_reduce_scatter_base": "reducescatter",
		"reduce_scatter_tensor_coalesced": "reducescatter", "all_to_all": "alltoall", "alltoall_base": "alltoall",
		"all_to_allv": "alltoallv", "send": "send", "recv": "receive", "recvAnySource": "receive",
		"barrier": "barrier", "gather": "gather", "scatter": "scatter", "reduce": "reduce", "": "",
	} {
		assert.Equal(t, want, torchCollectiveType(in), in)
	}
	for in, size := range map[string]int{
		"Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2, "Char": 1,
		"Byte": 1, "Bool": 1, "UInt16": 2, "UInt32": 4, "UInt64": 8, "Float8_e4m3fn": 1, "Float8_e5m2": 1, "ComplexFloat": 0,
	} {
		assert.Equal(t, size, profile.DataTypeSize(torchDataType(in)), in)
	}
}

func TestParseKinetoErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty file", ``, "t.json: byte 0: empty file"},
		{"not json", `hello`, "expected '[' or '{'"},
		{"object without events", `{"distributedInfo": {"rank": 0}}`, "without \"traceEvents\""},
		{"bad kernel ts", `{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "abc", "dur": 1}]}`, "t.json: byte 17: bad event: bad time value"},
		{"negative kernel dur", `{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}`, "bad event: bad dur -1"},
		{"bad step ts", `[{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "ts": [], "dur": 1}]`, "bad event"},
		{"malformed distributedInfo", `{"distributedInfo": {"rank": 0,, }, "traceEvents": []}`, "t.json: byte 20: distributedInfo:"},
		{"bad kernel args", `[{"ph": "X", "cat": "kernel", "name": "nccl", "ts": 1, "dur": 1, "args": {"a" 1}}]`, "bad event: expected ':'"},
		{"missing comma", `{"traceEvents": [{"ph": "M"} {"ph": "M"}]}`, "t.json: byte 29: expected ',' or ']'"},
		// Read as absent, or as member -1, with exit 0.
		{"negative world size", `{"distributedInfo": {"rank": 0, "world_size": -5}, "traceEvents": []}`, "distributedInfo: world_size: -5 is not a job size"},
		{"world size not a number", `{"distributedInfo": {"rank": 0, "world_size": "x"}, "traceEvents": []}`, "world_size: x is not a job size"},
		{"negative rank", `{"distributedInfo": {"rank": -5}, "traceEvents": []}`, "rank: -5 is not a rank"},
		{"pg_config not groups", `{"distributedInfo": {"rank": 0, "pg_config": "x"}, "traceEvents": []}`, "pg_config: neither a list"},
		{"pg_config member not a rank", `{"distributedInfo": {"rank": 0, "pg_config": [{"pg_name": "0", "ranks": [0, "x"]}]}, "traceEvents": []}`,
			`pg_config: group "0": x is not a rank`},
		{"pg_config member twice", `{"distributedInfo": {"rank": 0, "pg_config": [{"pg_name": "0", "ranks": [0, 0]}]}, "traceEvents": []}`,
			"rank 0 is listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseKineto(strings.NewReader(tc.in), "t.json")
			require.Error(t, err)
			require.NotNil(t, r)
			assert.Contains(t, err.Error(), tc.want)
			var se *SyntaxError
			assert.True(t, errors.As(err, &se), "a *SyntaxError naming the file")
		})
	}
}

// A trace cut anywhere gives an error naming the file and a partial rank holding what
// was read before the cut, never a panic. Cuts are made at every bracket and every
// 7th byte (each parse allocates the scanner's 4 MB buffer: all 9k cuts take 15 s).
func TestParseKinetoTruncatedAnywhere(t *testing.T) {
	full, err := parseKineto(strings.NewReader(miniKineto), "mini.json")
	require.NoError(t, err)
	for cut := 0; cut < len(miniKineto)-2; cut++ {
		if cut%7 != 0 && !strings.ContainsRune(`{}[]`, rune(miniKineto[cut])) {
			continue
		}
		r, err := parseKineto(strings.NewReader(miniKineto[:cut]), "mini.json")
		require.Error(t, err, "cut at %d", cut)
		assert.Contains(t, err.Error(), "mini.json", "cut at %d", cut)
		require.NotNil(t, r)
		assert.LessOrEqual(t, len(r.CommOps), len(full.CommOps))
		assert.LessOrEqual(t, len(r.Compute), len(full.Compute))
	}
}

func TestParseKinetoTruncatedPartial(t *testing.T) {
	// Cut inside the second-to-last kernel event: the steps and the first kernels are kept.
	cut := strings.Index(miniKineto, `"ProfilerStep#3"`) + 20
	r, err := parseKineto(strings.NewReader(miniKineto[:cut]), "cut.json")
	require.Error(t, err)
	var se *SyntaxError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, "cut.json", se.File)
	start := strings.LastIndex(miniKineto[:cut], "{")
	assert.Contains(t, err.Error(), fmt.Sprintf("byte %d: unexpected end of file inside the value that starts here: the file is truncated", start))
	assert.Contains(t, err.Error(), "(the trace is partial: 15 events read before this point)")
	assert.Len(t, r.Steps, 1)
	assert.Len(t, r.CommOps, 3)
	assert.Len(t, r.Compute, 1)
	assert.True(t, r.HasTimeline)
}

func writeGzip(t testing.TB, path string, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

func TestOpenKinetoPlainAndGzip(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "host_123.1700000000000.pt.trace.json")
	require.NoError(t, os.WriteFile(plain, []byte(miniKineto), 0o644))
	gz := filepath.Join(dir, "host_123.1700000000000.pt.trace.json.gz")
	writeGzip(t, gz, []byte(miniKineto))

	for _, p := range []string{plain, gz} {
		r, err := openKineto(p)
		require.NoError(t, err, p)
		want, err := parseKineto(strings.NewReader(miniKineto), p)
		require.NoError(t, err)
		assert.Equal(t, want, r, p)
		assert.Equal(t, []string{filepath.Base(p)}, r.FilesUsed)
	}

	// A truncated gzip: the decompressed part is parsed, the error names the file.
	data, err := os.ReadFile(gz)
	require.NoError(t, err)
	cutGz := filepath.Join(dir, "cut.json.gz")
	require.NoError(t, os.WriteFile(cutGz, data[:len(data)*2/3], 0o644))
	r, err := openKineto(cutGz)
	require.Error(t, err)
	require.NotNil(t, r)
	assert.Contains(t, err.Error(), cutGz+": byte ")
	assert.Contains(t, err.Error(), "offsets count bytes of the decompressed JSON")
	assert.NotEmpty(t, r.Steps, "the part before the cut is kept")

	// A file named .gz that is not gzip is read as plain JSON; a broken gzip header fails.
	fake := filepath.Join(dir, "plain.json.gz")
	require.NoError(t, os.WriteFile(fake, []byte(miniKineto), 0o644))
	_, err = openKineto(fake)
	require.NoError(t, err)
	bad := filepath.Join(dir, "bad.json.gz")
	require.NoError(t, os.WriteFile(bad, []byte{0x1f, 0x8b, 0}, 0o644))
	r, err = openKineto(bad)
	require.Error(t, err)
	assert.Nil(t, r)
	assert.Contains(t, err.Error(), bad+": byte 0: gzip:")

	_, err = openKineto(filepath.Join(dir, "absent.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestIsKinetoTrace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	gz := filepath.Join(dir, "w.1.pt.trace.json.gz")
	writeGzip(t, gz, []byte(miniKineto))
	for _, tc := range []struct {
		path string
		want bool
	}{
		{write("w.1.pt.trace.json", miniKineto), true},
		{gz, true},
		{write("older.json", olderKineto), true},
		{write("min.json", `{"schemaVersion": 1, "traceEvents": []}`), true},
		{write("late.json", `{"traceEvents": [], "schemaVersion": 1}`), false},
		{write("trace_view.json", miniTrace), false}, // torch_npu: a bare array
		{write("chrome.json", `{"displayTimeUnit": "ns", "traceEvents": []}`), false},
		{write("cut.json", `{"schemaVersion": 1, "deviceProperties": [`), false},
		{write("empty.json", ``), false},
		{filepath.Join(dir, "absent.json"), false},
	} {
		assert.Equal(t, tc.want, isKinetoTrace(tc.path), filepath.Base(tc.path))
	}
	if root := realdata.Root(); root != "" {
		assert.True(t, isKinetoTrace(filepath.Join(root, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")))
		assert.False(t, isKinetoTrace(filepath.Join(root, "torchnpu-1rank-nohccl", "trace_view.json")))
	}
}

// kinetoREADME is the table of ../shared/realdata/README.md for kineto-nccl-a100-2gpu,
// in µs: ProfilerStep duration, union of all kernels, union of NCCL kernels, union of
// the other kernels, NCCL not overlapped, share.
var kinetoREADME = map[int][6]float64{
	4: {222442.191, 48670.2, 11989.0, 38506.4, 10163.8, 0.0457},
	5: {219726.905, 48969.0, 12300.0, 38429.4, 10539.6, 0.0480},
	6: {224936.243, 57576.1, 22587.4, 38720.0, 18856.1, 0.0838},
}

func TestKinetoRealSampleMatchesREADME(t *testing.T) {
	p := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	r, err := parseKineto(zr, p)
	require.NoError(t, err)
	opened, err := openKineto(p)
	require.NoError(t, err)
	assert.Equal(t, r, opened, "openKineto decompresses the same trace")

	assert.Equal(t, 0, r.Rank)
	assert.Equal(t, "NVIDIA A100-PG509-200", r.Info.ChipName, "deviceProperties[0].name")
	assert.Len(t, r.Compute, 2679, "2700 kernels, 21 of them NCCL; memcpy/memset excluded")
	require.Len(t, r.CommOps, 21)
	assert.Equal(t, []profile.ParallelGroup{{Key: "0", Name: "default_pg", GroupRank: 0, GlobalRanks: []int{0, 1}, Size: 2,
		Source: "distributedInfo.pg_config"}}, r.Metadata.ParallelGroups)
	assert.Equal(t, "2.17.1", r.Metadata.DistributedArgs["nccl_version"])
	first := r.CommOps[0]
	assert.Equal(t, profile.CommOp{Name: "ncclKernel_Broadcast_RING_LL_Sum_int8_t", Type: "broadcast", Group: "0", Step: -1,
		Interval: profile.Interval{StartNs: 4458676423385774, EndNs: 4458676423385774 + 30975}, DataType: "FP32", Count: 53120, AlgType: "RING_LL"}, first)

	r.Traits = formatTraits[r.Format] // as LoadRank gives every rank its format's traits
	res := analysis.Analyze(&profile.Cluster{Ranks: []*profile.Rank{r}}, analysis.Options{})
	// One rank of two: no exposed split from the ranks' arrivals, and it says why.
	require.Len(t, res.Warnings, 1, "%q", res.Warnings)
	assert.Contains(t, res.Warnings[0], "21 of 21 NCCL kernels (Kineto: no task rows) have no split")
	require.Len(t, res.Ranks, 1)
	assert.Equal(t, analysis.SourceTimeline, res.Ranks[0].Source)
	require.Len(t, res.Ranks[0].Steps, 3)
	for _, s := range res.Ranks[0].Steps {
		want, ok := kinetoREADME[s.Step]
		require.True(t, ok, "step %d", s.Step)
		us := func(ns int64) float64 { return float64(ns) / 1000 }
		// The README's figures are rounded to 0.1 us (the durations to 1 ns).
		assert.InDelta(t, want[0], us(s.StageNs), 0.0005, "step %d ProfilerStep duration", s.Step)
		assert.InDelta(t, want[1], us(s.ComputingNs+s.CommunicationNs-s.OverlappedNs), 0.1, "step %d union of all kernels", s.Step)
		assert.InDelta(t, want[2], us(s.CommunicationNs), 0.1, "step %d union of NCCL kernels", s.Step)
		assert.InDelta(t, want[3], us(s.ComputingNs), 0.1, "step %d union of other kernels", s.Step)
		assert.InDelta(t, want[4], us(s.CommNotOverlappedNs), 0.1, "step %d NCCL not overlapped", s.Step)
		assert.InDelta(t, want[5], s.CommShare(), 0.0001, "step %d share", s.Step)
		assert.Zero(t, s.BubbleNs)
	}
	// Five AllReduce and two Broadcast kernels per step, in one 2-rank group.
	require.Len(t, res.Collectives, 2)
	ar, bc := res.Collectives[0], res.Collectives[1]
	assert.Equal(t, "allreduce", ar.Op)
	assert.Equal(t, 15, ar.Count)
	assert.Equal(t, "broadcast", bc.Op)
	assert.Equal(t, 6, bc.Count)
	for _, c := range res.Collectives {
		assert.Equal(t, "0", c.Group)
		assert.Equal(t, "default_pg", c.GroupName)
		assert.Equal(t, 2, c.GroupSize)
		assert.Equal(t, "distributedInfo.pg_config", c.GroupSizeSource)
	}
	// Σ In msg nelems × 4 bytes: per step 2049000+7875584+6563840+6637568+2431040 floats.
	assert.Equal(t, int64(3*4*(2049000+7875584+6563840+6637568+2431040)), ar.Bytes)
	assert.InDelta(t, float64(ar.Bytes)/float64(ar.TotalNs)*2*1/2, ar.BusBwGBps, 1e-12)
	assert.Equal(t, int64(3*(4*53120+8*53)), bc.Bytes, "a Float and a Long broadcast per step")
}

// synthKineto writes a Kineto trace in the sample's shape: per step a ProfilerStep#N,
// and per kernel a CPU op, its cudaLaunchKernel, an ac2g flow pair and the kernel;
// every 50th kernel is an NCCL AllReduce with its record_param_comms.
func synthKineto(w io.Writer, steps, kernelsPerStep int) (kernels, ncclKernels int) {
	bw := &errWriter{w: w}
	bw.printf(`{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 8, "ranks": [0, 1, 2, 3, 4, 5, 6, 7]}]},`)
	bw.printf("\n  \"traceEvents\": [\n")
	ts := 4458676416788.066
	ext, corr := 1, 1
	sep := ""
	for s := 0; s < steps; s++ {
		bw.printf(`%s{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 2910249, "tid": 2910249, "ts": %.3f, "dur": %.3f, "args": {"External id": %d}}`,
			sep, s, ts, float64(kernelsPerStep)*25+100, ext)
		sep = ",\n  "
		ext++
		for k := 0; k < kernelsPerStep; k++ {
			t := ts + float64(k)*25
			nccl := k%50 == 49
			if nccl {
				bw.printf(`%s{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 2910249, "tid": 2919752, "ts": %.3f, "dur": 9.6, "args": {"External id": %d, "Record function id": 1959, "Process Group Name": "0", "Global rank stride": 1, "Out msg nelems": 2049000, "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]", "Group size": 8, "Global rank start": 0, "Ev Idx": 50, "In msg nelems": 2049000, "In split size": "[]", "Out split size": "[]", "dtype": "Float", "Process Group Description": "default_pg", "Collective name": "allreduce"}}`,
					sep, t, ext)
			} else {
				bw.printf(`%s{"ph": "X", "cat": "cpu_op", "name": "aten::native_batch_norm_backward", "pid": 2910249, "tid": 2919752, "ts": %.3f, "dur": 9.6, "args": {"External id": %d, "Sequence number": 1234, "Fwd thread id": 1, "Record function id": 0, "Ev Idx": 50}}`,
					sep, t, ext)
			}
			bw.printf(`%s{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2910249, "tid": 2919752, "ts": %.3f, "dur": 4.172, "args": {"External id": %d, "cbid": 211, "correlation": %d}}`,
				sep, t+1, ext, corr)
			bw.printf(`%s{"ph": "s", "id": %d, "pid": 2910249, "tid": 2919752, "ts": %.3f, "cat": "ac2g", "name": "ac2g"}`, sep, corr, t+1)
			if nccl {
				bw.printf(`%s{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 40, "ts": %.3f, "dur": 40.25, "args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 40, "correlation": %d, "registers per thread": 96, "shared memory": 87568, "blocks per SM": 0.074074, "warps per SM": 1.259259, "grid": [8, 1, 1], "block": [544, 1, 1], "est. achieved occupancy %%": 0, "Collective name": "allreduce", "In msg nelems": 2049000, "Out msg nelems": 2049000, "Group size": 8, "dtype": "Float", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}}`,
					sep, t+5, ext, corr)
				ncclKernels++
			} else {
				bw.printf(`%s{"ph": "X", "cat": "kernel", "name": "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)", "pid": 0, "tid": 7, "ts": %.3f, "dur": 20.125, "args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %d, "registers per thread": 40, "shared memory": 400, "blocks per SM": 4.740741, "warps per SM": 75.851852, "grid": [512, 1, 1], "block": [512, 1, 1], "est. achieved occupancy %%": 75}}`,
					sep, t+5, ext, corr)
			}
			bw.printf(`%s{"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %.3f, "cat": "ac2g", "name": "ac2g", "bp": "e"}`, sep, corr, t+5)
			kernels++
			ext++
			corr++
		}
		ts += float64(kernelsPerStep)*25 + 100
	}
	bw.printf("\n  ],\n  \"traceName\": \"synthetic\", \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1711964646000000000}\n")
	return kernels, ncclKernels
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func TestParseKinetoSynthetic(t *testing.T) {
	var buf bytes.Buffer
	kernels, nccl := synthKineto(&buf, 3, 200)
	r, err := parseKineto(&buf, "synth.json")
	require.NoError(t, err)
	assert.Len(t, r.Steps, 3)
	assert.Len(t, r.CommOps, nccl)
	assert.Len(t, r.Compute, kernels-nccl)
	res := analysis.Analyze(&profile.Cluster{Ranks: []*profile.Rank{r}}, analysis.Options{})
	require.Len(t, res.Collectives, 1)
	assert.Equal(t, 8, res.Collectives[0].GroupSize)
	for _, s := range res.Ranks[0].Steps {
		assert.Equal(t, int64(200*25+100)*1000, s.StageNs)
		assert.Equal(t, int64(4*40250), s.CommunicationNs)
	}
}

// kinetoBench holds the traces the benchmark parses: the real sample decompressed
// (when ../shared/realdata is present) and a synthetic ~100 MB trace.
func BenchmarkKineto(b *testing.B) {
	run := func(b *testing.B, data []byte, gz bool, wantOps int) {
		b.SetBytes(int64(len(data)))
		var zdata []byte
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(data)
			require.NoError(b, zw.Close())
			zdata = buf.Bytes()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var rd io.Reader = bytes.NewReader(data)
			if gz {
				zr, err := gzip.NewReader(bytes.NewReader(zdata))
				if err != nil {
					b.Fatal(err)
				}
				rd = zr
			}
			r, err := parseKineto(rd, "bench.json")
			if err != nil || len(r.CommOps) != wantOps {
				b.Fatalf("err %v, %d ops", err, len(r.CommOps))
			}
		}
	}
	var synth bytes.Buffer
	_, nccl := synthKineto(&synth, 60, 1250) // ~100 MB
	b.Run("synthetic", func(b *testing.B) { run(b, synth.Bytes(), false, nccl) })
	b.Run("synthetic-gz", func(b *testing.B) { run(b, synth.Bytes(), true, nccl) })
	b.Run("real", func(b *testing.B) {
		p := realdata.Path(b, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
		f, err := os.Open(p)
		require.NoError(b, err)
		defer f.Close()
		zr, err := gzip.NewReader(f)
		require.NoError(b, err)
		data, err := io.ReadAll(zr)
		require.NoError(b, err)
		run(b, data, false, 21)
	})
}

func FuzzKineto(f *testing.F) {
	f.Add([]byte(miniKineto))
	f.Add([]byte(olderKineto))
	f.Add([]byte(`{"distributedInfo": {"rank": 1, "pg_config": {"0": {"pg_size": 2, "ranks": [0, "1"]}}}, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic", "ts": 1e3, "dur": "2"}]}`))
	if root := realdata.Root(); root != "" {
		if fh, err := os.Open(filepath.Join(root, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")); err == nil {
			if zr, err := gzip.NewReader(fh); err == nil {
				head := make([]byte, 64<<10)
				n, _ := io.ReadFull(zr, head)
				f.Add(head[:n])
			}
			fh.Close()
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseKineto(bytes.NewReader(data), "fuzz.json")
		if r == nil {
			t.Fatal("nil rank")
		}
		if err != nil && !strings.Contains(err.Error(), "fuzz.json") {
			t.Fatalf("error without the file name: %v", err)
		}
		for _, iv := range r.Compute {
			if iv.EndNs < iv.StartNs {
				t.Fatalf("negative interval %v", iv)
			}
		}
		for _, op := range r.CommOps {
			if op.EndNs < op.StartNs || op.Type == "" || op.Group == "" {
				t.Fatalf("bad op %+v", op)
			}
		}
		// The analysis must take whatever the parser gives.
		res := analysis.Analyze(&profile.Cluster{Ranks: []*profile.Rank{r}}, analysis.Options{Workers: 1})
		for _, rr := range res.Ranks {
			for _, s := range rr.Steps {
				if s.StageNs < 0 || s.FreeNs < 0 || math.IsNaN(s.CommShare()) {
					t.Fatalf("bad step %+v", s)
				}
			}
		}
	})
}
