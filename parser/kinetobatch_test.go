package parser

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// batchedKineto is the middle stage (rank 1) of a 3-stage pipeline as PyTorch records
// Megatron's batched point-to-point (torch.distributed.batch_isend_irecv on NCCL):
// each batch's send and recv record_param_comms end before the batch's one
// ncclDevKernel_SendRecv is launched (by ncclGroupEnd, under "nccl:coalesced"); the
// launch and the kernel are linked to no CPU op, so each carries its own correlation
// id as External id and the kernel no collective arguments. Batch A is
// send_forward_recv_backward (a send and a receive, one kernel), batch B send_forward
// alone. Beside them: a lone irecv (not batched) whose kernel Kineto links to its
// record and copies the arguments onto, and an AllReduce whose record's External id
// happens to equal batch B's correlation id (the two counters are independent).
const batchedKineto = `{
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 3,
    "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 3, "ranks": [0, 1, 2]},
                  {"pg_name": "3", "pg_desc": "PIPELINE_MODEL_PARALLEL_GROUP", "pg_size": 3, "ranks": [0, 1, 2]}],
    "nccl_version": "2.21.5"},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 900, "tid": 900, "ts": 1000.000, "dur": 9000.000, "args": {"External id": 1, "Record function id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 900, "tid": 900, "ts": 1100.000, "dur": 6.5, "args": {"External id": 40, "Record function id": 0, "Collective name": "send", "dtype": "BFloat16", "In msg nelems": 4194304, "Out msg nelems": 4194304, "Group size": 3, "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Process Group Name": "3", "Process Group Description": "PIPELINE_MODEL_PARALLEL_GROUP", "Process Group Ranks": "[0, 1, 2]", "Rank": 2, "Dst Rank": 2}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 900, "tid": 900, "ts": 1110.000, "dur": 5.0, "args": {"External id": 42, "Record function id": 0, "Collective name": "recv", "dtype": "BFloat16", "In msg nelems": 4194304, "Out msg nelems": 4194304, "Group size": 3, "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Process Group Name": "3", "Process Group Description": "PIPELINE_MODEL_PARALLEL_GROUP", "Process Group Ranks": "[0, 1, 2]", "Rank": 2, "Src Rank": 2}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:coalesced", "pid": 900, "tid": 900, "ts": 1120.000, "dur": 15.0, "args": {"External id": 44, "Record function id": 0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 900, "tid": 900, "ts": 1125.000, "dur": 6.0, "args": {"External id": 5001, "cbid": 430, "correlation": 5001}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 24, "ts": 1200.000, "dur": 800.000, "args": {"External id": 5001, "queued": 0, "device": 0, "context": 1, "stream": 24, "correlation": 5001, "registers per thread": 96, "shared memory": 0, "grid": [2, 1, 1], "block": [640, 1, 1]}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "nccl:coalesced", "pid": 0, "tid": 24, "ts": 1199.999, "dur": 800.002, "args": {"External id": 44}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 900, "tid": 900, "ts": 3000.000, "dur": 6.0, "args": {"External id": 50, "Collective name": "send", "dtype": "BFloat16", "In msg nelems": 4194304, "Out msg nelems": 4194304, "Group size": 3, "Process Group Name": "3", "Process Group Description": "PIPELINE_MODEL_PARALLEL_GROUP", "Process Group Ranks": "[0, 1, 2]", "Rank": 2, "Dst Rank": 2}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 900, "tid": 900, "ts": 3020.000, "dur": 5.0, "args": {"External id": 5010, "cbid": 307, "correlation": 5010}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 24, "ts": 3100.000, "dur": 50.000, "args": {"External id": 5010, "device": 0, "stream": 24, "correlation": 5010}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 900, "tid": 900, "ts": 4000.000, "dur": 40.0, "args": {"External id": 60, "Collective name": "recv", "dtype": "BFloat16", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 3, "Process Group Name": "3", "Process Group Description": "PIPELINE_MODEL_PARALLEL_GROUP", "Process Group Ranks": "[0, 1, 2]", "Rank": 0, "Src Rank": 0}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:recv 1<-0", "pid": 900, "tid": 900, "ts": 4005.000, "dur": 30.0, "args": {"External id": 61}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 900, "tid": 900, "ts": 4010.000, "dur": 6.0, "args": {"External id": 60, "cbid": 430, "correlation": 5020}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 25, "ts": 4100.000, "dur": 300.000, "args": {"External id": 60, "device": 0, "stream": 25, "correlation": 5020, "Collective name": "recv", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 3, "dtype": "BFloat16", "Process Group Name": "3", "Process Group Description": "PIPELINE_MODEL_PARALLEL_GROUP", "Process Group Ranks": "[0, 1, 2]"}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 900, "tid": 900, "ts": 5000.000, "dur": 40.0, "args": {"External id": 5010, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 2048, "Out msg nelems": 2048, "Group size": 3, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2]"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 900, "tid": 900, "ts": 5010.000, "dur": 6.0, "args": {"External id": 5010, "cbid": 430, "correlation": 5030}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 26, "ts": 5100.000, "dur": 100.000, "args": {"External id": 5010, "device": 0, "stream": 26, "correlation": 5030}}
  ],
  "traceName": "batched.pt.trace.json",
  "baseTimeNanoseconds": 1700000000000000000
}`

