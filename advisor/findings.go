package advisor

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// Severity grades a finding: high = act on it first (it costs a large share of the
// step or is a fault), medium = worth a change, low = a remark, info = context.
type Severity string

// Severities, most severe first.
const (
	High   Severity = "high"
	Medium Severity = "medium"
	Low    Severity = "low"
	Info   Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case High:
		return 0
	case Medium:
		return 1
	case Low:
		return 2
	}
	return 3
}

// Finding is what is wrong, with evidence a person can check in the timeline.
type Finding struct {
	ID       string // stable identifier: comm_share_over_budget, slow_rank, ...
	Severity Severity
	Title    string
	Evidence string
	Refs     []Ref // where to look
}

// Ref points into the timeline: a rank, a step, an op, a time.
type Ref struct {
	Rank, Step int // -1 when not specific
	Op         string
	StartUs    float64 // the op's or step's start in the trace's clock; 0 when not specific
	// StartNs is the same start exactly (StartUs, a float64, keeps only about a
	// quarter µs of an epoch timestamp); 0 when not specific.
	StartNs int64
	DurUs   float64
}

// Options tune the advisor.
type Options struct {
	// CommBudget is the exposed-communication share above which communication is the
	// bottleneck (the field's 30% rule).
	CommBudget float64
	// Framework selects how recommendations are applied: pytorch-ddp, deepspeed,
	// megatron, mindspore; "" infers it from the data.
	Framework string
	// Accumulation is the profiled run's micro-batches per optimizer step; 0: not
	// known, inferred from the compute pattern (InferAccumulation).
	Accumulation int
}

// DefaultOptions are the advisor's defaults.
var DefaultOptions = Options{CommBudget: 0.30}

// Env is the union of the ranks' profiler_metadata.json ENV_VARIABLES, for the
// environment checks (a value set on any rank counts).
type Env map[string]string

// EnvOf collects the ranks' environment variables.
func EnvOf(c *profile.Cluster) Env {
	out := Env{}
	if c == nil {
		return out
	}
	for _, r := range c.Ranks {
		for k, v := range r.Metadata.Env {
			if v != "" {
				out[k] = v
			}
		}
	}
	return out
}

// findings reads the analysis for what is wrong. Each rule is small and named by its
// finding's ID; the order of the result is by severity, then by the size of the loss.
func findings(res *analysis.Result, env Env, opts Options) []Finding {
	var out []Finding
	out = append(out, budgetFindings(res, opts)...)
	out = append(out, waitFindings(res)...)
	out = append(out, warmupFindings(res)...)
	out = append(out, slowFindings(res.Communication)...)
	out = append(out, checkFindings(res.Communication)...)
	out = append(out, linkUseFindings(res.Communication)...)
	out = append(out, latencyBoundFindings(res.Communication)...)
	out = append(out, algorithmFindings(res, env)...)
	out = append(out, pipelineFindings(res.Communication)...)
	out = append(out, envFindings(env)...)
	sortFindings(out)
	return out
}

// sortFindings orders findings by severity, keeping the order within one.
func sortFindings(out []Finding) {
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.rank() < out[j].Severity.rank() })
}

func budgetFindings(res *analysis.Result, opts Options) []Finding {
	s := res.Summary
	if s.Ranks == 0 || s.CommTotalShare == 0 {
		return nil
	}
	var out []Finding
	worst := worstStep(res)
	if s.CommShare > opts.CommBudget {
		out = append(out, Finding{ID: "comm_share_over_budget", Severity: High,
			Title: fmt.Sprintf("Exposed communication is %.1f%% of the step, above the %.0f%% budget", 100*s.CommShare, 100*opts.CommBudget),
			Evidence: fmt.Sprintf("mean Stage %.3f ms of which %.3f ms is communication not overlapped with compute; worst: rank %d step %s at %.1f%%",
				float64(s.StepTimeNs)/1e6, s.CommShare*float64(s.StepTimeNs)/1e6, worst.rank, analysis.StepLabel(worst.step.Step), 100*worst.step.CommShare()),
			Refs: []Ref{{Rank: worst.rank, Step: worst.step.Step}}})
	}
	// Communication that runs alone although most of it could hide behind compute:
	// exposed communication is over 10% of the step while less than half of the
	// communication overlaps, and there is compute to hide it behind.
	if s.CommShare > 0.10 && s.OverlapRatio < 0.5 {
		var comp, stage int64
		for _, r := range res.Ranks {
			for _, st := range r.Steps {
				comp += st.ComputingNs
				stage += st.StageNs
			}
		}
		if stage > 0 && float64(comp)/float64(stage) > 0.2 {
			out = append(out, Finding{ID: "exposed_comm_could_overlap", Severity: Medium,
				Title: fmt.Sprintf("Only %.0f%% of the communication overlaps compute", 100*s.OverlapRatio),
				Evidence: fmt.Sprintf("compute is %.1f%% of the step and communication %.1f%%, but %.1f%% of the step is communication alone",
					100*float64(comp)/float64(stage), 100*s.CommTotalShare, 100*s.CommShare)})
		}
	}
	return out
}

