package parser

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/benchtrace"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// miniTrace is a small timeline in torch_npu's real layout: M events after the
// events they name, string timestamps, an HCCL op with a plane task, overlap rows, a
// torch_to_npu flow and a step marker.
const miniTrace = `[
{"ph": "X", "name": "ProfilerStep#7", "pid": 11, "tid": 11, "ts": "1736408883000000.000", "dur": 1000.5, "cat": "cpu_op", "args": {"Sequence number": -1}},
{"ph": "X", "name": "aten::add", "pid": 11, "tid": 11, "ts": "1736408883000010.000", "dur": 5, "cat": "cpu_op", "args": {"Call stack": "a.py(1): f;\r\nb.py(2): g \"quoted\""}},
{"ph": "s", "bp": "e", "name": "torch_to_npu", "id": 1736408883000100000, "pid": 11, "tid": 11, "ts": "1736408883000010.000", "cat": "async_npu"},
{"name": "process_name", "pid": 11, "tid": 0, "args": {"name": "Python"}, "ph": "M"},
{"name": "process_name", "pid": 3170820512, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
{"ph": "X", "name": "Add_AiCore", "pid": 3170820512, "tid": 2, "ts": "1736408883000100.000", "dur": 50.25, "args": {"Model Id": 4294967295, "Task Type": "AI_CORE", "Physic Stream Id": 2}},
{"ph": "f", "bp": "e", "name": "torch_to_npu", "id": 1736408883000100000, "pid": 3170820512, "tid": 2, "ts": "1736408883000100.000", "cat": "async_npu"},
{"ph": "X", "name": "MEMCPY_ASYNC", "pid": 3170820512, "tid": 2, "ts": "1736408883000160.000", "dur": 3, "args": {"Task Type": "Other"}},
{"ph": "X", "name": "Notify_Wait", "pid": 3170820512, "tid": 4, "ts": "1736408883000200.000", "dur": 100, "args": {"Task Type": "Notify Wait"}},
{"name": "process_name", "pid": 3170820576, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"},
{"name": "thread_name", "pid": 3170820576, "tid": 0, "args": {"name": "Group 0 Communication"}, "ph": "M"},
{"name": "thread_name", "pid": 3170820576, "tid": 1, "args": {"name": "Plane 0"}, "ph": "M"},
{"ph": "X", "name": "hcom_allReduce__586_0_1", "pid": 3170820576, "tid": 0, "ts": "1736408883000120.123", "dur": 300.5, "args": {"connection_id": 1175, "model id": 4294967295, "data_type": "FP32", "alg_type": "MESH-RING", "count": 1000}},
{"ph": "X", "name": "Memcpy", "pid": 3170820576, "tid": 1, "ts": "1736408883000121.000", "dur": 3.3600625, "args": {"notify_id": "18446744073709551615", "task type": "Memcpy", "src rank": 0, "dst rank": 1, "transport type": "SDMA", "size(Byte)": 2064384, "link type": "HCCS", "bandwidth(GB/s)": 614.38}},
{"name": "process_name", "pid": 3170820832, "tid": 0, "args": {"name": "Overlap Analysis"}, "ph": "M"},
{"ph": "X", "name": "Computing", "pid": 3170820832, "tid": 0, "ts": "1736408883000100.000", "dur": 50.25},
{"ph": "C", "name": "HBM 0/Read", "pid": 9, "tid": 0, "ts": "1736408883000100.000", "args": {"Read(MB/s)": 1.5}}
]`

