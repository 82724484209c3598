package advisor

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// tpExposedMin is the exposed tensor-parallel communication, as a share of the step,
// from which hiding it behind the GEMMs is recommended.
const tpExposedMin = 0.03

// tpOverlappedAbove is the part of the TP communication that, once hidden, leaves
// nothing to recommend: it already runs beside the GEMMs.
const tpOverlappedAbove = 0.7

// tpRecommendation prices hiding the tensor-parallel collectives behind the GEMMs
// when they lie on the critical path (issue 37): Megatron with Transformer Engine's
// --tp-comm-overlap on NVIDIA, MindSpeed's --use-ascend-mc2 on Ascend, each with
// --sequence-parallel, which both require. nil and a note when there is nothing to
// recommend.
func tpRecommendation(res *analysis.Result, facts RunFacts) (*Recommendation, string) {
	var tp *analysis.KindShare
	for i, k := range res.Summary.Kinds {
		if (k.Kind == analysis.KindTP || k.Kind == analysis.KindSP) && (tp == nil || k.CommShare > tp.CommShare) {
			tp = &res.Summary.Kinds[i]
		}
	}
	if tp == nil {
		return nil, ""
	}
	if tp.CommTotalShare > 0 && 1-tp.CommShare/tp.CommTotalShare >= tpOverlappedAbove {
		return nil, fmt.Sprintf("tensor-parallel communication is %s of the step, %.0f%% of it already beside compute: no TP overlap to add",
			pct(tp.CommTotalShare), 100*(1-tp.CommShare/tp.CommTotalShare))
	}
	if tp.CommShare < tpExposedMin {
		return nil, ""
	}
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	size := largestGroup(res, tp.Kind)
	c := costmodel.TPComm{StepUs: stepUs, ExposedUs: tp.CommShare * stepUs, TotalUs: tp.CommTotalShare * stepUs, CommShare: res.Summary.CommShare,
		TP: size, SeqPar: tp.Kind == analysis.KindSP, ComputeUs: computeUs(res), Exposed: exposedBounds(*tp, stepUs)}
	p, err := costmodel.TPOverlap(c)
	if err != nil {
		return nil, "no TP overlap priced: " + err.Error()
	}
	ascend := facts.Product != "" && !strings.HasPrefix(strings.ToUpper(facts.Product), "NVIDIA") &&
		!strings.HasPrefix(facts.Product, "H100") && !strings.HasPrefix(facts.Product, "A100")
	r := Recommendation{ID: "tp_comm_overlap", Predicted: p, GainUs: stepUs - p.StepTimeUs, Confidence: p.Confidence,
		Assumptions: p.Assumptions, SamplesScale: 1, TodayUs: stepUs,
		Settings: []costmodel.Setting{{Knob: "tp_comm_overlap", Value: 1}}}
	seq, seqFlag := "", "" // in the knob's name (a plan's knobs joined by " + ") and on the command line
	if !c.SeqPar {
		seq, seqFlag = "--sequence-parallel + ", "--sequence-parallel "
	}
	if ascend {
		r.Knob = seq + "--use-ascend-mc2"
		r.Apply = fmt.Sprintf("MindSpeed: %s--use-ascend-mc2   # the TP AllGather/ReduceScatter fused with the matmuls beside them (tp %d)", seqFlag, size)
		r.Risks = append(r.Risks, "--use-ascend-mc2 needs MindSpeed on Atlas A2/A3, --sequence-parallel and tp > 1, and is not used with --use-ascend-coc")
	} else {
		r.Knob = seq + "--tp-comm-overlap"
		r.Apply = fmt.Sprintf("Megatron-LM with Transformer Engine: %s--tp-comm-overlap   # the TP AllGather/ReduceScatter pipelined with the GEMMs beside them (tp %d)", seqFlag, size)
		r.Risks = append(r.Risks, "--tp-comm-overlap needs Transformer Engine's userbuffers (and --sequence-parallel)")
	}
	r.Value = "on"
	if !c.SeqPar {
		r.Risks = append(r.Risks, "sequence parallelism splits the layer norms and dropout along the sequence: activations shrink, the numerics are unchanged")
	}
	r.Risks = append(r.Risks, "the overlapped GEMMs and transfers share the compute units and HBM: the gain may be as low as half the exposed TP time")
	if r.GainUs <= math.Max(p.High-p.Low, 0.01*stepUs) {
		r.Hypothesis = true
	}
	return &r, ""
}

// exposedBounds are a dimension's exposure bounds per step for the cost model, where
// it is not measured (analysis.KindShare.Measured).
func exposedBounds(k analysis.KindShare, stepUs float64) costmodel.ExposedBounds {
	if k.Measured() {
		return costmodel.ExposedBounds{}
	}
	return costmodel.ExposedBounds{Bounded: true, LowUs: k.CommShareMin * stepUs, HighUs: k.CommShareMax * stepUs}
}

