package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
)

// TestExampleConfigIsTheDefaults parses the commented example at the repository root:
// it must equal the built-in defaults (every finding's threshold, HCCL's 200 MiB
// buffer, the 30% budget), so the file documents them truthfully.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	s, err := Load("../../hcclprof.example.yaml")
	require.NoError(t, err)
	assert.Equal(t, analysis.DefaultLimits, s.Analysis.Limits)
	assert.Nil(t, s.Analysis.Hardware, "hardware detected")
	assert.Equal(t, advisor.DefaultThresholds, s.Advisor.Thresholds)
	assert.Equal(t, advisor.DefaultDetectThresholds, s.Advisor.Detect)
	assert.Equal(t, advisor.DefaultOptions.CommBudget, s.Advisor.CommBudget)
	assert.Equal(t, 0.30, s.Advisor.CommBudget)
	assert.Equal(t, int64(200<<20), s.Analysis.Limits.BuffsizeBytes(nil))
}

func TestConfigOverrides(t *testing.T) {
	s, err := Parse(strings.NewReader("hardware: a3\npeaks_gbps: {rdma: 12.5}\nslow_rank: {method: dixon}\nchecks: {small_rdma_mb: 2}\nretransmission_s: 2\n"), "c.yaml")
	require.NoError(t, err)
	o := s.Analysis
	assert.Equal(t, int64(2_000_000_000), o.Limits.RetransmissionNs)
	assert.Equal(t, int64(2_000_000), o.Limits.SmallRDMABytes)
	require.NotNil(t, o.Hardware)
	assert.Equal(t, "A3", o.Hardware.Name)
	hw := o.Hardware.WithPeaks(o.PeaksGBps) // as the analysis applies them
	assert.Equal(t, 12.5, hw.PeakGBps["RDMA"])
	assert.Equal(t, 204.0, hw.PeakGBps["SIO"])
}

// TestAdvisorSections: comm_budget, default_buffsize_mb and the findings section
// set what they name; the keys left out keep their defaults.
func TestAdvisorSections(t *testing.T) {
	s, err := Parse(strings.NewReader("comm_budget: 0.4\nchecks: {default_buffsize_mb: 400}\nfindings:\n  link_use_low: {min_use: 0.25}\n  slow_rank:\n    medium_share: 0.05\n"), "c.yaml")
	require.NoError(t, err)
	want := advisor.DefaultThresholds
	want.LinkUse.MinUse, want.Stake.Medium = 0.25, 0.05
	assert.Equal(t, want, s.Advisor.Thresholds, "the keys given change, the rest keep their defaults")
	assert.Equal(t, 0.4, s.Advisor.CommBudget)
	assert.Equal(t, int64(400<<20), s.Analysis.Limits.BuffsizeBytes(nil), "MB read as MiB, as HCCL does; one key, read by the checks and the advisor alike")
}

// TestDetectorSections: the slow_rank, slow_link and checks sections set the
// detectors' thresholds; the keys left out keep their defaults.
func TestDetectorSections(t *testing.T) {
	s, err := Parse(strings.NewReader("slow_rank: {method: dixon, z: 4}\nslow_link: {fraction: 0.5}\nchecks: {contention_gbps: 12, small_rdma_mb: 2}\n"), "c.yaml")
	require.NoError(t, err)
	want := advisor.DefaultDetectThresholds
	want.SlowRank.Method, want.SlowRank.Z = "dixon", 4
	want.SlowLink.Fraction = 0.5
	want.Checks.ContentionGBps = 12
	assert.Equal(t, want, s.Advisor.Detect)
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"slow_rank:\n  zz: 3\n", "c.yaml: line 2: field zz not found"},
		{"hardware: MI300X\n", `unknown hardware "MI300X"`},
		{"retransmission_s: 0\n", "c.yaml: retransmission_s = 0: want a value in [0.001, 3600]"},
		{"checks: {alignment_bytes: 0}\n", "checks.alignment_bytes = 0: want ≥ 1"},
		{"checks: {default_buffsize_mb: 0}\n", "checks.default_buffsize_mb = 0: want ≥ 1"},
		{"peaks_gbps: {RDMA: -1}\n", "peaks_gbps.RDMA = -1: want a positive bandwidth"},
		{"peaks_gbps: {NVLink: 300}\n", `peaks_gbps.NVLink: unknown transport "NVLink"`},
		{"comm_budget: 30\n", "comm_budget = 30: want a share in (0, 1)"},
		{"comm_budget: 0\n", "comm_budget = 0: want a share in (0, 1)"},
		{"checks: [1]\n", "c.yaml: line 1"},
		{"checks: {small_rdma_mb: .nan}\n", "line 1: checks.small_rdma_mb = .nan: want a finite number"},
		{"findings:\n  link_use_low: {min_us: 0.25}\n", "line 2: findings.link_use_low.min_us: unknown threshold (known: min_use)"},
		{"findings:\n  slow_link: {fraction: 0.5}\n", "line 2: findings.slow_link: no such finding with thresholds"},
		{"findings:\n  link_use_low: {min_use: 2}\n", "c.yaml: line 2: findings.link_use_low.min_use = 2: want a value in [0, 1]"},
		{"findings:\n  link_use_low: {min_use: half}\n", `line 2: findings.link_use_low.min_use = "half": want a number`},
		{"findings:\n  link_use_low: 0.5\n", "line 2: findings.link_use_low: want a mapping of thresholds"},
		{"findings: [1]\n", "line 1: findings: want a mapping"},
		{"findings:\n  warmup_steps: {long_step_ratio: 0.5}\n", "findings.warmup_steps.long_step_ratio = 0.5: want a value in [1, 1000]"},
		{"slow_link: {fraction: 2}\n", "slow_link.fraction = 2: want a value in [0, 1]"},
		{"slow_rank: {method: vote}\n", `slow_rank.method = "vote": want mad or dixon`},
		{"checks: {small_share: 1.5}\n", "checks.small_share = 1.5: want a value in [0, 1]"},
	} {
		_, err := Parse(strings.NewReader(tc.doc), "c.yaml")
		require.Error(t, err, tc.doc)
		assert.Contains(t, err.Error(), tc.want, tc.doc)
	}
	_, err := Load("/nonexistent/hcclprof.yaml")
	assert.True(t, os.IsNotExist(err))
}
