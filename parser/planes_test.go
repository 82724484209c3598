package parser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// TestPlaneGroupRows: plane rows belong to the op row before them in thread_sort_index
// order. The old msprof layout puts "Communication Kernel" at tid 70000 with sort index
// 0 and its planes at tids 0..3 with sort indexes 70000..; torch_npu's puts the op row
// at tid 0 (sort 0) and planes at tids 1.. (sort 1..).
func TestPlaneGroupRows(t *testing.T) {
	meta := func(tid int, name string, sort int) string {
		s := `{"name": "thread_name", "pid": 9, "tid": ` + strconv.Itoa(tid) + `, "args": {"name": "` + name + `"}, "ph": "M"},`
		if sort >= 0 {
			s += `{"name": "thread_sort_index", "pid": 9, "tid": ` + strconv.Itoa(tid) + `, "args": {"sort_index": ` + strconv.Itoa(sort) + `}, "ph": "M"},`
		}
		return s
	}
	op := func(tid int) string {
		return `{"name": "hcom_allReduce__1_0_1", "pid": 9, "tid": ` + strconv.Itoa(tid) + `, "ts": 10, "dur": 100, "ph": "X", "args": {}},`
	}
	// task puts a task on a row; its start (µs) names it in the result.
	task := func(tid, ts int) string {
		return `{"name": "Memcpy", "pid": 9, "tid": ` + strconv.Itoa(tid) + `, "ts": ` + strconv.Itoa(ts) +
			`, "dur": 1, "ph": "X", "args": {"task type": "Memcpy", "src rank": 0, "dst rank": 1, "transport type": "SDMA", "link type": "HCCS", "size(Byte)": 64}},`
	}
	trace := func(parts ...string) string {
		body := `{"name": "process_name", "pid": 9, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"},` + strings.Join(parts, "")
		return "[" + strings.TrimSuffix(body, ",") + "]"
	}
	const ck, g0, g1 = "Communication Kernel", "Group 0 Communication", "Group 1 Communication"
	for _, tc := range []struct {
		name  string
		trace string
		want  map[int64]string // task start (ns) → its GroupRow
	}{
		{"old msprof: the op row is last by tid, first by sort index",
			trace(meta(0, "Plane 0", 70000), meta(1, "Plane 1", 70001), meta(70000, ck, 0), op(70000), task(0, 11), task(1, 12)),
			map[int64]string{11_000: ck, 12_000: ck}},
		{"old msprof without sort indexes: the only op row",
			trace(meta(0, "Plane 0", -1), meta(1, "Plane 1", -1), meta(70000, ck, -1), op(70000), task(0, 11), task(1, 12)),
			map[int64]string{11_000: ck, 12_000: ck}},
		{"torch_npu: two groups in tid and sort order",
			trace(meta(0, g0, 0), meta(1, "Plane 0", 1), meta(2, g1, 2), meta(3, "Plane 0", 3), op(0), op(2), task(1, 11), task(3, 12)),
			map[int64]string{11_000: g0, 12_000: g1}},
		{"sort indexes reorder the rows",
			trace(meta(0, g0, 2), meta(1, "Plane 0", 0), meta(2, g1, 1), meta(3, "Plane 0", 3), op(0), op(2), task(1, 11), task(3, 12)),
			map[int64]string{11_000: "", 12_000: g0}},
		{"sort indexes on some rows only: by tid",
			trace(meta(0, g0, 5), meta(1, "Plane 0", -1), meta(2, g1, 0), meta(3, "Plane 0", -1), op(0), op(2), task(1, 11), task(3, 12)),
			map[int64]string{11_000: g0, 12_000: g1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := parseTraceView(strings.NewReader(tc.trace), "t.json")
			require.NoError(t, err)
			got := map[int64]string{}
			for _, tk := range tl.CommTasks {
				got[tk.StartNs] = tk.GroupRow
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestMsprofAlexnetOpTasks: the tasks of the real MindSpore AlexNet AllReduce (old msprof
// per-iteration timelines, Plane 0..3 at tids 0..3 before the "Communication Kernel" row
// at tid 70000) belong to the op, so the op's transit, wait and bytes come from them.
// Iteration 1's figures, summed from msprof_0_2_1.json's HCCL tasks (the op spans
// 41534.3 µs from ts 56635868946.3):
//   - transit 6377.31 µs and wait 34664.19 µs: Plane 1's Memcpy + Reduce_Inline
//     (3376.86 + 3000.45) and Notify_Wait durations, the plane the op-level split is
//     taken from (the first after Plane 0, as the profiler's figures match on torch_npu
//     data); synchronisation 29645.55 µs (its Notify_Waits before its first data task);
//     idle = 41534.3 − 6377.31 − 34664.19 = 492.80 µs;
//   - bytes moved 393,292,032 over all four planes (7 Memcpy + 7 Reduce_Inline each:
//     Planes 0..2 over HCCS, 294,968,576 B, Plane 3 over PCIe, 98,323,456 B), in 26883.42 µs
//     of task time. Plane 0's on-chip copy of 28,092,288 B is not a transfer between
//     ranks and is left out, as msprof's bandwidth figures leave ON_CHIP out; counted in,
//     the tasks hold 421,384,320 B.
//
// The op event has no count or data type (graph-mode ops carry no args), so the op's
// own size (count × type) stays unknown: OpStat.Bytes is 0.
func TestMsprofAlexnetOpTasks(t *testing.T) {
	dir := realdata.Path(t, "msprof-mindspore-alexnet", alexnetProf)
	ranks, err := loadMsprofDir(dir)
	require.NoError(t, err)
	r := ranks[0]
	require.Len(t, r.CommOps, 3)
	require.Len(t, r.CommTasks, 3*337, "91 tasks on Plane 0 and 82 on Planes 1..3 per iteration")
	for _, tk := range r.CommTasks {
		require.Equal(t, "Communication Kernel", tk.GroupRow, "task on plane %d at %d", tk.Plane, tk.StartNs)
	}

	res := analysis.Analyze(&profile.Cluster{Ranks: ranks}, analysis.Options{})
	ops := res.Communication.Ops
	require.Len(t, ops, 3)
	op := ops[0]
	require.Equal(t, 1, op.Step)
	assert.Equal(t, "tasks", op.Source)
	assert.Equal(t, int64(41_534_300), op.ElapseNs)
	assert.Equal(t, int64(6_377_310), op.TransitNs)
	assert.Equal(t, int64(34_664_190), op.WaitNs)
	assert.Equal(t, int64(29_645_550), op.SyncNs)
	assert.Equal(t, int64(492_800), op.IdleNs)
	assert.Zero(t, op.Bytes, "the op's count and type are not in the profile")
	assert.Equal(t, analysis.TransportUse{Transport: "HCCS", Bytes: 294_968_576, TimeNs: 20_042_920, Packets: 42}, stripSizes(op.Transports.Of("HCCS")))
	assert.Equal(t, analysis.TransportUse{Transport: "PCIE", Bytes: 98_323_456, TimeNs: 6_840_500, Packets: 14}, stripSizes(op.Transports.Of("PCIE")))
	assert.Equal(t, int64(393_292_032), op.Transports.Of("SDMA").Bytes)
	assert.Equal(t, int64(26_883_420), op.Transports.Of("SDMA").TimeNs)
	// Iterations 2 and 3 move the same bytes, waiting far less.
	for _, o := range ops[1:] {
		assert.Equal(t, int64(393_292_032), o.Transports.Of("SDMA").Bytes, "step %d", o.Step)
		assert.Less(t, o.WaitNs, op.WaitNs/10, "step %d", o.Step)
	}
	assert.Equal(t, []int64{6_591_320, 7_091_230}, []int64{ops[1].TransitNs, ops[2].TransitNs})
	assert.Equal(t, []int64{2_340_930, 1_762_570}, []int64{ops[1].WaitNs, ops[2].WaitNs})
}

func stripSizes(u analysis.TransportUse) analysis.TransportUse {
	u.Sizes, u.LargePacketRatio = nil, 0
	return u
}

// TestMsprofAlexnetHCCLFileRepeatsTimeline: hccl_0_2_N.json, which the loader ignores,
// holds exactly the HCCL process of msprof_0_2_N.json (same threads, sort indexes, op
// and tasks with the same args): nothing the merged timeline lacks.
func TestMsprofAlexnetHCCLFileRepeatsTimeline(t *testing.T) {
	dir := realdata.Path(t, "msprof-mindspore-alexnet", alexnetProf, "device_0", "timeline")
	for _, it := range []string{"1", "2", "3"} {
		parse := func(name string) *traceTimeline {
			f, err := os.Open(filepath.Join(dir, name))
			require.NoError(t, err)
			defer f.Close()
			tl, err := parseTraceView(f, name)
			require.NoError(t, err)
			return tl
		}
		merged, hccl := parse("msprof_0_2_"+it+".json"), parse("hccl_0_2_"+it+".json")
		require.Len(t, hccl.CommOps, 1, "iteration %s", it)
		assert.Equal(t, merged.CommOps, hccl.CommOps, "iteration %s", it)
		assert.Equal(t, merged.CommTasks, hccl.CommTasks, "iteration %s", it)
		assert.Empty(t, hccl.Compute)
	}
}
