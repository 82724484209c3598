package compare

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchmath"
)

// TestMannWhitneyKnownValues: scipy.stats.mannwhitneyu's documentation example (the
// males' and females' scores: U1 = 17, exact two-sided p = 0.1111), and a case by
// hand: every x above every y, 4 against 4, U = 16 and p = 2/C(8,4) = 2/70.
func TestMannWhitneyKnownValues(t *testing.T) {
	r := mannWhitneyU([]float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12})
	assert.Equal(t, 17.0, r.U)
	assert.Equal(t, "exact", r.Method)
	assert.InDelta(t, 0.1111, r.P, 1e-4)

	r = mannWhitneyU([]float64{5, 6, 7, 8}, []float64{1, 2, 3, 4})
	assert.Equal(t, 16.0, r.U)
	assert.InDelta(t, 2.0/70, r.P, 1e-12)

	// Small samples with ties take the exact distribution of U with those ties, as
	// benchstat does (the normal approximation used before gave p = 0.0993); identical
	// samples give no evidence.
	r = mannWhitneyU([]float64{1, 2, 2, 3}, []float64{2, 3, 3, 4, 5})
	assert.Equal(t, "exact", r.Method)
	assert.Equal(t, 3.0, r.U)
	assert.InDelta(t, 10.0/63, r.P, 1e-12)
	r = mannWhitneyU([]float64{3, 3, 3}, []float64{3, 3})
	assert.Equal(t, "none", r.Method)
	assert.Equal(t, 1.0, r.P)
	assert.Equal(t, "none", mannWhitneyU(nil, []float64{1}).Method)
}

// TestMannWhitneyIsBenchstats: the p-value is benchstat's, golang.org/x/perf/benchmath's
// U test, to the last bit, on pairs where the test written here before agreed (the
// exact test without ties) and where it did not (ties: it took the normal
// approximation, p 0.0993 and 0.1556 where benchstat says 0.1587 and 0.1518).
func TestMannWhitneyIsBenchstats(t *testing.T) {
	for _, tc := range []struct {
		x, y  []float64
		want  float64 // benchmath.AssumeNothing.Compare(x, y).P
		old   float64 // what hcclprof said before
		exact bool
	}{
		{[]float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 0.11111111111111113, 0.1111111111111111, true},
		{[]float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 0.028571428571428577, 0.028571428571428571, true},
		{[]float64{1, 2, 2, 3}, []float64{2, 3, 3, 4, 5}, 0.15873015873015872, 0.099342247853465238, true},
		{[]float64{10, 11, 9, 10.5, 10.2, 9.8, 10.1, 10.3}, []float64{10.4, 10.6, 9.9, 10.8, 10.7, 11.0, 10.9, 10.0}, 0.15182595182595182, 0.15564460775261824, true},
	} {
		th := benchmath.DefaultThresholds
		bx, by := slices.Clone(tc.x), slices.Clone(tc.y)
		c := benchmath.AssumeNothing.Compare(benchmath.NewSample(bx, &th), benchmath.NewSample(by, &th))
		assert.Equal(t, tc.want, c.P, "the pinned value is benchmath's")
		x0 := slices.Clone(tc.x)
		r := mannWhitneyU(tc.x, tc.y)
		assert.Equal(t, tc.want, r.P, "%v %v (before: %v)", tc.x, tc.y, tc.old)
		assert.Equal(t, x0, tc.x, "the samples are left unsorted")
		assert.Equal(t, tc.exact, r.Method == "exact")
	}
	// Beyond 25 values a sample with ties, the normal approximation, still benchmath's.
	var x, y []float64
	for i := range 30 {
		x, y = append(x, float64(i%7)), append(y, float64(i%9)+0.5*float64(i%2))
	}
	th := benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(x), &th), benchmath.NewSample(slices.Clone(y), &th))
	r := mannWhitneyU(x, y)
	assert.Equal(t, "normal", r.Method)
	assert.Equal(t, c.P, r.P)
}

func TestBootstrapDeterministic(t *testing.T) {
	x := []float64{10, 11, 9, 10.5, 10.2, 9.8}
	y := []float64{12, 12.5, 11.8, 12.2, 12.1, 11.9}
	a := bootstrapMeanDiff(x, y, 2000, 0.05, 7)
	assert.Equal(t, a, bootstrapMeanDiff(x, y, 2000, 0.05, 7), "same seed, same interval")
	assert.True(t, a.Contains(2.0), "%+v", a)
	assert.Greater(t, a.Lo, 0.0)
}

func samples(stageNs, exposedNs int64, n int) []StepSample {
	out := make([]StepSample, n)
	for i := range out {
		jitter := int64(i%3) * 1000
		out[i] = StepSample{Rank: i % 4, Step: i / 4, StageNs: stageNs + jitter, ComputingNs: stageNs - exposedNs + jitter,
			CommunicationNs: exposedNs, CommNotOverlappedNs: exposedNs, ExposedNs: exposedNs}
	}
	return out
}

