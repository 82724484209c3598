package advisor

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// Causes of a diagnosis (Diagnosis.Cause).
const (
	CauseTransfer        = "transfer"         // exposed communication that moves data
	CauseStraggler       = "straggler"        // waiting for a slower profiled rank
	CauseStageImbalance  = "stage_imbalance"  // waiting for the other pipeline stage, which computes more
	CausePipelineBubble  = "pipeline_bubble"  // pipeline waiting with balanced stages: too few micro-batches
	CauseUnprofiled      = "unprofiled_ranks" // waiting in groups whose other members were not profiled
	CauseHostBound       = "host_bound"       // the device idles (Free)
	CauseComputeBound    = "compute_bound"    // communication hidden or within the budget
	CauseExpertImbalance = "expert_imbalance" // waiting for the rank whose experts take the most tokens (MoE routing)
	CauseUnknown         = "unknown"
)

// Diagnosis is what holds the step back most: the cause, the share of Stage it
// explains, a title that leads the report and the evidence behind it.
type Diagnosis struct {
	Cause    string
	Share    float64
	Title    string
	Evidence string
	// Candidates are the causes the profile leaves open, when it cannot tell them
	// apart (Cause is then CauseUnknown): read from the profiler's summaries alone, a
	// dimension's exposed time, or the step's, is bounded and not measured, and the
	// bounds admit more than one cause (undecided).
	Candidates []string
}

// DiagnosisThresholds decide the diagnosis (the verdict) and grade its cause_*
// finding.
type DiagnosisThresholds struct {
	// HostBoundFreeShare: a device that waits for the host (Free inside Stage plus
	// Preparing before it) at least this share of the step (Stage + Preparing), and
	// longer than it communicates exposed, is held back by the host: the largest time
	// lost (computing is not lost), and a large one.
	HostBoundFreeShare float64
	// StageImbalanceMin: pipeline stages whose compute differs by at least this much
	// (slowest over fastest, less 1) make the other stages wait; below it the
	// pipeline's waiting is its bubble.
	StageImbalanceMin float64
	// PipelineBubbleMin: a balanced pipeline's fill and drain (analysis.Exposure's
	// FillDrainShare, over the stages' whole span) from which the bubble is the
	// cause. The generator's truth draws its line at 0.2 of the pipelined part in
	// theory, (p−1)/(m+p−1); the span also holds the gradients' synchronisation,
	// the optimizer and the transfers, so its jobs measure 0.81–0.94 of the theory,
	// and the line lies between 0.18 × 0.94 and 0.22 × 0.81, the truth's margin
	// (0.16 read 4 stages of 14 micro-batches, 0.176 in theory, as a bubble at 0.162).
	PipelineBubbleMin float64
	// WaitWithinBudget: waiting of one kind that costs this share of the step leads
	// the diagnosis even when the exposed communication is within the budget.
	WaitWithinBudget float64
	// MinExplained: a cause that is less than this part of the exposed communication
	// does not explain it.
	MinExplained float64
	// StragglerLead: a slow rank that costs the step at least this share leads the
	// diagnosis (Diagnose).
	StragglerLead float64
	// CauseHighShare and CauseMediumShare grade the cause_* finding by the share of
	// the step its cause explains.
	CauseHighShare, CauseMediumShare float64
}

// defaultDiagnosisThresholds are the diagnosis' defaults.
var defaultDiagnosisThresholds = DiagnosisThresholds{HostBoundFreeShare: 0.25, StageImbalanceMin: 0.10, PipelineBubbleMin: 0.17, WaitWithinBudget: 0.10,
	MinExplained: 0.25, StragglerLead: 0.05, CauseHighShare: 0.3, CauseMediumShare: 0.1}

func (t *DiagnosisThresholds) keys() []thresholdKey {
	return []thresholdKey{{"host_bound_free_share", &t.HostBoundFreeShare, 0, 1}, {"stage_imbalance_min", &t.StageImbalanceMin, 0, 100},
		{"pipeline_bubble_min", &t.PipelineBubbleMin, 0, 1}, {"wait_within_budget", &t.WaitWithinBudget, 0, 1}, {"min_explained", &t.MinExplained, 0, 1},
		{"straggler_lead", &t.StragglerLead, 0, 1}, {"cause_high_share", &t.CauseHighShare, 0, 1}, {"cause_medium_share", &t.CauseMediumShare, 0, 1}}
}

// Diagnose names the leading cause of a run's step time from the analysis' exposure
// split (analysis.Exposure): the device idling, communication within budget, or the
// largest of moving data and the kinds of waiting.
//
// A slow rank the detectors found that costs the step at least StragglerLead leads
// over compute-bound, over a pipeline's waiting with balanced stages (its waits
// beyond the bubble are that rank's), and over any cause that explains less of the
// step: it is a fault to fix before anything is tuned.
func Diagnose(res *analysis.Result, det Detections, opts Options) Diagnosis {
	d := expertImbalance(res, det, diagnoseWaits(res, det, opts))
	return settingCause(res, det, withinBudgetAtLeast(res, d, opts.withDefaults().CommBudget))
}

