package advisor

// Thresholds are the findings' thresholds, each group declared beside the rule it
// decides. Each is a key of the configuration file's findings section:
// findings.<finding id>.<key> (Keys; internal/config reads the file).
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
	Overlap: defaultOverlapThresholds, Steps: DefaultStepThresholds, Stake: defaultStakeThresholds,
	Waiting: defaultWaitThresholds, LinkUse: defaultLinkUseThresholds, LatencyBound: defaultLatencyBoundThresholds,
	Bubble: defaultBubbleThresholds, Storm: defaultStormThresholds, SmallMessages: defaultSmallMessagesThresholds, Algorithm: defaultAlgorithmThresholds,
	Diagnosis: defaultDiagnosisThresholds, Recommend: defaultRecommendThresholds,
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

// ThresholdKey is one threshold of the configuration file's findings section
// (findings.<finding id>.<Name>): where it lives and the range it must be in.
type ThresholdKey struct {
	Name   string
	Value  *float64
	Lo, Hi float64
}

// Keys names every threshold of t by the finding it decides, as the configuration
// file does (internal/config reads them).
func (t *Thresholds) Keys() map[string][]ThresholdKey {
	out := map[string][]ThresholdKey{}
	for id, keys := range t.byFinding() {
		for _, k := range keys {
			out[id] = append(out[id], ThresholdKey{Name: k.name, Value: k.value, Lo: k.lo, Hi: k.hi})
		}
	}
	return out
}
