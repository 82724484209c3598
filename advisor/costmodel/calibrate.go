package costmodel

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
)

// LinkFit is one transport's calibrated link: a transfer of n bytes takes
// α + n/BW, and a transfer that reduces into its destination (Reduce_Inline) n/Γ more,
// fitted on the run's own transfers (docs/costmodel.md §5).
type LinkFit struct {
	Transport string
	AlphaUs   float64
	BWGBps    float64
	// GammaGBps is the reduction's rate (0: no reducing transfers, or their cost does
	// not differ measurably from a copy's); GammaFitted says the data could show γ
	// (reducing transfers beside copies).
	GammaGBps   float64
	GammaFitted bool
	// AlphaSEUs, BWSEGBps and GammaSEGBps are standard errors from the fit's
	// residuals, NaN when the data cannot give them (no residual degree of freedom, a
	// parameter held at 0, one size, no fit).
	AlphaSEUs, BWSEGBps, GammaSEGBps float64
	Points                           int // distinct (size, reduce) points fitted
	// SizeDistributionPoints of them are the profiler's per-size means of ranks
	// without HCCL task rows (analysis.TransferSample.FromSizeDistribution).
	SizeDistributionPoints int
	Transfers              int     // transfers behind them
	ReduceTransfers        int     // of which reduce
	MinBytes, MaxBytes     int64   // the sizes' range: the model is not claimed outside it
	MAPE                   float64 // back-test: mean |predicted − measured| / measured over the points
	// Confidence is "high" (several sizes over a wide range, small error), "low"
	// (the fit exists but the data is thin or noisy: a hypothesis) or "none" (one
	// size: α and β cannot be told apart; BW is then bytes/time, an upper bound on
	// what the link does with latency included).
	Confidence string
	Note       string
}

// Link returns the fitted link for the cost model.
func (f LinkFit) Link() Link {
	return Link{AlphaUs: f.AlphaUs, BWGBps: f.BWGBps, GammaBWGBps: f.GammaGBps}
}

// calibrations and bucketings count the fits made, so a test can hold a run to one
// of each (RunFit).
var calibrations, bucketings atomic.Int64

// Calibrate fits α, β and (where reductions show) γ per transport from the cluster's
// typical transfer times (analysis.TransferSample: per size, the median over ranks).
// The fit is least squares of time against size, weighted by the number of
// transfers; a parameter the free fit makes negative is held at 0 and the rest refitted
// (non-negative least squares by elimination).
func Calibrate(samples []analysis.TransferSample) []LinkFit {
	calibrations.Add(1)
	by := map[string][]analysis.TransferSample{}
	for _, s := range samples {
		if s.SizeBytes > 0 && s.MedianNs > 0 {
			by[s.Transport] = append(by[s.Transport], s)
		}
	}
	out := make([]LinkFit, 0, len(by))
	for _, n := range slices.Sorted(maps.Keys(by)) {
		out = append(out, fitLink(n, by[n]))
	}
	return out
}

// fitLink fits one transport's points and says in the note where they came from when
// some are the profiler's Size Distribution.
func fitLink(transport string, pts []analysis.TransferSample) LinkFit {
	f := fitPoints(transport, pts)
	for _, p := range pts {
		if p.FromSizeDistribution {
			f.SizeDistributionPoints++
		}
	}
	if f.SizeDistributionPoints > 0 {
		f.Note = joinNotes(f.Note, fmt.Sprintf("%d of %d points are the profiler's Size Distribution (ranks without HCCL task rows), "+
			"each size's mean time with copies and reductions together: where the run reduces (AllReduce, ReduceScatter), "+
			"BW lies between a copy's rate and a reducing transfer's", f.SizeDistributionPoints, f.Points))
	}
	return f
}

