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
