package costmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TPOverlap hides (1 − 1/tp) of the exposed TP time, between half and all of it, and
// never more than the computation beside it.
func TestTPOverlap(t *testing.T) {
	p, err := TPOverlap(TPComm{StepUs: 1000, ExposedUs: 200, TotalUs: 250, CommShare: 0.3, TP: 8, SeqPar: true, ComputeUs: 700})
	require.NoError(t, err)
	assert.InDelta(t, 1000-175, p.StepTimeUs, 1e-9)
	assert.InDelta(t, 800, p.Low, 1e-9)
	assert.InDelta(t, 900, p.High, 1e-9)
	assert.InDelta(t, (300-175)/825.0, p.CommShare, 1e-9)
	assert.Len(t, p.Assumptions, 1)

	p, err = TPOverlap(TPComm{StepUs: 1000, ExposedUs: 200, TP: 2, ComputeUs: 100})
	require.NoError(t, err)
	assert.InDelta(t, 950, p.StepTimeUs, 1e-9, "capped by the compute: half of 100 µs")
	assert.Len(t, p.Assumptions, 2, "an AllReduce job is told sequence parallelism is assumed")

	_, err = TPOverlap(TPComm{StepUs: 1000, ExposedUs: 200, TP: 1})
	assert.Error(t, err)
	_, err = TPOverlap(TPComm{StepUs: 1000, TP: 8})
	assert.Error(t, err)
}

// Where the exposed time is bounded, not measured (no device timeline), the
// interval holds the bounds: at worst half the lower bound hidden, at best all of the
// upper, at low confidence, and the bounds are among the assumptions. The point is
// the shared-out figure's.
func TestOverlapPricedOverTheBounds(t *testing.T) {
	bounds := ExposedBounds{Bounded: true, LowUs: 40, HighUs: 300}
	p, err := TPOverlap(TPComm{StepUs: 1000, ExposedUs: 200, CommShare: 0.3, TP: 8, SeqPar: true, ComputeUs: 700, Exposed: bounds})
	require.NoError(t, err)
	assert.InDelta(t, 1000-175, p.StepTimeUs, 1e-9)
	assert.InDelta(t, 700, p.Low, 1e-9, "all of the upper bound hidden")
	assert.InDelta(t, 980, p.High, 1e-9, "half of the lower bound hidden")
	assert.Equal(t, "low", p.Confidence)
	require.Len(t, p.Assumptions, 2)
	assert.Contains(t, p.Assumptions[1], "between 0.040 and 0.300 ms")

	// Capped by the computation beside it.
	p, err = TPOverlap(TPComm{StepUs: 1000, ExposedUs: 200, CommShare: 0.3, TP: 8, SeqPar: true, ComputeUs: 250, Exposed: bounds})
	require.NoError(t, err)
	assert.InDelta(t, 750, p.Low, 1e-9)

	e, err := AlltoAllOverlap(EPComm{StepUs: 1000, ExposedUs: 200, CommShare: 0.3, ComputeUs: 700, Exposed: bounds})
	require.NoError(t, err)
	assert.InDelta(t, 1000-epHiddenHigh*300, e.Low, 1e-9)
	assert.InDelta(t, 1000-epHiddenLow*40, e.High, 1e-9)
	assert.Equal(t, "low", e.Confidence)

	// Measured: as before.
	m, err := TPOverlap(TPComm{StepUs: 1000, ExposedUs: 200, CommShare: 0.3, TP: 8, SeqPar: true, ComputeUs: 700})
	require.NoError(t, err)
	assert.Equal(t, "medium", m.Confidence)
	assert.InDelta(t, 800, m.Low, 1e-9)
}
