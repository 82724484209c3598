package advisor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

func kindShare(res *analysis.Result, kind string) analysis.KindShare {
	for _, k := range res.Summary.Kinds {
		if k.Kind == kind {
			return k
		}
	}
	return analysis.KindShare{}
}

var recByID = testkit.RecommendationByID

// Issue 37, "What was seen" 2: a TP8 × DP2 job whose TP collectives lie on the
// critical path. The TP AllReduce job (8 × 64 MiB per micro-batch, DP already
// overlapped) had TP communication at about a tenth of the step and no
// recommendation; the one whose DP buckets are exposed too got --overlap-grad-reduce
// alone. Now hiding the TP communication is recommended and priced, first where it
// saves the most, and never after --overlap-grad-reduce when it saves more.
func TestTPOnCriticalPathGetsTPAdvice(t *testing.T) {
	legacy := func(overlap string) string {
		return `
product: a2
ranks: 16
ranks_per_server: 8
steps: 2
first_step: 10
seed: 41
model: {name: llama-7b, gradient_bytes: 8000000000, dtype: BFP16, forward_ms: 60, backward_ms: 120, optimizer_ms: 6, kernel_us: 1000}
ddp: {bucket_mb: 100, overlap: ` + overlap + `}
parallel: {tp: 8, tp_allreduce_bytes: 67108864, tp_allreduces_per_microbatch: 8}
`
	}
	for _, overlap := range []string{"0.8", "0.2"} {
		adv, res := adviseScenario(t, legacy(overlap), advisor.DefaultOptions)
		tp := kindShare(res, analysis.KindTP)
		assert.Greater(t, tp.CommShare, 0.08, "overlap %s: TP exposed share", overlap)
		r := recByID(adv, "tp_comm_overlap")
		require.NotNil(t, r, "overlap %s: no TP recommendation: %v", overlap, adv.Notes)
		assert.Equal(t, "--sequence-parallel + --use-ascend-mc2", r.Knob)
		assert.Contains(t, r.Apply, "MindSpeed: --sequence-parallel --use-ascend-mc2 ")
		assert.Less(t, r.Predicted.Low, r.Predicted.StepTimeUs)
		assert.Greater(t, r.Predicted.High, r.Predicted.StepTimeUs)
		assert.InDelta(t, tp.CommShare*float64(res.Summary.StepTimeNs)/1e3*7/8, r.GainUs, 1, "7/8 of the exposed TP time")
		first := adv.Recommendations[0]
		if overlap == "0.8" {
			assert.Equal(t, "tp_comm_overlap", first.ID, "the TP communication is most of what is exposed")
		}
		for _, o := range adv.Recommendations {
			if o.ID == "overlap_grad_reduce" && !o.Hypothesis && o.GainUs < r.GainUs {
				t.Errorf("overlap %s: --overlap-grad-reduce (%.0f µs) ranked with TP overlap saving more (%.0f µs)", overlap, o.GainUs, r.GainUs)
			}
		}
	}
}

// The TP recommendation against the generator: the sequence-parallel job of the
// built-in, and the same job's TP AllReduces per layer (sequence parallelism off),
// each replayed with tp_comm_overlap: the regenerated step lies inside the
// recommendation's interval. Once the overlap is on, nothing more is recommended for
// TP, and a note says so. (With the built-in's seed the AllReduce variant had rank 11
// named slow, 2% of the step, cause unknown, last at most of its TP collectives in
// one step of two: the job's jitter, which held back all tuning.) -short replays the
// built-in only.
func TestTPOverlapPricedAgainstRegenerated(t *testing.T) {
	variants := []bool{true, false}
	if testkit.Short(t, "the built-in (sequence parallel) only; the TP AllReduce variant is another 16-rank job") {
		variants = variants[:1]
	}
	for _, seqPar := range variants {
		sc, err := scenario.Builtin("tp8-sp-16rank")
		require.NoError(t, err)
		sc.Parallel.SequenceParallel = seqPar
		res, env := generate(t, sc)
		adv := advisor.Advise(res, env, advisor.DefaultOptions)
		r := recByID(adv, "tp_comm_overlap")
		require.NotNil(t, r, "sequence parallel %v: %v", seqPar, adv.Notes)
		assert.Equal(t, "tp_comm_overlap", adv.Recommendations[0].ID)
		replayed, err := scenario.Builtin("tp8-sp-16rank")
		require.NoError(t, err)
		replayed.Parallel.SequenceParallel, replayed.Seed = seqPar, sc.Seed
		for _, s := range r.Settings {
			require.NoError(t, replayed.SetKnob(s.Knob, s.Value, s.Algo))
		}
		got, env2 := generate(t, replayed)
		gotUs := float64(got.Summary.StepTimeNs) / 1e3
		t.Logf("sequence parallel %v: %s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms", seqPar, r.Knob,
			r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3)
		assert.GreaterOrEqual(t, gotUs, r.Predicted.Low)
		assert.LessOrEqual(t, gotUs, r.Predicted.High)

		after := advisor.Advise(got, env2, advisor.DefaultOptions)
		assert.Nil(t, recByID(after, "tp_comm_overlap"), "already overlapped")
		assert.True(t, strings.Contains(strings.Join(after.Notes, "\n"), "already beside compute"), "%v", after.Notes)
	}
}

