package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

// replayedStep is a built-in (edited by edit) replayed with a recommendation's
// settings applied: the generator's summary (replayed).
func replayedStep(t *testing.T, name string, edit func(*scenario.Scenario), r *advisor.Recommendation) sim.Summary {
	t.Helper()
	sc, err := scenario.Builtin(name)
	require.NoError(t, err)
	if edit != nil {
		edit(sc)
	}
	for _, s := range r.Settings {
		require.NoError(t, sc.SetKnob(s.Knob, s.Value, s.Algo))
	}
	return replayed(t, sc)
}

// Issue 37: an FSDP job whose layer gathers are not prefetched gets prefetch
// (forward_prefetch, backward_prefetch=BACKWARD_PRE, limit_all_gathers), priced: the
// job regenerated with every gather prefetched lands inside the interval, and is the
// built-in that prefetches. With one layer left out of the prefetch order the price
// is smaller and still holds. Once prefetched, nothing more is recommended. -short
// prices the built-in only.
func TestFSDPPrefetchPricedAgainstRegenerated(t *testing.T) {
	cases := []struct {
		name string
		edit func(*scenario.Scenario)
	}{
		{"no prefetch", nil},
		{"layers 0-5 not prefetched", func(sc *scenario.Scenario) {
			on := true
			sc.FSDP.Prefetch, sc.FSDP.NoPrefetchLayers = &on, []int{0, 1, 2, 3, 4, 5}
		}},
		{"SHARD_GRAD_OP (one gather per layer)", func(sc *scenario.Scenario) {
			off := false
			sc.FSDP.ReshardAfterForward = &off
		}},
	}
	if testkit.Short(t, "the built-in without prefetch only (the partial prefetch and SHARD_GRAD_OP are two more 16-rank jobs)") {
		cases = cases[:1]
	}
	for _, tc := range cases {
		sc, err := scenario.Builtin("fsdp16-no-prefetch-16rank")
		require.NoError(t, err)
		if tc.edit != nil {
			tc.edit(sc)
		}
		res, env := generate(t, sc)
		adv := advisor.Advise(res, env, advisor.DefaultOptions)
		r := recByID(adv, "fsdp_prefetch")
		require.NotNil(t, r, "%s: %v", tc.name, adv.Notes)
		assert.Equal(t, "fsdp_prefetch", adv.Recommendations[0].ID, tc.name)
		assert.False(t, r.Hypothesis)
		assertRealKnobs(t, adv)
		assert.Contains(t, r.Apply, "backward_prefetch=BackwardPrefetch.BACKWARD_PRE")
		assert.Contains(t, r.Apply, "set_modules_to_forward_prefetch")
		ds := advisor.DefaultOptions
		ds.Framework = advisor.FrameworkDeepSpeed
		if d := recByID(advisor.Advise(res, env, ds), "fsdp_prefetch"); assert.NotNil(t, d) {
			assert.Equal(t, "stage3_prefetch_bucket_size + overlap_comm", d.Knob)
			assert.Contains(t, d.Apply, `"stage3_prefetch_bucket_size": 218750000}`, "one layer's 437.5 MB of bf16 parameters")
		}
		assert.Less(t, r.Predicted.Low, r.Predicted.StepTimeUs)
		assert.Greater(t, r.Predicted.High, r.Predicted.StepTimeUs)
		got := replayedStep(t, "fsdp16-no-prefetch-16rank", tc.edit, r)
		gotUs := got.StepTimeUs
		t.Logf("%s: %s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (today %.3f ms)", tc.name, r.Knob,
			r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3, r.TodayUs/1e3)
		assert.GreaterOrEqual(t, gotUs, r.Predicted.Low, tc.name)
		assert.LessOrEqual(t, gotUs, r.Predicted.High, tc.name)
	}

	// The built-in that prefetches is what the replay gives, and gets nothing more.
	pre, err := scenario.Builtin("fsdp16-prefetch-16rank")
	require.NoError(t, err)
	res, env := generate(t, pre)
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	assert.Nil(t, recByID(adv, "fsdp_prefetch"), "%v", adv.Notes)
}

