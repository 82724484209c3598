package parser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// A hardware task typed "Other" (as a 2024 torch_npu export typed all of them) is
// told from computation by what it is: its stream, its tie to an HCCL op, its name.
func TestCommTasksToldFromComputeByWhatTheyAre(t *testing.T) {
	const head = `{"name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
{"name": "process_name", "pid": 2, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"},
{"name": "thread_name", "pid": 2, "tid": 0, "args": {"name": "Group 0 Communication"}, "ph": "M"},
{"name": "thread_name", "pid": 2, "tid": 1, "args": {"name": "Plane 0"}, "ph": "M"},
{"ph": "X", "name": "hcom_allReduce__586_0_1", "pid": 2, "tid": 0, "ts": "100", "dur": 50, "args": {"connection_id": 1175, "data_type": "FP32", "alg_type": "MESH-RING", "count": 10}},
{"ph": "X", "name": "MatMul", "pid": 1, "tid": 2, "ts": "10", "dur": 5, "args": {"Task Type": "Other", "connection_id": 7}},
`
	tests := []struct {
		name    string
		task    string // the hardware task under test, at ts 200
		compute bool
	}{
		{"kernel typed Other on a compute stream", `{"ph": "X", "name": "Add", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, true},
		{"on the stream HCCL's tasks run on", `{"ph": "X", "name": "Task_42", "pid": 1, "tid": 4, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}},
{"ph": "X", "name": "Memcpy", "pid": 2, "tid": 1, "ts": "101", "dur": 3, "args": {"task type": "Memcpy", "stream id": 4, "src rank": 0, "dst rank": 1}}`, false},
		{"stream from Physic Stream Id", `{"ph": "X", "name": "Task_42", "pid": 1, "tid": 9, "ts": "200", "dur": 5, "args": {"Task Type": "Other", "Physic Stream Id": 4}},
{"ph": "X", "name": "Memcpy", "pid": 2, "tid": 1, "ts": "101", "dur": 3, "args": {"task type": "Memcpy", "stream id": "4", "src rank": 0, "dst rank": 1}}`, false},
		{"on the stream of an HCCL op's launch", `{"ph": "X", "name": "Task_42", "pid": 1, "tid": 5, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}},
{"ph": "X", "name": "Task_43", "pid": 1, "tid": 5, "ts": "101", "dur": 5, "args": {"Task Type": "Other", "connection_id": 1175}},
{"ph": "X", "name": "Task_44", "pid": 1, "tid": 5, "ts": "110", "dur": 5, "args": {"Task Type": "Other", "connection_id": 1175}}`, false},
		// One task of an op's launch on a compute stream marks that task, not the stream.
		{"tied to an HCCL op", `{"ph": "X", "name": "Task_42", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other", "connection_id": 1175}},
{"ph": "X", "name": "Mul", "pid": 1, "tid": 2, "ts": "20", "dur": 5, "args": {"Task Type": "Other"}},
{"ph": "X", "name": "Mul", "pid": 1, "tid": 2, "ts": "30", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"a connection_id of no HCCL op", `{"ph": "X", "name": "Task_42", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other", "connection_id": 7}}`, true},
		{"named Notify_Wait", `{"ph": "X", "name": "Notify_Wait", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"named Notify Wait", `{"ph": "X", "name": "Notify Wait", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"named Reduce_Inline", `{"ph": "X", "name": "Reduce_Inline", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"named RDMASend", `{"ph": "X", "name": "RDMASend", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"named Write Value", `{"ph": "X", "name": "Write Value", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"named EVENT_WAIT", `{"ph": "X", "name": "EVENT_WAIT", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"named hcom_", `{"ph": "X", "name": "hcom_allReduce_", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "Other"}}`, false},
		{"AI_CORE kernel", `{"ph": "X", "name": "Add", "pid": 1, "tid": 2, "ts": "200", "dur": 5, "args": {"Task Type": "AI_CORE"}}`, true},
		{"AI_CORE on an HCCL stream", `{"ph": "X", "name": "Add", "pid": 1, "tid": 4, "ts": "200", "dur": 5, "args": {"Task Type": "AI_VECTOR_CORE"}},
{"ph": "X", "name": "Memcpy", "pid": 2, "tid": 1, "ts": "101", "dur": 3, "args": {"task type": "Memcpy", "stream id": 4, "src rank": 0, "dst rank": 1}}`, false},
		{"PROFILING_DISABLE", `{"ph": "X", "name": "PROFILING_DISABLE", "pid": 1, "tid": 7, "ts": "200", "dur": 5, "args": {"Task Type": "PROFILING_DISABLE"}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := parseTraceView(strings.NewReader("[\n"+head+tc.task+"\n]"), "t.json")
			require.NoError(t, err)
			require.Len(t, tl.CommOps, 1)
			var want []profile.Interval
			for _, iv := range tl.Compute {
				if iv.StartNs == 20_000 || iv.StartNs == 30_000 {
					want = append(want, iv) // the Mul kernels of the "tied" case: their stream stays compute
				}
			}
			want = append([]profile.Interval{{StartNs: 10_000, EndNs: 15_000}}, want...) // MatMul
			if tc.compute {
				want = append(want, profile.Interval{StartNs: 200_000, EndNs: 205_000})
			}
			assert.Equal(t, want, tl.Compute, fmt.Sprintf("compute: %v", tc.compute))
		})
	}
}