// diagnoseWaits is Diagnose before a straggler is told from an imbalanced expert.
func diagnoseWaits(res *analysis.Result, det Detections, opts Options) Diagnosis {
	d := diagnose(res, det, opts, false)
	th := opts.withDefaults().Thresholds.Diagnosis
	stake := slowRankStake(det.SlowRanks)
	if d.Cause == CauseStraggler || d.Cause == CauseHostBound || len(det.SlowRanks) == 0 || stake < th.StragglerLead {
		return d
	}
	// A slow rank named that costs StragglerLead of the step leads whatever else the
	// step spends, moving data or waiting on another kind: a fault is fixed before a
	// setting is tuned. (Held to the larger share before, TP jobs with a straggler
	// costing 8.6-16.3% of the step were named for their transfer or their TP
	// collectives on the critical path, 21-43%: 8 of 19 such jobs.)
	return diagnose(res, det, opts, true)
}

// diagnose is Diagnose; straggler makes the slow rank's waiting the lead.
func diagnose(res *analysis.Result, det Detections, opts Options, straggler bool) Diagnosis {
	opts = opts.withDefaults()
	th := opts.Thresholds.Diagnosis
	budget := opts.CommBudget
	s := res.Summary
	if s.Ranks == 0 {
		return Diagnosis{Cause: CauseUnknown, Title: "no step breakdown could be computed"}
	}
	var stage, free, computing, prep int64
	var steps, prepSteps int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			stage += st.StageNs // = res.Exposure.StageNs, which a hand-made result may lack
			free += st.FreeNs
			computing += st.ComputingNs
			if st.HasPreparing {
				prep += st.PreparingNs
				prepSteps++
			}
			steps++
		}
	}
	if stage <= 0 {
		return Diagnosis{Cause: CauseUnknown, Title: "the steps have no length: nothing to diagnose"}
	}
	freeShare := float64(free) / float64(stage)
	exposed := pct(s.CommShare)
	// The device waits for the host inside Stage (Free: launches, synchronisation)
	// and before it (Preparing: data loading, the step's start); the step the user
	// waits for holds both. Host-bound is the host's wait outlasting both the compute
	// and the exposed communication.
	var exposedNs int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			exposedNs += st.ExposedCommNs()
		}
	}
	hostNs := free + prep
	hostShare := float64(hostNs) / float64(stage+prep)
	if hostShare >= th.HostBoundFreeShare && hostNs > exposedNs {
		return hostBound(res, free, prep, stage, computing, steps, prepSteps, hostShare, s.CommShare)
	}
	ex := res.Exposure
	if !ex.OpsKnown && s.CommShare <= budget {
		return computeBound(s, budget, computing, stage, freeShare)
	}
	if !ex.OpsKnown {
		return Diagnosis{Cause: CauseUnknown, Share: s.CommShare,
			Title:    fmt.Sprintf("%s of the step is exposed communication; no per-op records say why", exposed),
			Evidence: "no rank has a timeline, communication.json or analysis.db with per-op times: collect with profiler_level Level1 or keep communication.json"}
	}
	parts, slowStake := waitParts(res, det, stage, straggler, th)
	lead := parts[0]
	// Within the budget the step is the computation's, unless one kind of waiting
	// still costs a tenth of it (a straggler whose wait the overlap half hides), or a
	// slow rank is found whose cost is worth a change.
	// Waiting for a slower rank that no detector could name (a different rank each
	// time: the ranks' own jitter) is not a fault to fix within the budget.
	leadsWithinBudget := waitingCause(lead.cause) && lead.cause != CauseStraggler && lead.share >= th.WaitWithinBudget ||
		lead.cause == CauseStraggler && slowStake >= th.StragglerLead
	if s.CommShare <= budget && !leadsWithinBudget && !straggler {
		d := computeBound(s, budget, computing, stage, freeShare)
		d.Evidence += perMicrobatchNote(res, th)
		return d
	}
	if d, ok := unexplainedExposure(s, ex, det, lead, float64(stage), th, straggler); ok {
		return d
	}
	return explainLead(res, det, lead, slowStake, th, straggler)
}

// waitPart is one kind of exposed communication's cost: its time and its share.
type waitPart struct {
	cause string
	ns    float64
	share float64
}

