package costmodel

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/internal/atomicfile"
	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/profile"
)

// A calibration from the cluster's own benchmark (hcclprof calibrate --bench): per
// (op, ranks), the times the benchmark measured, priced between them by
// interpolating log time against log size (a straight line between two sizes in
// the log-log plot: the α-β curve's shape between two points, and exact at the
// library's own switches where the sweep measured both sides), below the smallest
// size at the smallest's time (latency-bound), above the largest with the last
// two sizes' bandwidth. Each family's error is measured out of sample, leaving each
// size out and pricing it from the others; an estimate's interval is that error.

// calibrationVersion is the calibration file's format version.
const calibrationVersion = 1

// BenchCalibration is a cost model made from benchmark sweeps.
type BenchCalibration struct {
	Version  int           `json:"version"`
	Sources  []string      `json:"sources"`
	Families []BenchFamily `json:"families"`
}

// BenchFamily is one (op, ranks) sweep: its sizes ascending (the model's n) and the
// time of each (the median of repeats), with its leave-one-out error per band.
type BenchFamily struct {
	Op     string      `json:"op"`
	Ranks  int         `json:"ranks"`
	Bytes  []int64     `json:"bytes"`
	TimeUs []float64   `json:"time_us"`
	Error  []BandError `json:"error"`
	// AllP80Abs is the 80th percentile of the leave-one-out error over every size:
	// the interval where a band holds too few sizes to measure its own.
	AllP80Abs *float64 `json:"all_p80_abs"` // null with fewer than three sizes
}

// BandError is the out-of-sample relative error |predicted − measured| / measured
// in one size band.
type BandError struct {
	Band      string  `json:"band"`
	N         int     `json:"n"`
	MedianAbs float64 `json:"median_abs"`
	P80Abs    float64 `json:"p80_abs"`
	P90Abs    float64 `json:"p90_abs"`
}

// SizeBands are the size bands errors are reported in, by the model's n.
var SizeBands = []string{"<64KiB", "64KiB-1MiB", "1-64MiB", ">=64MiB"}

// sizeBand is the band of n bytes.
func sizeBand(n int64) string {
	switch {
	case n < 64<<10:
		return SizeBands[0]
	case n < 1<<20:
		return SizeBands[1]
	case n < 64<<20:
		return SizeBands[2]
	}
	return SizeBands[3]
}

