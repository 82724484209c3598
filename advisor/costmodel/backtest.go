package costmodel

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// OpBackTest is the calibrated model's error on one op type: each op instance's
// predicted time (HCCL's two-level algorithm for its group's shape, priced with the
// calibrated links, nothing fitted on the op itself) against its measured time once
// every rank has arrived (the fastest rank's elapse: docs/costmodel.md §5.2's T_pure).
type OpBackTest struct {
	Op     string
	Ops    int // op instances compared
	Groups int
	Sizes  int // distinct sizes
	// MAPE is the mean |predicted − measured| / measured; P90 the 90th percentile
	// of that error; MedianRatio the median measured / predicted (above 1: the model
	// is optimistic, e.g. per-op overheads it does not price). All three are NaN
	// when no instance was priced (Ops 0).
	MAPE, P90, MedianRatio float64
	// Skipped counts instances the model does not price (no formula for the op or
	// its group's shape, or a size the profile does not give); Note says why.
	Skipped int
	Note    string
}

// BackTest compares every op type's measured time with the calibrated model's.
// bufferBytes is the run's HCCL_BUFFSIZE (rounds).
func BackTest(res *analysis.Result, bufferBytes int64) []OpBackTest {
	return Fit(res, 1, bufferBytes).BackTest()
}

// BackTest compares every op type's measured time with the model on the run's fit.
func (f *RunFit) BackTest() []OpBackTest {
	res, bufferBytes := f.res, f.bufferBytes
	byGroup := map[string][]*analysis.OpStat{}
	for i := range res.Communication.Ops {
		o := &res.Communication.Ops[i]
		byGroup[o.Group] = append(byGroup[o.Group], o)
	}
	type acc struct {
		errs, ratios []float64
		groups       map[string]bool
		sizes        map[int64]bool
		skipped      int
		why          string
	}
	by := map[string]*acc{}
	topologies := f.Topologies()
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		ops := byGroup[g]
		topo := topologies[g]
		seen := map[string]bool{} // one fastest rank per op instance
		for _, o := range ops {
			if o.CrossWaitNs != 0 || o.ElapseNs <= 0 || o.Bytes < 0 || seen[o.Name] {
				continue
			}
			seen[o.Name] = true
			a := by[o.Type]
			if a == nil {
				a = &acc{groups: map[string]bool{}, sizes: map[int64]bool{}}
				by[o.Type] = a
			}
			if o.Bytes == 0 {
				a.skipped++
				a.why = unknownOpSize
				continue
			}
			c, err := topo.OpCost(o.Type, o.Bytes, bufferBytes)
			if err == nil && c.TimeUs <= 0 {
				sources := topo.IntraSource
				if topo.Servers > 1 {
					sources += ", " + topo.InterSource
				}
				err = fmt.Errorf("its links have no figure to price it with (%s)", sources)
			}
			if err != nil {
				a.skipped++
				a.why = err.Error()
				continue
			}
			measured := float64(o.ElapseNs) / 1e3
			a.errs = append(a.errs, math.Abs(c.TimeUs-measured)/measured)
			a.ratios = append(a.ratios, measured/c.TimeUs)
			a.groups[g] = true
			a.sizes[o.Bytes] = true
		}
	}
	out := make([]OpBackTest, 0, len(by))
	for _, t := range slices.Sorted(maps.Keys(by)) {
		a := by[t]
		bt := OpBackTest{Op: t, Ops: len(a.errs), Groups: len(a.groups), Sizes: len(a.sizes), Skipped: a.skipped,
			MAPE: math.NaN(), P90: math.NaN(), MedianRatio: math.NaN()}
		if len(a.errs) > 0 {
			sort.Float64s(a.errs)
			sort.Float64s(a.ratios)
			bt.MAPE = sumOf(a.errs) / float64(len(a.errs))
			bt.P90 = stats.QuantileSorted(a.errs, 0.9)
			bt.MedianRatio = stats.MedianSorted(a.ratios)
		}
		switch {
		case len(a.errs) == 0:
			bt.Note = "not priced: " + a.why
		case bt.MAPE > 0.2:
			bt.Note = fmt.Sprintf("%.0f%% error: the model does not explain these ops (per-op overheads, waits inside the op, or a different algorithm); do not use it for them quantitatively", 100*bt.MAPE)
		case bt.Sizes < 3:
			bt.Note = "fewer than 3 sizes: the error says little about other sizes"
		}
		out = append(out, bt)
	}
	return out
}

