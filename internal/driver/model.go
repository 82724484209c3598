package driver

import (
	"errors"
	"fmt"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report"
)

// ModelFlags is model's flags.
type ModelFlags struct {
	Op, Algo, Size, Product, Format string
	Ranks, Servers, NPUs            int
	AlphaUs, BWGBps, GammaGBps      float64
	BuffsizeMB                      int
	Width                           int
	Deterministic, NoRDMALite       bool
	Expansion                       string // HCCL_OP_EXPANSION_MODE (A3)
	InterRoCE                       bool   // A3 servers joined by RoCE
	// Calibration is a file written by calibrate --bench: the op is priced from the
	// cluster's own benchmark.
	Calibration string
}

// Model is hcclprof model: one collective priced with the α-β-γ model, or on a
// product as HCCL would run it.
func Model(env Env, f ModelFlags) error {
	out, err := outputOf(cmdModel, f.Format)
	if err != nil {
		return err
	}
	width, err := textWidth(env, f.Width, false)
	if err != nil {
		return err
	}
	doc, err := f.price()
	if err != nil {
		return usageError(err)
	}
	doc.Width = width
	if err := doc.Write(env.Stdout, out.as); err != nil {
		return usageError(err)
	}
	return nil
}

// price is the model's answer: the op on the link given, or on the product.
func (f ModelFlags) price() (report.ModelDoc, error) {
	if f.Size == "" {
		return report.ModelDoc{}, errors.New("--size is required")
	}
	n, err := units.ParseSize(f.Size)
	if err != nil {
		return report.ModelDoc{}, err
	}
	buffer := int64(f.BuffsizeMB) << 20
	if f.Calibration != "" {
		return f.priceCalibrated(n)
	}
	if f.Product == "" {
		if f.Algo == "" || f.Ranks < 2 || f.BWGBps <= 0 {
			return report.ModelDoc{}, errors.New("give --algo, --ranks (≥ 2) and --bw-gbps (and --alpha-us), or --product and --servers")
		}
		c, err := costmodel.Model(f.Op, f.Algo, f.Ranks, n, costmodel.Link{AlphaUs: f.AlphaUs, BWGBps: f.BWGBps, GammaBWGBps: f.GammaGBps}, buffer)
		return report.ModelDoc{Cost: c}, err
	}
	hw, err := hardware.Lookup(f.Product)
	if err != nil {
		return report.ModelDoc{}, err
	}
	if f.Servers < 1 {
		return report.ModelDoc{}, errors.New("--servers is required with --product")
	}
	if (f.Expansion != "" || f.InterRoCE) && hw.Name != "A3" {
		return report.ModelDoc{}, fmt.Errorf("--expansion and --inter-roce are A3's (the product is %s)", hw.Name)
	}
	p, err := costmodel.PriceOnProduct(hw, costmodel.ProductQuery{Op: f.Op, Bytes: n, Servers: f.Servers, NPUsPerServer: f.NPUs,
		BufferBytes: buffer, GammaGBps: f.GammaGBps, Deterministic: f.Deterministic, RDMALite: !f.NoRDMALite,
		Expansion: f.Expansion, InterRoCE: f.InterRoCE})
	return report.ModelDoc{Product: p.Product, Servers: p.Servers, Choice: p.Choice, Cost: p.Cost, Notes: p.Notes}, err
}

// priceCalibrated prices the op from a benchmark calibration.
func (f ModelFlags) priceCalibrated(n int64) (report.ModelDoc, error) {
	if f.Algo != "" || f.AlphaUs != 0 || f.BWGBps != 0 || f.Product != "" {
		return report.ModelDoc{}, errors.New("--calibration prices the op from the cluster's own benchmark: give --op, --ranks and --size, not --algo, --alpha-us, --bw-gbps or --product")
	}
	if f.Ranks < 2 {
		return report.ModelDoc{}, errors.New("--calibration needs --ranks (≥ 2)")
	}
	cal, err := costmodel.ReadCalibration(f.Calibration)
	if err != nil {
		return report.ModelDoc{}, err
	}
	est, err := cal.Price(f.Op, f.Ranks, n)
	if err != nil {
		return report.ModelDoc{}, err
	}
	c := costmodel.Cost{Op: costmodel.NormaliseOp(f.Op), Algo: "as benchmarked", Ranks: f.Ranks, Bytes: n, TimeUs: est.TimeUs}
	if est.TimeUs > 0 {
		c.AlgBwGBps = float64(n) / est.TimeUs / 1e3
	}
	return report.ModelDoc{Cost: c, Calibrated: &est, Calibration: f.Calibration}, nil
}