type rankStep struct {
	rank int
	step analysis.StepBreakdown
}

func worstStep(res *analysis.Result) rankStep {
	var w rankStep
	best := -1.0
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			if sh := st.CommShare(); sh > best {
				best, w = sh, rankStep{r.Rank, st}
			}
		}
	}
	return w
}

// warmupFindings flags steps much longer than the run's median step. Only the
// leading run of them, from the first profiled step, is warm-up (the first
// iterations compile graphs and build communicators): averages that include them
// mislead, and --skip-steps leaves them out. A long step later in the run is not
// warm-up: it is reported as an outlier with what the profile shows in it (an RDMA
// retransmission and its link), since skipping it would hide a fault. The median
// over ranks of each step's Stage is compared with the median of all steps.
func warmupFindings(res *analysis.Result) []Finding {
	byStep := map[int][]float64{}
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			if st.HasStep && st.StageNs > 0 {
				byStep[st.Step] = append(byStep[st.Step], float64(st.StageNs))
			}
		}
	}
	if len(byStep) < 3 {
		return nil
	}
	steps := make([]int, 0, len(byStep))
	medians := make([]float64, 0, len(byStep))
	stepMedian := map[int]float64{}
	for st, v := range byStep {
		sort.Float64s(v)
		stepMedian[st] = stats.UpperMedianSorted(v)
		steps = append(steps, st)
		medians = append(medians, stepMedian[st])
	}
	sort.Ints(steps)
	sort.Float64s(medians)
	typical := stats.UpperMedianSorted(medians)
	var warm, late []string
	var warmRefs, lateRefs []Ref
	leading := true
	for _, st := range steps {
		if stepMedian[st] <= 1.5*typical {
			leading = false
			continue
		}
		text := fmt.Sprintf("step %d %.3f ms (%.1f×)", st, stepMedian[st]/1e6, stepMedian[st]/typical)
		retransmitted := false
		for _, rt := range res.Communication.Retransmissions {
			if rt.Step == st {
				text += fmt.Sprintf(": an RDMA retransmission %d→%d in %s waits %.3f s", rt.Src, rt.Dst, rt.Op, float64(rt.TimeNs)/1e9)
				retransmitted = true
				break
			}
		}
		// A retransmission is a fault even in the first step.
		if leading && !retransmitted {
			warm, warmRefs = append(warm, text), append(warmRefs, Ref{Rank: -1, Step: st})
			continue
		}
		leading = false
		late, lateRefs = append(late, text), append(lateRefs, Ref{Rank: -1, Step: st})
	}
	var out []Finding
	if len(warm) > 0 {
		out = append(out, Finding{ID: "warmup_steps", Severity: skewSeverity(byStep, warmRefs),
			Title:    fmt.Sprintf("the first %d step(s) are a warm-up far longer than the typical %.3f ms: they skew the averages", len(warm), typical/1e6),
			Evidence: strings.Join(warm, "; ") + ". Leave them out with --skip-steps " + joinSteps(warmRefs) + ".",
			Refs:     warmRefs})
	}
	if len(late) > 0 {
		out = append(out, Finding{ID: "outlier_steps", Severity: skewSeverity(byStep, lateRefs),
			Title: fmt.Sprintf("%d step(s) far longer than the typical %.3f ms are outliers, not warm-up", len(late), typical/1e6),
			Evidence: strings.Join(late, "; ") + ". A long step after the run has settled is an event (a retransmission, a checkpoint, a host stall), not warm-up: " +
				"find its cause before leaving it out; every average here includes it.",
			Refs: lateRefs})
	}
	return out
}