func TestParseKinetoBatchedP2P(t *testing.T) {
	r, err := parseKineto(strings.NewReader(batchedKineto), "batched.pt.trace.json")
	require.NoError(t, err)
	us := func(v int64) int64 { return v * 1000 }
	assert.Equal(t, []profile.CommOp{
		// Batch A: a send and a receive in one kernel, read as the receive.
		{Name: "ncclDevKernel_SendRecv", Type: "receive", Group: "3", Step: -1,
			Interval: profile.Interval{StartNs: us(1200), EndNs: us(2000)}, DataType: "BF16", Count: 4194304},
		// Batch B: a send alone.
		{Name: "ncclDevKernel_SendRecv", Type: "send", Group: "3", Step: -1,
			Interval: profile.Interval{StartNs: us(3100), EndNs: us(3150)}, DataType: "BF16", Count: 4194304},
		// The lone irecv, linked to its record as before.
		{Name: "ncclDevKernel_SendRecv", Type: "receive", Group: "3", Step: -1,
			Interval: profile.Interval{StartNs: us(4100), EndNs: us(4400)}, DataType: "BF16", Count: 1024},
		{Name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL", Type: "allreduce", Group: "0", Step: -1,
			Interval: profile.Interval{StartNs: us(5100), EndNs: us(5200)}, DataType: "FP32", Count: 2048, AlgType: "RING_LL"},
	}, r.CommOps)
	// The batch holding a receive is the pipeline's waiting, as a lone receive is.
	assert.True(t, profile.IsReceiveOp(r.CommOps[0].Name, r.CommOps[0].Type))
	assert.False(t, profile.IsReceiveOp(r.CommOps[1].Name, r.CommOps[1].Type))
	assert.Empty(t, r.Problems)
}

// A batch whose records hold two receives (recv_prev and recv_next of an interleaved
// schedule's batch) counts what it receives, both; a batched kernel whose launch is
// not in the trace keeps the kernel's own reading (SendRecv, the world group).
func TestKinetoBatchParams(t *testing.T) {
	recv := func(n int64) p2pRecord {
		return p2pRecord{params: commParams{collective: "recv", inN: n, outN: n, pgName: "3", dtype: "BFloat16"}}
	}
	send := p2pRecord{params: commParams{collective: "send", inN: 7, outN: 7, pgName: "3"}}
	p, ok := batchParams([]p2pRecord{send, recv(100), recv(28)})
	require.True(t, ok)
	assert.Equal(t, "recv", p.collective)
	assert.Equal(t, int64(128), p.inN)
	assert.Equal(t, int64(128), p.outN)
	_, ok = batchParams(nil)
	assert.False(t, ok)

	noLaunch := strings.Replace(batchedKineto, `"cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 900, "tid": 900, "ts": 1125.000`, `"cat": "cpu_op", "name": "other", "pid": 900, "tid": 900, "ts": 1125.000`, 1)
	r, err := parseKineto(strings.NewReader(noLaunch), "batched.pt.trace.json")
	require.NoError(t, err)
	assert.Equal(t, "sendrecv", r.CommOps[0].Type)
	assert.Equal(t, worldGroup, r.CommOps[0].Group)
	// Batch B's launch comes after both records of batch A: had A's launch been lost,
	// B takes them; it holds a receive.
	assert.Equal(t, "receive", r.CommOps[1].Type)
}

// launchCorrs are the correlation ids of the launch calls st holds, sorted.
func launchCorrs(st *kinetoState) []int64 {
	var out []int64
	for _, l := range st.launches.all() {
		out = append(out, l.corr)
	}
	slices.Sort(out)
	return out
}

