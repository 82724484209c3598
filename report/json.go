package report

import (
	"io"
	"math"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// The JSON report: a contract for scripts and CI (README "JSON report"). Times are µs,
// shares fractions, bandwidths decimal GB/s, step the profiler's step number (-1 when
// the run has no step markers).

type jsonReport struct {
	SchemaVersion   int                  `json:"schema_version"`
	Tool            jsonTool             `json:"tool"`
	Summary         jsonSummary          `json:"summary"`
	Ranks           []jsonRank           `json:"ranks"`
	Collectives     []jsonCollective     `json:"collectives"`
	Communication   jsonComm             `json:"communication"`
	Findings        []jsonFinding        `json:"findings"`
	Recommendations []jsonRecommendation `json:"recommendations"`
	Warnings        []string             `json:"warnings"`
	Notes           []string             `json:"notes"`
	Gates           []jsonGate           `json:"gates"`
}

type jsonTool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Command string `json:"command,omitempty"`
}

type jsonSummary struct {
	Ranks          int     `json:"ranks"`
	Steps          int     `json:"steps"`
	StepTimeUs     float64 `json:"step_time_us"`
	CommShare      float64 `json:"comm_share"`
	CommTotalShare float64 `json:"comm_total_share"`
	AllReduceShare float64 `json:"allreduce_share"`
	OverlapRatio   float64 `json:"overlap_ratio"`
	// ExposedTransferShare and ExposedWaitShare split comm_share (null when no rank has
	// per-op records); Diagnosis is the leading cause (null when not computed).
	ExposedTransferShare *float64       `json:"exposed_transfer_share"`
	ExposedWaitShare     *float64       `json:"exposed_wait_share"`
	Diagnosis            *jsonDiagnosis `json:"diagnosis"`
	RanksProfiled        int            `json:"ranks_profiled"`
	RanksExpected        *int           `json:"ranks_expected"` // the world size the profiles state; null when unknown
	Incomplete           bool           `json:"incomplete"`
	Verdict              string         `json:"verdict"`
}

type jsonDiagnosis struct {
	Cause    string  `json:"cause"`
	Share    float64 `json:"share"`
	Title    string  `json:"title"`
	Evidence string  `json:"evidence"`
}

type jsonRank struct {
	Rank       int        `json:"rank"`
	Source     string     `json:"source"`
	OpsSource  *string    `json:"ops_source"` // where the per-op records came from; null when the rank has none
	Format     string     `json:"format"`
	Dir        string     `json:"dir"`
	Incomplete bool       `json:"incomplete"`
	Steps      []jsonStep `json:"steps"`
}

type jsonStep struct {
	Step                         int      `json:"step"`
	StageUs                      float64  `json:"stage_us"`
	ComputingUs                  float64  `json:"computing_us"`
	CommunicationUs              float64  `json:"communication_us"`
	CommunicationNotOverlappedUs float64  `json:"communication_not_overlapped_us"`
	OverlappedUs                 float64  `json:"overlapped_us"`
	FreeUs                       float64  `json:"free_us"`
	BubbleUs                     float64  `json:"bubble_us"`
	PreparingUs                  *float64 `json:"preparing_us"` // null when the profile does not say
	CommShare                    float64  `json:"comm_share"`
	CommTotalShare               float64  `json:"comm_total_share"`
	AllReduceShare               float64  `json:"allreduce_share"`
}

type jsonCollective struct {
	Op              string  `json:"op"`
	Group           string  `json:"group"`
	GroupName       string  `json:"group_name,omitempty"`
	GroupSize       int     `json:"group_size"`
	GroupSizeSource string  `json:"group_size_source"`
	Count           int     `json:"count"`
	Bytes           int64   `json:"bytes"`
	TotalUs         float64 `json:"total_us"`
	MeanUs          float64 `json:"mean_us"`
	P50Us           float64 `json:"p50_us"`
	P95Us           float64 `json:"p95_us"`
	MaxUs           float64 `json:"max_us"`
	AlgBwGBps       float64 `json:"algbw_gbps"`
	BusBwGBps       float64 `json:"busbw_gbps"`
}

