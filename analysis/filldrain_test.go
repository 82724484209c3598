package analysis

import (
	"fmt"
	"slices"
	"strings"
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
		got, known := pipelineFillDrain(c.ops, rank(c.bubbleNs), c.crossGrp, nil, nil)
		assert.InDelta(t, c.want, got, float64(ms)/100, "%s: %.3f ms", c.name, float64(got)/1e6)
		assert.Equal(t, c.bubbleNs > 0 && len(c.crossGrp) > 0, known, c.name)
	}
}

// Without step markers (step -1: one step spans the collection) a rank's receives
// hold a fill of every training step, as many as the run had steps, which it does
// not say: the receives split where their sizes part, at twice the typical or more.
// Before, nothing was known, and the diagnosis held the whole waiting to a tenth of
// the step (two stages of 8 micro-batches, 1/9 in theory, read as a bubble).
func TestPipelineFillDrainWithoutStepMarkers(t *testing.T) {
	const ms = int64(1_000_000)
	pp := map[string]bool{"pp": true}
	// steps training steps of m receives each: the first waits fillNs for the fill,
	// the others move data for movingNs and wait 0.2 ms more or less in turn.
	collection := func(steps, m int, fillNs, movingNs int64) []OpStat {
		var ops []OpStat
		for s := range steps {
			for j := range m {
				elapse := movingNs + int64((s+j)%3-1)*ms/5
				if j == 0 {
					elapse = fillNs + movingNs
				}
				ops = append(ops, OpStat{Rank: 1, Step: -1, Group: "pp", Name: fmt.Sprintf("hcom_receive_%d_%d", s, j), Type: "receive", ElapseNs: elapse, MovingNs: movingNs})
			}
		}
		return ops
	}
	// A middle stage of one micro-batch a step: each step a forward fill of 40 ms
	// and a longer backward one (no transfer time read, as in msprof's output).
	oneMicrobatch := func(steps int, backwardNs int64) []OpStat {
		var ops []OpStat
		for s := range steps {
			for _, fillNs := range []int64{40 * ms, backwardNs} {
				ops = append(ops, OpStat{Rank: 1, Step: -1, Group: "pp", Name: fmt.Sprintf("hcom_receive_%d_%d", s, fillNs), Type: "receive", ElapseNs: fillNs + int64(s)*ms/10})
			}
		}
		return ops
	}
	// Recurring receives at a level per step (1, 1 and 3 ms), as the generated
	// jobs' are: split at the best separation of all the receives (Otsu's), the
	// levels part (by 3, too close for two classes) and every receive reads as a
	// fill; the largest ratio above the median parts the fills.
	levels := func() []OpStat {
		var ops []OpStat
		for s, levelNs := range []int64{ms, ms, 3 * ms} {
			ops = append(ops, OpStat{Rank: 1, Step: -1, Group: "pp", Name: fmt.Sprintf("hcom_receive_%d", s), Type: "receive", ElapseNs: 47*ms + levelNs})
			for j := 1; j < 64; j++ {
				ops = append(ops, OpStat{Rank: 1, Step: -1, Group: "pp", Name: fmt.Sprintf("hcom_receive_%d_%d", s, j), Type: "receive", ElapseNs: levelNs})
			}
		}
		return ops
	}
	const bubbleNs = 10_000 * ms
	for _, c := range []struct {
		name        string
		ops         []OpStat
		want, tol   int64
		unknown     bool
		computingNs int64 // 100 s unless set
	}{
		// 3 fills of 50 ms; the jitter of the others cancels about the median.
		{name: "three steps of 8", ops: collection(3, 8, 50*ms, ms), want: 150 * ms, tol: ms},
		{name: "five steps of 64", ops: collection(5, 64, 50*ms, ms), want: 250 * ms, tol: ms},
		// Half the receives fill: the median of all would have been a fill's.
		{name: "three steps of 2", ops: collection(3, 2, 50*ms, ms), want: 150 * ms, tol: ms},
		// The fills begin 16 times above the typical 1 ms: 3 × 47 ms, their levels
		// beyond it (2 ms), and the third step's level beyond it (63 × 2 ms).
		{name: "recurring receives at three levels", ops: levels(), want: 3*47*ms + 2*ms + 63*2*ms, tol: ms},
		// Every receive fills (a third of the compute per receive or more): none
		// recurs to tell them by.
		{name: "three steps of 1", ops: collection(3, 1, 50*ms, ms), unknown: true, computingNs: 3 * 150 * ms},
		{name: "one receive", ops: collection(1, 1, 50*ms, ms), unknown: true},
		// Backward fills 3 times the forward ones: too close to be two classes.
		{name: "one micro-batch on a middle stage", ops: oneMicrobatch(3, 120*ms), unknown: true, computingNs: 3 * 240 * ms},
		// Backward fills 5 times the forward ones, which are no recurring receive:
		// 40 ms is a third of the compute per receive (240 ms a step, 120 a
		// receive). Were the compute not weighed, each step would read 160 ms of
		// fill, not 240.
		{name: "one micro-batch, backward fills 5 times longer", ops: oneMicrobatch(3, 200*ms), unknown: true, computingNs: 3 * 240 * ms},
		// A slower neighbour: every micro-batch waits 30 ms of the rank's 100 ms a
		// receive (the fills 100 ms more).
		{name: "a slower stage beside", ops: collection(3, 8, 100*ms, 30*ms), unknown: true, computingNs: 3 * 8 * 100 * ms},
		// Fills no longer than twice the transfers: not told apart by size, the
		// median of all recurs (a small part of the compute per receive).
		{name: "fills lost among slow transfers", ops: collection(3, 8, 5*ms, 20*ms), want: 15 * ms, tol: 2 * ms},
	} {
		computingNs := c.computingNs
		if computingNs == 0 {
			computingNs = 100_000 * ms
		}
		got, known := pipelineFillDrain(c.ops, []RankResult{{Rank: 1, Steps: []StepBreakdown{{Step: -1, BubbleNs: bubbleNs, ComputingNs: computingNs}}}}, pp, nil, nil)
		if c.unknown {
			assert.False(t, known, c.name)
			assert.Zero(t, got, c.name)
			continue
		}
		assert.True(t, known, c.name)
		assert.InDelta(t, c.want, got, float64(c.tol)+float64(ms)/100, "%s: %.3f ms", c.name, float64(got)/1e6)
	}
}