// joinNotes joins two clauses of a note, either possibly empty.
func joinNotes(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

func fitPoints(transport string, pts []analysis.TransferSample) LinkFit {
	f := LinkFit{Transport: transport, Points: len(pts), MinBytes: math.MaxInt64,
		AlphaSEUs: math.NaN(), BWSEGBps: math.NaN(), GammaSEGBps: math.NaN()}
	sizes := map[int64]bool{}
	reduces, copies := 0, 0
	for _, p := range pts {
		f.Transfers += p.Count
		f.MinBytes, f.MaxBytes = min(f.MinBytes, p.SizeBytes), max(f.MaxBytes, p.SizeBytes)
		sizes[p.SizeBytes] = true
		if p.Reduce {
			f.ReduceTransfers += p.Count
			reduces++
		} else {
			copies++
		}
	}
	if len(sizes) == 1 && (reduces == 0 || copies == 0) {
		var t, w float64
		for _, p := range pts {
			t += float64(p.Count) * p.MedianNs
			w += float64(p.Count)
		}
		f.BWGBps = float64(f.MinBytes) / (t / w)
		f.Confidence = "none"
		f.Note = fmt.Sprintf("one transfer size (%s): α and β cannot be separated; %.2f GB/s includes the latency", units.FormatBytes(f.MinBytes), f.BWGBps)
		return f
	}
	x, y, w := fitRows(pts, f.Transfers)
	coef, se, ok := nonNegativeLS(x, y, w, []bool{true, true, reduces > 0 && copies > 0}, 1)
	if !ok {
		f.Confidence = "none"
		f.Note = "the sizes cannot separate latency from bandwidth"
		return f
	}
	alpha, beta, gamma := coef[0], coef[1], coef[2]
	if beta <= 0 {
		f.Confidence = "none"
		f.Note = "time does not grow with size: no bandwidth can be fitted"
		return f
	}
	f.AlphaUs, f.BWGBps = alpha, 1e-3/beta
	f.AlphaSEUs = se[0]
	f.BWSEGBps = 1e-3 / beta * se[1] / beta // δBW ≈ BW·δβ/β
	f.GammaFitted = reduces > 0 && copies > 0
	// A γ within two standard errors of 0, or adding under 1% at the largest size,
	// is not a measured cost.
	big := float64(f.MaxBytes)
	if gamma <= 2*zeroIfNaN(se[2]) || gamma*big < 0.01*(alpha+beta*big) {
		gamma = 0
	}
	if f.GammaFitted && gamma > 0 {
		f.GammaGBps = 1e-3 / gamma
		f.GammaSEGBps = 1e-3 / gamma * se[2] / gamma
	}
	f.MAPE = backTestError(pts, alpha, beta, gamma)
	f.grade(len(sizes), reduces, copies)
	return f
}

// fitRows are the fit's rows: columns 1 (α), n (β), n if reduce (γ); y in µs;
// weights: transfers (of the total), normalised to the number of points so that the
// residual variance is per point.
func fitRows(pts []analysis.TransferSample, transfers int) (x [][]float64, y, w []float64) {
	x = make([][]float64, len(pts))
	y = make([]float64, len(pts))
	w = make([]float64, len(pts))
	for i, p := range pts {
		n, reduce := float64(p.SizeBytes), 0.0
		if p.Reduce {
			reduce = n
		}
		x[i] = []float64{1, n, reduce}
		y[i] = p.MedianNs / 1e3
		w[i] = float64(p.Count) / float64(transfers) * float64(len(pts))
	}
	return x, y, w
}

// backTestError is the fitted line's mean absolute error on the points, relative
// to their time.
func backTestError(pts []analysis.TransferSample, alpha, beta, gamma float64) float64 {
	var ape float64
	for _, p := range pts {
		pred := alpha + beta*float64(p.SizeBytes)
		if p.Reduce {
			pred += gamma * float64(p.SizeBytes)
		}
		ape += math.Abs(pred-p.MedianNs/1e3) / (p.MedianNs / 1e3)
	}
	return ape / float64(len(pts))
}

// grade gives the fit its confidence and says why it is low, and what the data says
// of γ; nSizes is the number of sizes, reduces and copies the points of each kind.
func (f *LinkFit) grade(nSizes, reduces, copies int) {
	// High confidence is earned: enough sizes over a wide range, a small back-test
	// error, sizes that reach the bandwidth-bound range (the largest at least n½ = α·BW:
	// below it the time is mostly latency and the bandwidth is a guess), and a
	// bandwidth whose standard error is a small part of it (3 points between 40 B and
	// 16 KiB once gave 325 ± 831 GB/s, "high").
	nHalf := f.AlphaUs * f.BWGBps * 1e3
	precise := !math.IsNaN(f.BWSEGBps) && f.BWSEGBps <= 0.25*f.BWGBps
	switch {
	case nSizes >= 3 && float64(f.MaxBytes) >= 4*float64(f.MinBytes) && f.MAPE < 0.1 && float64(f.MaxBytes) >= nHalf && precise:
		f.Confidence = "high"
	default:
		f.Confidence = "low"
		f.Note = fmt.Sprintf("%d sizes from %s to %s, back-test error %.1f%%: treat the fit as a hypothesis",
			nSizes, units.FormatBytes(f.MinBytes), units.FormatBytes(f.MaxBytes), 100*f.MAPE)
		if float64(f.MaxBytes) < nHalf {
			f.Note += fmt.Sprintf("; every size is below n½ = %s, where latency dominates: the bandwidth is barely measured", units.FormatBytes(int64(nHalf)))
		}
		if !math.IsNaN(f.BWSEGBps) && !precise {
			f.Note += fmt.Sprintf("; bandwidth %.2f ± %.2f GB/s", f.BWGBps, f.BWSEGBps)
		}
	}
	gammaNote := ""
	switch {
	case reduces > 0 && copies == 0:
		gammaNote = "only reducing transfers: β includes the reduction (γ cannot be told apart)"
	case f.GammaFitted && f.GammaGBps == 0:
		gammaNote = "reducing transfers cost no more than copies: γ = 0"
	case f.GammaFitted && f.GammaSEGBps > 0.3*f.GammaGBps:
		gammaNote = fmt.Sprintf("γ (%.1f ± %.1f GB/s) is poorly determined", f.GammaGBps, f.GammaSEGBps)
	}
	f.Note = joinNotes(f.Note, gammaNote)
}

// zeroIfNaN is x, or 0 for an unknown (NaN) standard error where 0 is the caller's
// neutral value.
func zeroIfNaN(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// nonNegativeLS is wls with every parameter but column slope held non-negative: a
// parameter the fit makes negative is held at 0 and the rest refitted (non-negative
// least squares by elimination). The slope's sign is the caller's to judge.
func nonNegativeLS(x [][]float64, y, w []float64, free []bool, slope int) (coef, se []float64, ok bool) {
	free = append([]bool(nil), free...)
	for {
		if coef, se, ok = wls(x, y, w, free); !ok {
			return coef, se, false
		}
		neg := -1
		for j, c := range coef {
			if free[j] && c < 0 && j != slope {
				neg = j // the last: γ is held before α
			}
		}
		if neg < 0 {
			return coef, se, true
		}
		free[neg] = false
	}
}

// wls is weighted least squares of y on the free columns of x (the others held at
// 0): the coefficients, their standard errors (NaN for a column held at 0, and
// without residual degrees of freedom) and false when the free columns are not
// independent.
func wls(x [][]float64, y, w []float64, free []bool) (coef, se []float64, ok bool) {
	var idx []int
	for j, f := range free {
		if f {
			idx = append(idx, j)
		}
	}
	n, k := len(x), len(idx)
	coef, se = make([]float64, len(free)), make([]float64, len(free))
	for j := range se {
		se[j] = math.NaN()
	}
	if n < k || k == 0 {
		return coef, se, false
	}
	// Scale the columns to order 1 so the normal equations stay well conditioned.
	scale := make([]float64, k)
	for c, j := range idx {
		for _, row := range x {
			scale[c] = math.Max(scale[c], math.Abs(row[j]))
		}
		if scale[c] == 0 {
			return coef, se, false
		}
	}
	xtx := mat.NewSymDense(k, nil)
	xty := mat.NewVecDense(k, nil)
	for i, row := range x {
		for a := 0; a < k; a++ {
			xa := row[idx[a]] / scale[a]
			xty.SetVec(a, xty.AtVec(a)+w[i]*xa*y[i])
			for b := a; b < k; b++ {
				xtx.SetSym(a, b, xtx.At(a, b)+w[i]*xa*row[idx[b]]/scale[b])
			}
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(xtx) {
		return coef, se, false
	}
	var sol mat.VecDense
	if err := chol.SolveVecTo(&sol, xty); err != nil {
		return coef, se, false
	}
	var rss float64
	for i, row := range x {
		r := y[i]
		for a := 0; a < k; a++ {
			r -= sol.AtVec(a) * row[idx[a]] / scale[a]
		}
		rss += w[i] * r * r
	}
	var inv mat.SymDense
	invOK := chol.InverseTo(&inv) == nil
	for a, j := range idx {
		coef[j] = sol.AtVec(a) / scale[a]
		if dof := n - k; dof > 0 && invOK {
			se[j] = math.Sqrt(rss/float64(dof)*inv.At(a, a)) / scale[a]
		}
	}
	return coef, se, true
}