type jsonComm struct {
	Ops             []jsonOp             `json:"ops"`
	Groups          []jsonGroup          `json:"groups"`
	Links           []jsonLink           `json:"links"`
	SlowRanks       []jsonSlowRank       `json:"slow_ranks"`
	SlowLinks       []jsonSlowLink       `json:"slow_links"`
	SlowNodes       []jsonSlowNode       `json:"slow_nodes"`
	Retransmissions []jsonRetransmission `json:"retransmissions"`
	Checks          []jsonCheck          `json:"checks"`
	GroupSteps      []jsonGroupStep      `json:"group_steps"`
	Pipelines       []jsonPipeline       `json:"pipelines"`
	Hardware        jsonHardware         `json:"hardware"`
}

type jsonCheck struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Fired     *bool  `json:"fired"`  // null when the check had nothing to examine
	Status    string `json:"status"` // fired, not fired, not evaluated
	Count     int    `json:"count"`
	Total     int    `json:"total"`
	Threshold string `json:"threshold"`
	Evidence  string `json:"evidence"`
	Rank      int    `json:"rank"`
	Step      int    `json:"step"`
	Op        string `json:"op"`
}

type jsonGroupStep struct {
	Group                        string  `json:"group"`
	Kind                         string  `json:"kind"`
	Step                         int     `json:"step"`
	Ranks                        int     `json:"ranks"`
	CommunicationUs              float64 `json:"communication_us"`
	CommunicationNotOverlappedUs float64 `json:"communication_not_overlapped_us"`
	StageUs                      float64 `json:"stage_us"`
	ExposedShare                 float64 `json:"exposed_share"`
}

type jsonPipeline struct {
	Group              string    `json:"group"`
	Ranks              []int     `json:"ranks"`
	Stages             int       `json:"stages"`
	Microbatches       int       `json:"microbatches"`
	MicrobatchesSource string    `json:"microbatches_source"`
	TheoryBubble       float64   `json:"theory_bubble"`
	MeasuredBubble     float64   `json:"measured_bubble"`
	StageComputingUs   []float64 `json:"stage_computing_us"`
	Imbalance          float64   `json:"imbalance"`
	Note               string    `json:"note"`
}

type jsonHardware struct {
	Name    string `json:"name"`
	Assumed bool   `json:"assumed"`
	// Source says what the product was taken from (a profile fact, an option, or
	// "assumed: ...").
	Source    string             `json:"source"`
	PeaksGBps map[string]float64 `json:"peaks_gbps"`
}

type jsonSlowRank struct {
	Rank     int     `json:"rank"`
	Score    float64 `json:"score"`
	Steps    []int   `json:"steps"`
	Cause    string  `json:"cause"`
	Evidence string  `json:"evidence"`
	// ShareOfStep is what the rank costs the others per flagged step, over Stage;
	// StepsSeen the steps whose waits could be compared.
	ShareOfStep float64 `json:"share_of_step"`
	StepsSeen   int     `json:"steps_seen"`
}

type jsonSlowLink struct {
	Src            int     `json:"src"`
	Dst            int     `json:"dst"`
	Transport      string  `json:"transport"`
	BandwidthGBps  float64 `json:"bandwidth_gbps"`
	PeerMedianGBps float64 `json:"peer_median_gbps"`
	Node           int     `json:"node"`
	Evidence       string  `json:"evidence"`
}

type jsonSlowNode struct {
	Node      int     `json:"node"`
	Host      string  `json:"host"`
	Transport string  `json:"transport"`
	Fraction  float64 `json:"fraction"`
	Evidence  string  `json:"evidence"`
}

type jsonRetransmission struct {
	Src    int     `json:"src"`
	Dst    int     `json:"dst"`
	Step   int     `json:"step"`
	Op     string  `json:"op"`
	TimeUs float64 `json:"time_us"`
}