// insertByGain puts r among recs as recommend orders them: backed changes before
// hypotheses, then by gain.
func insertByGain(recs []Recommendation, r Recommendation) []Recommendation {
	i := 0
	for i < len(recs) {
		o := recs[i]
		if (!r.Hypothesis && o.Hypothesis) || (r.Hypothesis == o.Hypothesis && r.GainUs > o.GainUs) {
			break
		}
		i++
	}
	return append(recs[:i], append([]Recommendation{r}, recs[i:]...)...)
}

// tpPlacementUnknown says when whether tensor-parallel groups span servers cannot be
// told: the profiles do not say which server a rank is on (a Kineto trace names its
// host only in its host_name member, written since 2026, or in
// tensorboard_trace_handler's file name; renamed or older traces name none). The
// server is never guessed from the rank number.
//
// Said of NVIDIA (Kineto) jobs only for now; an Ascend job's ranks name their host in
// their directory or msprof's info.json.
func tpPlacementUnknown(res *analysis.Result) []Finding {
	if len(res.Communication.ServerOf) > 0 || !res.AllNCCL() {
		return nil
	}
	for _, k := range res.Summary.Kinds {
		if k.Kind != analysis.KindTP && k.Kind != analysis.KindSP {
			continue
		}
		for _, g := range res.Communication.Groups {
			if g.Parallel == k.Kind && len(g.Ranks) > 1 {
				why := "the PyTorch profiler traces name no host (no host_name member, and file names other than tensorboard_trace_handler's {hostname}_{pid}.{timestamp}.pt.trace.json)"
				return []Finding{{ID: "tp_placement_unknown", Severity: Info,
					Title:    "Whether the tensor-parallel groups span servers is unknown",
					Evidence: why + ": the servers are not guessed from the rank numbers, so a TP group crossing servers cannot be found"}}
			}
		}
	}
	return nil
}

// tpPlacementFindings says when a tensor-parallel group spans servers (issue 37): its
// per-layer collectives then cross the servers' network, far slower than the links
// inside one. Megatron puts TP ranks next to each other, so --tensor-model-parallel-size
// at most the NPUs (GPUs) of a server keeps each TP group inside one. Not priced: a
// smaller TP changes the model's split (more pipeline or data parallelism, more
// memory per rank), which the cost model does not simulate.
func tpPlacementFindings(res *analysis.Result) []Finding {
	serverOf := res.Communication.ServerOf
	if len(serverOf) == 0 {
		return nil
	}
	perServer := map[int]int{}
	for _, s := range serverOf {
		perServer[s]++
	}
	var out []Finding
	for _, k := range res.Summary.Kinds {
		if k.Kind != analysis.KindTP && k.Kind != analysis.KindSP {
			continue
		}
		spanning, total, size, servers := 0, 0, 0, 0
		for _, g := range res.Communication.Groups {
			if g.Parallel != k.Kind || len(g.Ranks) < 2 {
				continue
			}
			total++
			seen := map[int]bool{}
			for _, r := range g.Ranks {
				if s, ok := serverOf[r]; ok {
					seen[s] = true
				}
			}
			if len(seen) > 1 {
				spanning++
				size, servers = max(size, len(g.Ranks)), max(servers, len(seen))
			}
		}
		if spanning == 0 {
			continue
		}
		most := 0
		for _, n := range perServer {
			most = max(most, n)
		}
		sev := Medium
		if k.CommShare >= 0.1 {
			sev = High
		}
		evidence := fmt.Sprintf("tensor-parallel groups of %d ranks on servers of %d profiled ranks; keep each inside a server: --tensor-model-parallel-size %d or less (Megatron places TP ranks next to each other), with pipeline or data parallelism for the rest. Not priced: a smaller TP changes the model's split and its memory per rank",
			size, most, most)
		if hw := res.Communication.Hardware; !hw.Assumed && hw.ServerNPUs >= size && most < hw.ServerNPUs {
			// The groups fit in one server: the job uses part of each (priced by
			// tpPlacementRecommendation).
			devices := "NPUs"
			if res.AllNCCL() {
				devices = "GPUs"
			}
			evidence = fmt.Sprintf("tensor-parallel groups of %d ranks on servers of %d profiled ranks, where each %s server has %d %s: launch %d ranks per server and each TP group lies in one (Megatron places TP ranks next to each other), the model's split unchanged; or --tensor-model-parallel-size %d or less",
				size, most, hw.Name, hw.ServerNPUs, devices, hw.ServerNPUs, most)
		}
		out = append(out, Finding{ID: "tp_across_servers", Severity: sev,
			Title: fmt.Sprintf("%d of %d tensor-parallel groups span %d servers: their per-layer collectives (%s of the step exposed) cross the servers' network",
				spanning, total, servers, pct(k.CommShare)),
			Evidence: evidence})
	}
	return out
}

// largestGroup is the size of the largest group of a parallel dimension (0: none).
func largestGroup(res *analysis.Result, kind string) int {
	size := 0
	for _, g := range res.Communication.Groups {
		if g.Parallel == kind {
			size = max(size, len(g.Ranks))
		}
	}
	return size
}
