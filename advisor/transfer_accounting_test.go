package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
)

// TestHealthyMultiServerRunsMoveData: on healthy multi-server runs the collectives'
// time is mostly data moving, over RoCE as well as inside the servers. The profiler's
// op-level Transit is one plane's (docs/formats.md §3.1), which on a multi-server op misses
// the other level's transfers; counted from one plane, a comm-heavy healthy run looked
// like waiting ("collectives mostly wait") and its exposed time like neither moving
// nor waiting. No waiting finding fires, and the diagnosis is transfer.
func TestHealthyMultiServerRunsMoveData(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*scenario.Scenario)
		cause string
		// exposed: the collectives run mostly in the open, so their time is mostly
		// moving data (with overlap, ops launched early wait for their peers' compute
		// behind the own compute, which costs nothing)
		exposed bool
	}{
		{"healthy-2server-16rank", func(sc *scenario.Scenario) { sc.Steps = 2 }, advisor.CauseComputeBound, false},
		{"comm-heavy 4 servers", func(sc *scenario.Scenario) {
			sc.Steps, sc.Ranks, sc.RanksPerServer = 2, 16, 4
			sc.Model.GradientBytes, sc.DDP.Overlap = 2_000_000_000, 0.5
		}, advisor.CauseTransfer, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Builtin("healthy-2server-16rank")
			require.NoError(t, err)
			tc.edit(sc)
			res, env := generate(t, sc)
			a := advisor.Advise(res, env, advisor.DefaultOptions)
			var elapse, moving int64
			for _, o := range res.Communication.Ops {
				elapse += o.ElapseNs
				moving += o.MovingNs
			}
			ex := res.Exposure
			t.Logf("moving %.3f of the ops' time; exposed %.3f: transfer %.3f wait %.3f other %.3f; diagnosis %s %q",
				float64(moving)/float64(elapse), res.Summary.CommShare, ex.TransferShare, ex.WaitShare, ex.OtherShare, a.Diagnosis.Cause, a.Diagnosis.Title)
			assert.Empty(t, byID(a, "comm_mostly_waiting"))
			assert.Equal(t, tc.cause, a.Diagnosis.Cause)
			if tc.exposed {
				// One plane's Transit gave 0.465 and 0.181 of 0.389.
				assert.Greater(t, float64(moving)/float64(elapse), 0.8, "healthy collectives mostly move data")
				assert.Greater(t, ex.TransferShare, 0.8*res.Summary.CommShare, "the exposed time is mostly moving data")
			}
		})
	}
}
