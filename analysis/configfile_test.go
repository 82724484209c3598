package analysis

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExampleConfigIsTheDefaults parses the commented example at the repository root:
// it must equal the built-in defaults, so the file documents them truthfully.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	c, err := LoadConfig("../hcclprof.example.yaml")
	require.NoError(t, err)
	o, err := c.Options()
	require.NoError(t, err)
	assert.Equal(t, DefaultLimits, o.Limits)
	assert.Nil(t, o.Hardware, "hardware detected")
	require.NotNil(t, c.CommBudget)
	assert.Equal(t, 0.30, *c.CommBudget)
}

func TestConfigOverrides(t *testing.T) {
	c, err := ParseConfig(strings.NewReader("hardware: a3\npeaks_gbps: {rdma: 12.5}\nslow_rank: {method: dixon}\nchecks: {small_rdma_mb: 2}\nretransmission_s: 2\n"), "c.yaml")
	require.NoError(t, err)
	o, err := c.Options()
	require.NoError(t, err)
	assert.Equal(t, int64(2_000_000_000), o.Limits.RetransmissionNs)
	assert.Equal(t, int64(2_000_000), o.Limits.SmallRDMABytes)
	require.NotNil(t, o.Hardware)
	assert.Equal(t, "A3", o.Hardware.Name)
	hw := o.Hardware.WithPeaks(o.PeaksGBps) // as the analysis applies them
	assert.Equal(t, 12.5, hw.PeakGBps["RDMA"])
	assert.Equal(t, 204.0, hw.PeakGBps["SIO"])
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"slow_rank:\n  zz: 3\n", "c.yaml: line 2: field zz not found"},
		{"hardware: MI300X\n", `unknown hardware "MI300X"`},
		{"retransmission_s: 0\n", "retransmission_s = 0: want a value in [0.001, 3600]"},
		{"checks: {alignment_bytes: 0}\n", "checks.alignment_bytes = 0: want ≥ 1"},
		{"peaks_gbps: {RDMA: -1}\n", "peaks_gbps.RDMA = -1"},
		{"peaks_gbps: {NVLink: 300}\n", `peaks_gbps.NVLink: unknown transport "NVLink"`},
		{"comm_budget: 30\n", "comm_budget = 30"},
		{"checks: [1]\n", "c.yaml: line 1"},
	} {
		_, err := ParseConfig(strings.NewReader(tc.doc), "c.yaml")
		require.Error(t, err, tc.doc)
		assert.Contains(t, err.Error(), tc.want, tc.doc)
	}
	_, err := LoadConfig("/nonexistent/hcclprof.yaml")
	assert.True(t, os.IsNotExist(err))
}