type jsonOp struct {
	Rank       int                      `json:"rank"`
	Step       int                      `json:"step"`
	Group      string                   `json:"group"`
	Name       string                   `json:"name"`
	Type       string                   `json:"type"`
	StartUs    float64                  `json:"start_us"`
	ElapseUs   float64                  `json:"elapse_us"`
	TransitUs  float64                  `json:"transit_us"`
	WaitUs     float64                  `json:"wait_us"`
	SyncUs     float64                  `json:"sync_us"`
	IdleUs     float64                  `json:"idle_us"`
	WaitRatio  float64                  `json:"wait_ratio"`
	SyncRatio  float64                  `json:"sync_ratio"`
	CrossWait  float64                  `json:"cross_rank_wait_us"`
	Bytes      int64                    `json:"bytes"`
	BusBwGBps  float64                  `json:"busbw_gbps"`
	Util       float64                  `json:"utilisation"`
	Source     string                   `json:"source"`
	Transports map[string]jsonTransport `json:"transports"`
}

type jsonTransport struct {
	Bytes            int64         `json:"bytes"`
	TimeUs           float64       `json:"time_us"`
	BandwidthGBps    float64       `json:"bandwidth_gbps"`
	LargePacketRatio float64       `json:"large_packet_ratio"`
	SizeDistribution []jsonSizeBin `json:"size_distribution"`
}

type jsonSizeBin struct {
	SizeBytes int64   `json:"size_bytes"`
	Count     int64   `json:"count"`
	TimeUs    float64 `json:"time_us"`
}

type jsonGroup struct {
	Group string `json:"group"`
	Name  string `json:"name"`
	Ranks []int  `json:"ranks"`
	Kind  string `json:"kind"`
}

type jsonLink struct {
	Src           int     `json:"src"`
	Dst           int     `json:"dst"`
	Transport     string  `json:"transport"`
	Bytes         int64   `json:"bytes"`
	TimeUs        float64 `json:"time_us"`
	BandwidthGBps float64 `json:"bandwidth_gbps"`
	PeakGBps      float64 `json:"peak_gbps"`
	Utilisation   float64 `json:"utilisation"`
}