// FitBench makes a calibration of benchmark points. Families with fewer than two
// sizes are kept (they price their one size) but have no error to report.
func FitBench(points []profile.BenchPoint, sources []string) (*BenchCalibration, error) {
	if len(points) == 0 {
		return nil, fmt.Errorf("no benchmark points")
	}
	type key struct {
		op    string
		ranks int
	}
	byKey := map[key]map[int64][]float64{}
	for _, p := range points {
		k := key{p.Op, p.Ranks}
		if byKey[k] == nil {
			byKey[k] = map[int64][]float64{}
		}
		byKey[k][p.Bytes] = append(byKey[k][p.Bytes], p.TimeUs)
	}
	cal := &BenchCalibration{Version: calibrationVersion, Sources: sources}
	for k, sizes := range byKey {
		f := BenchFamily{Op: k.op, Ranks: k.ranks}
		for _, n := range slices.Sorted(mapsKeys(sizes)) {
			ts := sizes[n]
			sort.Float64s(ts)
			f.Bytes = append(f.Bytes, n)
			f.TimeUs = append(f.TimeUs, stats.MedianSorted(ts))
		}
		f.Error, f.AllP80Abs = f.leaveOneOut()
		cal.Families = append(cal.Families, f)
	}
	sort.Slice(cal.Families, func(i, j int) bool {
		a, b := cal.Families[i], cal.Families[j]
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		return a.Ranks < b.Ranks
	})
	return cal, nil
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// price interpolates the family's knots at n bytes.
func interpolate(bytes []int64, times []float64, n int64) float64 {
	k := len(bytes)
	switch {
	case k == 0:
		return math.NaN()
	case k == 1:
		return times[0] // one size: its time is all there is
	case n <= bytes[0]:
		return times[0]
	case n >= bytes[k-1]:
		// Above the sweep: the last two sizes' bandwidth, or the last's average when
		// the time did not grow between them.
		dn, dt := float64(bytes[k-1]-bytes[k-2]), times[k-1]-times[k-2]
		perByte := times[k-1] / float64(bytes[k-1])
		if dt > 0 {
			perByte = dt / dn
		}
		return times[k-1] + float64(n-bytes[k-1])*perByte
	}
	i := sort.Search(k, func(i int) bool { return bytes[i] >= n })
	if bytes[i] == n {
		return times[i]
	}
	x := math.Log(float64(n))
	if logSlope(bytes, times, i) <= maxPathSlope {
		x0, y0 := math.Log(float64(bytes[i-1])), math.Log(times[i-1])
		return math.Exp(y0 + logSlope(bytes, times, i)*(x-x0))
	}
	// Time grows faster than the bytes between the two sizes: no one path (α + n/B
	// grows at most as fast) joins them; the library switched between them (HCCL's
	// vector-core path to its normal one, NCCL's protocols). Where is not known:
	// the nearer size's path, continued at its own slope.
	x0, x1 := math.Log(float64(bytes[i-1])), math.Log(float64(bytes[i]))
	if x-x0 <= x1-x {
		s := 0.0
		if i >= 2 {
			s = min(max(logSlope(bytes, times, i-1), 0), 1)
		}
		return times[i-1] * math.Exp(s*(x-x0))
	}
	s := 1.0
	if i+1 < k {
		s = min(max(logSlope(bytes, times, i+1), 0), 1)
	}
	return times[i] * math.Exp(s*(x-x1))
}

// maxPathSlope is the steepest log-log slope one path can have (α + n/B has at most
// 1), with room for a sweep's noise.
const maxPathSlope = 1.15

// logSlope is the slope of log time against log size between sizes i−1 and i.
func logSlope(bytes []int64, times []float64, i int) float64 {
	return (math.Log(times[i]) - math.Log(times[i-1])) / (math.Log(float64(bytes[i])) - math.Log(float64(bytes[i-1])))
}

// leaveOneOut prices each size from the others and reports the error per band.
func (f BenchFamily) leaveOneOut() ([]BandError, *float64) {
	if len(f.Bytes) < 3 {
		return nil, nil
	}
	errs := map[string][]float64{}
	var all []float64
	for i := range f.Bytes {
		b := slices.Delete(slices.Clone(f.Bytes), i, i+1)
		t := slices.Delete(slices.Clone(f.TimeUs), i, i+1)
		pred := interpolate(b, t, f.Bytes[i])
		band := sizeBand(f.Bytes[i])
		e := math.Abs(pred-f.TimeUs[i]) / f.TimeUs[i]
		errs[band] = append(errs[band], e)
		all = append(all, e)
	}
	sort.Float64s(all)
	p80 := stats.QuantileSorted(all, 0.8)
	return bandErrors(errs), &p80
}

// minBandSizes is the fewest sizes a band's own error is trusted on.
const minBandSizes = 5

// bandErrors summarises relative errors per band, in SizeBands order.
func bandErrors(errs map[string][]float64) []BandError {
	var out []BandError
	for _, band := range SizeBands {
		e := errs[band]
		if len(e) == 0 {
			continue
		}
		sort.Float64s(e)
		out = append(out, BandError{Band: band, N: len(e), MedianAbs: stats.MedianSorted(e),
			P80Abs: stats.QuantileSorted(e, 0.8), P90Abs: stats.QuantileSorted(e, 0.9)})
	}
	return out
}

// BenchEstimate is a calibrated op time with its interval.
type BenchEstimate struct {
	TimeUs, LowUs, HighUs float64
	// ErrorAbs is the relative error the interval spans (the band's 80th percentile
	// out of sample); Basis says what the estimate rests on.
	ErrorAbs float64
	Basis    string
}

// Family is the calibration's sweep of op on ranks ranks, nil when there is none.
func (c *BenchCalibration) Family(op string, ranks int) *BenchFamily {
	op = NormaliseOp(op)
	for i := range c.Families {
		if c.Families[i].Op == op && c.Families[i].Ranks == ranks {
			return &c.Families[i]
		}
	}
	return nil
}

// Price estimates op on ranks ranks at n bytes from the calibration, or says why it
// cannot.
func (c *BenchCalibration) Price(op string, ranks int, n int64) (BenchEstimate, error) {
	f := c.Family(op, ranks)
	if f == nil {
		var have []string
		for _, g := range c.Families {
			if g.Op == NormaliseOp(op) {
				have = append(have, fmt.Sprint(g.Ranks))
			}
		}
		if len(have) == 0 {
			return BenchEstimate{}, fmt.Errorf("the calibration has no %s sweep", NormaliseOp(op))
		}
		return BenchEstimate{}, fmt.Errorf("the calibration has no %s sweep on %d ranks (it has %s ranks)", NormaliseOp(op), ranks, strings.Join(have, ", "))
	}
	t := interpolate(f.Bytes, f.TimeUs, n)
	band := sizeBand(n)
	e, basis := math.NaN(), ""
	for _, be := range f.Error {
		if be.Band == band {
			e = be.P80Abs
			if be.N < minBandSizes && f.AllP80Abs != nil && *f.AllP80Abs > e {
				e = *f.AllP80Abs // too few sizes in the band: the sweep's error
			}
		}
	}
	lo, hi := f.Bytes[0], f.Bytes[len(f.Bytes)-1]
	switch {
	case n < lo:
		basis = fmt.Sprintf("below the sweep (%d B): its smallest size's time", lo)
	case n > hi:
		basis = fmt.Sprintf("above the sweep (%d B): extrapolated with its last two sizes' bandwidth", hi)
	default:
		basis = fmt.Sprintf("interpolated in a sweep of %d sizes (%d B to %d B)", len(f.Bytes), lo, hi)
	}
	if math.IsNaN(e) {
		// No error measured in this band of this family: the worst band's.
		for _, be := range f.Error {
			if math.IsNaN(e) || be.P80Abs > e {
				e = be.P80Abs
			}
		}
		if math.IsNaN(e) {
			e = 0.5 // too few sizes to measure an error: a wide interval
			basis += "; too few sizes to measure its error: ±50%"
		} else {
			basis += "; no size of the sweep in this band: the interval is its worst band's error"
		}
	}
	if n > hi && hi > 0 {
		// Extrapolating: the error grows with the distance beyond the sweep.
		e *= 1 + math.Log2(float64(n)/float64(hi))
	}
	return BenchEstimate{TimeUs: t, LowUs: t * max(0, 1-e), HighUs: t * (1 + e), ErrorAbs: e, Basis: basis}, nil
}

// WriteCalibration writes the calibration as JSON.
func (c *BenchCalibration) WriteFile(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// ReadCalibration reads a calibration file and checks it.
func ReadCalibration(path string) (*BenchCalibration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c BenchCalibration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Version != calibrationVersion {
		return nil, fmt.Errorf("%s: calibration version %d, this hcclprof reads %d", path, c.Version, calibrationVersion)
	}
	for i, f := range c.Families {
		if f.Ranks < 2 || len(f.Bytes) == 0 || len(f.Bytes) != len(f.TimeUs) {
			return nil, fmt.Errorf("%s: family %d (%s on %d ranks): want two or more ranks and one time per size", path, i, f.Op, f.Ranks)
		}
		for j := range f.Bytes {
			if f.Bytes[j] <= 0 || j > 0 && f.Bytes[j] <= f.Bytes[j-1] || !(f.TimeUs[j] > 0) || math.IsInf(f.TimeUs[j], 0) {
				return nil, fmt.Errorf("%s: family %d (%s on %d ranks), size %d: want ascending positive sizes and positive finite times", path, i, f.Op, f.Ranks, j)
			}
		}
	}
	return &c, nil
}

// BenchBacktestResult is a back-test of a calibration: per size band, the relative
// errors (predicted − measured) / measured of the points priced, and how many of
// them fell inside the estimate's interval.
type BenchBacktestResult struct {
	Errors map[string][]float64
	Inside map[string]int
	// HalfWidths are the intervals' relative half-widths (BenchEstimate.ErrorAbs).
	HalfWidths map[string][]float64
}

// benchBacktest fits on the points train keeps and prices the others: the test of
// the calibration's shape, and of its intervals, on sizes it did not see.
func benchBacktest(points []profile.BenchPoint, train func(i int, p profile.BenchPoint) bool) (BenchBacktestResult, error) {
	var fit, test []profile.BenchPoint
	for i, p := range points {
		if train(i, p) {
			fit = append(fit, p)
		} else {
			test = append(test, p)
		}
	}
	out := BenchBacktestResult{Errors: map[string][]float64{}, Inside: map[string]int{}, HalfWidths: map[string][]float64{}}
	cal, err := FitBench(fit, nil)
	if err != nil {
		return out, err
	}
	for _, p := range test {
		est, err := cal.Price(p.Op, p.Ranks, p.Bytes)
		if err != nil {
			continue
		}
		band := sizeBand(p.Bytes)
		out.Errors[band] = append(out.Errors[band], (est.TimeUs-p.TimeUs)/p.TimeUs)
		out.HalfWidths[band] = append(out.HalfWidths[band], est.ErrorAbs)
		if est.LowUs <= p.TimeUs && p.TimeUs <= est.HighUs {
			out.Inside[band]++
		}
	}
	return out, nil
}
