package analysis

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// TestOpSplitRecomputedMatchesProfiler recomputes each op's Transit, Wait,
// Synchronization and per-transport traffic from the HCCL plane tasks of
// imagenet-2rank-level1 and compares them with the profiler's own communication.json.
func TestOpSplitRecomputedMatchesProfiler(t *testing.T) {
	dir := realdata.Path(t, "imagenet-2rank-level1")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	read := commOf(c)
	for _, r := range c.Ranks {
		r.CommStats = nil // force the recomputation
	}
	recomputed := commOf(c)
	require.Len(t, read.Ops, 8)
	require.Len(t, recomputed.Ops, 8)
	worst := map[string]float64{}
	defer func() { t.Logf("largest relative deviation of the recomputation: %v", worst) }()
	dev := func(name string, got, want int64) {
		if want != 0 {
			worst[name] = max(worst[name], math.Abs(float64(got-want))/float64(want))
		}
	}
	for i, want := range read.Ops {
		got := recomputed.Ops[i]
		require.Equal(t, "profiler", want.Source)
		require.Equal(t, "tasks", got.Source)
		assert.Equal(t, want.Name, got.Name)
		assert.Equal(t, 50, got.Step)
		assert.Equal(t, want.ElapseNs, got.ElapseNs, "%s elapse", got.Name)
		for _, f := range []struct {
			name      string
			got, want int64
		}{{"transit", got.TransitNs, want.TransitNs}, {"wait", got.WaitNs, want.WaitNs}, {"sync", got.SyncNs, want.SyncNs}, {"idle", got.IdleNs, want.IdleNs}} {
			assert.InDelta(t, f.want, f.got, max(0.01*float64(f.want), 2), "rank %d %s %s", got.Rank, got.Name, f.name)
			dev(f.name, f.got, f.want)
		}
		for _, w := range want.Transports {
			name := w.Transport
			g := got.Transports.Of(name)
			assert.Equal(t, w.Bytes, g.Bytes, "rank %d %s %s bytes", got.Rank, got.Name, name)
			assert.InDelta(t, w.TimeNs, g.TimeNs, max(0.01*float64(w.TimeNs), 2), "rank %d %s %s time", got.Rank, got.Name, name)
			dev(name+" time", g.TimeNs, w.TimeNs)
			// The size distribution: the same packets at the same sizes.
			wantBins, gotBins := map[int64]int64{}, map[int64]int64{}
			for _, b := range w.Sizes {
				wantBins[b.SizeBytes] += b.Count
			}
			for _, b := range g.Sizes {
				gotBins[b.SizeBytes] += b.Count
			}
			if name != "SDMA" { // the profiler writes no distribution for the SDMA sum
				assert.Equal(t, wantBins, gotBins, "rank %d %s %s size distribution", got.Rank, got.Name, name)
			}
			assert.Equal(t, w.LargePacketRatio, g.LargePacketRatio, "rank %d %s %s large packets", got.Rank, got.Name, name)
		}
		assert.Equal(t, len(want.Transports), len(got.Transports), "rank %d %s transports", got.Rank, got.Name)
	}
	// The first op of rank 0: docs/formats.md §3.2's verbatim figures.
	op := read.Ops[0]
	assert.Equal(t, int64(239185), op.TransitNs)
	assert.Equal(t, 0.9594, op.WaitRatio())
	assert.Equal(t, 0.9591, op.SyncRatio())
	assert.InDelta(t, 15.7676, op.Transports.Of("HCCS").BandwidthGBps(), 0.0001)
}

