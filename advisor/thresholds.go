package advisor

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hcclprof/hcclprof/analysis"
)

// Thresholds are the findings' thresholds, each group declared beside the rule it
// decides. Each is a key of the configuration file's findings section:
// findings.<finding id>.<key> (ApplyConfig).
type Thresholds struct {
	Overlap       OverlapThresholds       // exposed_comm_could_overlap
	Steps         StepThresholds          // warmup_steps and outlier_steps
	Stake         StakeThresholds         // slow_rank (and the diagnosis' straggler)
	Waiting       WaitThresholds          // comm_mostly_waiting
	LinkUse       LinkUseThresholds       // link_use_low
	LatencyBound  LatencyBoundThresholds  // latency_bound_transfers
	Bubble        BubbleThresholds        // pipeline_bubble
	Storm         StormThresholds         // small_collectives
	SmallMessages SmallMessagesThresholds // small_messages
	Algorithm     AlgorithmThresholds     // algorithm_not_best
	Diagnosis     DiagnosisThresholds     // the diagnosis (the verdict) and its cause_* finding
	Recommend     RecommendThresholds     // which changes are recommended, and their order
}

// DefaultThresholds are the findings' defaults (hcclprof.example.yaml lists them).
var DefaultThresholds = Thresholds{
	Overlap: DefaultOverlapThresholds, Steps: DefaultStepThresholds, Stake: DefaultStakeThresholds,
	Waiting: DefaultWaitThresholds, LinkUse: DefaultLinkUseThresholds, LatencyBound: DefaultLatencyBoundThresholds,
	Bubble: DefaultBubbleThresholds, Storm: DefaultStormThresholds, SmallMessages: DefaultSmallMessagesThresholds, Algorithm: DefaultAlgorithmThresholds,
	Diagnosis: DefaultDiagnosisThresholds, Recommend: DefaultRecommendThresholds,
}

// thresholdKey is one threshold's name in the configuration file, where it lives,
// and the range it must be in.
type thresholdKey struct {
	name   string
	value  *float64
	lo, hi float64
}

// byFinding names every threshold by the finding it decides, as the configuration
// file does.
func (t *Thresholds) byFinding() map[string][]thresholdKey {
	return map[string][]thresholdKey{
		"exposed_comm_could_overlap": t.Overlap.keys(),
		"warmup_steps":               t.Steps.keys(),
		"slow_rank":                  t.Stake.keys(),
		"comm_mostly_waiting":        t.Waiting.keys(),
		"link_use_low":               t.LinkUse.keys(),
		"latency_bound_transfers":    t.LatencyBound.keys(),
		"pipeline_bubble":            t.Bubble.keys(),
		"small_collectives":          t.Storm.keys(),
		"small_messages":             t.SmallMessages.keys(),
		"algorithm_not_best":         t.Algorithm.keys(),
		"diagnosis":                  t.Diagnosis.keys(),
		"recommendations":            t.Recommend.keys(),
	}
}

// ApplyConfig sets the advisor's options from the configuration file: comm_budget,
// checks.default_buffsize_mb (HCCL_BUFFSIZE when the run does not set it), the
// detectors' slow_rank, slow_link and checks sections, and the findings section's
// thresholds. Errors name the file's line.
func ApplyConfig(c analysis.Config, o *Options) error {
	if c.CommBudget != nil {
		o.CommBudget = *c.CommBudget
	}
	if b := c.Checks.DefaultBuffsizeMB; b != nil {
		o.DefaultBuffsizeBytes = int64(*b) << 20
	}
	if o.Thresholds == (Thresholds{}) {
		o.Thresholds = DefaultThresholds
	}
	if o.Detect == (DetectThresholds{}) {
		o.Detect = DefaultDetectThresholds
	}
	if err := applyDetect(c, &o.Detect); err != nil {
		return err
	}
	return applyFindings(&c.Findings, &o.Thresholds)
}

// applyDetect reads the detectors' sections onto th, each value checked against its
// range.
func applyDetect(c analysis.Config, th *DetectThresholds) error {
	for _, k := range []struct {
		name   string
		dst    *float64
		src    *float64
		lo, hi float64
	}{
		{"slow_rank.z", &th.SlowRank.Z, c.SlowRank.Z, 0, 1e3},
		{"slow_rank.min_share", &th.SlowRank.MinShare, c.SlowRank.MinShare, 0, 1},
		{"slow_rank.persist", &th.SlowRank.Persist, c.SlowRank.Persist, 0, 1},
		{"slow_link.fraction", &th.SlowLink.Fraction, c.SlowLink.Fraction, 0, 1},
		{"checks.small_share", &th.Checks.SmallShare, c.Checks.SmallShare, 0, 1},
		{"checks.contention_gbps", &th.Checks.ContentionGBps, c.Checks.ContentionGBps, 0, 1e4},
	} {
		if k.src == nil {
			continue
		}
		if *k.src < k.lo || *k.src > k.hi {
			return fmt.Errorf("%s = %v: want a value in [%v, %v]", k.name, *k.src, k.lo, k.hi)
		}
		*k.dst = *k.src
	}
	if m := c.SlowRank.Method; m != nil {
		if *m != "mad" && *m != "dixon" {
			return fmt.Errorf("slow_rank.method = %q: want mad or dixon", *m)
		}
		th.SlowRank.Method = *m
	}
	return nil
}

// applyFindings reads the findings section, a mapping of finding ids to mappings of
// threshold names to numbers, onto th.
func applyFindings(n *yaml.Node, th *Thresholds) error {
	if n.Kind == 0 {
		return nil // no findings section
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: findings: want a mapping of finding ids to thresholds", n.Line)
	}
	known := th.byFinding()
	for i := 0; i+1 < len(n.Content); i += 2 {
		id, body := n.Content[i], n.Content[i+1]
		keys, ok := known[id.Value]
		if !ok {
			return fmt.Errorf("line %d: findings.%s: no such finding with thresholds (known: %s)", id.Line, id.Value, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		if body.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: findings.%s: want a mapping of thresholds", body.Line, id.Value)
		}
		for j := 0; j+1 < len(body.Content); j += 2 {
			name, val := body.Content[j], body.Content[j+1]
			k := slices.IndexFunc(keys, func(k thresholdKey) bool { return k.name == name.Value })
			if k < 0 {
				names := make([]string, len(keys))
				for x, k := range keys {
					names[x] = k.name
				}
				return fmt.Errorf("line %d: findings.%s.%s: unknown threshold (known: %s)", name.Line, id.Value, name.Value, strings.Join(names, ", "))
			}
			v, err := strconv.ParseFloat(val.Value, 64)
			if val.Kind != yaml.ScalarNode || err != nil {
				return fmt.Errorf("line %d: findings.%s.%s = %q: want a number", val.Line, id.Value, name.Value, val.Value)
			}
			if v < keys[k].lo || v > keys[k].hi {
				return fmt.Errorf("line %d: findings.%s.%s = %v: want a value in [%v, %v]", val.Line, id.Value, name.Value, v, keys[k].lo, keys[k].hi)
			}
			*keys[k].value = v
		}
	}
	return nil
}