// Issue 37: an imbalanced expert also gets the capacity factor with padding
// (--moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity), priced:
// the job regenerated with every expert capped at the mean tokens lands inside its
// interval. It comes after balancing the routing by its loss, which drops no token.
func TestExpertCapacityPricedAgainstRegenerated(t *testing.T) {
	sc, err := scenario.Builtin("moe-ep8-hot-expert-16rank")
	require.NoError(t, err)
	res, env := generate(t, sc)
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	require.Equal(t, advisor.CauseExpertImbalance, adv.Diagnosis.Cause)
	r := recByID(adv, "moe_capacity")
	require.NotNil(t, r, "%v", adv.Notes)
	assertRealKnobs(t, adv)
	assert.Equal(t, "moe_load_balance", adv.Recommendations[0].ID)
	assert.Contains(t, r.Apply, "--moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity --moe-token-dispatcher-type alltoall")
	assert.Less(t, r.Predicted.Low, r.Predicted.StepTimeUs)
	assert.Greater(t, r.Predicted.High, r.Predicted.StepTimeUs)
	got := replayedStep(t, "moe-ep8-hot-expert-16rank", nil, r)
	gotUs := got.StepTimeUs
	t.Logf("%s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (today %.3f ms)", r.Knob,
		r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3, r.TodayUs/1e3)
	assert.GreaterOrEqual(t, gotUs, r.Predicted.Low)
	assert.LessOrEqual(t, gotUs, r.Predicted.High)
}

// Issue 37: TP groups that span servers only because the job runs fewer ranks on a
// server than it has NPUs get the placement that keeps each inside one (all of a
// server's devices, the same TP size), priced by re-timing the TP collectives on
// the server's links: the job regenerated on full servers lands inside the interval.
// A TP larger than a server gets no such recommendation (the finding says to lower
// it), and TP inside a server gets none.
func TestTPInsideServerPricedAgainstRegenerated(t *testing.T) {
	across := func(sc *scenario.Scenario) { sc.RanksPerServer = 4 }
	sc, err := scenario.Builtin("tp8-sp-16rank")
	require.NoError(t, err)
	across(sc)
	res, env := generate(t, sc)
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	f := byID(adv, "tp_across_servers")
	require.Len(t, f, 1)
	assert.Contains(t, f[0].Evidence, "each A2 server has 8 NPUs: launch 8 ranks per server")
	r := recByID(adv, "tp_inside_server")
	require.NotNil(t, r, "%v", adv.Notes)
	assertRealKnobs(t, adv)
	assert.Contains(t, r.Apply, "torchrun --nproc_per_node 8")
	assert.Contains(t, r.Apply, "--tensor-model-parallel-size 8 unchanged")
	assert.Less(t, r.Predicted.Low, r.Predicted.StepTimeUs)
	assert.Greater(t, r.Predicted.High, r.Predicted.StepTimeUs)
	got := replayedStep(t, "tp8-sp-16rank", across, r)
	gotUs := got.StepTimeUs
	t.Logf("%s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (today %.3f ms)", r.Knob,
		r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3, r.TodayUs/1e3)
	assert.GreaterOrEqual(t, gotUs, r.Predicted.Low)
	assert.LessOrEqual(t, gotUs, r.Predicted.High)

	after, _ := generate(t, func() *scenario.Scenario {
		s, err := scenario.Builtin("tp8-sp-16rank")
		require.NoError(t, err)
		return s
	}())
	a := advisor.Advise(after, env, advisor.DefaultOptions)
	assert.Nil(t, recByID(a, "tp_inside_server"))

	big, err := scenario.Builtin("tp8-sp-16rank")
	require.NoError(t, err)
	tpAcrossServers(big)
	res, env = generate(t, big)
	adv = advisor.Advise(res, env, advisor.DefaultOptions)
	assert.Nil(t, recByID(adv, "tp_inside_server"), "TP 16 on 8-NPU servers cannot be packed")
}

// The settings' recommendations stay quiet on built-ins that do not need them: a
// healthy data-parallel job, FSDP already prefetching, TP inside a server (its own
// TP overlap aside), context parallelism, the distributed optimizer, NVIDIA.
func TestSettingAdviceQuietOnHealthy(t *testing.T) {
	ids := []string{"fsdp_prefetch", "moe_capacity", "tp_inside_server", "shard_bucket_size"}
	for _, name := range []string{"healthy-2server-16rank", "fsdp16-prefetch-16rank", "tp8-sp-16rank", "cp4-tp4-16rank",
		"tp4-dp4-distopt-16rank", "h100-dp16-2node", "pp2-imbalance-8rank"} {
		sc, err := scenario.Builtin(name)
		require.NoError(t, err)
		sc.Steps = 2
		res, env := generate(t, sc)
		adv := advisor.Advise(res, env, advisor.DefaultOptions)
		for _, id := range ids {
			assert.Nil(t, recByID(adv, id), "%s: %s", name, id)
		}
	}
}