// skewSeverity is Medium when leaving the steps out moves the mean step by over
// 10% (a skew that misleads every average), else Low.
func skewSeverity(byStep map[int][]float64, refs []Ref) Severity {
	var all, kept float64
	var nAll, nKept int
	outlier := map[int]bool{}
	for _, r := range refs {
		outlier[r.Step] = true
	}
	for st, v := range byStep {
		for _, x := range v {
			all += x
			nAll++
			if !outlier[st] {
				kept += x
				nKept++
			}
		}
	}
	if nKept > 0 && (all/float64(nAll)-kept/float64(nKept))/(all/float64(nAll)) > 0.1 {
		return Medium
	}
	return Low
}

func joinSteps(refs []Ref) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = strconv.Itoa(r.Step)
	}
	return strings.Join(parts, ",")
}

func slowFindings(c analysis.Communication) []Finding {
	var out []Finding
	for _, s := range c.SlowRanks {
		refs := make([]Ref, 0, len(s.Steps))
		for _, st := range s.Steps {
			refs = append(refs, Ref{Rank: s.Rank, Step: st})
		}
		out = append(out, Finding{ID: "slow_rank", Severity: stakeSeverity(s.ShareOfStep, s.StepsSeen),
			Title:    fmt.Sprintf("Rank %d holds the others back by %.1f%% of the step (cause: %s)", s.Rank, 100*s.ShareOfStep, s.Cause),
			Evidence: s.Evidence + evidenceStrength(s.StepsSeen), Refs: refs})
	}
	for _, n := range c.SlowNodes {
		out = append(out, Finding{ID: "slow_node", Severity: High,
			Title:    fmt.Sprintf("Node %d's %s links run at %.0f%% of their peers'", n.Node, n.Transport, 100*n.Fraction),
			Evidence: n.Evidence})
	}
	for _, l := range c.SlowLinks {
		out = append(out, Finding{ID: "slow_link", Severity: High,
			Title:    fmt.Sprintf("Link %d→%d (%s) runs at %.0f%% of its peers' bandwidth", l.Src, l.Dst, l.Transport, 100*l.BandwidthGBps/math.Max(l.PeerMedianGBps, 1e-9)),
			Evidence: l.Evidence, Refs: []Ref{{Rank: l.Src, Step: -1}}})
	}
	if n := len(c.Retransmissions); n > 0 {
		r := c.Retransmissions[0]
		out = append(out, Finding{ID: "rdma_retransmission", Severity: High,
			Title: fmt.Sprintf("%d RDMA transfer(s) took over 4 s: packet loss and retransmission", n),
			Evidence: fmt.Sprintf("first: %d→%d in %s, step %s, %.3f s; check the switch and the NICs (not an HCCL setting)",
				r.Src, r.Dst, r.Op, analysis.StepLabel(r.Step), float64(r.TimeNs)/1e9),
			Refs: []Ref{{Rank: r.Src, Step: r.Step, Op: r.Op}}})
	}
	return out
}

// Shares of the step at stake that make a finding high or medium.
const (
	highStake   = 0.10
	mediumStake = 0.03
)

// stakeSeverity grades a finding by the share of the step at stake, one level lower
// when it rests on a single step (one step is weak evidence).
func stakeSeverity(share float64, steps int) Severity {
	sev := Low
	switch {
	case share >= highStake:
		sev = High
	case share >= mediumStake:
		sev = Medium
	}
	if steps < 2 {
		sev = lower(sev)
	}
	return sev
}

func evidenceStrength(steps int) string {
	if steps < 2 {
		return " (seen in one profiled step only: confirm on more steps)"
	}
	return ""
}

