package costmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
)

func fitsOf(t *testing.T, dir string) map[string]costmodel.LinkFit {
	t.Helper()
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	out := map[string]costmodel.LinkFit{}
	for _, f := range costmodel.Calibrate(res.Communication.TransferSamples) {
		t.Logf("%s: α %.2f µs ± %.2f, %.2f GB/s ± %.2f, %d sizes %d..%d B, %d transfers, MAPE %.3f, %s %s",
			f.Transport, f.AlphaUs, f.AlphaSEUs, f.BWGBps, f.BWSEGBps, f.Points, f.MinBytes, f.MaxBytes, f.Transfers, f.MAPE, f.Confidence, f.Note)
		out[f.Transport] = f
	}
	return out
}

// TestCalibrationRecoversGeneratorLinks: on generated clusters whose transfers span
// several sizes, the fitted α and bandwidth of each link level are the scenario's
// within 10%.
func TestCalibrationRecoversGeneratorLinks(t *testing.T) {
	sc, err := scenario.Builtin("small-buckets-32rank")
	require.NoError(t, err)
	sc.Steps = 2
	run, err := sim.Simulate(sc)
	require.NoError(t, err)
	dir := t.TempDir()
	_, _, err = render.WriteCluster(run, dir, render.Options{Format: render.FormatText})
	require.NoError(t, err)
	fits := fitsOf(t, dir)
	t.Logf("scenario: intra %+v, inter %+v", sc.Links.Intra, sc.Links.Inter)
	for transport, want := range map[string]scenario.Link{"HCCS": sc.Links.Intra, "RDMA": sc.Links.Inter} {
		f, ok := fits[transport]
		require.True(t, ok, transport)
		assert.InDelta(t, want.BandwidthGBps, f.BWGBps, 0.1*want.BandwidthGBps, "%s bandwidth", transport)
		assert.InDelta(t, want.LatencyUs, f.AlphaUs, 0.1*want.LatencyUs, "%s α", transport)
	}
}

// TestCalibrationOnRealData runs on imagenet-2rank-level1 and states its back-test.
func TestCalibrationOnRealData(t *testing.T) {
	fits := fitsOf(t, realdata.Path(t, "imagenet-2rank-level1"))
	f, ok := fits["HCCS"]
	require.True(t, ok)
	assert.Greater(t, f.Points, 1)
	assert.Positive(t, f.BWGBps)
}

// BenchmarkCalibrate fits the links and the gradient synchronisation of the bundled
// sample's analysis.
func BenchmarkCalibrate(b *testing.B) {
	c, err := parser.LoadCluster([]string{"../../fixtures/samples/demo-2node-8rank"}, parser.LoadOptions{})
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
