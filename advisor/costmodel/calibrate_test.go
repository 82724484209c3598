package costmodel_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/internal/testkit"
	"github.com/hcclprof/hcclprof/parser"
)

func fitsOf(t *testing.T, dir string) map[string]costmodel.LinkFit {
	t.Helper()
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	return fitsOfResult(t, analysis.Analyze(c, analysis.Options{}))
}

func fitsOfResult(t *testing.T, res *analysis.Result) map[string]costmodel.LinkFit {
	t.Helper()
	out := map[string]costmodel.LinkFit{}
	for _, f := range costmodel.Calibrate(res.Communication.TransferSamples) {
		t.Logf("%s: α %.2f µs ± %.2f, %.2f GB/s ± %.2f, γ %.2f GB/s ± %.2f, %d sizes %d..%d B, %d transfers, MAPE %.3f, %s %s",
			f.Transport, f.AlphaUs, f.AlphaSEUs, f.BWGBps, f.BWSEGBps, f.GammaGBps, f.GammaSEGBps, f.Points, f.MinBytes, f.MaxBytes, f.Transfers, f.MAPE, f.Confidence, f.Note)
		out[f.Transport] = f
	}
	return out
}

// TestCalibrationRecoversGeneratorLinks: on generated clusters whose transfers span
// several sizes, the fitted α and bandwidth of each link level are the scenario's
// within 10%.
func TestCalibrationRecoversGeneratorLinks(t *testing.T) {
	sc := testkit.Builtin(t, "small-buckets-32rank")
	sc.Steps = 2
	fits := fitsOfResult(t, testkit.Analyse(t, sc, render.FormatText).Result)
	t.Logf("scenario: intra %+v, inter %+v", sc.Links.Intra, sc.Links.Inter)
	for transport, want := range map[string]scenario.Link{"HCCS": sc.Links.Intra, "RDMA": sc.Links.Inter} {
		f, ok := fits[transport]
		require.True(t, ok, transport)
		assert.InDelta(t, want.BandwidthGBps, f.BWGBps, 0.1*want.BandwidthGBps, "%s bandwidth", transport)
		assert.InDelta(t, want.LatencyUs, f.AlphaUs, 0.1*want.LatencyUs, "%s α", transport)
	}
	// The generator's Reduce_Inline transfers cost what its copies do: no γ.
	assert.True(t, fits["HCCS"].GammaFitted)
	assert.Zero(t, fits["HCCS"].GammaGBps)
	assert.Contains(t, fits["HCCS"].Note, "γ = 0")
}