func pipelineFindings(c analysis.Communication) []Finding {
	var out []Finding
	var over []analysis.Pipeline
	for _, p := range c.Pipelines {
		if p.Microbatches > 0 && p.MeasuredBubble > p.TheoryBubble*1.2+0.02 {
			over = append(over, p)
		}
	}
	if len(over) > 0 {
		sort.Slice(over, func(i, j int) bool { return over[i].MeasuredBubble > over[j].MeasuredBubble })
		p := over[0]
		out = append(out, Finding{ID: "pipeline_bubble", Severity: Medium,
			Title: fmt.Sprintf("Pipeline bubble %.1f%% of the step against %.1f%% in theory", 100*p.MeasuredBubble, 100*p.TheoryBubble),
			Evidence: fmt.Sprintf("%d of %d pipelines above theory; worst ranks %v (p=%d, m=%d, stage compute imbalance %.1f%%)",
				len(over), len(c.Pipelines), p.Ranks, p.Stages, p.Microbatches, 100*p.Imbalance)})
	}
	for _, p := range c.Pipelines {
		if strings.Contains(p.Note, "batchSendRecv") {
			out = append(out, Finding{ID: "pipeline_bubble_unmeasured", Severity: Info,
				Title: "The pipeline bubble cannot be measured", Evidence: p.Note})
			break
		}
	}
	return out
}

// envFindings are msprof-analyze's environment checks (docs/diagnosis.md §6), read from
// profiler_metadata.json, with its HCCL_RDMA_TC defect fixed (its rule file spells
// the key HCCL_RDAM_TC, so its advice for the variable comes out empty).
func envFindings(env Env) []Finding {
	var out []Finding
	add := func(id string, sev Severity, title, evidence string) {
		out = append(out, Finding{ID: id, Severity: sev, Title: title, Evidence: evidence})
	}
	if v, ok := env["HCCL_ALGO"]; ok {
		add("env_hccl_algo", Medium, "HCCL_ALGO="+v+" forces the algorithm",
			"HCCL's own selector is cost-based; forcing an algorithm helps only where the calibrated model says so. Unless a measurement showed a gain: unset HCCL_ALGO")
	}
	if v, ok := env["HCCL_RDMA_TC"]; ok {
		tc, err := strconv.Atoi(v)
		ev := "HCCL_RDMA_TC is the RoCE traffic class (DSCP × 4, default 132 = DSCP 33); it must match the switches' DSCP/PFC plan, or RoCE traffic is queued wrongly"
		if err != nil || tc < 0 || tc > 255 || tc%4 != 0 {
			add("env_hccl_rdma_tc", Medium, "HCCL_RDMA_TC="+v+" is not a valid traffic class (0–255, a multiple of 4)", ev)
		} else {
			add("env_hccl_rdma_tc", Low, fmt.Sprintf("HCCL_RDMA_TC=%d (DSCP %d) is set", tc, tc/4), ev)
		}
	}
	if v, ok := env["HCCL_RDMA_SL"]; ok {
		add("env_hccl_rdma_sl", Low, "HCCL_RDMA_SL="+v+" is set",
			"the RoCE service level (0–7, default 4) must equal the NIC's PFC priority, or performance drops")
	}
	if v, ok := env["ASCEND_LAUNCH_BLOCKING"]; ok && v == "1" {
		add("env_ascend_launch_blocking", High, "ASCEND_LAUNCH_BLOCKING=1 serialises every launch",
			"it turns the task queue off (TASK_QUEUE_ENABLE=0) and makes the host wait for each op; export ASCEND_LAUNCH_BLOCKING=0")
	}
	if v, ok := env["ASCEND_GLOBAL_LOG_LEVEL"]; ok && v != "3" {
		add("env_ascend_global_log_level", Low, "ASCEND_GLOBAL_LOG_LEVEL="+v+" logs more than errors",
			"verbose logging costs host time; export ASCEND_GLOBAL_LOG_LEVEL=3 (error) for performance runs")
	}
	return out
}