// readKinetoState reads a trace as parseKineto does and keeps the reader's state.
func readKinetoState(t *testing.T, trace string) (*kinetoState, *profile.Rank) {
	t.Helper()
	st := newKinetoState("batched.pt.trace.json")
	require.NoError(t, st.read(strings.NewReader(trace)))
	return st, st.finish()
}

// Only the launches of the kernels that may be a batch's are held to the end of the
// parse, whether Kineto writes each kernel before its launch (as it does in
// kineto-nccl-a100-2gpu) or after it (as hcclprof gen does); the compute kernels' and
// the linked kernels' launches are dropped as their kernel is read. Before, every
// launch call of the trace was kept: the synthetic 100 MB trace's 75000.
func TestKinetoLaunchesHeld(t *testing.T) {
	var synth bytes.Buffer
	synthKineto(&synth, 2, 100)
	st, _ := readKinetoState(t, synth.String())
	assert.Empty(t, launchCorrs(st), "no kernel of the synthetic trace is a batch's")

	st, want := readKinetoState(t, batchedKineto)
	assert.Equal(t, []int64{5001, 5010}, launchCorrs(st), "batches A and B; the lone irecv's and the AllReduce's launches are dropped")

	// Each kernel before its launch.
	events := strings.Split(batchedKineto, "\n")
	for i := 0; i+1 < len(events); i++ {
		if strings.Contains(events[i], `"cat": "cuda_`) && strings.Contains(events[i+1], `"cat": "kernel"`) {
			last := !strings.HasSuffix(events[i+1], ",")
			events[i], events[i+1] = strings.TrimSuffix(events[i+1], ",")+",", events[i]
			if last {
				events[i+1] = strings.TrimSuffix(events[i+1], ",")
			}
			i++
		}
	}
	kernelFirst := strings.Join(events, "\n")
	require.NotEqual(t, batchedKineto, kernelFirst)
	st, got := readKinetoState(t, kernelFirst)
	assert.Equal(t, []int64{5001, 5010}, launchCorrs(st))
	assert.Equal(t, want.CommOps, got.CommOps)
}

// A launch whose kernel is not read near it is held, whatever the kernel: the order
// of the events changes what is held, never the result. Here twelve compute launches
// open the trace and their kernels close it, beyond launchWindow of them.
func TestKinetoLaunchFarFromKernel(t *testing.T) {
	var launches, kernels []string
	for i := range 12 {
		launches = append(launches, fmt.Sprintf(`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 900, "tid": 900, "ts": %d, "dur": 3.0, "args": {"External id": %d, "correlation": %d}},`, 900+i, 100+i, 9000+i))
		kernels = append(kernels, fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": %d, "dur": 3.0, "args": {"External id": %d, "correlation": %d}},`, 9500+i, 100+i, 9000+i))
	}
	trace := strings.Replace(batchedKineto, `"traceEvents": [`, `"traceEvents": [`+"\n"+strings.Join(launches, "\n"), 1)
	trace = strings.Replace(trace, "\n  ],", ",\n"+strings.TrimSuffix(strings.Join(kernels, "\n"), ",")+"\n  ],", 1)
	st, got := readKinetoState(t, trace)
	_, want := readKinetoState(t, batchedKineto)
	assert.Equal(t, want.CommOps, got.CommOps)
	// The first five compute launches, pushed out of the launchWindow waiting by the
	// seven after them and batch A's, are held with batches A and B.
	assert.Equal(t, []int64{5001, 5010, 9000, 9001, 9002, 9003, 9004}, launchCorrs(st))
}

// A graph launch's kernels share its correlation id: a compute kernel of the graph
// read first does not drop the launch that the graph's batched kernel needs.
func TestKinetoGraphLaunch(t *testing.T) {
	trace := strings.Replace(batchedKineto, `"cat": "cuda_driver", "name": "cuLaunchKernelEx"`, `"cat": "cuda_runtime", "name": "cudaGraphLaunch"`, 1)
	trace = strings.Replace(trace, `{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 24, "ts": 3100.000`,
		`{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 3030.000, "dur": 20.0, "args": {"External id": 5010, "correlation": 5010}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 24, "ts": 3100.000`, 1)
	require.NotEqual(t, batchedKineto, trace)
	_, r := readKinetoState(t, trace)
	require.Len(t, r.CommOps, 4)
	assert.Equal(t, "send", r.CommOps[1].Type, "batch B, launched by the graph")
	assert.Equal(t, "3", r.CommOps[1].Group)
}