// TestCalibrationFitsGamma: copies and reductions of known α, β and γ, with and
// without noise, give them back; reductions alone fold γ into β and say so.
func TestCalibrationFitsGamma(t *testing.T) {
	const alphaUs, bwGBps, gammaGBps = 10.0, 20.0, 50.0
	samples := func(noise float64, copies bool) []analysis.TransferSample {
		var out []analysis.TransferSample
		for i, mib := range []int64{1, 2, 4, 8, 16} {
			n := mib << 20
			wobble := 1 + noise*float64(i%2*2-1)
			copyUs := alphaUs + float64(n)/(bwGBps*1e3)
			if copies {
				out = append(out, analysis.TransferSample{Transport: "HCCS", SizeBytes: n, MedianNs: copyUs * 1e3 * wobble, Count: 10})
			}
			out = append(out, analysis.TransferSample{Transport: "HCCS", SizeBytes: n, Reduce: true,
				MedianNs: (copyUs + float64(n)/(gammaGBps*1e3)) * 1e3 / wobble, Count: 10})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		noise     float64
		tolerance float64
	}{{"exact", 0, 1e-6}, {"2% noise", 0.02, 0.15}} {
		t.Run(tc.name, func(t *testing.T) {
			fits := costmodel.Calibrate(samples(tc.noise, true))
			require.Len(t, fits, 1)
			f := fits[0]
			assert.True(t, f.GammaFitted)
			assert.InEpsilon(t, bwGBps, f.BWGBps, tc.tolerance)
			assert.InEpsilon(t, gammaGBps, f.GammaGBps, tc.tolerance)
			assert.InDelta(t, alphaUs, f.AlphaUs, tc.tolerance*alphaUs*3)
			assert.Equal(t, 50, f.ReduceTransfers)
			if tc.noise > 0 {
				assert.Positive(t, f.GammaSEGBps)
			}
		})
	}
	f := costmodel.Calibrate(samples(0, false))[0]
	assert.False(t, f.GammaFitted)
	assert.InEpsilon(t, 1/(1/bwGBps+1/gammaGBps), f.BWGBps, 1e-6, "β absorbs γ")
	assert.Contains(t, f.Note, "only reducing transfers")
}

// TestCalibrationOnRealData runs on imagenet-2rank-level1 and states its back-test.
func TestCalibrationOnRealData(t *testing.T) {
	fits := fitsOf(t, realdata.Path(t, "imagenet-2rank-level1"))
	f, ok := fits["HCCS"]
	require.True(t, ok)
	assert.Greater(t, f.Points, 1)
	assert.Positive(t, f.BWGBps)
	// 36 Reduce_Inline beside 36 Memcpy per rank: γ is measurable there.
	assert.True(t, f.GammaFitted)
	assert.Positive(t, f.GammaGBps)
	assert.Equal(t, "low", f.Confidence, "a 22%% back-test error is not a precise fit")
}

// BenchmarkCalibrate fits the links and the gradient synchronisation of the bundled
// sample's analysis.
func BenchmarkCalibrate(b *testing.B) {
	c, err := parser.LoadCluster([]string{"../../fixtures/samples/demo-2server-8rank"}, parser.LoadOptions{})
	if err != nil {
		b.Skip("bundled sample absent")
	}
	res := analysis.Analyze(c, analysis.Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(costmodel.Calibrate(res.Communication.TransferSamples)) == 0 {
			b.Fatal("no fit")
		}
		if _, err := costmodel.FitBucketing(res, 1, 200<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWhatIfAndBackTest prices a plan of every structural knob and back-tests
// every op of the bundled sample.
func BenchmarkWhatIfAndBackTest(b *testing.B) {
	c, err := parser.LoadCluster([]string{"../../fixtures/samples/demo-2server-8rank"}, parser.LoadOptions{})
	if err != nil {
		b.Skip("bundled sample absent")
	}
	res := analysis.Analyze(c, analysis.Options{})
	bk, err := costmodel.FitBucketing(res, 1, 200<<20)
	if err != nil {
		b.Fatal(err)
	}
	plan := []costmodel.Setting{{Knob: "bucket", Value: 64 << 20}, {Knob: "overlap", Value: 0.9}, {Knob: "algo", Algo: "pipeline"}, {Knob: "dp", Value: 16}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := bk.WhatIfPlan(plan); err != nil {
			b.Fatal(err)
		}
		if len(costmodel.BackTest(res, 200<<20)) == 0 {
			b.Fatal("no back-test")
		}
	}
}

// TestBackTestPerOpType prices every op with the calibrated links and HCCL's
// two-level AllReduce and compares it with the op's time once all ranks arrived.
func TestBackTestPerOpType(t *testing.T) {
	res, _ := baseRun(t, "small-buckets-32rank", func(sc *scenario.Scenario) { sc.Steps = min(sc.Steps, 3) })
	bt := costmodel.BackTest(res, 200<<20)
	require.Len(t, bt, 1)
	ar := bt[0]
	t.Logf("%+v", ar)
	assert.Equal(t, "allreduce", ar.Op)
	assert.Positive(t, ar.Ops)
	assert.Less(t, ar.MAPE, 0.2, "the generator's AllReduce is the two-level one the model prices")
	assert.Greater(t, ar.MedianRatio, 0.8)
}

// TestBackTestOnRealData states the real run's error (in the note): its AllReduces
// mostly wait for two ranks that were not profiled.
func TestBackTestOnRealData(t *testing.T) {
	c, err := parser.LoadCluster([]string{realdata.Path(t, "imagenet-2rank-level1")}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	bt := costmodel.BackTest(res, 200<<20)
	require.NotEmpty(t, bt)
	for _, b := range bt {
		t.Logf("%+v", b)
	}
	assert.Equal(t, "allreduce", bt[0].Op)
	assert.Positive(t, bt[0].Ops)
	assert.Greater(t, bt[0].MAPE, 0.2, "their time is waiting the model does not price")
	assert.NotEmpty(t, bt[0].Note)
}

// TestCalibrationStandardErrorsUnknownWithoutResiduals: a standard error needs a
// residual degree of freedom. Two sizes fit α and β exactly: their errors are unknown
// (NaN), not 0, which reads as a perfect fit. A third size gives them; one size fits
// nothing (α and the errors unknown, the bandwidth an upper bound).
func TestCalibrationStandardErrorsUnknownWithoutResiduals(t *testing.T) {
	sample := func(size int64) analysis.TransferSample {
		return analysis.TransferSample{Transport: "HCCS", SizeBytes: size, MedianNs: 10_000 + float64(size)/18.3, Count: 4, Ranks: 2}
	}
	fit := func(sizes ...int64) costmodel.LinkFit {
		var s []analysis.TransferSample
		for _, n := range sizes {
			s = append(s, sample(n))
		}
		fits := costmodel.Calibrate(s)
		require.Len(t, fits, 1)
		return fits[0]
	}
	two := fit(1<<20, 16<<20)
	assert.InDelta(t, 10, two.AlphaUs, 1e-6)
	assert.InDelta(t, 18.3, two.BWGBps, 1e-6)
	assert.True(t, math.IsNaN(two.AlphaSEUs), "two points, two parameters: %v", two.AlphaSEUs)
	assert.True(t, math.IsNaN(two.BWSEGBps))
	assert.True(t, math.IsNaN(two.GammaSEGBps), "γ was not fitted")

	three := fit(1<<20, 4<<20, 16<<20)
	assert.InDelta(t, 0, three.AlphaSEUs, 1e-6, "one residual degree of freedom, an exact line: a known 0")
	assert.False(t, math.IsNaN(three.BWSEGBps))

	one := fit(8 << 20)
	assert.Equal(t, "none", one.Confidence)
	assert.True(t, math.IsNaN(one.AlphaSEUs))
	assert.True(t, math.IsNaN(one.BWSEGBps))
}
