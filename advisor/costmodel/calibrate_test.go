package costmodel_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/internal/stats"
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

// TestCalibrationFromSizeDistributionRecoversGeneratorLinks: the same cluster
// written without device timelines calibrates on the profiler's Size Distribution
// and still finds each level's α and bandwidth within 10% (the generator's
// reductions cost what its copies do, so the bins' mix does not bias them).
func TestCalibrationFromSizeDistributionRecoversGeneratorLinks(t *testing.T) {
	sc := testkit.Builtin(t, "small-buckets-32rank")
	sc.Steps = 2
	sc.Omit = []string{scenario.OmitTrace}
	res := testkit.Analyse(t, sc, render.FormatText).Result
	require.NotEmpty(t, res.Communication.TransferSamples)
	for _, s := range res.Communication.TransferSamples {
		require.True(t, s.FromSizeDistribution, "%+v", s)
	}
	fits := fitsOfResult(t, res)
	for transport, want := range map[string]scenario.Link{"HCCS": sc.Links.Intra, "RDMA": sc.Links.Inter} {
		f, ok := fits[transport]
		require.True(t, ok, transport)
		assert.Equal(t, f.Points, f.SizeDistributionPoints, transport)
		assert.InDelta(t, want.BandwidthGBps, f.BWGBps, 0.1*want.BandwidthGBps, "%s bandwidth", transport)
		assert.InDelta(t, want.LatencyUs, f.AlphaUs, 0.1*want.LatencyUs, "%s α", transport)
	}
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

// TestBackTestSaysWhenNothingIsPriced: imagenet's Level0 ops (kernel_details.csv)
// have no size. Each of the 4 AllReduces is counted as not priced, with the reason,
// and the error figures are unknown (NaN), not a 0% error on nothing.
func TestBackTestSaysWhenNothingIsPriced(t *testing.T) {
	c, err := parser.LoadCluster([]string{realdata.Path(t, "imagenet-2rank-level0")}, parser.LoadOptions{})
	require.NoError(t, err)
	bt := costmodel.BackTest(analysis.Analyze(c, analysis.Options{}), 200<<20)
	require.Len(t, bt, 1)
	ar := bt[0]
	assert.Equal(t, "allreduce", ar.Op)
	assert.Zero(t, ar.Ops)
	assert.Equal(t, 4, ar.Skipped, "one per op instance, not per rank")
	assert.True(t, math.IsNaN(ar.MAPE) && math.IsNaN(ar.P90) && math.IsNaN(ar.MedianRatio), "%+v", ar)
	assert.Contains(t, ar.Note, "not priced: the op's size is unknown")
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

// withoutTrace copies a real dataset's rank directories without their
// trace_view.json, as users keep a run whose timeline was too big to keep.
func withoutTrace(t *testing.T, dataset string, ranks ...string) string {
	t.Helper()
	src := realdata.Path(t, dataset)
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	for _, r := range ranks {
		out := filepath.Join(dst, r, "ASCEND_PROFILER_OUTPUT")
		require.NoError(t, os.Chmod(out, 0o755))
		require.NoError(t, os.Remove(filepath.Join(out, "trace_view.json")))
	}
	return dst
}

// commJSONBins reads every Size Distribution bin of a run's communication.json files
// with a plain decoder: per transport and size in bytes, each op's (count, mean ns)
// per rank directory.
func commJSONBins(t *testing.T, dir string) map[string]map[int64]map[string][]stats.Counted {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "ASCEND_PROFILER_OUTPUT", "communication.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]map[int64]map[string][]stats.Counted{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc map[string]map[string]map[string]struct {
			Bandwidth map[string]struct {
				Dist map[string][2]float64 `json:"Size Distribution"`
			} `json:"Communication Bandwidth Info"`
		}
		require.NoError(t, json.Unmarshal(b, &doc))
		for _, kinds := range doc {
			for _, ops := range kinds {
				for name, op := range ops {
					if name == "Total Op Info" { // the sum of the ops above it
						continue
					}
					for transport, bw := range op.Bandwidth {
						for sizeMB, bin := range bw.Dist {
							mb, err := strconv.ParseFloat(sizeMB, 64)
							require.NoError(t, err)
							size := int64(math.Round(mb * 1e6))
							if out[transport] == nil {
								out[transport] = map[int64]map[string][]stats.Counted{}
							}
							if out[transport][size] == nil {
								out[transport][size] = map[string][]stats.Counted{}
							}
							out[transport][size][f] = append(out[transport][size][f], stats.Counted{Value: bin[1] * 1e6 / bin[0], Count: int64(bin[0])})
						}
					}
				}
			}
		}
	}
	return out
}