// waitParts weighs the kinds of exposed communication (moving data, waiting for
// ranks not profiled, for the other pipeline stage, for a slower rank), the
// largest first, or the slower rank first when straggler; slowStake is the slow
// ranks' cost (slowRankStake).
func waitParts(res *analysis.Result, det Detections, stage int64, straggler bool, th DiagnosisThresholds) (parts []waitPart, slowStake float64) {
	s := res.Summary
	ex := res.Exposure
	// The parts are compared in time: the pipeline's waiting includes the receive
	// time counted as Bubble, which lies outside Stage; its share is over the stages'
	// whole span (Exposure.PipelineShare), the others' over Stage.
	stageF := float64(stage)
	// The exposure split shares each step's exposed time among all of the step's ops
	// in proportion, which dilutes a straggler's wait when most of those ops are hidden
	// behind compute (many small buckets), and leaves out the part of the wait the
	// others' overlap hides, which the slow rank still costs the step. The slow rank's
	// stake measures what fixing it wins from its own excess work, but against the
	// next slowest rank, which an imbalanced routing also slows. Each falls short
	// somewhere, so the share is the larger (within the exposed communication, which
	// is all the others can stop waiting): on a Kineto job with most communication
	// overlapped the exposed wait was 0.105 and the stake 0.178 for a rank whose
	// replay without it saves 0.178; a hot expert's exposed wait 0.316, its stake
	// 0.279, against 0.327.
	slowStake = slowRankStake(det.SlowRanks)
	stragglerRank := max(ex.StragglerWaitShare, min(slowStake, s.CommShare))
	stragglerShare := stragglerRank
	// With a slow link or server found and no rank slow of its own, the ranks the
	// others wait for are the ones it holds back (their collectives cross it: a TP8 ×
	// DP2 job's DP pair on a rail at 19% made its TP groups wait 22% of the step),
	// which dropKnockOns left out of the slow ranks: the link's waiting, not a
	// straggler's.
	if slowPlaceKnockOn(det) {
		stragglerRank, stragglerShare = 0, 0
	}
	// Pipeline waiting needs a pipeline: receives outside one (a context-parallel
	// ring's, counted as Bubble as the profiler counts every receive) are no bubble.
	pipelineCause, pipelineNs, pipelineShare := CauseStageImbalance, float64(ex.PipelineWaitNs()), ex.PipelineShare()
	switch pls := res.Communication.Pipelines; {
	case len(pls) == 0:
		pipelineNs, pipelineShare = 0, 0
	case !stagesImbalanced(pls, th) && ex.FillDrainKnown:
		// With balanced stages only the fill and drain are the bubble, what more
		// micro-batches cure; the waiting that recurs every micro-batch (the
		// activations' transfers on the critical path) is no bubble, and more
		// micro-batches add to it (a PP4 job of 64 micro-batches waited 10.8% of its
		// time, 3.7% of it fill and drain, 4.5% in theory). A slower stage's
		// waiting recurs every micro-batch by nature: its rule keeps the whole.
		// (Where nothing tells the two apart, no Bubble or a run without step
		// markers whose receives do not part by size: the whole, as before.)
		pipelineCause, pipelineNs, pipelineShare = CausePipelineBubble, float64(ex.FillDrainNs), ex.FillDrainShare()
		if pipelineShare < th.PipelineBubbleMin {
			pipelineNs, pipelineShare = 0, 0
		}
	case !stagesImbalanced(pls, th):
		pipelineCause = CausePipelineBubble
	}
	parts = []waitPart{
		{CauseTransfer, ex.TransferShare * stageF, ex.TransferShare},
		{CauseUnprofiled, ex.UnprofiledWaitShare * stageF, ex.UnprofiledWaitShare},
		{pipelineCause, pipelineNs, pipelineShare},
		{CauseStraggler, stragglerRank * stageF, stragglerShare},
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].ns > parts[j].ns })
	if straggler {
		// The slow rank's cost, not its waits' part of the exposed split, which a
		// busy stream's queue or the pipeline's waiting dilutes.
		slices.SortStableFunc(parts, func(a, b waitPart) int {
			return boolRank(a.cause != CauseStraggler) - boolRank(b.cause != CauseStraggler)
		})
		parts[0].share = max(parts[0].share, slowStake)
		parts[0].ns = max(parts[0].ns, 1)
	}
	return parts, slowStake
}

// unexplainedExposure is the diagnosis (ok) when the op records cannot say what
// the exposed communication is: too much of it unaccounted for, none of it moving
// data or waiting, or too little of it in the leading part.
func unexplainedExposure(s analysis.Summary, ex analysis.Exposure, det Detections, lead waitPart, stageF float64, th DiagnosisThresholds, straggler bool) (Diagnosis, bool) {
	exposed := pct(s.CommShare)
	// Exposed time that no op record covers says nothing of its cause: when it is the
	// largest part the cause is not known, else the leading one is a lower bound.
	if unaccounted := ex.UnaccountedShare; unaccounted > 0 && unaccounted*stageF >= lead.ns {
		return Diagnosis{Cause: CauseUnknown, Share: s.CommShare,
			Title: fmt.Sprintf("%s of the step is exposed communication; no op record accounts for %s of it", exposed, pct(unaccounted/s.CommShare)),
			Evidence: fmt.Sprintf("%s; of the rest, moving data %s, waiting for a peer %s, synchronisation and idle %s of the step. "+
				"Keep trace_view.json or communication.json (analysis.db) of every rank to tell moving data from waiting",
				unaccountedPhrase(ex), pct(ex.TransferShare), pct(ex.WaitShare), pct(ex.OtherShare))}, true
	}
	if lead.ns <= 0 {
		return Diagnosis{Cause: CauseUnknown, Share: s.CommShare,
			Title:    fmt.Sprintf("%s of the step is exposed communication, in neither moving data nor waiting for a peer", exposed),
			Evidence: fmt.Sprintf("synchronisation and idle time within the ops: %s of the step", pct(ex.OtherShare))}, true
	}
	ofExposed := lead.share / s.CommShare
	if knockOn := ex.StragglerWaitShare; slowPlaceKnockOn(det) && knockOn > lead.share && !straggler {
		return Diagnosis{Cause: CauseUnknown, Share: s.CommShare,
			Title: fmt.Sprintf("%s of the step is exposed communication; %s of it waits for ranks that a slow %s holds back", exposed, pct(knockOn/s.CommShare), slowPlaceNoun(det)),
			Evidence: fmt.Sprintf("moving data %s, waiting for a peer %s, the rest (synchronisation, idle) %s of the step%s: no rank is slow of its own; the ranks waited for are those whose collectives cross the slow %s found (see the findings): fix it first",
				pct(ex.TransferShare), pct(ex.WaitShare), pct(ex.OtherShare), unaccountedClause(ex), slowPlaceNoun(det))}, true
	}
	if !ex.SplitKnown && ofExposed < 0.5 && !straggler {
		return Diagnosis{Cause: CauseUnknown, Share: s.CommShare,
			Title: fmt.Sprintf("%s of the step is exposed communication; the ops' records do not say how much of it moves data", exposed),
			Evidence: fmt.Sprintf("the ops come from kernel_details.csv, which has their elapses but not their transit and wait times: waiting for a profiled peer explains %s of the step; "+
				"collect with profiler_level Level1, or keep communication.json, to split the rest", pct(ex.WaitShare))}, true
	}
	// (The pipeline's waiting is measured over the stages' span, Bubble included, and
	// is not held to this.)
	if lead.cause != CauseStageImbalance && lead.cause != CausePipelineBubble && ofExposed < th.MinExplained && !straggler {
		return Diagnosis{Cause: CauseUnknown, Share: s.CommShare,
			Title: fmt.Sprintf("%s of the step is exposed communication, mostly in neither moving data nor waiting for a peer", exposed),
			Evidence: fmt.Sprintf("moving data (as the profiler times it, on one plane) %s, waiting for a peer %s, the rest (synchronisation, idle, transfers on other planes, retransmissions) %s of the step%s: look at the findings on links and retransmissions",
				pct(ex.TransferShare), pct(ex.WaitShare), pct(ex.OtherShare), unaccountedClause(ex))}, true
	}
	return Diagnosis{}, false
}