// TestLinksAndCrossRankWait maps group-local task ranks to global ranks through
// parallel_group_info and splits each op's elapse into wait for others and transit.
func TestLinksAndCrossRankWait(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "samples", "demo-2server-8rank")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("bundled sample absent")
	}
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	comm := commOf(c)
	assert.Zero(t, comm.UnmappedLinkBytes)
	// 2 servers of 4: mesh links inside each server, and RoCE between the servers'
	// same-position members (0↔4, 1↔5, 2↔6, 3↔7).
	byKey := map[[2]int]Link{}
	for _, l := range comm.Links {
		byKey[[2]int{l.Src, l.Dst}] = l
		if l.Transport == "RDMA" {
			assert.Equal(t, l.Src%4, l.Dst%4, "RoCE between same-position members: %d→%d", l.Src, l.Dst)
		} else {
			assert.Equal(t, l.Src/4, l.Dst/4, "%s inside a server: %d→%d", l.Transport, l.Src, l.Dst)
		}
	}
	assert.Len(t, comm.Links, 8*3+8, "3 mesh peers and 1 RoCE peer per rank")
	// The sample's injected slow link, 1→5, is the slowest RoCE link by far.
	slow := byKey[[2]int{1, 5}]
	require.Equal(t, "RDMA", slow.Transport)
	for k, l := range byKey {
		if l.Transport == "RDMA" && k != [2]int{1, 5} {
			assert.Greater(t, l.BandwidthGBps(), 1.8*slow.BandwidthGBps(), "%v", k)
		}
	}
	// Every op has one member that waited least (CrossWait 0) and none negative.
	zero := map[string]int{}
	for _, o := range comm.Ops {
		assert.GreaterOrEqual(t, o.CrossWaitNs, int64(0))
		if o.CrossWaitNs == 0 {
			zero[o.Name]++
		}
	}
	for name, n := range zero {
		assert.GreaterOrEqual(t, n, 1, name)
	}
}

func TestRDMATransferRule(t *testing.T) {
	ns := func(a, b int64) profile.Interval { return profile.Interval{StartNs: a, EndNs: b} }
	tasks := []profile.CommTask{
		{Plane: 1, TaskLabels: &profile.TaskLabels{Name: "Notify_Record"}, Interval: ns(0, 1)},
		{Plane: 1, TaskLabels: &profile.TaskLabels{Name: "Notify_Wait"}, Interval: ns(1, 100)}, // sync: before any data
		{Plane: 1, TaskLabels: &profile.TaskLabels{Name: "RDMASend", TransportType: "RDMA"}, Interval: ns(100, 110), SizeBytes: 1 << 20, SrcRank: 0, DstRank: 1},
		{Plane: 1, TaskLabels: &profile.TaskLabels{Name: "RDMASend", TransportType: "RDMA"}, Interval: ns(110, 111), SizeBytes: 4},
		{Plane: 1, TaskLabels: &profile.TaskLabels{Name: "Notify_Wait"}, Interval: ns(111, 611)}, // the RDMA transfer
		{Plane: 1, TaskLabels: &profile.TaskLabels{Name: "Notify_Record"}, Interval: ns(611, 612)},
		{Plane: 1, TaskLabels: &profile.TaskLabels{Name: "Notify_Wait"}, Interval: ns(612, 700)}, // a wait again
	}
	transit, wait, sync := timeSplit(byPlane(tasks))
	assert.Equal(t, int64(10+500), transit, "the data RDMASend and the wait that completes it")
	assert.Equal(t, int64(99+88), wait)
	assert.Equal(t, int64(99), sync)
	use := transportUse(byPlane(tasks))
	assert.Equal(t, Transports{{Transport: "RDMA", Bytes: 1 << 20, TimeNs: 510, Packets: 1, LargePacketRatio: 1,
		Sizes: []profile.PacketBin{{SizeBytes: 1 << 20, Count: 1, TimeNs: 510}}}}, use, "RDMA only: no SDMA sum")
}

// commOf runs the communication analysis of every rank of c and merges it.
func commOf(c *profile.Cluster) Communication {
	comms := make([]rankComm, len(c.Ranks))
	for i, r := range c.Ranks {
		comms[i] = rankCommunication(r, indexRank(r), DefaultLimits, nil)
	}
	return mergeCommunication(c, comms, DefaultLimits.RetransmissionNs)
}

