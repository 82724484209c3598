package analysis

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// randomRank is a timeline built to trip a careless reduction: two compute streams
// of short kernels with random gaps, long kernels that cross step windows, zero-length
// kernels, ops (with SDMA transfers) placed anywhere, flows that lag the host, and an
// Overlap Analysis layer made from the same intervals.
func randomRank(seed uint64, markers, clip bool) *profile.Rank {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := &profile.Rank{Rank: 0, Dir: "r", Format: profile.FormatTorchNPUText, HasTimeline: true, ClipToStepWindows: clip,
		Info: profile.Info{RankID: 0}}
	const span = 10_000_000
	const lag = 50_000
	for stream := range 2 {
		t := int64(stream * 1000)
		for t < span {
			d := int64(rng.IntN(20_000))
			switch rng.IntN(150) {
			case 0:
				d = int64(rng.IntN(3_000_000)) // crosses windows
			case 1:
				d = 0
			}
			r.Compute = append(r.Compute, profile.Interval{StartNs: t, EndNs: t + d})
			r.Flows = append(r.Flows, profile.DeviceFlow{DeviceNs: t, HostNs: t - lag - int64(rng.IntN(1000))})
			t += d + int64(rng.IntN(30_000))
		}
	}
	sort.SliceStable(r.Compute, func(i, j int) bool { return r.Compute[i].StartNs < r.Compute[j].StartNs })
	for i := range 12 {
		start := int64(rng.IntN(span))
		op := profile.CommOp{Name: fmt.Sprintf("hcom_allReduce__1_%d_1", i), Type: "allreduce", Group: "g", GroupRow: "Group 0 Communication",
			Interval: profile.Interval{StartNs: start, EndNs: start + int64(rng.IntN(400_000))}, Step: -1, DataType: "FP32", Count: 1 << 20}
		r.CommOps = append(r.CommOps, op)
		for k := int64(0); k < 4; k++ {
			ts := op.StartNs + k*(op.DurNs()/4)
			r.CommTasks = append(r.CommTasks, profile.CommTask{Plane: 0, TaskLabels: &profile.TaskLabels{GroupRow: op.GroupRow, Name: "Memcpy", TransportType: "SDMA", LinkType: "HCCS"}, Interval: profile.Interval{StartNs: ts, EndNs: ts + op.DurNs()/5},
				SrcRank: 0, DstRank: 1, SizeBytes: 2_000_000})
		}
	}
	profile.SortOpsByStart(r.CommOps)
	sort.SliceStable(r.CommTasks, func(i, j int) bool { return r.CommTasks[i].StartNs < r.CommTasks[j].StartNs })
	if markers {
		for s := range 4 {
			r.Steps = append(r.Steps, profile.StepMarker{Step: s + 1, Interval: profile.Interval{StartNs: int64(s)*span/4 - lag, EndNs: int64(s+1)*span/4 - lag}})
		}
	}
	comp := union(r.Compute)
	r.Overlap.Computing = comp
	var gaps []profile.Interval
	for i := 1; i < len(comp); i++ {
		gaps = append(gaps, profile.Interval{StartNs: comp[i-1].EndNs, EndNs: comp[i].StartNs})
	}
	r.Overlap.Free = gaps
	return r
}

// TestCompactMeasuresTheSame: on random timelines with and without step markers, and
// with Kineto's clipping, the compacted rank gives the same analysis, the same
// exposed intervals, and holds far fewer compute tasks and flows.
func TestCompactMeasuresTheSame(t *testing.T) {
	for seed := range uint64(20) {
		for _, v := range []struct{ markers, clip bool }{{true, false}, {false, false}, {true, true}} {
			t.Run(fmt.Sprintf("seed%d/markers=%v/clip=%v", seed, v.markers, v.clip), func(t *testing.T) {
				r := randomRank(seed, v.markers, v.clip)
				c := Compact(r)
				want := Analyze(&profile.Cluster{Ranks: []*profile.Rank{r}}, Options{})
				got := Analyze(&profile.Cluster{Ranks: []*profile.Rank{c}}, Options{})
				require.Equal(t, want, got)
				require.Equal(t, ExposedCommunication(r), ExposedCommunication(c))
				assert.Less(t, len(c.Compute), len(r.Compute)*3/4, "compute folded")
				if v.markers {
					assert.LessOrEqual(t, len(c.Flows), 2*len(r.Steps))
				}
				assert.Equal(t, r.CommOps, c.CommOps)
				assert.Equal(t, r.CommTasks, c.CommTasks)
			})
		}
	}
}

// TestCompactLeavesTheRankAlone: Compact copies; the rank it was given is unchanged.
func TestCompactLeavesTheRankAlone(t *testing.T) {
	r := randomRank(1, true, false)
	before := randomRank(1, true, false)
	_ = Compact(r)
	assert.Equal(t, before, r)
}