// explainLead is the diagnosis led by the largest part of the exposed
// communication (lead): its title and the split as evidence.
func explainLead(res *analysis.Result, det Detections, lead waitPart, slowStake float64, th DiagnosisThresholds, straggler bool) Diagnosis {
	s := res.Summary
	ex := res.Exposure
	exposed := pct(s.CommShare)
	ofExposed := lead.share / s.CommShare
	d := Diagnosis{Cause: lead.cause, Share: lead.share}
	atLeast := ""
	if ex.UnaccountedShare > 0 {
		atLeast = "at least "
	}
	head := fmt.Sprintf("%s of the step is exposed communication; %s%s of it", exposed, atLeast, pct(ofExposed))
	notProfiled := "ranks not profiled"
	if stepGaps(ex.Unprofiled) {
		notProfiled = "ranks not profiled in the step"
	}
	split := fmt.Sprintf("exposed communication %s of the step: moving data %s, waiting for a peer %s (a slower rank %s, the other pipeline stage %s, %s %s), the rest (synchronisation, idle) %s%s",
		exposed, pct(ex.TransferShare), pct(ex.WaitShare), pct(ex.StragglerWaitShare), pct(ex.PipelineWaitShare), notProfiled, pct(ex.UnprofiledWaitShare), pct(ex.OtherShare),
		unaccountedClause(ex))
	switch lead.cause {
	case CauseTransfer:
		d.Title = head + " moves data"
		d.Evidence = split + ": the links, the algorithm and the message sizes decide it"
	case CauseUnprofiled:
		d.Title = head + " waits for " + unprofiledPhrase(ex.Unprofiled)
		d.Evidence = split + ": the profiled ranks wait in groups whose other members left no profile"
		if stepGaps(ex.Unprofiled) {
			d.Evidence += " (or none of those steps: the ranks profiled different steps)"
		}
	case CauseStageImbalance, CausePipelineBubble:
		// The pipeline's waiting is partly Bubble, outside the exposed communication:
		// the title gives it over the stages' span.
		head := fmt.Sprintf("%s of the pipeline's time", pct(lead.share))
		pl, _ := mostImbalanced(res.Communication.Pipelines)
		if pl != nil && !pl.BubbleKnown() {
			split += "; no Bubble measured for the pipeline: " + pl.BubbleUnmeasured
		} else {
			split += fmt.Sprintf("; receive time counted as Bubble %.3f ms", float64(ex.BubbleNs)/1e6)
		}
		// waitParts took the fill and drain alone for a bubble where they are known.
		what := "pipeline waiting"
		if ex.FillDrainKnown {
			split += pipelineSplitPhrase(ex)
			if lead.cause == CausePipelineBubble {
				// Named on its fill and drain (what more micro-batches remove), the
				// bubble's share is still the pipeline's whole waiting, as the truth's and
				// stage_imbalance's are; its finding saves the fill and drain only.
				d.Share = ex.PipelineShare()
				head = fmt.Sprintf("%s of the pipeline's time", pct(d.Share))
				what = fmt.Sprintf("pipeline waiting (its fill and drain %s)", pct(lead.share))
			}
		}
		switch {
		case lead.cause == CausePipelineBubble && pl == nil:
			// No pipeline had two stages profiled: the split's balance is not seen.
			d.Title = head + " is " + what + " (the bubble; whether the stages are balanced is unknown: " + stagesProfiledPhrase(res.Communication.Pipelines) + ")"
			d.Evidence = split + bubbleEvidence(analysis.WorstBubble(res.Communication.Pipelines))
		case lead.cause == CausePipelineBubble:
			d.Title = head + " is " + what + ", with balanced stages (the bubble)"
			d.Evidence = split + bubbleEvidence(pl)
		default:
			slow, fast := extremeStages(pl)
			perStep := perStepPhrase(res)
			d.Title = head + fmt.Sprintf(" is one pipeline stage waiting for the other: stage %d computes %.3f ms more %s than stage %d",
				slow, float64(pl.StageComputingNs[slow]-pl.StageComputingNs[fast])/1e6, perStep, fast)
			d.Evidence = split + fmt.Sprintf("; per-stage computing %s %s ms (pipeline %s, ranks %s)", perStep, stageList(pl), shortGroup(pl.Group), intsText(pl.Ranks))
		}
	case CauseStraggler:
		d.Title = head + " waits for a slower rank"
		d.Evidence = split + ": ranks of the same group arrive at their collectives at different times"
		if sr := det.SlowRanks; len(sr) > 0 && straggler {
			// Led by its cost: its waits may be a small part of the exposed time
			// (hidden behind a queue, or inside the pipeline's waiting).
			d.Title = fmt.Sprintf("rank %d holds the others back: it costs the step about %s (%s of the step is exposed communication)", sr[0].Rank, pct(slowStake), exposed)
			d.Evidence += fmt.Sprintf("; rank %d arrives last and costs the step about %s (%s)", sr[0].Rank, pct(slowStake), sr[0].Evidence)
		} else if len(sr) > 0 {
			d.Title = head + fmt.Sprintf(" waits for rank %d", sr[0].Rank)
			d.Evidence += fmt.Sprintf("; rank %d arrives last and costs the step about %s (%s)", sr[0].Rank, pct(slowStake), sr[0].Evidence)
		}
	}
	return d
}

