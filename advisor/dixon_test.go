package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDixonCriticalValues compares the simulated one-sided 99.5% values of r10 with
// the published two-sided 99% (α = 0.01) Q values for n = 3..7 (Rorabacher 1991:
// 0.994, 0.926, 0.821, 0.740, 0.680); at these sizes the two tails barely overlap, so
// the one-sided 0.5% point is the two-sided 1% point.
func TestDixonCriticalValues(t *testing.T) {
	published := map[int]float64{3: 0.994, 4: 0.926, 5: 0.821, 6: 0.740, 7: 0.680}
	for n, want := range published {
		assert.InDelta(t, want, dixonCriticalValue(n), 0.03*want, "n=%d", n)
	}
	// Larger samples use r11, r21, r22, whose critical values fall with n.
	assert.Greater(t, dixonCriticalValue(10), dixonCriticalValue(30))
	assert.Greater(t, dixonCriticalValue(30), dixonCriticalValue(100))
	assert.Equal(t, dixonCriticalValue(8), dixonCriticalValue(8), "deterministic")
}

func TestLowOutlier(t *testing.T) {
	waits := []float64{10, 10.4, 9.8, 10.1, 9.9, 10.2, 10.3, 0.1} // rank 7 waits least: the others wait for it
	out, score := lowOutlier(waits)
	assert.True(t, out)
	assert.Greater(t, score, 1.0)
	out, _ = lowOutlier([]float64{10, 10.4, 9.8, 10.1, 9.9, 10.2, 10.3, 9.7})
	assert.False(t, out)
	// Beyond 100 values, 3σ.
	many := make([]float64, 200)
	for i := range many {
		many[i] = 10 + float64(i%5)*0.1
	}
	out, _ = lowOutlier(many)
	assert.False(t, out)
	many[17] = 1
	out, _ = lowOutlier(many)
	assert.True(t, out)
}