func commJSON(c analysis.Communication) jsonComm {
	out := jsonComm{Ops: []jsonOp{}, Groups: []jsonGroup{}, Links: []jsonLink{}, SlowRanks: []jsonSlowRank{},
		SlowLinks: []jsonSlowLink{}, SlowNodes: []jsonSlowNode{}, Retransmissions: []jsonRetransmission{},
		Checks: []jsonCheck{}, GroupSteps: []jsonGroupStep{}, Pipelines: []jsonPipeline{},
		Hardware: jsonHardware{Name: c.Hardware.Name, Assumed: c.Hardware.Assumed, Source: c.Hardware.Source,
			PeaksGBps: c.Hardware.PeakGBps}}
	for _, ch := range c.Checks {
		var fired *bool
		status := "not evaluated"
		if ch.Evaluated() {
			f := ch.Fired
			fired, status = &f, "not fired"
			if f {
				status = "fired"
			}
		}
		out.Checks = append(out.Checks, jsonCheck{ID: ch.ID, Title: ch.Title, Fired: fired, Status: status, Count: ch.Count, Total: ch.Total,
			Threshold: ch.Threshold, Evidence: ch.Evidence, Rank: ch.Where.Rank, Step: ch.Where.Step, Op: ch.Where.Op})
	}
	for _, g := range c.GroupSteps {
		out.GroupSteps = append(out.GroupSteps, jsonGroupStep{Group: g.Group, Kind: g.Kind, Step: g.Step, Ranks: g.Ranks,
			CommunicationUs: us(g.CommunicationNs), CommunicationNotOverlappedUs: us(g.CommNotOverlappedNs), StageUs: us(g.StageNs),
			ExposedShare: share(g.ExposedShare())})
	}
	for _, p := range c.Pipelines {
		comp := make([]float64, len(p.StageComputingNs))
		for i, ns := range p.StageComputingNs {
			comp[i] = us(ns)
		}
		out.Pipelines = append(out.Pipelines, jsonPipeline{Group: p.Group, Ranks: p.Ranks, Stages: p.Stages, Microbatches: p.Microbatches,
			MicrobatchesSource: p.MicrobatchesSource, TheoryBubble: share(p.TheoryBubble), MeasuredBubble: share(p.MeasuredBubble),
			StageComputingUs: comp, Imbalance: share(p.Imbalance), Note: p.Note})
	}
	for _, r := range c.SlowRanks {
		out.SlowRanks = append(out.SlowRanks, jsonSlowRank{Rank: r.Rank, Score: r.Score, Steps: r.Steps, Cause: r.Cause, Evidence: r.Evidence,
			ShareOfStep: share(r.ShareOfStep), StepsSeen: r.StepsSeen})
	}
	for _, l := range c.SlowLinks {
		out.SlowLinks = append(out.SlowLinks, jsonSlowLink{Src: l.Src, Dst: l.Dst, Transport: l.Transport,
			BandwidthGBps: round(l.BandwidthGBps, 4), PeerMedianGBps: round(l.PeerMedianGBps, 4), Node: l.Node, Evidence: l.Evidence})
	}
	for _, n := range c.SlowNodes {
		out.SlowNodes = append(out.SlowNodes, jsonSlowNode{Node: n.Node, Host: n.Host, Transport: n.Transport, Fraction: round(n.Fraction, 4), Evidence: n.Evidence})
	}
	for _, r := range c.Retransmissions {
		out.Retransmissions = append(out.Retransmissions, jsonRetransmission{Src: r.Src, Dst: r.Dst, Step: r.Step, Op: r.Op, TimeUs: us(r.TimeNs)})
	}
	for _, o := range c.Ops {
		jo := jsonOp{Rank: o.Rank, Step: o.Step, Group: o.Group, Name: o.Name, Type: o.Type, StartUs: us(o.StartNs),
			ElapseUs: us(o.ElapseNs), TransitUs: us(o.TransitNs), WaitUs: us(o.WaitNs), SyncUs: us(o.SyncNs),
			IdleUs: us(o.IdleNs), WaitRatio: o.WaitRatio(), SyncRatio: o.SyncRatio(), CrossWait: us(o.CrossWaitNs),
			Bytes: o.Bytes, BusBwGBps: round(o.BusBwGBps, 4), Util: round(o.Utilisation, 4), Source: o.Source, Transports: map[string]jsonTransport{}}
		for name, t := range o.Transports {
			bins := make([]jsonSizeBin, 0, len(t.Sizes))
			for _, b := range t.Sizes {
				bins = append(bins, jsonSizeBin{SizeBytes: b.SizeBytes, Count: b.Count, TimeUs: us(b.TimeNs)})
			}
			jo.Transports[name] = jsonTransport{Bytes: t.Bytes, TimeUs: us(t.TimeNs), BandwidthGBps: round(t.BandwidthGBps(), 4),
				LargePacketRatio: t.LargePacketRatio, SizeDistribution: bins}
		}
		out.Ops = append(out.Ops, jo)
	}
	for _, g := range c.Groups {
		out.Groups = append(out.Groups, jsonGroup{Group: g.Key, Name: g.Name, Ranks: g.Ranks, Kind: g.Kind})
	}
	for _, l := range c.Links {
		out.Links = append(out.Links, jsonLink{Src: l.Src, Dst: l.Dst, Transport: l.Transport, Bytes: l.Bytes,
			TimeUs: us(l.TimeNs), BandwidthGBps: round(l.BandwidthGBps(), 4), PeakGBps: l.PeakGBps, Utilisation: round(l.Utilisation, 4)})
	}
	return out
}