// slowPlaceKnockOn reports whether the waiting for other ranks is a slow link's or
// server's knock-on: one is found, and no rank is slow of its own.
func slowPlaceKnockOn(det Detections) bool {
	return len(det.SlowRanks) == 0 && len(det.SlowLinks)+len(det.SlowServers)+len(det.SlowGroups) > 0
}

// slowPlaceNoun names what slowPlaceKnockOn found: "link", "server" or "link or
// server" (a slow group's is a link).
func slowPlaceNoun(det Detections) string {
	switch {
	case len(det.SlowServers) == 0:
		return "link"
	case len(det.SlowLinks) == 0:
		return "server"
	}
	return "link or server"
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// slowRankStake is what the costliest slow rank costs the run: its share of its
// flagged steps, over all the steps in which waits were compared.
func slowRankStake(srs []SlowRank) float64 {
	var best float64
	for _, r := range srs {
		if r.StepsSeen > 0 {
			best = max(best, r.ShareOfStep*float64(len(r.Steps))/float64(r.StepsSeen))
		}
	}
	return best
}

// hostBound words a host-bound diagnosis: which of Free (inside Stage) and Preparing
// (before it) holds the device back, and by how much.
func hostBound(res *analysis.Result, free, prep, stage, computing, steps, prepSteps int64, hostShare, commShare float64) Diagnosis {
	perStep := func(ns int64, n int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/float64(max(n, 1))/1e6) }
	where := "idles inside the step (Free)"
	if prep > free {
		where = "waits before each step (Preparing: data loading, the host's step start)"
	}
	prepText := "Preparing not recorded"
	if prepSteps > 0 {
		prepText = "Preparing " + perStep(prep, prepSteps) + " before it"
	}
	return Diagnosis{Cause: CauseHostBound, Share: hostShare,
		Title: fmt.Sprintf("the %s waits for the host %s of the step: it %s; the host is the bottleneck, not the %s", deviceNoun(res), pct(hostShare), where, deviceNoun(res)),
		// What to do is the cause's finding's (causeFindings), which follows this.
		Evidence: fmt.Sprintf("Free %s of a mean step time (Stage) of %s per step, %s (computing %s of the step, exposed communication %s)",
			perStep(free, steps), perStep(stage, steps), prepText, pct(float64(computing)/float64(stage)), pct(commShare))}
}

