package report

import (
	"io"
	"math"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report/contract"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// The JSON report: its shape is package contract's types; this file fills them.

func commJSON(c analysis.Communication, det advisor.Detections) contract.Communication {
	out := contract.Communication{Ops: []contract.Op{}, Groups: []contract.Group{}, Links: []contract.Link{}, SlowRanks: []contract.SlowRank{},
		SlowLinks: []contract.SlowLink{}, SlowServers: []contract.SlowServer{}, Retransmissions: []contract.Retransmission{},
		Checks: []contract.Check{}, GroupSteps: []contract.GroupStep{}, Pipelines: []contract.Pipeline{},
		Hardware: contract.Hardware{Name: c.Hardware.Name, Assumed: c.Hardware.Assumed, Source: c.Hardware.Source,
			PeaksGBps: c.Hardware.PeakGBps}}
	for _, ch := range det.Checks {
		var fired *bool
		status := "not evaluated"
		if ch.Evaluated() {
			f := ch.Fired
			fired, status = &f, "not fired"
			if f {
				status = "fired"
			}
		}
		out.Checks = append(out.Checks, contract.Check{ID: ch.ID, Title: ch.Title, Fired: fired, Status: status, Count: ch.Count, Total: ch.Total,
			Threshold: ch.Threshold, Evidence: ch.Evidence, Rank: ch.Where.Rank, Step: ch.Where.Step, Op: ch.Where.Op})
	}
	for _, g := range c.GroupSteps {
		out.GroupSteps = append(out.GroupSteps, contract.GroupStep{Group: g.Group, Kind: g.Kind, Step: g.Step, Ranks: g.Ranks,
			CommunicationUs: us(g.CommunicationNs), CommunicationNotOverlappedUs: us(g.CommNotOverlappedNs), StageUs: us(g.StageNs),
			ExposedShare: share(g.ExposedShare())})
	}
	for _, p := range c.Pipelines {
		comp := make([]*float64, len(p.StageComputingNs))
		for i, ns := range p.StageComputingNs {
			if p.StageProfiled[i] {
				v := us(ns)
				comp[i] = &v
			}
		}
		var microbatches *int
		if p.Microbatches > 0 {
			microbatches = &p.Microbatches
		}
		out.Pipelines = append(out.Pipelines, contract.Pipeline{Group: p.Group, Ranks: p.Ranks, Stages: p.Stages, StagesAtLeast: p.StagesAtLeast, Microbatches: microbatches,
			MicrobatchesSource: p.MicrobatchesSource, TheoryBubble: sharePtr(figure(p.TheoryBubble, p.Microbatches > 0)),
			MeasuredBubble:   sharePtr(figure(p.MeasuredBubble, p.BubbleKnown())),
			StageComputingUs: comp, ProfiledStages: p.ProfiledStages, Imbalance: sharePtr(figure(p.Imbalance, p.ImbalanceKnown)), Note: p.Note})
	}
	for _, r := range det.SlowRanks {
		out.SlowRanks = append(out.SlowRanks, contract.SlowRank{Rank: r.Rank, Score: r.Score, Steps: r.Steps, Cause: r.Cause, Evidence: r.Evidence,
			ShareOfStep: share(r.ShareOfStep), StepsSeen: r.StepsSeen})
	}
	for _, l := range det.SlowLinks {
		out.SlowLinks = append(out.SlowLinks, contract.SlowLink{Src: l.Src, Dst: l.Dst, Transport: l.Transport,
			BandwidthGBps: round(l.BandwidthGBps, 4), PeerMedianGBps: round(l.PeerMedianGBps, 4), Server: l.Server, Evidence: l.Evidence})
	}
	for _, n := range det.SlowServers {
		out.SlowServers = append(out.SlowServers, contract.SlowServer{Server: n.Server, Host: n.Host, Transport: n.Transport, Fraction: round(n.Fraction, 4), Evidence: n.Evidence})
	}
	for _, g := range det.SlowGroups {
		out.SlowGroups = append(out.SlowGroups, contract.SlowGroup{Parallel: g.Parallel, Group: g.Group, Ranks: g.Ranks, Servers: g.Servers,
			Fraction: round(g.Fraction, 4), Evidence: g.Evidence})
	}
	for _, r := range c.Retransmissions {
		rt := contract.Retransmission{Src: r.Src, Step: r.Step, Op: r.Op, TimeUs: us(r.TimeNs), Source: "task"}
		if r.FromOpTotal {
			rt.Source = "op_rdma_time"
		}
		if r.Dst >= 0 {
			rt.Dst = &r.Dst
		}
		out.Retransmissions = append(out.Retransmissions, rt)
	}
	for _, o := range c.Ops {
		jo := contract.Op{Rank: o.Rank, Step: o.Step, Group: o.Group, Name: o.Name, Type: o.Type, StartUs: us(o.StartNs),
			ElapseUs: us(o.ElapseNs), CrossWait: figure(us(o.CrossWaitNs), o.CrossWaitKnown),
			Bytes: knownBytes(o.Bytes), BusBwGBps: knownFigure(o.BusBwGBps, 4), Util: knownFigure(o.Utilisation, 4), Source: o.Source, Transports: map[string]contract.Transport{}}
		if o.Source != "none" { // else the source has no time split: null
			split := []float64{us(o.TransitNs), us(o.WaitNs), us(o.SyncNs), us(o.IdleNs), o.WaitRatio(), o.SyncRatio()}
			jo.TransitUs, jo.WaitUs, jo.SyncUs, jo.IdleUs, jo.WaitRatio, jo.SyncRatio = &split[0], &split[1], &split[2], &split[3], &split[4], &split[5]
		}
		if o.MovingSource != "" {
			moving := us(o.MovingNs)
			jo.MovingUs, jo.MovingSource = &moving, &o.MovingSource
		}
		for _, t := range o.Transports {
			bins := make([]contract.SizeBin, 0, len(t.Sizes))
			for _, b := range t.Sizes {
				bins = append(bins, contract.SizeBin{SizeBytes: b.SizeBytes, Count: b.Count, TimeUs: us(b.TimeNs)})
			}
			jo.Transports[t.Transport] = contract.Transport{Bytes: t.Bytes, TimeUs: us(t.TimeNs), BandwidthGBps: round(t.BandwidthGBps(), 4),
				LargePacketRatio: t.LargePacketRatio, SizeDistribution: bins}
		}
		out.Ops = append(out.Ops, jo)
	}
	for _, g := range c.Groups {
		out.Groups = append(out.Groups, contract.Group{Group: g.Key, Name: g.Name, Ranks: g.Ranks, Kind: g.Kind,
			ParallelKind: g.Parallel, ParallelKindSource: g.ParallelSource})
	}
	for _, l := range c.Links {
		out.Links = append(out.Links, contract.Link{Src: l.Src, Dst: l.Dst, Transport: l.Transport, Bytes: l.Bytes,
			TimeUs: us(l.TimeNs), BandwidthGBps: round(l.BandwidthGBps(), 4), PeakGBps: knownFigure(l.PeakGBps, 4), Utilisation: knownFigure(l.Utilisation, 4)})
	}
	return out
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

// Sizes, bandwidths, utilisations and peaks are 0 in the analysis where they are not
// known (no byte count, no peak); the report writes null there (schema version 3).

func knownBytes(n int64) *int64 {
	if n <= 0 {
		return nil
	}
	return &n
}

// knownFigure is x rounded to digits decimals, null when x is 0 (not known).
func knownFigure(x float64, digits int) *float64 { return roundedPtr(figure(x, x != 0), digits) }

// figure is x where it is known, null where it is not (ok false, or NaN).
func figure(x float64, ok bool) *float64 {
	if !ok || math.IsNaN(x) {
		return nil
	}
	return &x
}

// roundedPtr is *x rounded to digits decimals; null stays null.
func roundedPtr(x *float64, digits int) *float64 {
	if x == nil {
		return nil
	}
	v := round(*x, digits)
	return &v
}

func sharePtr(x *float64) *float64 { return roundedPtr(x, 6) }

// shareOf is x rounded as a share, by reference.
func shareOf(x float64) *float64 { v := share(x); return &v }

// us converts ns to µs, exact to the ns.
func us(ns int64) float64 { return units.Us(ns) }

func usf(ns float64) float64 { return round(ns/1000, 3) }

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func share(x float64) float64 { return round(x, 6) }

// writeJSON writes the JSON report.
func writeJSON(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	r := d.Result
	s := r.Summary
	out := contract.Report{
		SchemaVersion: SchemaVersion,
		Tool:          contract.Tool{Name: "hcclprof", Version: d.Version, Command: d.Command},
		Summary: contract.Summary{Ranks: s.Ranks, Steps: s.Steps, StepTimeUs: us(s.StepTimeNs),
			CommShare: share(s.CommShare), CommTotalShare: share(s.CommTotalShare),
			AllReduceShare: sharePtr(s.AllReduceShare), OverlapRatio: sharePtr(s.OverlapRatio),
			Incomplete: s.Incomplete, Verdict: d.verdict(), RanksProfiled: len(r.Ranks), RanksExpected: positive(s.RanksExpected),
			ExposedTransferShare: sharePtr(s.ExposedTransferShare), ExposedWaitShare: sharePtr(s.ExposedWaitShare)},
		Ranks:           []contract.Rank{},
		Collectives:     []contract.Collective{},
		Warnings:        nonNil(r.Warnings),
		Notes:           nonNil(leftOutFirst(d)),
		Gates:           []contract.Gate{},
		Communication:   commJSON(r.Communication, d.view().Detections),
		Findings:        adviceFindings(d.Advice),
		Recommendations: adviceRecommendations(d.Advice),
	}
	if d.Advice != nil {
		dg := d.Advice.Diagnosis
		out.Summary.Diagnosis = &contract.Diagnosis{Cause: dg.Cause, Share: share(dg.Share), Title: dg.Title, Evidence: dg.Evidence, Candidates: dg.Candidates}
	}
	for _, rr := range r.Ranks {
		jr := contract.Rank{Rank: rr.Rank, Source: string(rr.Source), OpsSource: nonEmpty(rr.OpsSource), Format: string(rr.Format), Dir: rr.Dir,
			Incomplete: rr.Incomplete, Steps: []contract.Step{}}
		for _, st := range rr.Steps {
			var arShare *float64
			if v, ok := st.AllReduceShare(); ok {
				arShare = &v
			}
			jr.Steps = append(jr.Steps, contract.Step{Step: st.Step, StageUs: us(st.StageNs), ComputingUs: us(st.ComputingNs),
				CommunicationUs: us(st.CommunicationNs), CommunicationNotOverlappedUs: us(st.CommNotOverlappedNs),
				OverlappedUs: us(st.OverlappedNs), FreeUs: us(st.FreeNs), BubbleUs: us(st.BubbleNs),
				PreparingUs: preparingUs(st), CommShare: share(st.CommShare()),
				CommTotalShare: share(st.CommTotalShare()), AllReduceShare: sharePtr(arShare)})
		}
		out.Ranks = append(out.Ranks, jr)
	}
	kindOf := map[string]string{}
	for _, g := range r.Communication.Groups {
		kindOf[g.Key] = g.Parallel
	}
	for _, c := range r.Collectives {
		out.Collectives = append(out.Collectives, contract.Collective{Op: c.Op, Group: c.Group, GroupName: c.GroupName,
			GroupSize: positive(c.GroupSize), GroupSizeSource: c.GroupSizeSource, ParallelKind: kindOf[c.Group], Count: c.Count, Bytes: knownBytes(c.Bytes),
			TotalUs: us(c.TotalNs), MeanUs: usf(c.MeanNs), P50Us: usf(c.P50Ns), P95Us: usf(c.P95Ns), MaxUs: us(c.MaxNs),
			AlgBwGBps: knownFigure(c.AlgBwGBps, 4), BusBwGBps: knownFigure(c.BusBwGBps, 4)})
	}
	out.CollectiveKinds = collectiveKindsJSON(analysis.CollectiveKinds(r.Collectives, r.Communication.Groups))
	out.Communication.ExpertGroups = expertGroupsJSON(analysis.ExpertImbalance(r))
	out.Summary.ParallelKinds = parallelKindsJSON(s.Kinds)
	out.Gates = append(out.Gates, gatesJSON(d.gates())...)
	return writeIndentedJSON(w, out)
}

// gatesJSON is the gates as the JSON report (and diff's JSON) writes them: the value
// null when the run has none.
func gatesJSON(gates []advisor.GateResult) []contract.Gate {
	out := make([]contract.Gate, 0, len(gates))
	for _, g := range gates {
		jg := contract.Gate{Expr: g.Expr, Metric: g.Metric, Op: g.Op, Threshold: g.Threshold, Passed: g.Passed}
		if !g.Unmeasured {
			v := g.Value
			jg.Value = &v
		}
		out = append(out, jg)
	}
	return out
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

// leftOutFirst is the document's notes, the steps left out as warm-up first.
func leftOutFirst(d *Document) []string {
	if d.LeftOut == "" {
		return d.Notes
	}
	return append([]string{d.LeftOut}, d.Notes...)
}

// parallelKindsJSON is the summary's communication per parallel dimension.
func parallelKindsJSON(kinds []analysis.KindShare) []contract.ParallelKind {
	var out []contract.ParallelKind
	for _, k := range kinds {
		pk := contract.ParallelKind{Kind: k.Kind, Title: analysis.KindTitle(k.Kind), Groups: k.Groups,
			CommTotalShare: share(k.CommTotalShare), Sources: nonNil(k.Sources)}
		if k.Measured() {
			pk.CommShare = shareOf(k.CommShare)
		} else { // not measured: bounded
			pk.CommShareMin, pk.CommShareMax = shareOf(k.CommShareMin), shareOf(k.CommShareMax)
		}
		out = append(out, pk)
	}
	return out
}

// collectiveKindsJSON is the collectives rolled up by parallel dimension and op.
func collectiveKindsJSON(kinds []analysis.KindCollective) []contract.CollectiveKind {
	var out []contract.CollectiveKind
	for _, k := range kinds {
		out = append(out, contract.CollectiveKind{Kind: k.Kind, Op: k.Op, Groups: k.Groups, GroupSize: positive(k.GroupSize), Count: k.Count,
			Bytes: knownBytes(k.Bytes), TotalUs: us(k.TotalNs), MeanUs: usf(k.MeanNs), MaxUs: us(k.MaxNs),
			MedianGroupMeanUs: usf(k.MedianGroupMeanNs), MedianGroupBusBwGBps: knownFigure(k.MedianGroupBusBwGBps, 4),
			WorstGroup: k.WorstGroup, WorstGroupName: k.WorstName, WorstGroupMeanUs: usf(k.WorstMeanNs),
			WorstGroupBusBwGBps: knownFigure(k.WorstBusBwGBps, 4)})
	}
	return out
}

// expertGroupsJSON is each expert-parallel group's AlltoAll(v) per rank.
func expertGroupsJSON(groups []analysis.ExpertGroup) []contract.ExpertGroup {
	var out []contract.ExpertGroup
	for _, g := range groups {
		eg := contract.ExpertGroup{Group: g.Group, BytesSkew: round(g.BytesSkew, 4), MovingSkew: round(g.MovingSkew, 4),
			HotWaitsLeast: g.HotWaitsLeast, Ranks: []contract.ExpertRank{}}
		if g.HotRank >= 0 {
			hot := g.HotRank
			eg.HotRank = &hot
		}
		for _, x := range g.Ranks {
			eg.Ranks = append(eg.Ranks, contract.ExpertRank{Rank: x.Rank, Ops: x.Ops, Bytes: x.Bytes, ElapseUs: us(x.ElapseNs),
				MovingUs: us(x.MovingNs), WaitUs: us(x.WaitNs)})
		}
		out = append(out, eg)
	}
	return out
}
