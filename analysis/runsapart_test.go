package analysis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/profile"
)

// Ranks of one job start a step within seconds (or within a few steps, for a late
// rank); an hour apart they are two runs. Clocks that are not wall-clock time (msprof's
// older device clocks, Kineto's: no profile.Traits.EpochClock) are not compared.
func TestRunsApartWarning(t *testing.T) {
	const t0 = int64(1736408883) * 1e9
	stage := int64(10 * time.Second)
	ranks := func(epoch bool) []RankResult {
		return []RankResult{
			{Rank: 0, Traits: profile.Traits{EpochClock: epoch}, Steps: []StepBreakdown{{Step: 3, StageNs: stage}}},
			{Rank: 1, Traits: profile.Traits{EpochClock: epoch}, Steps: []StepBreakdown{{Step: 3, StageNs: stage}}},
		}
	}
	op := func(rank int, at int64) OpStat { return OpStat{Rank: rank, Step: 3, StartNs: at} }
	cases := []struct {
		name  string
		epoch bool
		ops   []OpStat
		want  string
	}{
		{"a late rank, 5 steps behind", true, []OpStat{op(0, t0), op(1, t0+5*stage)}, ""},
		{"an hour apart", true, []OpStat{op(0, t0), op(0, t0-int64(time.Second)), op(1, t0+int64(time.Hour))},
			"rank 0 started step 3 at 2025-01-09 07:48:02 UTC and rank 1 at 2025-01-09 08:48:03 UTC, 1h0m1s apart (1 step(s) over 1m40s apart): profiles of different runs, or a clock far off?"},
		{"device clocks are not compared", false, []OpStat{op(0, t0), op(1, t0+int64(time.Hour))}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runsApartWarning(ranks(c.epoch), c.ops)
			if c.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, c.want)
		})
	}
}
