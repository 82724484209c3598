package hardware

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"A2", "A2"}, {"Ascend910B", "A2"}, {"910b", "A2"}, {"a3", "A3"}, {"910_93", "A3"}, {"910A", "910A"}, {"Ascend910", "910A"},
	} {
		p, err := Lookup(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, p.Name, tc.in)
	}
	_, err := Lookup("H100")
	assert.ErrorContains(t, err, "unknown hardware \"H100\"")
}

func TestFigures(t *testing.T) {
	a2, _ := Lookup("A2")
	peak, ok := a2.Peak("hccs")
	assert.True(t, ok)
	assert.Equal(t, 18.3, peak)
	assert.Equal(t, 20.0, a2.PeakGBps["RDMA"])
	assert.InDelta(t, 0.5, a2.Utilisation("RDMA", 10), 1e-12)
	assert.Equal(t, 0.0, a2.Utilisation("SIO", 10), "A2 has no SIO")
	a3, _ := Lookup("A3")
	assert.Equal(t, 204.0, a3.PeakGBps["SIO"])
	a910, _ := Lookup("910A")
	assert.Equal(t, 10.0, a910.PeakGBps["HCCS"])
	assert.Equal(t, 10.0, a910.PeakGBps["RDMA"])
}

func TestOverrideDoesNotLeak(t *testing.T) {
	a2, _ := Lookup("A2")
	o := a2.WithPeaks(map[string]float64{"rdma": 12.5})
	assert.Equal(t, 12.5, o.PeakGBps["RDMA"])
	assert.Equal(t, "user override", o.Sources["RDMA"])
	again, _ := Lookup("A2")
	assert.Equal(t, 20.0, again.PeakGBps["RDMA"], "built-in profile unchanged")
}

func TestDetect(t *testing.T) {
	assert.Equal(t, "A2", Detect([]string{"Ascend910B3"}, nil).Name)
	assert.Equal(t, "A3", Detect([]string{"Ascend910_9392"}, nil).Name)
	nv := Detect([]string{"NVIDIA A100-PG509-200"}, nil)
	assert.Equal(t, "NVIDIA", nv.Name)
	assert.False(t, nv.Assumed)
	assert.Empty(t, nv.PeakGBps, "no built-in NVIDIA link figures")
	assert.Equal(t, "A3", Detect(nil, []string{"HCCS", "SIO"}).Name)
	d := Detect(nil, []string{"HCCS"})
	assert.Equal(t, "A2", d.Name)
	assert.True(t, d.Assumed)
}
