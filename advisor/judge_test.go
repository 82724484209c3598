package advisor_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

// judgeOutcome is one recommendation replayed in the generator.
type judgeOutcome struct {
	scenario, id, knob    string
	predUs, lowUs, highUs float64
	actualUs              float64
	replayed              bool   // the generator could apply every setting
	why                   string // why it was not replayed
}

func (o judgeOutcome) inside() bool {
	return o.replayed && o.lowUs <= o.actualUs && o.actualUs <= o.highUs
}

func (o judgeOutcome) relErr() float64 { return math.Abs(o.predUs-o.actualUs) / o.actualUs }

// judgeScenarios are every built-in and the scenarios reproducing issue 16's cases.
func judgeScenarios(t *testing.T) map[string]func() *scenario.Scenario {
	t.Helper()
	out := map[string]func() *scenario.Scenario{}
	for _, name := range scenario.BuiltinNames() {
		out[name] = func() *scenario.Scenario {
			sc, err := scenario.Builtin(name)
			require.NoError(t, err)
			return sc
		}
	}
	files, err := filepath.Glob("../fixtures/testdata/judge/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		out["judge/"+strings.TrimSuffix(filepath.Base(f), ".yaml")] = func() *scenario.Scenario {
			sc, err := scenario.Load(f)
			require.NoError(t, err)
			return sc
		}
	}
	return out
}

// judgeShort are the scenarios the judge replays under -short: small ones whose
// recommendations name different knobs, one of them on 910A.
var judgeShort = []string{"judge/pipeline-bubble-mb2", "judge/910a-2node", "seed-8card-bert"}