// byPlane splits tasks by plane, as the analysis does for one op.
func byPlane(tasks []profile.CommTask) [][]profile.CommTask {
	var s planeSplitter
	ids := make([]int32, len(tasks))
	for i := range ids {
		ids[i] = int32(i)
	}
	return s.split(tasks, ids)
}

// TestTasksByRow: each row's tasks by start, as indices into the rank's tasks, ties
// in the tasks' order; a row out of order is sorted; an op gets the tasks of its row
// that start within it.
func TestTasksByRow(t *testing.T) {
	task := func(row string, startNs int64) profile.CommTask {
		return profile.CommTask{TaskLabels: &profile.TaskLabels{GroupRow: row}, Interval: profile.Interval{StartNs: startNs, EndNs: startNs + 5}}
	}
	tasks := []profile.CommTask{task("a", 10), task("b", 10), task("a", 20), task("a", 20), task("b", 5), task("a", 30)}
	x := rankIndex{tasks: tasks, byRow: tasksByRow(tasks)}
	assert.Equal(t, map[string][]int32{"a": {0, 2, 3, 5}, "b": {4, 1}}, x.byRow)
	op := profile.CommOp{GroupRow: "a", Interval: profile.Interval{StartNs: 15, EndNs: 30}}
	assert.Equal(t, []int32{2, 3, 5}, x.tasksOf(op), "starts within [15, 30]")
	op.GroupRow = "c"
	assert.Empty(t, x.tasksOf(op))
	assert.Empty(t, tasksByRow(nil))
}

// TestTaskKindOf: the task names the time split reads, in any case; anything else,
// including names of the same length, is another kind.
func TestTaskKindOf(t *testing.T) {
	for name, want := range map[string]taskKind{
		"Notify_Wait": kindNotifyWait, "notify_wait": kindNotifyWait, "NOTIFY_WAIT": kindNotifyWait,
		"Memcpy": kindMemcpy, "MEMCPY": kindMemcpy, "RDMASend": kindRDMASend, "rdmasend": kindRDMASend,
		"Reduce_Inline": kindReduceInline, "reduce_inline": kindReduceInline,
		"Notify_Post": kindOther, "Memset": kindOther, "RDMASendX": kindOther, "Reduce_TBE": kindOther, "": kindOther,
	} {
		assert.Equal(t, want, taskKindOf(name), name)
	}
}

// A rank without task rows: an op whose RDMA time passes the limit is a retransmission
// (from the op's total) only when the op took the limit on every profiled rank; a
// peer that finished quickly says the time was not lost on the wire for everyone.
func TestRetransmissionFromOpTotals(t *testing.T) {
	limit := DefaultLimits.RetransmissionNs
	op := func(rank int, name string, elapseNs, rdmaNs int64) OpStat {
		return OpStat{Rank: rank, Step: 2, Group: "g", Name: name, Type: "allreduce", ElapseNs: elapseNs,
			Transports: Transports{{Transport: "RDMA", Bytes: 4_915_200, TimeNs: rdmaNs}}}
	}
	ranks := []rankComm{
		{ops: []OpStat{op(0, "hcom_allReduce__1_1_1", limit+600_000_000, limit+500_000_000), op(0, "hcom_allReduce__1_2_1", limit+600_000_000, limit+500_000_000)},
			rdmaSuspects: []int{0, 1}},
		{ops: []OpStat{op(1, "hcom_allReduce__1_1_1", limit+100_000_000, 1_000_000), op(1, "hcom_allReduce__1_2_1", 10_000_000, 1_000_000)}},
	}
	got := mergeCommunication(&profile.Cluster{}, ranks, limit).Retransmissions
	require.Len(t, got, 1, "%+v", got)
	assert.Equal(t, Retransmission{Src: 0, Dst: -1, Step: 2, Op: "hcom_allReduce__1_1_1", TimeNs: limit + 500_000_000, LimitNs: limit,
		FromOpTotal: true, Bytes: 4_915_200}, got[0])
	assert.Equal(t, "rank 0 (peer not recorded)", got[0].Link())
}
