package costmodel

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// publishedSweeps are ../shared/benchdata's tables, read as calibrate --bench reads
// them, grouped by the product they judge.
var publishedSweeps = []struct {
	product, file string
	opts          parser.BenchOptions
}{
	{"A3", a3Measurements, parser.BenchOptions{Size: profile.SizePerRank}},
	{"NVIDIA", "nccl_h100_1node8_allreduce_ring_together.csv", parser.BenchOptions{Op: "allreduce", Ranks: 8}},
	{"NVIDIA", "nccl_h100_1node8_allgather_ring_together.csv", parser.BenchOptions{Op: "allgather", Ranks: 8}},
	{"NVIDIA", "nccl_h100_1node8_reducescatter_ring_together.csv", parser.BenchOptions{Op: "reducescatter", Ranks: 8}},
	{"NVIDIA", "nccl_h100_gcp-a3mega_2node16_allreduce.csv", parser.BenchOptions{Op: "allreduce", Ranks: 16}},
	{"NVIDIA", "nccl_a100_coreweave_16node128_allreduce_sharp_2023-01.csv", parser.BenchOptions{Op: "allreduce", Ranks: 128}},
}

func readPublished(t *testing.T, product string) []profile.BenchPoint {
	t.Helper()
	var out []profile.BenchPoint
	for _, s := range publishedSweeps {
		if s.product != product {
			continue
		}
		pts, _, err := parser.ReadBench(realdata.BenchPath(t, s.file), s.opts)
		require.NoError(t, err, s.file)
		// The CSV's families interleave; a sweep file is one family.
		for i := range pts {
			pts[i].Source = s.file + ":" + pts[i].Source
		}
		out = append(out, pts...)
	}
	return out
}

// halves splits each (op, ranks) family by alternate sizes: train on one half,
// price the other, and the other way round.
func halves(points []profile.BenchPoint) [2]func(int, profile.BenchPoint) bool {
	type key struct {
		op    string
		ranks int
	}
	sizes := map[key][]int64{}
	for _, p := range points {
		sizes[key{p.Op, p.Ranks}] = append(sizes[key{p.Op, p.Ranks}], p.Bytes)
	}
	rank := map[key]map[int64]int{}
	for k, s := range sizes {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		rank[k] = map[int64]int{}
		for i, n := range s {
			if _, ok := rank[k][n]; !ok {
				rank[k][n] = len(rank[k])
			}
			_ = i
		}
	}
	even := func(_ int, p profile.BenchPoint) bool { return rank[key{p.Op, p.Ranks}][p.Bytes]%2 == 0 }
	odd := func(i int, p profile.BenchPoint) bool { return !even(i, p) }
	return [2]func(int, profile.BenchPoint) bool{even, odd}
}

// TestBenchCalibrationOnPublishedSweeps: calibrate --bench fitted on half of each
// published sweep (alternate sizes) prices the other half with a median |error| of
// 10% or less and a p90 of 30% or less in every size band, for A3 (HCCL) and for
// NVIDIA (nccl-tests on H100 and A100), and 80% or more of the held-out sizes fall
// inside their estimate's interval.
func TestBenchCalibrationOnPublishedSweeps(t *testing.T) {
	for _, product := range []string{"A3", "NVIDIA"} {
		pts := readPublished(t, product)
		errs, inside, widths := map[string][]float64{}, map[string]int{}, map[string][]float64{}
		for _, train := range halves(pts) {
			bt, err := benchBacktest(pts, train)
			require.NoError(t, err)
			for band, v := range bt.Errors {
				errs[band] = append(errs[band], v...)
				inside[band] += bt.Inside[band]
				widths[band] = append(widths[band], bt.HalfWidths[band]...)
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s: %d points\n%-12s %4s %8s %8s %8s %8s %8s\n", product, len(pts), "band", "n", "median", "p90", "signed", "inside", "±median")
		for _, band := range SizeBands {
			e := errs[band]
			if len(e) == 0 {
				continue
			}
			abs := make([]float64, len(e))
			for i, x := range e {
				abs[i] = math.Abs(x)
			}
			sort.Float64s(abs)
			sort.Float64s(e)
			med, p90 := abs[(len(abs)-1)/2], abs[int(math.Ceil(0.9*float64(len(abs))))-1]
			cover := float64(inside[band]) / float64(len(e))
			w := widths[band]
			sort.Float64s(w)
			fmt.Fprintf(&b, "%-12s %4d %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", band, len(e), 100*med, 100*p90, 100*e[len(e)/2], 100*cover, 100*w[(len(w)-1)/2])
			assert.GreaterOrEqual(t, cover, 0.80, "%s %s: share of the held-out sizes inside their interval", product, band)
			assert.LessOrEqual(t, med, 0.10, "%s %s: median |error|", product, band)
			assert.LessOrEqual(t, p90, 0.30, "%s %s: p90 |error|", product, band)
		}
		t.Log(b.String())
	}
}