// TestJudgeRecommendationsInTheGenerator is the judge: for every scenario it analyses
// and advises, applies each recommendation's settings to the scenario, regenerates
// with the same seed, and checks the regenerated step time against the predicted
// interval. The generator is the more detailed model (HCCL's own algorithm choice,
// RHD's fold, NHR's steps, ...), so this measures the advisor's error, not its
// agreement with itself. It prints coverage and error per knob, and asserts that at
// least 80% of the outcomes fall inside their interval and that no knob is invented.
func TestJudgeRecommendationsInTheGenerator(t *testing.T) {
	var mu sync.Mutex
	var outcomes []judgeOutcome
	var invented []string
	scenarios := judgeScenarios(t)
	if testkit.Short(t, "the judge on "+strings.Join(judgeShort, ", ")+" (it regenerates each scenario once per recommendation)") {
		for n := range scenarios {
			if !slices.Contains(judgeShort, n) {
				delete(scenarios, n)
			}
		}
		require.Len(t, scenarios, len(judgeShort))
	}
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Run("scenarios", func(t *testing.T) {
		for _, name := range names {
			load := scenarios[name]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				edit := func(sc *scenario.Scenario) { sc.Steps = 3 }
				sc := load()
				edit(sc)
				res, env := generate(t, sc)
				a := advisor.Advise(res, env, advisor.DefaultOptions)
				var local []judgeOutcome
				var bad []string
				for _, r := range a.Recommendations {
					for _, k := range strings.Split(r.Knob, " + ") {
						if _, ok := advisor.LookupKnob(k); !ok {
							bad = append(bad, fmt.Sprintf("%s: %s names %q", name, r.ID, k))
						}
					}
					o := judgeOutcome{scenario: name, id: r.ID, knob: r.Knob, predUs: r.Predicted.StepTimeUs,
						lowUs: r.Predicted.Low, highUs: r.Predicted.High}
					changed := load()
					edit(changed)
					o.replayed = len(r.Settings) > 0
					if !o.replayed {
						o.why = "no settings to replay"
					}
					for _, s := range r.Settings {
						if err := changed.SetKnob(s.Knob, s.Value, s.Algo); err != nil {
							o.replayed, o.why = false, err.Error()
							break
						}
					}
					if o.replayed { // the generator's truth of the changed job
						o.actualUs = replayed(t, changed).StepTimeUs
						if r.Predicted.Span { // a pipeline cure's step: Stage + Bubble
							o.actualUs = truthSpanUs(testkit.Truth(t, changed, render.DefaultFormat(changed)))
						}
					}
					t.Logf("%s = %s: predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (%s)", r.Knob, r.Value,
						o.predUs/1e3, o.lowUs/1e3, o.highUs/1e3, o.actualUs/1e3, o.why)
					local = append(local, o)
				}
				mu.Lock()
				outcomes = append(outcomes, local...)
				invented = append(invented, bad...)
				mu.Unlock()
			})
		}
	})

	// The table: every outcome, then coverage and error per knob.
	sort.Slice(outcomes, func(i, j int) bool {
		if outcomes[i].scenario != outcomes[j].scenario {
			return outcomes[i].scenario < outcomes[j].scenario
		}
		return outcomes[i].id < outcomes[j].id
	})
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-36s %-28s %12s %25s %12s %7s %s\n", "scenario", "knob", "pred ms", "interval ms", "actual ms", "err", "inside")
	byKnob := map[string][]judgeOutcome{}
	replayed, inside := 0, 0
	for _, o := range outcomes {
		if !o.replayed {
			fmt.Fprintf(&b, "%-36s %-28s %12.3f %25s %12s %7s not replayed: %s\n", o.scenario, o.knob, o.predUs/1e3, "", "", "", o.why)
			continue
		}
		replayed++
		if o.inside() {
			inside++
		}
		byKnob[o.knob] = append(byKnob[o.knob], o)
		fmt.Fprintf(&b, "%-36s %-28s %12.3f [%11.3f, %11.3f] %12.3f %6.1f%% %v\n", o.scenario, o.knob, o.predUs/1e3,
			o.lowUs/1e3, o.highUs/1e3, o.actualUs/1e3, 100*o.relErr(), o.inside())
	}
	knobs := make([]string, 0, len(byKnob))
	for k := range byKnob {
		knobs = append(knobs, k)
	}
	sort.Strings(knobs)
	fmt.Fprintf(&b, "\n%-28s %5s %9s %11s %10s\n", "knob", "n", "coverage", "median err", "worst err")
	for _, k := range knobs {
		os := byKnob[k]
		errs := make([]float64, len(os))
		in := 0
		for i, o := range os {
			errs[i] = o.relErr()
			if o.inside() {
				in++
			}
		}
		slices.Sort(errs)
		fmt.Fprintf(&b, "%-28s %5d %8.0f%% %10.1f%% %9.1f%%\n", k, len(os), 100*float64(in)/float64(len(os)),
			100*errs[len(errs)/2], 100*errs[len(errs)-1])
	}
	coverage := 0.0
	if replayed > 0 {
		coverage = float64(inside) / float64(replayed)
	}
	fmt.Fprintf(&b, "\ncoverage %d/%d = %.1f%% over %d scenarios\n", inside, replayed, 100*coverage, len(names))
	t.Log(b.String())

	assert.Empty(t, invented, "recommendations name knobs outside the allowlist")
	require.Positive(t, replayed, "no recommendation was replayed: the judge judged nothing")
	assert.GreaterOrEqual(t, coverage, 0.80, "share of regenerated step times inside the predicted interval")
}

// truthSpanUs is meanSpanUs of the generator's truth.
func truthSpanUs(truth *sim.Truth) float64 {
	var sum, n float64
	for _, rr := range truth.Ranks {
		for _, st := range rr.Steps {
			sum += st.StageUs + st.BubbleUs
			n++
		}
	}
	return sum / n
}

// meanSpanUs is the mean over the ranks' steps of Stage + Bubble, in µs.
func meanSpanUs(res *analysis.Result) float64 {
	var sum, n float64
	for _, rr := range res.Ranks {
		for _, st := range rr.Steps {
			sum += float64(st.StageNs + st.BubbleNs)
			n++
		}
	}
	return sum / n / 1e3
}