// waitFindings separates time that moves data from time that waits: when the
// collectives mostly wait (Wait + Idle of msprof's split), faster links or another
// algorithm cannot help; the ranks arrive at different times (load imbalance, a rank
// slowed by its host, or ranks outside the profile), which is what to chase.
func waitFindings(res *analysis.Result) []Finding {
	var elapse, transit int64
	var worst analysis.OpStat
	for _, o := range res.Communication.Ops {
		if o.Source == "none" {
			continue
		}
		elapse += o.ElapseNs
		transit += o.MovingNs
		if o.ElapseNs-o.MovingNs > worst.ElapseNs-worst.MovingNs {
			worst = o
		}
	}
	var stage, exposed int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			stage += st.StageNs
			exposed += st.ExposedCommNs()
		}
	}
	// Waiting hidden behind compute costs nothing: only the exposed part counts, as
	// the exposure split measures it where the ops are known.
	waiting := min(elapse-transit, exposed)
	ex := res.Exposure
	if ex.OpsKnown {
		waiting = int64((ex.WaitShare + ex.OtherShare) * float64(stage))
	}
	if elapse == 0 || stage == 0 || float64(transit)/float64(elapse) >= 0.3 || float64(waiting)/float64(stage) < 0.1 {
		return nil
	}
	sev := Medium
	if float64(waiting)/float64(stage) > 0.3 {
		sev = High
	}
	unprofiled := ""
	for _, c := range res.Collectives {
		if c.GroupSize > res.Summary.Ranks && c.GroupSizeSource != "profiled ranks" {
			unprofiled = fmt.Sprintf(" Only %d of group %s's %d ranks were profiled: the others may be the ones arriving late.", res.Summary.Ranks, c.Group, c.GroupSize)
			break
		}
	}
	return []Finding{{ID: "comm_mostly_waiting", Severity: sev,
		Title: fmt.Sprintf("Only %.1f%% of the collectives' time moves data; the rest waits", 100*float64(transit)/float64(elapse)),
		Evidence: fmt.Sprintf("%.3f ms of %.3f ms in collectives is Wait or Idle, %.1f%% of the Stage time not overlapped with compute; worst: %s on rank %d step %s, %.3f ms of which %.3f ms transit. "+
			"%s. Faster links or another algorithm would not shorten it."+unprofiled,
			float64(elapse-transit)/1e6, float64(elapse)/1e6, 100*float64(waiting)/float64(stage),
			worst.Name, worst.Rank, analysis.StepLabel(worst.Step), float64(worst.ElapseNs)/1e6, float64(worst.MovingNs)/1e6, waitWhere(ex)),
		Refs: []Ref{{Rank: worst.Rank, Step: worst.Step, Op: worst.Name, StartUs: float64(worst.StartNs) / 1e3, StartNs: worst.StartNs, DurUs: float64(worst.ElapseNs) / 1e3}}}}
}

// waitWhere says what the collectives' exposed waiting is spent on, from the exposure
// split: peers that arrive later (whom the diagnosis names), or the ops' own
// synchronisation and idle time.
func waitWhere(ex analysis.Exposure) string {
	switch {
	case !ex.OpsKnown:
		return "The collectives wait for ranks that arrive later or inside the ops (synchronisation, handshakes)"
	case ex.WaitShare >= ex.OtherShare:
		return fmt.Sprintf("Most of the exposed part (%s of the step) waits for peers that arrive later: the diagnosis and the slow-rank findings say whom", pct(ex.WaitShare))
	}
	return fmt.Sprintf("Most of the exposed part (%s of the step) is synchronisation and idle time inside the ops, not waiting for a later rank", pct(ex.OtherShare))
}