func TestCompare(t *testing.T) {
	base := &Run{Label: "base", Ranks: 4, Steps: 3, Samples: samples(100_000_000, 40_000_000, 12)}
	same := Compare(base, base, Options{Seed: 1})
	for _, m := range same.Metrics {
		assert.False(t, m.Significant, m.Name)
		assert.Zero(t, m.Delta, m.Name)
	}
	newer := &Run{Label: "new", Ranks: 4, Steps: 3, Samples: samples(80_000_000, 20_000_000, 12)}
	d := Compare(base, newer, Options{Seed: 1})
	share, ok := d.Metric("comm_share")
	require.True(t, ok)
	assert.InDelta(t, -0.15, share.Delta, 0.01, "0.40 → 0.25")
	step, _ := d.Metric("step_time_us")
	assert.True(t, step.Significant)
	assert.InDelta(t, -20000, step.Delta, 1e-6)
	// The step-time change is the sum of its parts.
	assert.InDelta(t, -20000, d.Attribution.StepTimeDeltaUs, 1e-6)
	assert.Zero(t, d.Attribution.ResidueUs)
	gv := d.GateValues()
	assert.InDelta(t, -0.15, gv["comm_share.delta"], 0.01)
	assert.InDelta(t, -20, gv["step_time_us.delta_pct"], 0.01)
}

func TestMembersLabel(t *testing.T) {
	for _, tc := range []struct {
		members []int
		size    int
		want    string
	}{
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, 8, "ranks 0-7"},
		{[]int{1, 0}, 8, "ranks 0-1 of 8"},
		{[]int{0}, 0, "ranks 0"},
		{[]int{6, 0, 2, 4, 2}, 4, "ranks 0, 2, 4, 6"},
		{[]int{0, 1, 2, 8, 9, 10, 12}, 16, "ranks 0-2, 8-10, 12 of 16"},
	} {
		assert.Equal(t, tc.want, membersLabel(tc.members, tc.size), "%v of %d", tc.members, tc.size)
	}
}

// TestCollectivesMatchAcrossRuns: group keys differ from run to run; a collective is
// matched by its group's name, else its members, and two groups of one op with the
// same members (which cannot be told apart) keep their keys.
func TestCollectivesMatchAcrossRuns(t *testing.T) {
	run := func(label string, keys [4]string) *Run {
		r := &Run{Label: label, Collectives: []CollectiveInfo{
			{Op: "allreduce", Group: keys[0], GroupName: "dp", GroupSize: 2, Count: 1, MeanNs: 1000, Members: []int{0, 1}},
			{Op: "allgather", Group: keys[1], GroupSize: 4, Count: 1, MeanNs: 2000, Members: []int{0, 1, 2, 3}},
			{Op: "broadcast", Group: keys[2], GroupSize: 2, Count: 1, MeanNs: 3000, Members: []int{0, 1}},
			{Op: "broadcast", Group: keys[3], GroupSize: 2, Count: 1, MeanNs: 4000, Members: []int{0, 1}},
		}}
		for _, c := range r.Collectives {
			r.Ops = append(r.Ops, OpSample{Rank: 0, Step: 1, Group: c.Group, Type: c.Op, ElapseNs: int64(c.MeanNs), BytesTot: 1 << 20})
		}
		return r
	}
	d := Compare(run("base", [4]string{"h1", "h2", "h3", "h4"}), run("new", [4]string{"k1", "k2", "k3", "k4"}), Options{Seed: 1})
	type row struct {
		op, group     string
		inBase, inNew bool
	}
	var got []row
	for _, c := range d.Collectives {
		got = append(got, row{c.Op, c.Group, c.InBase, c.InNew})
		if c.InBase && c.InNew {
			assert.Zero(t, c.MeanUs.Delta, c.Op)
		}
	}
	assert.ElementsMatch(t, []row{
		{"allreduce", "dp", true, true},
		{"allgather", "ranks 0-3", true, true},
		{"broadcast", "h3", true, false}, {"broadcast", "h4", true, false},
		{"broadcast", "k3", false, true}, {"broadcast", "k4", false, true},
	}, got)
	for _, c := range d.Collectives {
		if !c.InNew {
			assert.Zero(t, c.MeanUs.New.N, "no sample where the run lacks it")
		}
	}
}

// TestCollectivesMatchProfiledSubsets: a communicator profiled on fewer ranks in one
// run (its members a subset, its size the same) is matched when it is the only
// candidate either way; two candidates leave both runs' rows apart.
func TestCollectivesMatchProfiledSubsets(t *testing.T) {
	run := func(label string, groups map[string][]int) *Run {
		r := &Run{Label: label}
		for key, members := range groups {
			r.Collectives = append(r.Collectives, CollectiveInfo{Op: "allreduce", Group: key, GroupSize: 8, Count: 1, MeanNs: 1000, Members: members})
			for _, rank := range members {
				r.Ops = append(r.Ops, OpSample{Rank: rank, Step: 1, Group: key, Type: "allreduce", ElapseNs: 1000})
			}
		}
		return r
	}
	rows := func(d *Diff) map[string][2]int {
		out := map[string][2]int{}
		for _, c := range d.Collectives {
			out[c.Group] = [2]int{c.MeanUs.Base.N, c.MeanUs.New.N}
		}
		return out
	}
	// Two tensor-parallel groups profiled whole, then rank 0 alone.
	d := Compare(run("base", map[string][]int{"a": {0, 1, 2, 3, 4, 5, 6, 7}, "b": {8, 9, 10, 11, 12, 13, 14, 15}}),
		run("new", map[string][]int{"c": {0}}), Options{Seed: 1})
	assert.Equal(t, map[string][2]int{"ranks 0-7": {8, 1}, "ranks 8-15": {8, 0}}, rows(d))
	// Rank 0 alone in the base, two groups holding it in the new run: ambiguous.
	d = Compare(run("base", map[string][]int{"c": {0}}),
		run("new", map[string][]int{"a": {0, 1, 2, 3}, "b": {0, 4, 5, 6}}), Options{Seed: 1})
	assert.Equal(t, map[string][2]int{"ranks 0 of 8": {1, 0}, "ranks 0-3 of 8": {0, 4}, "ranks 0, 4-6 of 8": {0, 4}}, rows(d))
}