func TestParseTraceViewMini(t *testing.T) {
	tl, err := parseTraceView(strings.NewReader(miniTrace), "mini.json")
	require.NoError(t, err)
	assert.Equal(t, 17, tl.Events)
	require.Len(t, tl.Steps, 1)
	assert.Equal(t, profile.StepMarker{Step: 7, Interval: profile.Interval{StartNs: 1736408883000000000, EndNs: 1736408883001000500}}, tl.Steps[0])
	// AI_CORE counts; MEMCPY_ASYNC (type Other) and the hardware view of HCCL tasks do not.
	assert.Equal(t, []profile.Interval{{StartNs: 1736408883000100000, EndNs: 1736408883000150250}}, tl.Compute)
	require.Len(t, tl.CommOps, 1)
	op := tl.CommOps[0]
	assert.Equal(t, "allreduce", op.Type)
	assert.Equal(t, "586", op.Group)
	assert.Equal(t, "Group 0 Communication", op.GroupRow)
	assert.Equal(t, int64(1736408883000120123), op.StartNs)
	assert.Equal(t, int64(300500), op.DurNs())
	assert.Equal(t, int64(4000), op.Bytes())
	assert.Equal(t, "MESH-RING", op.AlgType)
	require.Len(t, tl.CommTasks, 1)
	assert.Equal(t, profile.CommTask{Plane: 0, TaskLabels: &profile.TaskLabels{GroupRow: "Group 0 Communication", Name: "Memcpy", TransportType: "SDMA", LinkType: "HCCS"}, Interval: profile.Interval{StartNs: 1736408883000121000, EndNs: 1736408883000124360},
		SrcRank: 0, DstRank: 1, SizeBytes: 2064384}, tl.CommTasks[0])
	assert.Len(t, tl.Overlap.Computing, 1)
	assert.Equal(t, []profile.DeviceFlow{{DeviceNs: 1736408883000100000, HostNs: 1736408883000010000}}, tl.Flows)
}

func TestParseTraceViewVariants(t *testing.T) {
	tests := []struct {
		name, in  string
		ops, comp int
		firstOpNs int64
	}{
		{"traceEvents object with numbers", `{"displayTimeUnit": "ns", "traceEvents": [
			{"name": "process_name", "pid": 1, "args": {"name": "Communication"}, "ph": "M"},
			{"name": "thread_name", "pid": 1, "tid": 70000, "args": {"name": "Communication Kernel"}, "ph": "M"},
			{"name": "Default/AllReduce-op534_0", "pid": 1, "tid": 70000, "ts": 56635868946.3, "dur": 10, "ph": "X"}], "other": {"a": [1, 2]}}`,
			1, 0, 56635868946300},
		{"old ts with more decimals", `[{"name": "process_name", "pid": 1, "args": {"name": "HCCL"}, "ph": "M"},
			{"name": "thread_name", "pid": 1, "tid": 0, "args": {"name": "Group group_name_58 Communication"}, "ph": "M"},
			{"name": "hcom_broadcast__445_0", "pid": 1, "tid": 0, "ts": "56635864652.490005", "dur": 1, "ph": "X", "args": {"data_type": "INT8", "count": 4}}]`,
			1, 0, 56635864652490},
		{"legacy Stream Id and trailing comma", `[{"name": "process_name", "pid": 2, "args": {"name": "Ascend Hardware"}, "ph": "M"},
			{"name": "k", "pid": 2, "tid": 3, "ts": "1.000", "dur": 1, "ph": "X", "args": {"Task Type": "AI_CPU", "Stream Id": 3}},]`,
			0, 1, 0},
		{"escaped names", `[{"name": "process_name", "pid": 2, "args": {"name": "Ascend\u0020Hardware"}, "ph": "M"},
			{"name": "k\"1\"", "pid": 2, "tid": 3, "ts": "1.000", "dur": 1, "ph": "X", "args": {"Task Type": "AI_CORE"}}]`,
			0, 1, 0},
		{"empty array", `[]`, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := parseTraceView(strings.NewReader(tc.in), "t.json")
			require.NoError(t, err)
			assert.Len(t, tl.CommOps, tc.ops)
			assert.Len(t, tl.Compute, tc.comp)
			if tc.ops > 0 {
				assert.Equal(t, tc.firstOpNs, tl.CommOps[0].StartNs)
			}
		})
	}
}

func TestParseTraceViewErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty file", ``, "t.json: byte 0: empty file"},
		{"not json", `hello`, "expected '[' or '{'"},
		{"object without events", `{"a": 1}`, "without \"traceEvents\""},
		{"bad ts", `[{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": "abc", "dur": 1}]`, "t.json: byte 1: bad event: bad time value"},
		{"missing comma", `[{"ph": "M"} {"ph": "M"}]`, "t.json: byte 13: expected ',' or ']'"},
		{"truncated", `[{"ph": "X", "name": "x", "pid": 1`, "truncated"},
		{"unterminated array", `[{"ph": "M"}`, "truncated"},
		{"bad member", `[{"ph" "M"}]`, "bad event: expected ':'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTraceView(strings.NewReader(tc.in), "t.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var se *SyntaxError
			assert.True(t, errors.As(err, &se), "a *SyntaxError naming the file")
		})
	}
}

