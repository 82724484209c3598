package analysis

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// pipelineFillDrain keeps of each rank-step's receive time what is beyond the
// typical receive (the median of the others, the two longest left out) or beyond
// their own transfer when there is no typical, each time: a stage of a GPipe step
// receiving m activations waits for the fill once (50 ms) and then about its
// transfer (1 ms) each micro-batch, some waiting 0.2 ms more or less.
func TestPipelineFillDrain(t *testing.T) {
	const ms = int64(1_000_000)
	recv := func(rank, step int, group string, elapse, moving int64) OpStat {
		return OpStat{Rank: rank, Step: step, Group: group, Name: fmt.Sprintf("hcom_receive_%d", elapse), Type: "receive", ElapseNs: elapse, MovingNs: moving}
	}
	// fillThenSteady is m receives: the first waits for the fill, the others
	// move data for 1 ms and wait 0.2 ms more or less in turn (the jitter).
	fillThenSteady := func(m int, fillNs int64) []OpStat {
		ops := []OpStat{recv(1, 0, "pp", fillNs+ms, ms)}
		for j := 1; j < m; j++ {
			jitter := int64(j%3-1) * ms / 5
			ops = append(ops, recv(1, 0, "pp", ms+jitter, ms))
		}
		return ops
	}
	pp := map[string]bool{"pp": true}
	rank := func(bubbleNs int64) []RankResult {
		return []RankResult{{Rank: 1, Steps: []StepBreakdown{{Step: 0, BubbleNs: bubbleNs}}}}
	}
	for _, c := range []struct {
		name     string
		ops      []OpStat
		bubbleNs int64
		crossGrp map[string]bool
		want     int64
	}{
		{"eight micro-batches: the first receive's wait beyond the typical", fillThenSteady(8, 50*ms), 58 * ms, pp, 50 * ms},
		{"one micro-batch: no typical, the transfer recurs", fillThenSteady(1, 50*ms), 51 * ms, pp, 50 * ms},
		{"two: no typical either", fillThenSteady(2, 50*ms), 52 * ms, pp, 50 * ms},
		// The jitter above the typical (21 receives 0.2 ms over) and below it (21
		// under) cancel: counted receive by receive, 4.2 ms would read as a bubble.
		{"sixty-four: the jitter is no bubble", fillThenSteady(64, 50*ms), 114 * ms, pp, 50 * ms},
		// A drain too: the first backward receive waits 80 ms.
		{"a fill and a drain", append(fillThenSteady(8, 50*ms), recv(1, 0, "pp", 81*ms, ms), recv(1, 0, "pp", ms, ms), recv(1, 0, "pp", ms, ms)), 141 * ms, pp, 130 * ms},
		{"at most the step's Bubble", fillThenSteady(8, 50*ms), 30 * ms, pp, 30 * ms},
		{"no Bubble in the step (batchSendRecv): nothing", fillThenSteady(8, 50*ms), 0, pp, 0},
		{"a receive of no pipeline (a context-parallel ring): nothing", fillThenSteady(8, 50*ms), 58 * ms, map[string]bool{}, 0},
	} {
		got, known := pipelineFillDrain(c.ops, rank(c.bubbleNs), c.crossGrp)
		assert.InDelta(t, c.want, got, float64(ms)/100, "%s: %.3f ms", c.name, float64(got)/1e6)
		assert.Equal(t, c.bubbleNs > 0 && len(c.crossGrp) > 0, known, c.name)
	}
	// A run without step markers (step -1: one step spans the collection) holds
	// the receives of every training step, each with its fill: nothing is known.
	unmarked := fillThenSteady(1, 50*ms)
	for i := range 3 {
		o := recv(1, -1, "pp", 51*ms, ms)
		o.Name = fmt.Sprintf("hcom_receive_%d", i)
		unmarked = append(unmarked, o)
	}
	for i := range unmarked {
		unmarked[i].Step = -1
	}
	got, known := pipelineFillDrain(unmarked, []RankResult{{Rank: 1, Steps: []StepBreakdown{{Step: -1, BubbleNs: 204 * ms}}}}, pp)
	assert.False(t, known, "no step markers")
	assert.Zero(t, got)
}