// Issue 37: a distributed optimizer whose ReduceScatter/AllGather run in small
// buckets (2 MB: hundreds of latency-bound ops a step) gets Megatron's default
// bucket back, priced by re-timing the same bytes in fewer ops: the job regenerated
// with that bucket lands inside the interval. The built-in's 100 MB buckets get none
// (TestSettingAdviceQuietOnHealthy). -short takes 4 MB buckets (half the ops, half
// the files).
func TestShardBucketPricedAgainstRegenerated(t *testing.T) {
	bucketMB := 2.0
	if testkit.Short(t, "4 MB buckets, not 2 (half the files); the full run has both (TestSettingPricesHoldOnVariants)") {
		bucketMB = 4
	}
	small := func(sc *scenario.Scenario) { sc.DDP.BucketMB = bucketMB }
	sc, err := scenario.Builtin("tp4-dp4-distopt-16rank")
	require.NoError(t, err)
	small(sc)
	res, env := generate(t, sc)
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	r := recByID(adv, "shard_bucket_size")
	require.NotNil(t, r, "%v", adv.Notes)
	assertRealKnobs(t, adv)
	assert.Contains(t, r.Apply, "--ddp-bucket-size 40000000")
	assert.True(t, r.Hypothesis, "one bucket size cannot separate latency from bandwidth: the interval is wider than the gain")
	assert.Less(t, r.Predicted.Low, r.Predicted.StepTimeUs)
	assert.Greater(t, r.Predicted.High, r.Predicted.StepTimeUs)
	ds := advisor.DefaultOptions
	ds.Framework = advisor.FrameworkDeepSpeed
	if d := recByID(advisor.Advise(res, env, ds), "shard_bucket_size"); assert.NotNil(t, d) {
		assert.Equal(t, "reduce_bucket_size + allgather_bucket_size", d.Knob)
		assert.Contains(t, d.Apply, `"reduce_bucket_size": 40000000, "allgather_bucket_size": 40000000`)
	}
	got := replayedStep(t, "tp4-dp4-distopt-16rank", small, r)
	gotUs := got.StepTimeUs
	t.Logf("%s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (today %.3f ms)", r.Knob,
		r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3, r.TodayUs/1e3)
	assert.GreaterOrEqual(t, gotUs, r.Predicted.Low)
	assert.LessOrEqual(t, gotUs, r.Predicted.High)
}

// The settings' prices on variants of their built-ins (another hot-expert factor,
// TP AllReduce across servers of 2, other bucket sizes, another seed): each
// regenerated step lies inside its interval. Not under -short (about three minutes).
func TestSettingPricesHoldOnVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerates seven jobs twice each")
	}
	for _, tc := range []struct {
		name, builtin, id string
		edit              func(*scenario.Scenario)
	}{
		{"hot expert 2×", "moe-ep8-hot-expert-16rank", "moe_capacity", func(s *scenario.Scenario) { s.Problems[0].Factor = 2 }},
		{"hot expert 4×", "moe-ep8-hot-expert-16rank", "moe_capacity", func(s *scenario.Scenario) { s.Problems[0].Factor = 4 }},
		{"TP4 AllReduce on servers of 2", "tp4-dp4-distopt-16rank", "tp_inside_server", func(s *scenario.Scenario) { s.RanksPerServer = 2 }},
		{"TP8 SP on servers of 4, seed 7", "tp8-sp-16rank", "tp_inside_server", func(s *scenario.Scenario) { s.RanksPerServer, s.Seed = 4, 7 }},
		{"distributed optimizer, 4 MB buckets", "tp4-dp4-distopt-16rank", "shard_bucket_size", func(s *scenario.Scenario) { s.DDP.BucketMB = 4 }},
		{"distributed optimizer, 1 MB buckets", "tp4-dp4-distopt-16rank", "shard_bucket_size", func(s *scenario.Scenario) { s.DDP.BucketMB = 1 }},
		{"FSDP without prefetch, seed 9", "fsdp16-no-prefetch-16rank", "fsdp_prefetch", func(s *scenario.Scenario) { s.Seed = 9 }},
	} {
		sc, err := scenario.Builtin(tc.builtin)
		require.NoError(t, err)
		tc.edit(sc)
		res, env := generate(t, sc)
		adv := advisor.Advise(res, env, advisor.DefaultOptions)
		r := recByID(adv, tc.id)
		if !assert.NotNil(t, r, "%s: %v", tc.name, adv.Notes) {
			continue
		}
		got := replayedStep(t, tc.builtin, tc.edit, r).StepTimeUs
		t.Logf("%s: %s predicted %.1f ms [%.1f, %.1f], regenerated %.1f ms (today %.1f)", tc.name, tc.id,
			r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, got/1e3, r.TodayUs/1e3)
		assert.GreaterOrEqual(t, got, r.Predicted.Low, tc.name)
		assert.LessOrEqual(t, got, r.Predicted.High, tc.name)
	}
}