// Cutting a trace at any byte gives a clear error or a partial result, never a panic,
// and whatever was read before the cut is kept.
func TestParseTraceViewTruncatedAnywhere(t *testing.T) {
	full, err := parseTraceView(strings.NewReader(miniTrace), "mini.json")
	require.NoError(t, err)
	for cut := 0; cut < len(miniTrace)-2; cut++ {
		tl, err := parseTraceView(strings.NewReader(miniTrace[:cut]), "mini.json")
		require.Error(t, err, "cut at %d", cut)
		assert.Contains(t, err.Error(), "mini.json", "cut at %d", cut)
		require.NotNil(t, tl)
		assert.LessOrEqual(t, tl.Events, full.Events)
	}
}

func TestParseTraceViewRealLevel1(t *testing.T) {
	for _, tc := range []struct {
		rank                string
		firstOpStart        int64
		computeIntervals    int
		stepStart, stepDurs int64
	}{
		{"rank0_ascend_pt", 1736408883732241564, 187, 1736408883686740710, 155985800},
		{"rank1_ascend_pt", 0, 0, 1736408883688868080, 153888390},
	} {
		t.Run(tc.rank, func(t *testing.T) {
			p := realdata.Path(t, "imagenet-2rank-level1", tc.rank, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			tl, err := parseTraceView(f, p)
			require.NoError(t, err)
			require.Len(t, tl.Steps, 1)
			assert.Equal(t, 50, tl.Steps[0].Step)
			assert.Equal(t, tc.stepStart, tl.Steps[0].StartNs)
			assert.Equal(t, tc.stepDurs, tl.Steps[0].DurNs())
			require.Len(t, tl.CommOps, 4, "4 hcom_allReduce ops per step")
			for i, op := range tl.CommOps {
				assert.Equal(t, "allreduce", op.Type)
				assert.Equal(t, "FP32", op.DataType)
				assert.Equal(t, "MESH-RING", op.AlgType)
				assert.Contains(t, op.Name, "_"+string(rune('0'+i))+"_1")
			}
			assert.Len(t, tl.CommTasks, 16+7*40, "Plane 0 has 16 tasks, Planes 1..7 have 40")
			assert.Len(t, tl.Overlap.Computing, 187)
			assert.Len(t, tl.Overlap.Communication, 4)
			if tc.firstOpStart != 0 {
				assert.Equal(t, tc.firstOpStart, tl.CommOps[0].StartNs)
				assert.Equal(t, int64(79089520), tl.CommOps[0].DurNs())
				assert.Equal(t, int64(4097000*4), tl.CommOps[0].Bytes())
				assert.Len(t, tl.Compute, tc.computeIntervals)
				assert.Equal(t, 10112, tl.Events)
			}
		})
	}
}

// Level1's HCCL process under another name (as a release might call it): its 4 ops
// and 296 tasks, recognised by their arguments, are not read, and the trace says so
// (communication.json's ops stood in, unsized, without a word).
func TestParseTraceViewHCCLProcessRenamed(t *testing.T) {
	p := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	const hccl = `"args": {"name": "HCCL"}`
	require.Equal(t, 1, bytes.Count(b, []byte(hccl)))
	renamed := bytes.Replace(b, []byte(hccl), []byte(`"args": {"name": "HCCL Kernels"}`), 1)
	tl, err := parseTraceView(bytes.NewReader(renamed), "trace_view.json")
	require.NoError(t, err)
	assert.Empty(t, tl.CommOps)
	assert.Empty(t, tl.CommTasks)
	assert.Equal(t, []string{`trace_view.json: HCCL op and task events (with HCCL's arguments) in processes not named "HCCL" or "Communication", ` +
		`which hcclprof reads as HCCL's: "HCCL Kernels" (300): not read`}, tl.Problems)

	tl, err = parseTraceView(bytes.NewReader(b), "trace_view.json")
	require.NoError(t, err)
	assert.Empty(t, tl.Problems, "as written")
}

func TestParseTraceViewRealNoHCCL(t *testing.T) {
	p := realdata.Path(t, "torchnpu-1rank-nohccl", "trace_view.json")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	tl, err := parseTraceView(f, p)
	require.NoError(t, err)
	assert.Empty(t, tl.CommOps)
	assert.Empty(t, tl.CommTasks)
	// 276 hardware tasks: 274 kernels typed "Other" and AI_CPU count, 2 MEMCPY_ASYNC do not.
	assert.Len(t, tl.Compute, 274)
	assert.Len(t, tl.Steps, 1)
	// Flow ids above 2^53 are kept exact: every flow end finds its start.
	assert.Len(t, tl.Flows, 274)
}

func FuzzTraceView(f *testing.F) {
	f.Add([]byte(miniTrace))
	f.Add([]byte(`{"traceEvents": [{"ph": "X", "name": "a", "ts": 1.5, "dur": "2"}]}`))
	f.Add([]byte(`[{"ph": "M", "name": "process_name", "args": {"name": "HCCL"}}, {"ph": "f", "cat": "async_npu", "id": "x", "ts": "1"}]`))
	if root := realdata.Root(); root != "" {
		for _, p := range []string{"torchnpu-1rank-nohccl/trace_view.json"} {
			if b, err := os.ReadFile(filepath.Join(root, p)); err == nil {
				f.Add(b[:min(len(b), 64<<10)])
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := parseTraceView(bytes.NewReader(data), "fuzz.json")
		if tl == nil {
			t.Fatal("nil timeline")
		}
		if err != nil && !strings.Contains(err.Error(), "fuzz.json") {
			t.Fatalf("error without the file name: %v", err)
		}
		for _, iv := range tl.Compute {
			if iv.EndNs < iv.StartNs {
				t.Fatalf("negative interval %v", iv)
			}
		}
	})
}

func benchTrace(b *testing.B) string {
	_, p := benchtrace.Default(b)
	return p
}

func BenchmarkTraceView(b *testing.B) {
	p := benchTrace(b)
	data, err := os.ReadFile(p)
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tl, err := parseTraceView(bytes.NewReader(data), p)
		if err != nil || len(tl.CommOps) != 240 {
			b.Fatalf("err %v, %d ops", err, len(tl.CommOps))
		}
	}
}

// BenchmarkTraceViewEncodingJSON decodes the same file event by event with
// encoding/json into a struct of the fields hcclprof reads: the baseline that the
// hand-written scanner (internal/jsonx) is measured against.
func BenchmarkTraceViewEncodingJSON(b *testing.B) {
	p := benchTrace(b)
	data, err := os.ReadFile(p)
	require.NoError(b, err)
	type event struct {
		Ph   string          `json:"ph"`
		Name string          `json:"name"`
		Pid  json.Number     `json:"pid"`
		Tid  json.Number     `json:"tid"`
		Ts   json.RawMessage `json:"ts"`
		Dur  json.Number     `json:"dur"`
		Cat  string          `json:"cat"`
		Args json.RawMessage `json:"args"`
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if _, err := dec.Token(); err != nil {
			b.Fatal(err)
		}
		n := 0
		for dec.More() {
			var e event
			if err := dec.Decode(&e); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n == 0 {
			b.Fatal("no events")
		}
	}
}

// TestParseTraceViewDropsEventsWithoutDurOrPid: a complete event without dur is not 0
// µs long, and a device event without pid is not process 0: each is dropped and the
// timeline names the first, by file and event number.
func TestParseTraceViewDropsEventsWithoutDurOrPid(t *testing.T) {
	whole, err := parseTraceView(strings.NewReader(miniTrace), "t.json")
	require.NoError(t, err)
	require.Empty(t, whole.Problems)
	require.NotEmpty(t, whole.Compute)

	noDur := strings.Replace(miniTrace, `"ts": "1736408883000100.000", "dur": 50.25,`, `"ts": "1736408883000100.000",`, 1)
	require.NotEqual(t, miniTrace, noDur)
	tl, err := parseTraceView(strings.NewReader(noDur), "t.json")
	require.NoError(t, err)
	assert.Equal(t, []string{`t.json: 1 complete events without dur, the first event 6 ("Add_AiCore"): dropped`}, tl.Problems)
	assert.Len(t, tl.Compute, len(whole.Compute)-1)

	noPid := strings.Replace(miniTrace, `"name": "Add_AiCore", "pid": 3170820512,`, `"name": "Add_AiCore",`, 1)
	require.NotEqual(t, miniTrace, noPid)
	tl, err = parseTraceView(strings.NewReader(noPid), "t.json")
	require.NoError(t, err)
	assert.Equal(t, []string{`t.json: 1 device events without pid, the first event 6 ("Add_AiCore"): dropped`}, tl.Problems)
	assert.Len(t, tl.Compute, len(whole.Compute)-1)
}

// What an event is comes from its process's and its row's names. A plane row without
// a thread_name still belongs to the op row (its tasks were silently lost: they
// belonged to no op); device events in a process no process_name names cannot be read
// at all, and the trace is incomplete, saying how many and where.
func TestParseTraceViewUnnamedRows(t *testing.T) {
	const planeName = `{"name": "thread_name", "pid": 3170820576, "tid": 1, "args": {"name": "Plane 0"}, "ph": "M"},` + "\n"
	noPlaneName := strings.Replace(miniTrace, planeName, "", 1)
	require.NotEqual(t, miniTrace, noPlaneName)
	tl, err := parseTraceView(strings.NewReader(noPlaneName), "t.json")
	require.NoError(t, err)
	assert.Empty(t, tl.Problems)
	require.Len(t, tl.CommTasks, 1)
	assert.Equal(t, "Group 0 Communication", tl.CommTasks[0].GroupRow)
	assert.Equal(t, 1, tl.CommTasks[0].Plane) // its tid, without a "Plane N" name

	// The same when the named rows are ordered by thread_sort_index and the plane has
	// neither a name nor an index: it belongs to the process's only op row.
	sorted := strings.Replace(noPlaneName, `{"name": "thread_name", "pid": 3170820576, "tid": 0,`,
		`{"name": "thread_sort_index", "pid": 3170820576, "tid": 0, "args": {"sort_index": 5}, "ph": "M"},`+"\n"+`{"name": "thread_name", "pid": 3170820576, "tid": 0,`, 1)
	require.NotEqual(t, noPlaneName, sorted)
	tl, err = parseTraceView(strings.NewReader(sorted), "t.json")
	require.NoError(t, err)
	require.Len(t, tl.CommTasks, 1)
	assert.Equal(t, "Group 0 Communication", tl.CommTasks[0].GroupRow)

	const hcclName = `{"name": "process_name", "pid": 3170820576, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"},` + "\n"
	noHCCLName := strings.Replace(miniTrace, hcclName, "", 1)
	require.NotEqual(t, miniTrace, noHCCLName)
	tl, err = parseTraceView(strings.NewReader(noHCCLName), "t.json")
	require.NoError(t, err)
	assert.Equal(t, []string{"t.json: 2 device events in processes no process_name event names (the first pid 3170820576): " +
		"what they are is read from that name, so they were not read"}, tl.Problems)
	assert.Empty(t, tl.CommOps)
	assert.Empty(t, tl.CommTasks)

	// Host events of an unnamed process are read by their names alone (steps, flows):
	// nothing is lost, nothing is said.
	const pythonName = `{"name": "process_name", "pid": 11, "tid": 0, "args": {"name": "Python"}, "ph": "M"},` + "\n"
	tl, err = parseTraceView(strings.NewReader(strings.Replace(miniTrace, pythonName, "", 1)), "t.json")
	require.NoError(t, err)
	assert.Empty(t, tl.Problems)
	assert.Len(t, tl.Steps, 1)
}

// The stream's buffer may end anywhere inside an event (events are parsed in place and
// re-read when the buffer ends inside one): fed a byte at a time, so that every event
// is first seen cut at each of its bytes, the trace reads exactly as in one piece. The
// trace ends with literals and numbers, which a buffer end can cut too.
func TestParseTraceViewByteByByte(t *testing.T) {
	trace := strings.TrimSuffix(miniTrace, "]") + `,{"ph": "i", "name": "x", "args": {"a": true, "b": false, "c": null, "d": NaN, "e": Infinity, "f": [1, -2.5e3]}, "ts": 12}]`
	whole, err := parseTraceView(strings.NewReader(trace), "mini.json")
	require.NoError(t, err)
	assert.Equal(t, 18, whole.Events)
	piecemeal, err := parseTraceView(iotest.OneByteReader(strings.NewReader(trace)), "mini.json")
	require.NoError(t, err)
	assert.Equal(t, whole, piecemeal)

	// A literal cut by the end of the file is a truncation, not a bad token.
	_, err = parseTraceView(strings.NewReader(`[{"ph": "i", "args": {"a": tr`), "cut.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the file is truncated")
	_, err = parseTraceView(strings.NewReader(`[{"ph": "i", "args": {"a": tx}}]`), "bad.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad event")
}