// TestCalibrationFromSizeDistributionOnRealData: imagenet-2rank-level1 without its
// traces calibrates on communication.json's Size Distribution. Each point is the
// median over ranks of each rank's median transfer time (every bin counted at its
// mean), recomputed here from the file; the bandwidth, copies and reductions
// together, lies between the copy and the reducing rate the HCCL tasks of the
// same run give.
func TestCalibrationFromSizeDistributionOnRealData(t *testing.T) {
	tasks := fitsOf(t, realdata.Path(t, "imagenet-2rank-level1"))["HCCS"]
	require.True(t, tasks.GammaFitted)
	require.Positive(t, tasks.GammaGBps)
	require.Zero(t, tasks.SizeDistributionPoints)

	dir := withoutTrace(t, "imagenet-2rank-level1", "rank0_ascend_pt", "rank1_ascend_pt")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	bins := commJSONBins(t, dir)
	require.NotEmpty(t, res.Communication.TransferSamples)
	for _, s := range res.Communication.TransferSamples {
		assert.True(t, s.FromSizeDistribution)
		assert.False(t, s.Reduce)
		byRank := bins[s.Transport][s.SizeBytes]
		require.NotEmpty(t, byRank, "%s %d B", s.Transport, s.SizeBytes)
		var medians []float64
		n := 0
		for _, ops := range byRank {
			medians = append(medians, stats.MedianCounted(ops))
			for _, b := range ops {
				n += int(b.Count)
			}
		}
		// hcclprof holds a bin's time in whole ns: its mean is off by at most 0.5 ns.
		assert.InDelta(t, stats.Median(medians), s.MedianNs, 0.5, "%s %d B", s.Transport, s.SizeBytes)
		assert.Equal(t, n, s.Count)
		assert.Equal(t, len(byRank), s.Ranks)
	}
	assert.Len(t, res.Communication.TransferSamples, 8, "the 8 HCCS packet sizes of the real file")

	bins0 := fitsOfResult(t, res)["HCCS"]
	assert.Equal(t, 8, bins0.SizeDistributionPoints)
	assert.Equal(t, bins0.Points, bins0.SizeDistributionPoints)
	assert.False(t, bins0.GammaFitted, "the bins cannot tell reductions from copies")
	assert.Zero(t, bins0.ReduceTransfers)
	reducing := 1 / (1/tasks.BWGBps + 1/tasks.GammaGBps)
	assert.Greater(t, bins0.BWGBps, reducing, "faster than a reducing transfer (%.2f GB/s)", reducing)
	assert.Less(t, bins0.BWGBps, tasks.BWGBps, "slower than a copy")
	assert.Contains(t, bins0.Note, "8 of 8 points are the profiler's Size Distribution")
}

// TestCalibrationOfMegatronWithoutTrace: the Megatron run kept no trace; its 11
// HCCS packet sizes, 4 B to 126 MB, give a bandwidth near what its large packets
// move at (18.7–20.9 GB/s by the file's own means, 8 MB and up).
func TestCalibrationOfMegatronWithoutTrace(t *testing.T) {
	fits := fitsOf(t, realdata.Path(t, "megatron-pp2dp2-2of4rank"))
	require.Len(t, fits, 1)
	f := fits["HCCS"]
	assert.Equal(t, 11, f.Points)
	assert.Equal(t, 11, f.SizeDistributionPoints)
	assert.Equal(t, int64(4), f.MinBytes)
	assert.Equal(t, int64(125_829_120), f.MaxBytes)
	assert.GreaterOrEqual(t, f.BWGBps, 18.6)
	assert.LessOrEqual(t, f.BWGBps, 20.9)
	assert.Equal(t, "low", f.Confidence)
}

// Issue 34, case 8: confidence is earned. Sizes between 40 B and 16 KiB on a link
// whose latency is 15 µs are all far below n½ (about 270 KB at 18 GB/s): the time is
// latency, the bandwidth barely measured, however well the line fits. Such a fit once
// read "325 ± 831 GB/s, confidence high"; the same sizes past n½ are high.
func TestCalibrationConfidenceIsEarned(t *testing.T) {
	link := func(sizes ...int64) []analysis.TransferSample {
		var out []analysis.TransferSample
		for i, n := range sizes {
			// 15 µs + n / 18 GB/s, with ±1% noise alternating, so the fit has residuals.
			ns := (15e3 + float64(n)/18) * (1 + 0.01*float64(1-2*(i%2)))
			out = append(out, analysis.TransferSample{Transport: "HCCS", SizeBytes: n, MedianNs: ns, Count: 10, Ranks: 2})
		}
		return out
	}
	small := costmodel.Calibrate(link(40, 1024, 4096, 16384))
	require.Len(t, small, 1)
	assert.Equal(t, "low", small[0].Confidence, "%+v", small[0])
	assert.Contains(t, small[0].Note, "below n½")
	large := costmodel.Calibrate(link(1<<20, 4<<20, 16<<20, 64<<20))
	require.Len(t, large, 1)
	assert.Equal(t, "high", large[0].Confidence, "%+v", large[0])
	assert.InDelta(t, 18, large[0].BWGBps, 0.5)
}