// checkFindings turns the peer checks that fired into findings. Retransmission is
// already a finding of its own (slowFindings).
func checkFindings(c analysis.Communication) []Finding {
	var out []Finding
	for _, ch := range c.Checks {
		if !ch.Fired {
			continue
		}
		f := Finding{Evidence: fmt.Sprintf("%d of %d: %s", ch.Count, ch.Total, ch.Evidence)}
		if ch.Where.Rank >= 0 {
			f.Refs = []Ref{{Rank: ch.Where.Rank, Step: ch.Where.Step, Op: ch.Where.Op, StartUs: float64(ch.Where.StartNs) / 1e3, StartNs: ch.Where.StartNs}}
		}
		switch ch.ID {
		case "small_packets_sdma", "small_packets_rdma":
			transport := "SDMA"
			if ch.ID == "small_packets_rdma" {
				transport = "RDMA"
			}
			f.ID, f.Severity = "small_messages", Medium
			f.Title = fmt.Sprintf("%.0f%% of the ops move small messages over %s: latency-bound", 100*float64(ch.Count)/float64(max(ch.Total, 1)), transport)
			f.Evidence += "; each op pays its fixed latency, so fewer, larger messages (bigger gradient buckets, fused collectives, or accumulation) move the same bytes in less time"
		case "over_buffsize":
			f.ID, f.Severity = "messages_over_buffsize", Medium
			f.Title = fmt.Sprintf("%d ops are larger than HCCL_BUFFSIZE and run in several rounds", ch.Count)
			f.Evidence += "; every round pays the algorithm's latency again"
		case "bandwidth_contention":
			f.ID, f.Severity = "sdma_contention", Low
			f.Title = "SDMA copies slow down while compute runs"
			f.Evidence = ch.Threshold + "; " + ch.Evidence
		case "byte_alignment":
			f.ID, f.Severity = "unaligned_messages", Low
			f.Title = fmt.Sprintf("%d SDMA copies are not 512-byte aligned", ch.Count)
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

// linkUseFindings flags a transport whose links, weighted by the bytes they carried,
// run below half their peak: when messages are not small, that points at the links
// or the algorithm's use of them, not at the workload.
func linkUseFindings(c analysis.Communication) []Finding {
	type acc struct{ bytes, weighted float64 }
	by := map[string]*acc{}
	for _, l := range c.Links {
		if l.PeakGBps <= 0 || l.Bytes <= 0 {
			continue
		}
		a := by[l.Transport]
		if a == nil {
			a = &acc{}
			by[l.Transport] = a
		}
		a.bytes += float64(l.Bytes)
		a.weighted += float64(l.Bytes) * l.Utilisation
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
	for _, n := range names {
		use := by[n].weighted / by[n].bytes
		if use >= 0.5 {
			continue
		}
		peak, _ := c.Hardware.Peak(n)
		assumed := ""
		if c.Hardware.Assumed {
			assumed = " (the product was assumed: set --hardware if it is not " + c.Hardware.Name + ")"
		}
		out = append(out, Finding{ID: "link_use_low", Severity: Medium,
			Title:    fmt.Sprintf("%s links run at %.0f%% of %s's %.1f GB/s peak", n, 100*use, c.Hardware.Name, peak),
			Evidence: fmt.Sprintf("byte-weighted over %s links; small messages, contention or a congested fabric lower it%s", n, assumed)})
	}
	return out
}

// latencyBoundFindings uses the links calibrated on the run: a transfer smaller than
// n½ = α·BW runs at under half the link's bandwidth, its time mostly latency. When
// most transfers of a transport are that small, fewer, larger messages would help.
func latencyBoundFindings(c analysis.Communication) []Finding {
	var out []Finding
	for _, f := range costmodel.Calibrate(c.TransferSamples) {
		if f.Confidence == "none" || f.AlphaUs <= 0 {
			continue
		}
		nHalf := f.AlphaUs * f.BWGBps * 1e3 // µs × GB/s = 1e3 bytes
		var below, all int
		for _, s := range c.TransferSamples {
			if s.Transport != f.Transport {
				continue
			}
			all += s.Count
			if float64(s.SizeBytes) < nHalf {
				below += s.Count
			}
		}
		if all == 0 || float64(below)/float64(all) <= 0.5 {
			continue
		}
		sev := Medium
		if f.Confidence == "low" {
			sev = Low
		}
		out = append(out, Finding{ID: "latency_bound_transfers", Severity: sev,
			Title: fmt.Sprintf("%.0f%% of %s transfers are latency-bound (smaller than n½ = %s)", 100*float64(below)/float64(all), f.Transport, units.FormatBytes(int64(nHalf))),
			Evidence: fmt.Sprintf("calibrated on this run: α %.1f µs, %.2f GB/s (confidence %s); below n½ = α·BW a transfer gets under half the link's bandwidth; fewer, larger messages (bigger buckets, fusion) move the same bytes faster",
				f.AlphaUs, f.BWGBps, f.Confidence)})
	}
	return out
}