// Under 1F1B (Megatron's default) the fill and drain wait elsewhere than GPipe's: a
// stage's cool-down receives each wait for the next stage's forward (three of the
// first stage's four receives a step with 4 stages of 4 micro-batches), and the send
// opening the steady state's first call waits for the next stage to turn around,
// exposed rather than Bubble. The median with the two longest left out took a
// drain's 9.1 ms for the typical receive (11.5 ms of fill, not 27.9), and the sends
// were left out (47.8 ms more). A middle stage's forward and backward sends recur at
// two levels (GPipe, 64 micro-batches): neither is a fill.
func TestPipelineFillDrainOneFOneB(t *testing.T) {
	const ms = int64(1_000_000)
	pp := map[string]bool{"pp": true}
	op := func(name string, elapse, moving int64) OpStat {
		typ := "send"
		if strings.HasPrefix(name, "hcom_receive") {
			typ = "receive"
		}
		return OpStat{Rank: 1, Step: 0, Group: "pp", Name: name, Type: typ, ElapseNs: elapse, MovingNs: moving}
	}
	oneFOneB := []OpStat{
		op("hcom_send_1", 9*ms/10, 9*ms/10), op("hcom_send_2", 17*ms/10, 9*ms/10), op("hcom_send_3", 18*ms/10, 9*ms/10),
		op("hcom_send_4", 495*ms/10, 9*ms/10), // the turn-around
		op("hcom_receive_1", 9*ms/10, 0), op("hcom_receive_2", 107*ms/10, 0), op("hcom_receive_3", 108*ms/10, 0), op("hcom_receive_4", 91*ms/10, 0),
	}
	ranks := []RankResult{{Rank: 1, Steps: []StepBreakdown{{Step: 0, BubbleNs: 315 * ms / 10, ComputingNs: 92 * ms}}}}
	got, known := pipelineFillDrain(oneFOneB, ranks, pp, nil, nil)
	assert.True(t, known)
	assert.InDelta(t, 279*ms/10+478*ms/10, got, float64(ms)/100, "%.3f ms", float64(got)/1e6)

	// The sends' part is within their waits: measured against the group's fastest
	// rank (CrossWaitNs, 20 ms of the turn-around's 48.6) where it is.
	measured := slices.Clone(oneFOneB)
	for i := range measured {
		measured[i].CrossWaitKnown = true
	}
	measured[3].CrossWaitNs = 20 * ms
	got, _ = pipelineFillDrain(measured, ranks, pp, nil, nil)
	assert.InDelta(t, 279*ms/10+20*ms, got, float64(ms)/100, "%.3f ms", float64(got)/1e6)

	var twoLevels []OpStat
	for i := range 64 {
		twoLevels = append(twoLevels, op(fmt.Sprintf("hcom_send_f%d", i), ms/10, ms/20), op(fmt.Sprintf("hcom_send_b%d", i), 28*ms/10, ms/20))
	}
	got, _ = pipelineFillDrain(append(twoLevels, op("hcom_receive_1", ms, ms)), []RankResult{{Rank: 1, Steps: []StepBreakdown{{Step: 0, BubbleNs: ms, ComputingNs: 64 * 74 * ms}}}}, pp, nil, nil)
	assert.Zero(t, got, "%.3f ms", float64(got)/1e6)
}