type jsonGate struct {
	Expr      string   `json:"expr"`
	Metric    string   `json:"metric"`
	Op        string   `json:"op"`
	Value     *float64 `json:"value"` // null when the run has no value for the metric
	Threshold float64  `json:"threshold"`
	Passed    bool     `json:"passed"`
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

func sharePtr(x *float64) *float64 {
	if x == nil {
		return nil
	}
	v := share(*x)
	return &v
}

// us converts ns to µs, exact to the ns.
func us(ns int64) float64 { return units.Us(ns) }

func usf(ns float64) float64 { return round(ns/1000, 3) }

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func share(x float64) float64 { return round(x, 6) }

// WriteJSON writes the JSON report.
func WriteJSON(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	r := d.Result
	s := r.Summary
	out := jsonReport{
		SchemaVersion: SchemaVersion,
		Tool:          jsonTool{Name: "hcclprof", Version: d.Version, Command: d.Command},
		Summary: jsonSummary{Ranks: s.Ranks, Steps: s.Steps, StepTimeUs: us(s.StepTimeNs),
			CommShare: share(s.CommShare), CommTotalShare: share(s.CommTotalShare),
			AllReduceShare: share(s.AllReduceShare), OverlapRatio: share(s.OverlapRatio),
			Incomplete: s.Incomplete, Verdict: d.verdict(), RanksProfiled: len(r.Ranks), RanksExpected: positive(s.RanksExpected),
			ExposedTransferShare: sharePtr(s.ExposedTransferShare), ExposedWaitShare: sharePtr(s.ExposedWaitShare)},
		Ranks:           []jsonRank{},
		Collectives:     []jsonCollective{},
		Warnings:        nonNil(r.Warnings),
		Notes:           nonNil(d.Notes),
		Gates:           []jsonGate{},
		Communication:   commJSON(r.Communication),
		Findings:        adviceFindings(d.Advice),
		Recommendations: adviceRecommendations(d.Advice),
	}
	if d.Advice != nil {
		dg := d.Advice.Diagnosis
		out.Summary.Diagnosis = &jsonDiagnosis{Cause: dg.Cause, Share: share(dg.Share), Title: dg.Title, Evidence: dg.Evidence}
	}
	for _, rr := range r.Ranks {
		jr := jsonRank{Rank: rr.Rank, Source: string(rr.Source), OpsSource: nonEmpty(rr.OpsSource), Format: string(rr.Format), Dir: rr.Dir,
			Incomplete: rr.Incomplete, Steps: []jsonStep{}}
		for _, st := range rr.Steps {
			jr.Steps = append(jr.Steps, jsonStep{Step: st.Step, StageUs: us(st.StageNs), ComputingUs: us(st.ComputingNs),
				CommunicationUs: us(st.CommunicationNs), CommunicationNotOverlappedUs: us(st.CommNotOverlappedNs),
				OverlappedUs: us(st.OverlappedNs), FreeUs: us(st.FreeNs), BubbleUs: us(st.BubbleNs),
				PreparingUs: preparingUs(st), CommShare: share(st.CommShare()),
				CommTotalShare: share(st.CommTotalShare()), AllReduceShare: share(st.AllReduceShare())})
		}
		out.Ranks = append(out.Ranks, jr)
	}
	for _, c := range r.Collectives {
		out.Collectives = append(out.Collectives, jsonCollective{Op: c.Op, Group: c.Group, GroupName: c.GroupName,
			GroupSize: c.GroupSize, GroupSizeSource: c.GroupSizeSource, Count: c.Count, Bytes: c.Bytes,
			TotalUs: us(c.TotalNs), MeanUs: usf(c.MeanNs), P50Us: usf(c.P50Ns), P95Us: usf(c.P95Ns), MaxUs: us(c.MaxNs),
			AlgBwGBps: round(c.AlgBwGBps, 4), BusBwGBps: round(c.BusBwGBps, 4)})
	}
	for _, g := range d.Gates {
		jg := jsonGate{Expr: g.Expr, Metric: g.Metric, Op: g.Op, Threshold: g.Threshold, Passed: g.Passed}
		if !g.Unmeasured {
			v := g.Value
			jg.Value = &v
		}
		out.Gates = append(out.Gates, jg)
	}
	return writeIndentedJSON(w, out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// preparingUs is a step's Preparing in µs, nil when it is not known: absent is not 0.
func preparingUs(st analysis.StepBreakdown) *float64 {
	if !st.HasPreparing {
		return nil
	}
	v := us(st.PreparingNs)
	return &v
}
