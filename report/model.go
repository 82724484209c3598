package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// ModelDoc is the output of hcclprof model: a modelled op and, for a product, HCCL's
// own choice with the costs it compared.
type ModelDoc struct {
	Cost costmodel.Cost
	// Calibrated is the estimate from a benchmark calibration (model --calibration,
	// the file in Calibration); nil when the α-β model priced the op.
	Calibrated  *costmodel.BenchEstimate
	Calibration string
	Choice      *costmodel.Choice // nil when the algorithm was given
	Product     string
	Servers     int
	Notes       []string
	// Width is the text output's width in display columns (the terminal's); 0 is no
	// limit. Other formats ignore it.
	Width int
}

type jsonModel struct {
	SchemaVersion int     `json:"schema_version"`
	Op            string  `json:"op"`
	Algo          string  `json:"algo"`
	Ranks         int     `json:"ranks"`
	Bytes         int64   `json:"bytes"`
	TimeUs        float64 `json:"time_us"`
	// The α-β model's parts; null for a calibrated estimate, which has none.
	LatencyUs   *float64           `json:"latency_us"`
	BandwidthUs *float64           `json:"bandwidth_us"`
	ReduceUs    *float64           `json:"reduce_us"`
	Rounds      *int               `json:"rounds"`
	AlgBwGBps   float64            `json:"algbw_gbps"`
	BusBwGBps   *float64           `json:"busbw_gbps"`
	Product     string             `json:"product,omitempty"`
	Servers     int                `json:"servers,omitempty"`
	HCCLChoice  string             `json:"hccl_choice,omitempty"`
	Reason      string             `json:"reason,omitempty"`
	ModelCostUs map[string]float64 `json:"hccl_model_cost_us,omitempty"`
	// LowUs and HighUs bound a calibrated estimate (null from the α-β model);
	// Basis says what it rests on.
	LowUs       *float64 `json:"low_us"`
	HighUs      *float64 `json:"high_us"`
	Basis       string   `json:"basis,omitempty"`
	Calibration string   `json:"calibration,omitempty"`
	Notes       []string `json:"notes"`
	// Library is whose choice hccl_choice is: HCCL's, or NCCL's ("ring/LL128": the
	// algorithm and protocol) on an NVIDIA product.
	Library string `json:"library,omitempty"`
}

