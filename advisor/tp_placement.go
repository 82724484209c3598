package advisor

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// tpSpan is how the tensor-parallel groups of one dimension lie on the servers.
type tpSpan struct {
	kind              *analysis.KindShare
	size              int // the largest spanning group's ranks
	servers           int // the most servers one group spans
	ranksPerServer    int // the most profiled ranks of one server
	spanning, groups  int
	spanningGroupKeys map[string]bool
}

// tpSpans finds the TP (or SP) dimension whose groups span servers, the one exposed
// most; nil when none does.
func tpSpans(res *analysis.Result) *tpSpan {
	serverOf := res.Communication.ServerOf
	if len(serverOf) == 0 {
		return nil
	}
	perServer := map[int]int{}
	for _, s := range serverOf {
		perServer[s]++
	}
	var best *tpSpan
	for i, k := range res.Summary.Kinds {
		if k.Kind != analysis.KindTP && k.Kind != analysis.KindSP {
			continue
		}
		sp := tpSpan{kind: &res.Summary.Kinds[i], spanningGroupKeys: map[string]bool{}}
		for _, g := range res.Communication.Groups {
			if g.Parallel != k.Kind || len(g.Ranks) < 2 {
				continue
			}
			sp.groups++
			seen := map[int]bool{}
			for _, r := range g.Ranks {
				if s, ok := serverOf[r]; ok {
					seen[s] = true
				}
			}
			if len(seen) > 1 {
				sp.spanning++
				sp.spanningGroupKeys[g.Key] = true
				sp.size, sp.servers = max(sp.size, len(g.Ranks)), max(sp.servers, len(seen))
			}
		}
		if sp.spanning == 0 {
			continue
		}
		for _, n := range perServer {
			sp.ranksPerServer = max(sp.ranksPerServer, n)
		}
		if best == nil || k.CommShare > best.kind.CommShare {
			best = &sp
		}
	}
	return best
}

// tpPlacementRecommendation prices packing each tensor-parallel group into one
// server when the groups span servers only because the job runs fewer ranks on a
// server than it has NPUs (GPUs) and the TP size fits in one server (issue 37):
// launched with as many ranks per server as it has devices, Megatron's layout (TP
// ranks next to each other, innermost) puts every TP group inside a server, with the
// same model split. The TP collectives are re-timed on the server's own links. A TP
// larger than a server is left to the finding (a smaller TP changes the split).
func tpPlacementRecommendation(res *analysis.Result) (*Recommendation, string) {
	sp := tpSpans(res)
	if sp == nil {
		return nil, ""
	}
	hw := res.Communication.Hardware
	if hw.Assumed {
		// The server's NPU count is the product's: unknown, it cannot be said that a
		// server has devices the job leaves idle.
		return nil, ""
	}
	if hw.ServerNPUs < sp.size || sp.ranksPerServer >= hw.ServerNPUs || sp.kind.CommShare < tpExposedMin {
		return nil, ""
	}
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	// The spanning groups' ops per rank and step, by family, each priced on today's
	// placement and inside one server.
	type fam struct {
		n     int
		bytes int64
	}
	fams := map[string]*fam{}
	seen := map[[2]int]bool{}
	for _, o := range res.Communication.Ops {
		if !sp.spanningGroupKeys[o.Group] {
			continue
		}
		f := family(o.Type, o.Name)
		if fams[f] == nil {
			fams[f] = &fam{}
		}
		fams[f].n++
		fams[f].bytes += o.Bytes
		seen[[2]int{o.Rank, o.Step}] = true
	}
	if len(seen) == 0 {
		return nil, ""
	}
	perServer := sp.ranksPerServer
	var across, inside float64
	for name, f := range fams {
		if name == "other" || f.n == 0 || f.bytes <= 0 {
			continue
		}
		perStep := float64(f.n) / float64(len(seen))
		q := costmodel.ProductQuery{Op: name, Bytes: f.bytes / int64(f.n)}
		q.Servers, q.NPUsPerServer = (sp.size+perServer-1)/perServer, perServer
		a, errA := costmodel.PriceOnProduct(hw, q)
		q.Servers, q.NPUsPerServer = 1, sp.size
		in, errI := costmodel.PriceOnProduct(hw, q)
		if errA != nil || errI != nil {
			return nil, fmt.Sprintf("no TP placement priced: %s on %s: %v", name, hw.Name, errorsOf(errA, errI))
		}
		across += perStep * a.Cost.TimeUs
		inside += perStep * in.Cost.TimeUs
	}
	c := costmodel.TPPlacement{StepUs: stepUs, ExposedUs: math.Min(sp.kind.CommShare, res.Summary.CommShare) * stepUs,
		TotalUs: sp.kind.CommTotalShare * stepUs, CommShare: res.Summary.CommShare, AcrossUs: across, InsideUs: inside, TP: sp.size}
	p, err := costmodel.TPInsideServer(c)
	if err != nil {
		return nil, "no TP placement priced: " + err.Error()
	}
	launcher := "torchrun --nproc_per_node %d"
	visible := "ASCEND_RT_VISIBLE_DEVICES"
	if hw.NCCL() {
		visible = "CUDA_VISIBLE_DEVICES"
	}
	r := Recommendation{ID: "tp_inside_server", Knob: "--nproc_per_node + --tensor-model-parallel-size", Value: fmt.Sprintf("%d per server, tp %d", hw.ServerNPUs, sp.size),
		Apply: fmt.Sprintf(launcher+" (all %d devices of each server: %s unset or listing them all), --tensor-model-parallel-size %d unchanged   # Megatron puts the TP ranks next to each other, so each TP group of %d lies in one server",
			hw.ServerNPUs, hw.ServerNPUs, visible, sp.size, sp.size),
		Predicted: p, GainUs: stepUs - p.StepTimeUs, Confidence: p.Confidence, Assumptions: p.Assumptions, SamplesScale: 1, TodayUs: stepUs,
		Settings: []costmodel.Setting{{Knob: "ranks_per_server", Value: float64(hw.ServerNPUs)}},
		Risks: []string{fmt.Sprintf("the job then needs %d servers instead of %d (the same ranks, packed)", (len(res.Communication.ServerOf)+hw.ServerNPUs-1)/hw.ServerNPUs,
			distinctServers(res)),
			"the data-parallel (and other) groups then cross servers where they did not, or the reverse: their collectives are not re-timed here"}}
	if r.GainUs <= math.Max(p.High-p.Low, 0.01*stepUs) {
		r.Hypothesis = true
	}
	return &r, ""
}

func distinctServers(res *analysis.Result) int {
	s := map[int]bool{}
	for _, v := range res.Communication.ServerOf {
		s[v] = true
	}
	return len(s)
}

func errorsOf(errs ...error) string {
	var out []string
	for _, e := range errs {
		if e != nil {
			out = append(out, e.Error())
		}
	}
	return strings.Join(out, "; ")
}
