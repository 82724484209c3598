package advisor_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/internal/testkit"
	"github.com/hcclprof/hcclprof/parser"
)

// TestExampleConfigIsTheAdvisorsDefaults: the example configuration lists every
// finding's threshold at its default, HCCL's 200 MiB buffer and the 30% budget.
func TestExampleConfigIsTheAdvisorsDefaults(t *testing.T) {
	c, err := analysis.LoadConfig("../hcclprof.example.yaml")
	require.NoError(t, err)
	var o advisor.Options
	require.NoError(t, advisor.ApplyConfig(c, &o))
	assert.Equal(t, advisor.DefaultThresholds, o.Thresholds)
	assert.Equal(t, advisor.DefaultDetectThresholds, o.Detect)
	assert.Equal(t, advisor.DefaultOptions.CommBudget, o.CommBudget)
	assert.Equal(t, int64(200<<20), o.DefaultBuffsizeBytes)
	assert.Equal(t, advisor.DefaultBuffsizeBytes, o.DefaultBuffsizeBytes)
}

func TestApplyConfig(t *testing.T) {
	parse := func(doc string) (advisor.Options, error) {
		t.Helper()
		c, err := analysis.ParseConfig(strings.NewReader(doc), "c.yaml")
		require.NoError(t, err)
		o := advisor.DefaultOptions
		return o, advisor.ApplyConfig(c, &o)
	}
	o, err := parse("comm_budget: 0.4\nchecks: {default_buffsize_mb: 400}\nfindings:\n  link_use_low: {min_use: 0.25}\n  slow_rank:\n    medium_share: 0.05\n")
	require.NoError(t, err)
	want := advisor.DefaultThresholds
	want.LinkUse.MinUse, want.Stake.Medium = 0.25, 0.05
	assert.Equal(t, want, o.Thresholds, "the keys given change, the rest keep their defaults")
	assert.Equal(t, 0.4, o.CommBudget)
	assert.Equal(t, int64(400<<20), o.DefaultBuffsizeBytes, "MB read as MiB, as HCCL does")
	for doc, msg := range map[string]string{
		"findings:\n  link_use_low: {min_us: 0.25}\n":         "line 2: findings.link_use_low.min_us: unknown threshold (known: min_use)",
		"findings:\n  slow_link: {fraction: 0.5}\n":           "line 2: findings.slow_link: no such finding with thresholds",
		"findings:\n  link_use_low: {min_use: 2}\n":           "line 2: findings.link_use_low.min_use = 2: want a value in [0, 1]",
		"findings:\n  link_use_low: {min_use: half}\n":        `line 2: findings.link_use_low.min_use = "half": want a number`,
		"findings:\n  link_use_low: 0.5\n":                    "line 2: findings.link_use_low: want a mapping of thresholds",
		"findings: [1]\n":                                     "line 1: findings: want a mapping",
		"findings:\n  warmup_steps: {long_step_ratio: 0.5}\n": "findings.warmup_steps.long_step_ratio = 0.5: want a value in [1, 1000]",
		"slow_link: {fraction: 2}\n":                          "slow_link.fraction = 2: want a value in [0, 1]",
		"slow_rank: {method: vote}\n":                         `slow_rank.method = "vote": want mad or dixon`,
		"checks: {small_share: 1.5}\n":                        "checks.small_share = 1.5: want a value in [0, 1]",
	} {
		_, err := parse(doc)
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), msg)
	}
}

// TestApplyConfigDetectors: the slow_rank, slow_link and checks sections set the
// detectors' thresholds; the keys left out keep their defaults.
func TestApplyConfigDetectors(t *testing.T) {
	c, err := analysis.ParseConfig(strings.NewReader("slow_rank: {method: dixon, z: 4}\nslow_link: {fraction: 0.5}\nchecks: {contention_gbps: 12, small_rdma_mb: 2}\n"), "c.yaml")
	require.NoError(t, err)
	o := advisor.DefaultOptions
	require.NoError(t, advisor.ApplyConfig(c, &o))
	want := advisor.DefaultDetectThresholds
	want.SlowRank.Method, want.SlowRank.Z = "dixon", 4
	want.SlowLink.Fraction = 0.5
	want.Checks.ContentionGBps = 12
	assert.Equal(t, want, o.Detect)
}

// TestFindingThresholdsFromConfig: a threshold from the configuration decides its
// finding. 20% of the sample's communication overlaps compute, under the default 50%
// (exposed_comm_could_overlap); with max_overlap_ratio at 0.1 it is enough.
func TestFindingThresholdsFromConfig(t *testing.T) {
	c, err := parser.LoadCluster([]string{"../fixtures/samples/demo-2server-8rank"}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	def := advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	assert.NotEmpty(t, byID(def, "exposed_comm_could_overlap"))
	cfg, err := analysis.ParseConfig(strings.NewReader("findings:\n  exposed_comm_could_overlap: {max_overlap_ratio: 0.1}\n"), "c.yaml")
	require.NoError(t, err)
	opts := advisor.DefaultOptions
	require.NoError(t, advisor.ApplyConfig(cfg, &opts))
	assert.Empty(t, byID(advisor.Advise(res, advisor.EnvOf(c), opts), "exposed_comm_could_overlap"))
	// Options without thresholds keep the defaults.
	assert.Equal(t, def, advisor.Advise(res, advisor.EnvOf(c), advisor.Options{}))
}

// TestRecommendThresholdsFromConfig: the recommendations' own thresholds come from the
// configuration file too. With nothing worth less than 90% of the step listed, a run
// whose small buckets get advice gets none, and the notes count what was left out.
func TestRecommendThresholdsFromConfig(t *testing.T) {
	a := testkit.AnalyseBuiltin(t, "small-buckets-32rank", render.FormatText)
	def := advisor.Advise(a.Result, advisor.EnvOf(a.Cluster), advisor.DefaultOptions)
	require.NotEmpty(t, def.Recommendations)
	cfg, err := analysis.ParseConfig(strings.NewReader("findings:\n  recommendations: {negligible_share: 0.9}\n"), "c.yaml")
	require.NoError(t, err)
	opts := advisor.DefaultOptions
	require.NoError(t, advisor.ApplyConfig(cfg, &opts))
	got := advisor.Advise(a.Result, advisor.EnvOf(a.Cluster), opts)
	assert.Empty(t, got.Recommendations)
	assert.Contains(t, strings.Join(got.Notes, "\n"), fmt.Sprintf("%d change(s) worth under 90.0%% of the step", len(def.Recommendations)))
}