// writeModelJSON writes a modelled op as JSON.
func writeModelJSON(w io.Writer, d ModelDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	c := d.Cost
	out := jsonModel{SchemaVersion: SchemaVersion, Op: c.Op, Algo: c.Algo, Ranks: c.Ranks, Bytes: c.Bytes, TimeUs: round(c.TimeUs, 3),
		AlgBwGBps: round(c.AlgBwGBps, 4), Product: d.Product, Servers: d.Servers, Notes: nonNil(d.Notes), Calibration: d.Calibration}
	if d.Calibrated == nil {
		lat, bw, red, bus, rounds := round(c.LatencyUs, 3), round(c.BandwidthUs, 3), round(c.ReduceUs, 3), round(c.BusBwGBps, 4), c.Rounds
		out.LatencyUs, out.BandwidthUs, out.ReduceUs, out.BusBwGBps, out.Rounds = &lat, &bw, &red, &bus, &rounds
	}
	if e := d.Calibrated; e != nil {
		lo, hi := round(e.LowUs, 3), round(e.HighUs, 3)
		out.LowUs, out.HighUs, out.Basis = &lo, &hi, e.Basis
	}
	if d.Choice != nil {
		out.HCCLChoice, out.Reason, out.Library = d.Choice.Algo, d.Choice.Reason, "HCCL"
		if d.Choice.Library != "" {
			out.Library = d.Choice.Library
		}
		if len(d.Choice.CostUs) > 0 {
			out.ModelCostUs = map[string]float64{}
			for k, v := range d.Choice.CostUs {
				out.ModelCostUs[k] = round(v, 3)
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return namedJSONError(out, enc.Encode(out))
}

// writeModelText writes a modelled op for people.
func writeModelText(w io.Writer, d ModelDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := newPrinter(w, d.Width)
	c := d.Cost
	if e := d.Calibrated; e != nil {
		p.printf("%s on %d ranks, %s: %.1f µs (%.1f–%.1f, ±%.0f%%: the sweep's error out of sample); algbw %.2f GB/s\n  from %s: %s\n",
			c.Op, c.Ranks, units.FormatBytes(c.Bytes), e.TimeUs, e.LowUs, e.HighUs, 100*e.ErrorAbs, c.AlgBwGBps, d.Calibration, e.Basis)
		return p.done()
	}
	if d.Choice != nil {
		lib := "HCCL"
		if d.Choice.Library != "" {
			lib = d.Choice.Library
		}
		p.printf("%s's choice on %s, %d servers: %s (%s)\n", lib, d.Product, d.Servers, d.Choice.Algo, d.Choice.Reason)
		if len(d.Choice.CostUs) > 0 {
			names := make([]string, 0, len(d.Choice.CostUs))
			for k := range d.Choice.CostUs {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				p.printf("  %s's model: %-5s %.1f µs\n", lib, k, d.Choice.CostUs[k])
			}
		}
	}
	p.printf("%s %s on %d ranks, %s: %.1f µs (latency %.1f, bandwidth %.1f, reduce %.1f; %d round(s)); algbw %.2f GB/s, busbw %.2f GB/s\n",
		c.Op, c.Algo, c.Ranks, units.FormatBytes(c.Bytes), c.TimeUs, c.LatencyUs, c.BandwidthUs, c.ReduceUs, c.Rounds, c.AlgBwGBps, c.BusBwGBps)
	for _, n := range d.Notes {
		p.printf("  note: %s\n", n)
	}
	return p.done()
}

// CalibrationDoc is the output of hcclprof calibrate: the links and the per-op-type
// back-test.
type CalibrationDoc struct {
	Links    []costmodel.LinkFit
	BackTest []costmodel.OpBackTest
	// NoTransfers says, when there is no link to fit, why the ranks have no HCCL
	// transfers: each reason (analysis.NoTaskRows) with the ranks it holds for.
	NoTransfers []RanksReason
	// Width is the text output's width in display columns (the terminal's); 0 is no
	// limit. Other formats ignore it.
	Width int
}

// ranksNoun names ranks for a sentence: "rank 3", "ranks 0-7".
func ranksNoun(ranks []int) string {
	if len(ranks) == 1 {
		return "rank " + ranklist.Format(ranks)
	}
	return "ranks " + ranklist.Format(ranks)
}

// RanksReason is a reason and the ranks it holds for.
type RanksReason struct {
	Reason string
	Ranks  []int
}

// writeCalibrationText writes the calibrated links and the back-test.
func writeCalibrationText(w io.Writer, d CalibrationDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := newPrinter(w, d.Width)
	fits := d.Links
	if len(fits) == 0 {
		p.printf("No HCCL transfers to calibrate on: the fit needs the HCCL task rows of a timeline, or the profiler's per-op Size Distribution (communication.json, analysis.db).\n")
		for _, r := range d.NoTransfers {
			p.printf("  %s: %s\n", ranksNoun(r.Ranks), r.Reason)
		}
		return p.done()
	}
	p.printf("Calibrated links (a transfer of n bytes takes α + n/BW, and n/Γ more when it reduces; fitted on the run's own transfers)\n")
	t := newTextTable(col("Transport"), col("α µs"), column{name: "± µs", label: "α ± µs", drop: 3}, col("BW GB/s"),
		column{name: "± GB/s", label: "BW ± GB/s", drop: 4}, column{name: "Γ GB/s", drop: 6}, column{name: "± GB/s", label: "Γ ± GB/s", drop: 5}, column{name: "Points", drop: 1}, column{name: "Range", drop: 7},
		column{name: "Transfers (reduce)", short: "Transfers\n(reduce)", drop: 2}, column{name: "Back-test error", short: "Back-test\nerror"},
		column{name: "Confidence", short: "Confi-\ndence"})
	for _, f := range fits {
		k := knownFit(f)
		gamma := "–"
		if f.GammaFitted {
			gamma = "no cost"
			if f.GammaGBps > 0 {
				gamma = fmt.Sprintf("%.2f", f.GammaGBps)
			}
		}
		t.Append(f.Transport, cellOrDash(k.alpha), cellOrDash(k.alphaSE), cellOrDash(k.bw), cellOrDash(k.bwSE), gamma, cellOrDash(k.gammaSE), fmt.Sprint(f.Points),
			units.FormatBytes(f.MinBytes)+"–"+units.FormatBytes(f.MaxBytes), fmt.Sprintf("%d (%d)", f.Transfers, f.ReduceTransfers), pctOrDash(k.mape), f.Confidence)
	}
	p.table(t)
	for _, f := range fits {
		if f.Note != "" {
			p.printf("  %s: %s\n", f.Transport, f.Note)
		}
	}
	if len(d.BackTest) > 0 {
		p.printf("\nBack-test per op type (each op priced with these links and HCCL's algorithm for its group, against its time once every rank arrived)\n")
		t := newTextTable(column{name: "Op", cut: true}, col("Ops"), column{name: "Groups", drop: 2}, column{name: "Sizes", drop: 3}, col("MAPE"),
			column{name: "P90 error", short: "P90\nerror", drop: 4}, column{name: "Measured / predicted", short: "Measured /\npredicted"},
			column{name: "Not priced", short: "Not\npriced", drop: 1})
		for _, b := range d.BackTest {
			k := knownBackTest(b)
			t.Append(b.Op, fmt.Sprint(b.Ops), fmt.Sprint(b.Groups), fmt.Sprint(b.Sizes), pctOrDash(k.mape), pctOrDash(k.p90),
				cellOrDash(k.ratio), fmt.Sprint(b.Skipped))
		}
		p.table(t)
		for _, b := range d.BackTest {
			if b.Note != "" {
				p.printf("  %s: %s\n", b.Op, b.Note)
			}
		}
	}
	return p.done()
}

// cellOrDash is a figure to two places, "–" when unknown.
func cellOrDash(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *v)
}

// pctOrDash is a share as a percentage, "–" when unknown.
func pctOrDash(v *float64) string {
	if v == nil {
		return "–"
	}
	return pct(*v)
}

// knownOpBackTest is an op type's back-test figures, nil when no instance was priced.
type knownOpBackTest struct {
	mape, p90, ratio *float64
}

func knownBackTest(b costmodel.OpBackTest) knownOpBackTest {
	priced := b.Ops > 0
	return knownOpBackTest{mape: figure(b.MAPE, priced), p90: figure(b.P90, priced), ratio: figure(b.MedianRatio, priced)}
}

// knownLinkFit is a link fit's figures, nil where the fit does not give them: α and
// the back-test without a fit (confidence none: one size, or sizes that cannot
// separate latency from bandwidth), the bandwidth without any, a standard error
// without residual degrees of freedom or for a parameter held at 0.
type knownLinkFit struct {
	alpha, alphaSE, bw, bwSE, gammaSE, mape *float64
}

func knownFit(f costmodel.LinkFit) knownLinkFit {
	fitted := f.Confidence != "none"
	return knownLinkFit{alpha: figure(f.AlphaUs, fitted), alphaSE: figure(f.AlphaSEUs, true), bw: figure(f.BWGBps, f.BWGBps > 0),
		bwSE: figure(f.BWSEGBps, true), gammaSE: figure(f.GammaSEGBps, f.GammaFitted && f.GammaGBps > 0), mape: figure(f.MAPE, fitted)}
}

type jsonLinkFit struct {
	Transport string   `json:"transport"`
	AlphaUs   *float64 `json:"alpha_us"`          // null without a fit (confidence none)
	AlphaSEUs *float64 `json:"alpha_se_us"`       // null when the data cannot give it
	BWGBps    *float64 `json:"bandwidth_gbps"`    // null without any
	BWSEGBps  *float64 `json:"bandwidth_se_gbps"` // null when the data cannot give it
	// GammaGBps is the reduction's rate; null when γ was not fitted (no reducing
	// transfers beside copies), 0 when fitted and not measurable.
	GammaGBps       *float64 `json:"gamma_gbps"`
	GammaSEGBps     *float64 `json:"gamma_se_gbps"` // null unless γ was measured
	ReduceTransfers int      `json:"reduce_transfers"`
	Points          int      `json:"points"`
	// SizeDistributionPoints of the points are the profiler's per-size means (ranks
	// without HCCL task rows), copies and reductions together.
	SizeDistributionPoints int      `json:"size_distribution_points"`
	MinBytes               int64    `json:"min_bytes"`
	MaxBytes               int64    `json:"max_bytes"`
	Transfers              int      `json:"transfers"`
	MAPE                   *float64 `json:"backtest_mape"` // null without a fit
	Confidence             string   `json:"confidence"`
	Note                   string   `json:"note"`
}

type jsonOpBackTest struct {
	Op          string   `json:"op"`
	Ops         int      `json:"ops"`
	Groups      int      `json:"groups"`
	Sizes       int      `json:"sizes"`
	MAPE        *float64 `json:"mape"` // these three are null when no instance was priced
	P90         *float64 `json:"p90_error"`
	MedianRatio *float64 `json:"median_measured_over_predicted"`
	Skipped     int      `json:"not_priced"`
	Note        string   `json:"note"`
}

// writeCalibrationJSON writes the calibration as JSON: {"links": [...],
// "op_backtest": [...]}.
func writeCalibrationJSON(w io.Writer, d CalibrationDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	type noTransfers struct {
		Reason string `json:"reason"`
		Ranks  []int  `json:"ranks"`
	}
	out := struct {
		SchemaVersion int              `json:"schema_version"`
		Links         []jsonLinkFit    `json:"links"`
		BackTest      []jsonOpBackTest `json:"op_backtest"`
		NoTransfers   []noTransfers    `json:"no_transfers"` // why there is no link, by rank
	}{SchemaVersion, []jsonLinkFit{}, []jsonOpBackTest{}, []noTransfers{}}
	for _, r := range d.NoTransfers {
		out.NoTransfers = append(out.NoTransfers, noTransfers{Reason: r.Reason, Ranks: r.Ranks})
	}
	for _, b := range d.BackTest {
		k := knownBackTest(b)
		out.BackTest = append(out.BackTest, jsonOpBackTest{Op: b.Op, Ops: b.Ops, Groups: b.Groups, Sizes: b.Sizes, MAPE: roundedPtr(k.mape, 4),
			P90: roundedPtr(k.p90, 4), MedianRatio: roundedPtr(k.ratio, 4), Skipped: b.Skipped, Note: b.Note})
	}
	for _, f := range d.Links {
		k := knownFit(f)
		out.Links = append(out.Links, jsonLinkFit{Transport: f.Transport, AlphaUs: roundedPtr(k.alpha, 3), AlphaSEUs: roundedPtr(k.alphaSE, 3),
			BWGBps: roundedPtr(k.bw, 4), BWSEGBps: roundedPtr(k.bwSE, 4), Points: f.Points, SizeDistributionPoints: f.SizeDistributionPoints, MinBytes: f.MinBytes, MaxBytes: f.MaxBytes,
			Transfers: f.Transfers, MAPE: roundedPtr(k.mape, 4), Confidence: f.Confidence, Note: f.Note,
			GammaSEGBps: roundedPtr(k.gammaSE, 4), ReduceTransfers: f.ReduceTransfers})
		if f.GammaFitted {
			g := round(f.GammaGBps, 4)
			out.Links[len(out.Links)-1].GammaGBps = &g
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return namedJSONError(out, enc.Encode(out))
}

// WhatIfDoc is the output of hcclprof whatif.
type WhatIfDoc struct {
	Bucketing  *costmodel.Bucketing
	Prediction costmodel.Prediction
	// Width is the text output's width in display columns (the terminal's); 0 is no
	// limit. Other formats ignore it.
	Width int
}

// writeWhatIfText writes a what-if for people.
func writeWhatIfText(w io.Writer, d WhatIfDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := newPrinter(w, d.Width)
	b, pr := d.Bucketing, d.Prediction
	p.printf("Measured: step %.3f ms, exposed communication %.3f ms (%.1f%%); %d gradient buckets of %s in all, each round α %.1f µs + n/%.2f GB/s (fitted), overlap window %.3f ms\n",
		b.StepUs/1e3, b.ExposedUs/1e3, 100*b.ExposedUs/b.StepUs, len(b.Buckets), units.FormatBytes(b.GradientBytes),
		b.AlphaUs, 1e-3/b.BetaUsPerB, b.WindowUs/1e3)
	t := b.Topology
	level1 := costmodel.HCCLAlgoName(t.Level1) + " (" + t.Level1Source + ")"
	if t.NCCL {
		level1 = "n/a (an NCCL run)"
	}
	p.printf("Gradient group: %d server(s) × %d devices, level 1 %s; links: intra %s (%s), inter %s (%s); buckets launched over %.0f%% of the backward pass (estimated %.1f ms); optimizer %.3f ms\n",
		t.Servers, t.RanksPerServer, level1,
		linkText(t.Intra), t.IntraSource, linkText(t.Inter), t.InterSource, 100*b.OverlapFraction(), b.BackwardUs()/1e3, b.TailUs/1e3)
	p.printf("With %s = %s: step %.3f ms (%.3f–%.3f), exposed %.3f ms, comm_share %.1f%% (confidence %s)\n",
		pr.Knob, pr.Value, pr.StepTimeUs/1e3, pr.Low/1e3, pr.High/1e3, pr.ExposedUs/1e3, 100*pr.CommShare, pr.Confidence)
	for _, a := range pr.Assumptions {
		p.printf("  assumes: %s\n", a)
	}
	for _, n := range b.Notes {
		p.printf("  note: %s\n", n)
	}
	return p.done()
}

// writeWhatIfJSON writes a what-if as JSON.
func writeWhatIfJSON(w io.Writer, d WhatIfDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	b, pr := d.Bucketing, d.Prediction
	level1, level1Source := level1JSON(b.Topology)
	out := map[string]any{
		"schema_version": SchemaVersion,
		"measured": map[string]any{"step_time_us": round(b.StepUs, 3), "exposed_us": round(b.ExposedUs, 3),
			"comm_share": share(b.ExposedUs / b.StepUs), "buckets": len(b.Buckets), "gradient_bytes": b.GradientBytes,
			"alpha_us": round(b.AlphaUs, 3), "bandwidth_gbps": round(1e-3/b.BetaUsPerB, 4), "window_us": round(b.WindowUs, 3),
			"window_is_lower_bound": b.WindowBound, "overlap_fraction": round(b.OverlapFraction(), 4),
			"backward_us": round(b.BackwardUs(), 3), "optimizer_us": round(b.TailUs, 3),
			"spread_first_us": roundedPtr(figure(b.SpreadUs, b.SpreadKnown), 3), "spread_last_us": round(b.SpreadLastUs, 3),
			"topology": map[string]any{"servers": b.Topology.Servers, "ranks_per_server": b.Topology.RanksPerServer,
				"level1": level1, "level1_source": level1Source,
				"intra": linkJSON(b.Topology.Intra, b.Topology.IntraSource), "inter": linkJSON(b.Topology.Inter, b.Topology.InterSource)}},
		"set": map[string]any{"knob": pr.Knob, "value": pr.Value},
		"predicted": map[string]any{"step_time_us": round(pr.StepTimeUs, 3), "comm_share": share(pr.CommShare),
			"low": round(pr.Low, 3), "high": round(pr.High, 3), "exposed_us": round(pr.ExposedUs, 3)},
		"confidence":  pr.Confidence,
		"assumptions": nonNil(pr.Assumptions),
		"notes":       nonNil(b.Notes),
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return namedJSONError(out, enc.Encode(out))
}

// linkText is a link's figures, "unknown" when it has none (no bandwidth: the model
// cannot price that level).
func linkText(l costmodel.Link) string {
	if l.BWGBps <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("α %.1f µs, %.2f GB/s", l.AlphaUs, l.BWGBps)
}

// linkJSON is a link with its source; its figures are null when it has none.
func linkJSON(l costmodel.Link, source string) map[string]any {
	known := l.BWGBps > 0
	return map[string]any{"alpha_us": roundedPtr(figure(l.AlphaUs, known), 3), "bandwidth_gbps": roundedPtr(figure(l.BWGBps, known), 4), "source": source}
}

// level1JSON is the topology's level-1 algorithm and its source; null for an NCCL
// run, to which HCCL's algorithms do not apply.
func level1JSON(t costmodel.Topology) (*string, string) {
	if t.NCCL {
		return nil, "n/a (an NCCL run)"
	}
	name := costmodel.HCCLAlgoName(t.Level1)
	return &name, t.Level1Source
}
