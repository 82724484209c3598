package costmodel

import (
	"fmt"
	"math"
	"sort"

	"github.com/hcclprof/hcclprof/analysis"
)

// LinkFit is one transport's calibrated link: a transfer of n bytes takes
// α + n/BW, fitted on the run's own transfers (costmodel.md §5).
type LinkFit struct {
	Transport string
	AlphaUs   float64
	BWGBps    float64
	// AlphaSEUs and BWSEGBps are standard errors from the fit's residuals (0 when
	// the data cannot give them).
	AlphaSEUs, BWSEGBps float64
	Points              int     // distinct sizes fitted
	Transfers           int     // transfers behind them
	MinBytes, MaxBytes  int64   // the sizes' range: the model is not claimed outside it
	MAPE                float64 // back-test: mean |predicted − measured| / measured over the sizes
	// Confidence is "high" (several sizes over a wide range, small error), "low"
	// (the fit exists but the data is thin or noisy: a hypothesis) or "none" (one
	// size: α and β cannot be told apart; BW is then bytes/time, an upper bound on
	// what the link does with latency included).
	Confidence string
	Note       string
}

// Link returns the fitted link for the cost model.
func (f LinkFit) Link() Link { return Link{AlphaUs: f.AlphaUs, BWGBps: f.BWGBps} }

// Calibrate fits α and β per transport from the cluster's typical transfer times
// (analysis.TransferSample: per size, the median over ranks). The fit is least
// squares of time against size, weighted by the number of transfers, with α held
// at 0 when the unconstrained intercept is negative (non-negative least squares).
func Calibrate(samples []analysis.TransferSample) []LinkFit {
	by := map[string][]analysis.TransferSample{}
	for _, s := range samples {
		if s.SizeBytes > 0 && s.MedianNs > 0 {
			by[s.Transport] = append(by[s.Transport], s)
		}
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]LinkFit, 0, len(names))
	for _, n := range names {
		out = append(out, fitLink(n, by[n]))
	}
	return out
}

func fitLink(transport string, pts []analysis.TransferSample) LinkFit {
	f := LinkFit{Transport: transport, Points: len(pts), MinBytes: math.MaxInt64}
	var sw, sx, sy float64
	for _, p := range pts {
		w := float64(p.Count)
		f.Transfers += p.Count
		f.MinBytes, f.MaxBytes = min(f.MinBytes, p.SizeBytes), max(f.MaxBytes, p.SizeBytes)
		sw += w
		sx += w * float64(p.SizeBytes)
		sy += w * p.MedianNs / 1e3
	}
	if len(pts) == 1 {
		p := pts[0]
		f.BWGBps = float64(p.SizeBytes) / p.MedianNs
		f.Confidence = "none"
		f.Note = fmt.Sprintf("one transfer size (%s): α and β cannot be separated; %.2f GB/s includes the latency", FormatBytes(p.SizeBytes), f.BWGBps)
		return f
	}
	mx, my := sx/sw, sy/sw
	var sxx, sxy float64
	for _, p := range pts {
		w := float64(p.Count)
		dx := float64(p.SizeBytes) - mx
		sxx += w * dx * dx
		sxy += w * dx * (p.MedianNs/1e3 - my)
	}
	beta := sxy / sxx // µs per byte
	alpha := my - beta*mx
	if alpha < 0 { // non-negative: refit through the origin
		var sxx0, sxy0 float64
		for _, p := range pts {
			w := float64(p.Count)
			sxx0 += w * float64(p.SizeBytes) * float64(p.SizeBytes)
			sxy0 += w * float64(p.SizeBytes) * p.MedianNs / 1e3
		}
		alpha, beta = 0, sxy0/sxx0
	}
	if beta <= 0 {
		f.Confidence = "none"
		f.Note = "time does not grow with size: no bandwidth can be fitted"
		return f
	}
	f.AlphaUs, f.BWGBps = alpha, 1e-3/beta
	// Residuals: weighted variance and the standard errors of the simple regression
	// (with the weights normalised to the number of sizes).
	var rss, ape float64
	for _, p := range pts {
		pred := alpha + beta*float64(p.SizeBytes)
		meas := p.MedianNs / 1e3
		rss += float64(p.Count) / sw * float64(len(pts)) * (meas - pred) * (meas - pred)
		ape += math.Abs(pred-meas) / meas
	}
	f.MAPE = ape / float64(len(pts))
	if dof := len(pts) - 2; dof > 0 {
		s2 := rss / float64(dof)
		sxxN := sxx / sw * float64(len(pts))
		seBeta := math.Sqrt(s2 / sxxN)
		seAlpha := math.Sqrt(s2 * (1/float64(len(pts)) + mx*mx/sxxN))
		f.AlphaSEUs = seAlpha
		f.BWSEGBps = 1e-3 / beta * seBeta / beta // δBW ≈ BW·δβ/β
	}
	switch {
	case len(pts) >= 3 && float64(f.MaxBytes) >= 4*float64(f.MinBytes) && f.MAPE < 0.1:
		f.Confidence = "high"
	default:
		f.Confidence = "low"
		f.Note = fmt.Sprintf("%d sizes from %s to %s, back-test error %.1f%%: treat the fit as a hypothesis",
			len(pts), FormatBytes(f.MinBytes), FormatBytes(f.MaxBytes), 100*f.MAPE)
	}
	return f
}