func computeBound(s analysis.Summary, budget float64, computing, stage int64, freeShare float64) Diagnosis {
	title := fmt.Sprintf("communication is hidden or within the %s budget (%s of the step exposed)", pct(budget), pct(s.CommShare))
	if s.CommTotalShare == 0 {
		title = "no communication in the profiled steps"
	}
	return Diagnosis{Cause: CauseComputeBound, Share: float64(computing) / float64(stage), Title: title,
		Evidence: fmt.Sprintf("computing %s of the step, Free %s", pct(float64(computing)/float64(stage)), pct(freeShare))}
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// unaccountedWhere names the ranks with exposed time no op record covers: "rank 1,
// whose steps have no op record".
func unaccountedWhere(ex analysis.Exposure) string {
	var ranks []int
	opless := true
	for _, r := range ex.Ranks {
		if r.UnaccountedNs > 0 {
			ranks = append(ranks, r.Rank)
			opless = opless && r.OpsNs == 0
		}
	}
	if !opless {
		return ranksWord(ranks) + ": exposed time beyond their ops' elapses"
	}
	return ranksWord(ranks) + ", whose steps have no op record"
}

// unaccountedPhrase says how much exposed time no op record covers, and where.
func unaccountedPhrase(ex analysis.Exposure) string {
	return fmt.Sprintf("no op record covers %s of the step (%s)", pct(ex.UnaccountedShare), unaccountedWhere(ex))
}

// unaccountedClause is unaccountedPhrase as a clause of the split, "" when ops cover
// all the exposed time.
func unaccountedClause(ex analysis.Exposure) string {
	if ex.UnaccountedShare <= 0 {
		return ""
	}
	return "; " + unaccountedPhrase(ex) + ", so these shares are lower bounds"
}

func ranksWord(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	return "ranks " + intsText(ranks)
}

// unprofiledPhrase names the groups with unprofiled members: "the 6 ranks of group
// …080586 that were not profiled (2, 3, 4, 5, 6, 7)".
func unprofiledPhrase(groups []analysis.UnprofiledGroup) string {
	if len(groups) == 0 {
		return "ranks that were not profiled"
	}
	var parts []string
	for i, g := range groups {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more groups", len(groups)-3))
			break
		}
		name := "group " + shortGroup(g.Group)
		if g.Kind != "" {
			name = g.Kind + " " + name
		}
		if g.MissingCount == 0 {
			parts = append(parts, fmt.Sprintf("%s of %s, %s", ranksWord(g.StepGapRanks), name, lackText(g)))
			continue
		}
		p := fmt.Sprintf("the %d ranks of %s that were not profiled", g.MissingCount, name)
		switch {
		case g.AtLeast:
			p = fmt.Sprintf("the ranks of %s that were not profiled (at least %d)", name, g.MissingCount)
		case g.MissingCount == 1:
			p = fmt.Sprintf("the rank of %s that was not profiled", name)
		}
		if len(g.Missing) > 0 {
			p += " (" + intsText(g.Missing) + ")"
		}
		if len(g.StepGapRanks) > 0 {
			p += fmt.Sprintf(" and %s, %s", ranksWord(g.StepGapRanks), lackText(g))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// lackText says which steps a group's profiled members lack: "whose profile lacks step
// 50", "whose profiles lack steps 40, 50".
func lackText(g analysis.UnprofiledGroup) string {
	whose := "whose profile lacks"
	if len(g.StepGapRanks) > 1 {
		whose = "whose profiles lack"
	}
	steps := "step "
	if len(g.GapSteps) > 1 {
		steps = "steps "
	}
	return whose + " " + steps + intsText(g.GapSteps)
}

// stepGaps reports whether some group's profiled members lack steps its ops ran in.
func stepGaps(groups []analysis.UnprofiledGroup) bool {
	for _, g := range groups {
		if len(g.GapSteps) > 0 {
			return true
		}
	}
	return false
}

func intsText(xs []int) string {
	if len(xs) > 8 {
		return fmt.Sprintf("%s … %s (%d)", intsText(xs[:4]), intsText(xs[len(xs)-2:]), len(xs))
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// stagesImbalanced reports whether the typical pipeline's stages differ in compute by
// StageImbalanceMin or more; unknown (false) unless a pipeline had two stages
// profiled. The layer split is every pipeline's: one pipeline made uneven by a slow
// rank is that rank's, not the split's (typicalImbalance).
func stagesImbalanced(pls []analysis.Pipeline, th DiagnosisThresholds) bool {
	pl, _ := mostImbalanced(pls)
	return pl != nil && typicalImbalance(pls) >= th.StageImbalanceMin
}

// perMicrobatchNote says, beside a compute-bound verdict, that a balanced pipeline
// waits WaitWithinBudget of its time or more every micro-batch: no bubble (more
// micro-batches add to it), but the activations' transfers on the critical path,
// which overlapping them or faster links shorten. "" otherwise.
func perMicrobatchNote(res *analysis.Result, th DiagnosisThresholds) string {
	ex := res.Exposure
	pls := res.Communication.Pipelines
	if len(pls) == 0 || !ex.FillDrainKnown || stagesImbalanced(pls, th) || ex.PipelinePerMicrobatchShare() < th.WaitWithinBudget {
		return ""
	}
	return pipelineSplitPhrase(ex) + ": the point-to-point transfers on the critical path, which more micro-batches do not shorten " +
		"(Megatron-LM overlaps them only in its interleaved schedule, --num-layers-per-virtual-pipeline-stage: by default in recent versions, " +
		"where --overlap-p2p-communication-warmup-flush adds the warm-up and the flush, with --overlap-p2p-communication in older ones; or faster links between the stages)"
}

// pipelineSplitPhrase splits the pipeline's waiting into its fill and drain and what
// recurs every micro-batch: "; the pipeline waits 10.8% of its time: 3.7% filling
// and draining (the bubble), 7.2% every micro-batch".
func pipelineSplitPhrase(ex analysis.Exposure) string {
	return fmt.Sprintf("; the pipeline waits %s of its time: %s filling and draining (the bubble), %s every micro-batch",
		pct(ex.PipelineShare()), pct(ex.FillDrainShare()), pct(ex.PipelinePerMicrobatchShare()))
}

// mostImbalanced is the pipeline whose stages' compute differs most.
func mostImbalanced(pls []analysis.Pipeline) (*analysis.Pipeline, float64) {
	var best *analysis.Pipeline
	for i := range pls {
		if !pls[i].ImbalanceKnown {
			continue
		}
		if best == nil || pls[i].Imbalance > best.Imbalance {
			best = &pls[i]
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, best.Imbalance
}

// typicalImbalance is the imbalance of the typical pipeline: each stage's median
// Computing over the pipelines with the most stages, slowest over fastest, less 1.
func typicalImbalance(pls []analysis.Pipeline) float64 {
	stages := 0
	for _, p := range pls {
		stages = max(stages, len(p.StageComputingNs))
	}
	if stages < 2 {
		return 0
	}
	var medians []float64 // of the stages some pipeline profiled
	for k := 0; k < stages; k++ {
		var v []float64
		for _, p := range pls {
			if len(p.StageComputingNs) == stages && p.StageProfiled[k] {
				v = append(v, float64(p.StageComputingNs[k]))
			}
		}
		if len(v) > 0 {
			sort.Float64s(v)
			medians = append(medians, stats.MedianSorted(v))
		}
	}
	if len(medians) < 2 {
		return 0
	}
	lo, hi := slices.Min(medians), slices.Max(medians)
	if lo <= 0 {
		return 0
	}
	return hi/lo - 1
}

// extremeStages are the stages that compute most and least per step.
func extremeStages(pl *analysis.Pipeline) (slow, fast int) {
	slow, fast = -1, -1
	for i, c := range pl.StageComputingNs {
		if !pl.StageProfiled[i] {
			continue
		}
		if slow < 0 || c > pl.StageComputingNs[slow] {
			slow = i
		}
		if fast < 0 || c < pl.StageComputingNs[fast] {
			fast = i
		}
	}
	return slow, fast
}

func stageList(pl *analysis.Pipeline) string {
	parts := make([]string, len(pl.StageComputingNs))
	for i, c := range pl.StageComputingNs {
		parts[i] = "not profiled"
		if pl.StageProfiled[i] {
			parts[i] = fmt.Sprintf("%.3f", float64(c)/1e6)
		}
	}
	return strings.Join(parts, " / ")
}

// stagesProfiledPhrase says how many stages of the pipelines were profiled: "only
// stage 0 of 4 was profiled in each of the 2 pipelines".
func stagesProfiledPhrase(pls []analysis.Pipeline) string {
	most, stages, atLeast := 0, 0, ""
	var which []int
	for _, p := range pls {
		stages = max(stages, p.Stages)
		if p.StagesAtLeast {
			atLeast = " or more"
		}
		for i, ok := range p.StageProfiled {
			if ok && !slices.Contains(which, i) {
				which = append(which, i)
			}
		}
		most = max(most, p.ProfiledStages)
	}
	slices.Sort(which)
	if most == 0 {
		return fmt.Sprintf("no stage of the %d-stage pipelines was profiled", stages)
	}
	if len(which) == 1 {
		return fmt.Sprintf("only stage %d of the %d%s stages was profiled", which[0], stages, atLeast)
	}
	return fmt.Sprintf("at most %d of the %d%s stages of a pipeline were profiled (stages %s)", most, stages, atLeast, intsText(which))
}

func bubbleEvidence(pl *analysis.Pipeline) string {
	if pl == nil {
		return ""
	}
	if pl.TheoryBubble > 0 {
		measured := pct(pl.MeasuredBubble) + " measured"
		if !pl.BubbleKnown() {
			measured = "not measured"
		}
		return fmt.Sprintf("; %d stages, %d micro-batches per step (%s): the bubble is %s in theory, %s", pl.Stages, pl.Microbatches, pl.MicrobatchesSource,
			pct(pl.TheoryBubble), measured)
	}
	if pl.StagesAtLeast {
		return fmt.Sprintf("; %d or more stages (the profile names the pipeline's other ranks in none of its groups), micro-batches per step unknown", pl.Stages)
	}
	return fmt.Sprintf("; %d stages, micro-batches per step unknown", pl.Stages)
}

// waitingCause reports whether a cause is a kind of waiting, under which changes that
// speed up data movement (buckets, algorithms, buffers) would not shorten the step.
func waitingCause(cause string) bool {
	switch cause {
	case CauseStraggler, CauseStageImbalance, CausePipelineBubble, CauseUnprofiled, CauseExpertImbalance:
		return true
	}
	return false
}

// causeFindings turns the diagnosis into the finding that says what to do about its
// cause, with the framework's real knobs. Severity follows the share of the step at
// stake; a straggler seen in a single profiled step is weak evidence, one level lower.
func causeFindings(res *analysis.Result, det Detections, d Diagnosis, th DiagnosisThresholds) []Finding {
	var cure string
	id := "cause_" + d.Cause
	switch d.Cause {
	case CauseStageImbalance:
		cure = "Move layers from the slower stage to the others: Megatron --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers " +
			"(MindSpeed: --num-layer-list), or interleave with --num-layers-per-virtual-pipeline-stage. The first and last stages also carry the embedding and the loss."
	case CausePipelineBubble:
		cure = "Run more micro-batches per step (Megatron: raise --global-batch-size or lower --micro-batch-size), or interleave the stages with --num-layers-per-virtual-pipeline-stage."
	case CauseUnprofiled:
		cure = "Profile every rank of those groups (torch_npu: start the profiler on all ranks, not only some; msprof: collect on every device), then run hcclprof on all of them to see which rank arrives late."
		if stepGaps(res.Exposure.Unprofiled) {
			cure = "Profile every rank of those groups over the same steps (torch_npu: one schedule started on all ranks at once, not dynamic profiling started rank by rank; msprof: collect on every device), then run hcclprof on all of them to see which rank arrives late."
		}
	case CauseStraggler:
		if len(det.SlowRanks) > 0 {
			return nil // the slow_rank finding names it, with its cause
		}
		cure = "Find why that rank arrives late (its compute per step, its host: data loading, CPU binding, launches) before changing links or algorithms."
	case CauseHostBound:
		cure = hostCure(res)
	case CauseExpertImbalance:
		cure = expertCure(res)
	case CauseTPCriticalPath, CauseFSDPGatherExposed:
		cure = settingCure(d.Cause)
	default:
		return nil
	}
	sev := Low
	switch {
	case d.Share >= th.CauseHighShare:
		sev = High
	case d.Share >= th.CauseMediumShare:
		sev = Medium
	}
	// A straggler named from one step may be that step's noise.
	if d.Cause == CauseStraggler && res.Summary.Steps < 2 && sev != Low {
		sev = lower(sev)
		cure += " (One profiled step: confirm on more steps.)"
	}
	saving := d.Share // what the cure wins back: the share of the step the cause costs
	if d.Cause == CausePipelineBubble && res.Exposure.FillDrainKnown {
		// More micro-batches win back the fill and drain, not the waiting every
		// micro-batch repeats.
		saving = min(saving, res.Exposure.FillDrainShare())
	}
	if d.Cause == CauseUnprofiled {
		saving = 0 // the cure is to profile more ranks: it finds the cause, it saves nothing yet
	}
	return []Finding{{ID: id, Severity: sev, Title: capitalise(d.Title), Evidence: d.Evidence + ". " + cure, Saving: saving}}
}

// hostCure is what to do about a host-bound run, host-side only: for time before
// the step (Preparing) the input pipeline, for time inside it (Free) the launches.
// No HCCL or DDP setting shortens either.
func hostCure(res *analysis.Result) string {
	var free, prep int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			free += st.FreeNs
			if st.HasPreparing {
				prep += st.PreparingNs
			}
		}
	}
	gpu := deviceNoun(res) == "GPU"
	if prep > free {
		cure := "Feed the device faster before each step: the DataLoader's num_workers, prefetch_factor, pin_memory=True and persistent_workers=True, data already decoded or cached, and no per-step host work (logging, checkpoints, synchronisation) before the forward pass."
		if !gpu {
			cure += " Bind the workers to the NPU's NUMA node (torch_npu: CPU_AFFINITY_CONF)."
		}
		return cure + " No HCCL or DDP setting shortens this."
	}
	if gpu {
		// A PyTorch step opens before the DataLoader hands over its batch: a slow input
		// pipeline shows inside the step.
		return "Feed and launch faster: DataLoader num_workers, prefetch_factor and pin_memory=True (a slow input pipeline shows as idle time inside a PyTorch step); fewer, larger kernels (fusion, torch.compile, CUDA graphs), no host synchronisation inside the step (.item(), .cpu(), prints), larger micro-batches. No NCCL or DDP setting shortens this."
	}
	return "Launch faster: keep torch_npu's task queue on (TASK_QUEUE_ENABLE=1, its default; ASCEND_LAUNCH_BLOCKING=1 turns it off), bind the host threads (CPU_AFFINITY_CONF), fuse small operators, avoid host synchronisation inside the step (.item(), .cpu(), prints), larger micro-batches. No HCCL or DDP setting shortens this."
}

// deviceNoun is what the run's devices are: "GPU" when every rank ran NCCL on NVIDIA
// GPUs, else "NPU" (Ascend's profilers).
func deviceNoun(res *analysis.Result) string {
	if res.AllNCCL() {
		return "GPU"
	}
	return "NPU"
}

func lower(s Severity) Severity {
	switch s {
	case High:
		return Medium
	case Medium:
		return Low
	}
	return s
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// distributedOptimizerFindings: gradients synchronised by ReduceScatter and AllGather in
// the data-parallel group (ZeRO, Megatron's distributed optimizer) whose data movement
// is exposed. Those ops are the optimizer's, so the framework's overlap switches hide
// them; the cost model does not price this (it models AllReduce buckets), so the
// finding gives the switches with the exposed time they act on, not a prediction.
func distributedOptimizerFindings(res *analysis.Result, stake StakeThresholds) []Finding {
	dp := map[string]bool{}
	for _, g := range res.Communication.Groups {
		if strings.HasPrefix(g.NamedKind(), "dp") {
			dp[g.Key] = true
		}
	}
	var stage, comm, exposed int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			stage += st.StageNs
			comm += st.CommunicationNs
			exposed += st.ExposedCommNs()
		}
	}
	if stage <= 0 || comm <= 0 {
		return nil
	}
	var moving int64
	var ops int
	for _, o := range res.Communication.Ops {
		if dp[o.Group] && (o.Type == "reducescatter" || o.Type == "allgather") {
			moving += o.MovingNs
			ops++
		}
	}
	share := float64(moving) * float64(exposed) / float64(comm) / float64(stage)
	if ops == 0 || share < stake.Medium {
		return nil
	}
	return []Finding{{ID: "distributed_optimizer_exposed", Severity: stake.severity(share, res.Summary.Steps), Saving: share,
		Title: fmt.Sprintf("The data-parallel ReduceScatter/AllGather move data in the open: about %s of the step", pct(share)),
		Evidence: fmt.Sprintf("%d ReduceScatter/AllGather ops in data-parallel groups move data for %.3f ms, and %s of the run's communication is not overlapped with compute. "+
			"Overlap them with the backward and forward passes: Megatron --overlap-grad-reduce and --overlap-param-gather (with the distributed optimizer); DeepSpeed \"overlap_comm\": true. "+
			"Not priced by the cost model (it models AllReduce buckets).", ops, float64(moving)/1e6, pct(float64(exposed)/float64(comm)))}}
}

// perStepPhrase is how a figure per step reads for res: "per step", or, for a run
// without step markers (msprof's op-based runs), whose one step spans the whole
// collection however many training steps it holds, "over the run (no step markers:
// one step spans the collection)", lest a saving over the run read as one per step.
func perStepPhrase(res *analysis.Result) string {
	if slices.Equal(res.StepNumbers(), []int{-1}) {
		return "over the run (no step markers: one step spans the collection)"
	}
	return "per step"
}