// unknownOpSize is why an op of unknown size is not priced.
const unknownOpSize = "the op's size is unknown: the profile gives no element count or data type for it (of Ascend's files, only the timeline's op rows carry them)"

// OpCost prices one op of the profile's bytes on the topology. HCCL counts the
// AllGather and ReduceScatter per rank, so their total is bytes × ranks; the
// two-level forms follow docs/costmodel.md §3.6: ReduceScatter inter-server first, then
// inside; AllGather inside first, then between servers; Broadcast a scatter inside,
// a broadcast of the pieces between servers, an all-gather inside (Reduce the
// mirror); AlltoAll HCCL's staged path. The in-server steps use the topology's
// level 0 (a mesh, or 910A's ring).
func (t Topology) OpCost(op string, bytes, bufferBytes int64) (Cost, error) {
	pl, m := t.RanksPerServer, t.Servers
	p := pl * m
	o := NormaliseOp(op)
	if p < 2 {
		return Cost{}, fmt.Errorf("a group of one rank")
	}
	level0 := t.level0()
	var out Cost
	add := func(c Cost, err error) error {
		if err != nil {
			return err
		}
		out.LatencyUs += c.LatencyUs
		out.BandwidthUs += c.BandwidthUs
		out.ReduceUs += c.ReduceUs
		out.Rounds = max(out.Rounds, c.Rounds)
		return nil
	}
	done := func(algo string, total int64, err error) (Cost, error) {
		if err != nil {
			return Cost{}, err
		}
		out.Op, out.Algo, out.Ranks, out.Bytes = o, algo, p, total
		out.finish()
		return out, nil
	}
	switch o {
	case "allreduce":
		return t.allReduceCost(bytes, t.Level1, bufferBytes)
	case "allgather", "reducescatter":
		total := bytes * int64(p)
		level1 := t.Level1
		if level1 == "pipeline" {
			if ok, why := pipelineAvailable(t.Product, level0, o, pl, m, false); !ok {
				return Cost{}, fmt.Errorf("no pipeline: %s", why)
			}
			// §3.2: one half of the Pipeline AllReduce, on the total.
			c, err := pipelineAllReduce(pl, m, total, t.Intra, t.Inter)
			if err != nil {
				return Cost{}, err
			}
			c.Op, c.LatencyUs, c.BandwidthUs = o, c.LatencyUs/2, c.BandwidthUs/2
			c.finish()
			return c, nil
		}
		var err error
		if m > 1 {
			err = add(Model(o, level1, m, total, t.Inter, bufferBytes))
		}
		if err == nil && pl > 1 {
			err = add(Model(o, level0, pl, total/int64(m), t.Intra, bufferBytes))
		}
		return done("hierarchical-"+level1, total, err)
	case "broadcast", "reduce":
		if m == 1 {
			return Model(o, level0, p, bytes, t.Intra, bufferBytes)
		}
		if pl == 1 {
			return Model(o, t.Level1, p, bytes, t.Inter, bufferBytes)
		}
		// In-server scatter (reduce-scatter for Reduce) and all-gather (gather): each
		// moves (pl−1)/pl of the vector, over pl−1 links at once on a mesh.
		inner := "allgather"
		if o == "reduce" {
			inner = "reducescatter"
		}
		err := add(Model(inner, level0, pl, bytes, t.Intra, bufferBytes))
		if err == nil {
			err = add(Model("allgather", level0, pl, bytes, t.Intra, bufferBytes))
		}
		if err == nil {
			err = add(Model(o, t.Level1, m, bytes/int64(pl), t.Inter, bufferBytes))
		}
		return done("hierarchical-"+t.Level1, bytes, err)
	case "alltoall":
		if m == 1 {
			return Model(o, "mesh", p, bytes, t.Intra, bufferBytes)
		}
		if pl == 1 {
			return Model(o, "pairwise", p, bytes, t.Inter, bufferBytes)
		}
		// Staged: μ = bytes/p per pair. Inside, each rank hands every local peer the
		// m·μ bound for that peer's column (pl−1 links at once); between servers, each
		// rank sends every other server pl·μ, one server a step.
		mu := float64(bytes) / float64(p)
		out.LatencyUs = t.Intra.AlphaUs + float64(m-1)*t.Inter.AlphaUs
		out.BandwidthUs = float64(m)*mu*t.Intra.betaUsPerByte() + float64(m-1)*float64(pl)*mu*t.Inter.betaUsPerByte()
		out.Rounds = 1
		return done("staged", bytes, nil)
	}
	return Cost{}, fmt.Errorf("no two-level form for %s", op)
}