// Issue 37: an imbalanced expert gets a priced recommendation, the load-balancing
// loss, whose interval holds the step the generator gives with the routing balanced
// (the hot expert gone).
func TestExpertBalancePricedAgainstRegenerated(t *testing.T) {
	sc, err := scenario.Builtin("moe-ep8-hot-expert-16rank")
	require.NoError(t, err)
	res, env := generate(t, sc)
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	require.Equal(t, advisor.CauseExpertImbalance, adv.Diagnosis.Cause)
	require.NotEmpty(t, adv.Recommendations, "%v", adv.Notes)
	r := adv.Recommendations[0]
	require.Equal(t, "moe_load_balance", r.ID)
	assert.Equal(t, "--moe-aux-loss-coeff", r.Knob)
	assert.Less(t, r.Predicted.Low, r.Predicted.StepTimeUs)
	assert.Greater(t, r.Predicted.High, r.Predicted.StepTimeUs)
	balanced, err := scenario.Builtin("moe-ep8-hot-expert-16rank")
	require.NoError(t, err)
	for _, s := range r.Settings {
		require.NoError(t, balanced.SetKnob(s.Knob, s.Value, s.Algo))
	}
	gotUs := replayed(t, balanced).StepTimeUs
	t.Logf("%s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms", r.Knob, r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3)
	assert.GreaterOrEqual(t, gotUs, r.Predicted.Low)
	assert.LessOrEqual(t, gotUs, r.Predicted.High)
}

// tpAcrossServers makes tp8-sp-16rank TP 16 on 32 ranks: each TP group spans two
// 8-NPU servers. Eight of its 32 layers: their collectives cross the servers as the
// 32 do (12.9% of the step exposed rather than 34.9%, still a high-severity
// finding), at about a third of the cost of writing and reading the cluster; the
// same eight layers on servers of 4 ranks (TP 8, packable) do get tp_inside_server.
func tpAcrossServers(sc *scenario.Scenario) {
	sc.Ranks, sc.Parallel.TP = 32, 16
	sc.Model.Layers = 8
}

// Issue 37: a TP group spanning servers is named, with the TP size that keeps it
// inside one; TP inside a server is not.
func TestTPAcrossServers(t *testing.T) {
	inside, err := scenario.Builtin("tp8-sp-16rank")
	require.NoError(t, err)
	res, env := generate(t, inside)
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	assert.Empty(t, byID(adv, "tp_across_servers"))

	across, err := scenario.Builtin("tp8-sp-16rank")
	require.NoError(t, err)
	tpAcrossServers(across)
	res, env = generate(t, across)
	adv = advisor.Advise(res, env, advisor.DefaultOptions)
	f := byID(adv, "tp_across_servers")
	require.Len(t, f, 1)
	assert.Equal(t, advisor.High, f[0].Severity)
	assert.Contains(t, f[0].Title, "2 of 2 tensor-parallel groups span 2 servers")
	assert.Contains(t, f[0].Evidence, "--tensor-model-parallel-size 8 or less")
}
