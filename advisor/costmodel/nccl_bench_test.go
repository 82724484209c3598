package costmodel

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// ncclSweeps are the published nccl-tests sweeps: out-of-place time per size. The
// size column is nccl-tests' own: the vector for AllReduce, the total (gathered
// output, or each rank's whole input) for AllGather and ReduceScatter, which is
// what the model takes.
var ncclSweeps = []struct {
	product, file, op string
	servers           int
	note              string
}{
	{"H100", "nccl_h100_1node8_allreduce_ring_together.csv", "allreduce", 1, "1×8, NCCL_ALGO=Ring, one process driving 8 GPUs"},
	{"H100", "nccl_h100_1node8_allgather_ring_together.csv", "allgather", 1, "1×8, ring, one process"},
	{"H100", "nccl_h100_1node8_reducescatter_ring_together.csv", "reducescatter", 1, "1×8, ring, one process"},
	{"H100", "nccl_h100_gcp-a3mega_2node16_allreduce.csv", "allreduce", 2, "2×8 GCP A3 Mega: GPUDirect-TCPXO, not InfiniBand"},
	{"A100", "nccl_a100_coreweave_16node128_allreduce_sharp_2023-01.csv", "allreduce", 16, "16×8 with SHARP, priced without CollNet"},
}

// ncclAzure are Azure NDmv4 (A100) points: a latency at 1 KiB, a bus bandwidth at 1
// and 4 GiB.
const ncclAzure = "nccl_a100_azure-ndmv4_points_mscclpp-doc.csv"

// ncclPoint is one measured op.
type ncclPoint struct {
	product, source, op string
	servers, npus       int
	bytes               int64
	us                  float64
	floor               bool // the H100 1×8 sweeps' small sizes: one process's launch floor
}

// ncclBounds are the median |errors| of NCCL's model with the products' figures
// (`model --product H100|A100`: NCCL 2.26.2's constants, the vendors' link rates,
// NCCL's own NVLink per-link figure; nothing fitted to these points) when the test
// was written, rounded up to the next point: a change that makes them worse fails.
// Median |error| per band <64 KiB / 64 KiB–1 MiB / 1–16 MiB / ≥16 MiB:
//
//	H100 allreduce      80% / 69% / 71% /  8%   (1×8 and 2×8 points together)
//	H100 allgather      69% / 68% / 43% /  7%   (1×8)
//	H100 reducescatter  69% / 68% / 43% /  6%   (1×8)
//	A100 allreduce       8% / 21% / 29% / 34%   (16×8, and Azure's 1×8, 2×1, 2×8 points)
//	A100 allgather      14% /  –  /  –  / 10%   (Azure's points)
//
// The target, 25% in every band, is met above 16 MiB on both products and
// for A100's small messages, not elsewhere, and the misses are the measurements'
// (the log prints them per source): the H100 1×8 sweeps sit on a ~35 µs floor up
// to about 4 MiB (one process driving 8 GPUs; NCCL's model says 11–15 µs, and on
// Azure's A100 1×8, a process per GPU, it is within 14%); the H100 2×8 sweep is GCP
// A3 Mega, whose network is GPUDirect-TCPXO with a 123 µs floor and a bandwidth
// step at 32 MiB, not the profile's InfiniBand (80% / 76% / 78% / 35% on its own);
// CoreWeave's 16×8 A100 delivers a bus bandwidth of 115 GB/s where eight HDR NICs
// per node give NCCL's model 185–200 (its NICs are not stated; SHARP, which the model
// leaves out, would only be faster), so the model is 27–35% fast above 1 MiB.
// Without the 1×8 floor points (within a quarter of their sweep's smallest time)
// the H100 AllGather and ReduceScatter 1–16 MiB band is 4% (one point).
var ncclBounds = map[struct{ product, op, band string }]float64{
	{"H100", "allgather", "a <64KiB"}: 0.70, {"H100", "allgather", "b 64KiB-1MiB"}: 0.69,
	{"H100", "allgather", "c 1-16MiB"}: 0.43, {"H100", "allgather", "d >=16MiB"}: 0.08,
	{"H100", "allreduce", "a <64KiB"}: 0.80, {"H100", "allreduce", "b 64KiB-1MiB"}: 0.70,
	{"H100", "allreduce", "c 1-16MiB"}: 0.71, {"H100", "allreduce", "d >=16MiB"}: 0.09,
	{"H100", "reducescatter", "a <64KiB"}: 0.70, {"H100", "reducescatter", "b 64KiB-1MiB"}: 0.68,
	{"H100", "reducescatter", "c 1-16MiB"}: 0.43, {"H100", "reducescatter", "d >=16MiB"}: 0.07,
	{"A100", "allgather", "a <64KiB"}: 0.14, {"A100", "allgather", "d >=16MiB"}: 0.10,
	{"A100", "allreduce", "a <64KiB"}: 0.09, {"A100", "allreduce", "b 64KiB-1MiB"}: 0.21,
	{"A100", "allreduce", "c 1-16MiB"}: 0.30, {"A100", "allreduce", "d >=16MiB"}: 0.35,
}

func readNCCLSweeps(t *testing.T) []ncclPoint {
	t.Helper()
	var out []ncclPoint
	for _, s := range ncclSweeps {
		rows := readCSV(t, realdata.BenchPath(t, s.file))
		require.Equal(t, "size_B", rows[0][0], s.file)
		for _, row := range rows[1:] {
			size, err1 := strconv.ParseInt(row[0], 10, 64)
			us, err2 := strconv.ParseFloat(row[5], 64)
			if err1 != nil || err2 != nil || size <= 0 || us <= 0 {
				continue // nccl-tests prints size 0 for sizes under one element per rank
			}
			out = append(out, ncclPoint{product: s.product, source: s.file, op: s.op, servers: s.servers, npus: 8, bytes: size, us: us,
				floor: s.servers == 1 && s.product == "H100"})
		}
	}
	// The 1×8 sweeps' launch floor: the sizes whose time stays within a quarter of
	// the sweep's smallest size's.
	minUs := map[string]float64{}
	for _, p := range out {
		if m, ok := minUs[p.source]; !ok || p.us < m {
			minUs[p.source] = p.us
		}
	}
	for i := range out {
		out[i].floor = out[i].floor && out[i].us <= 1.25*minUs[out[i].source]
	}
	rows := readCSV(t, realdata.BenchPath(t, ncclAzure))
	require.Equal(t, "config", rows[0][0])
	for _, row := range rows[1:] {
		nodes, err1 := strconv.Atoi(row[1])
		gpus, err2 := strconv.Atoi(row[2])
		size := map[string]int64{"1K": 1 << 10, "1G": 1 << 30, "4G": 4 << 30}[row[4]]
		if err1 != nil || err2 != nil || size == 0 {
			continue
		}
		op := row[3]
		p := ncclPoint{product: "A100", source: ncclAzure + " " + row[0], op: op, servers: nodes, npus: gpus, bytes: size}
		if lat, err := strconv.ParseFloat(row[5], 64); err == nil {
			p.us = lat
		} else if bus, err := strconv.ParseFloat(row[6], 64); err == nil && bus > 0 {
			algbw := bus / profile.BusBandwidthFactor(op, nodes*gpus)
			p.us = float64(size) / (algbw * 1e3)
		}
		if p.us > 0 {
			out = append(out, p)
		}
	}
	return out
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	return rows
}

// TestNCCLModelAgainstPublished prices every published nccl-tests point with
// `hcclprof model --product H100|A100` (NCCL's tuning model, the products'
// figures) and reports the median |error| per product, op and size band.
func TestNCCLModelAgainstPublished(t *testing.T) {
	points := readNCCLSweeps(t)
	require.Greater(t, len(points), 150)
	type key struct{ product, op, band string }
	errs := map[key][]float64{}
	clean := map[key][]float64{} // without the H100 1×8 launch floor
	type srcKey struct{ source, band string }
	bySource := map[srcKey][]float64{}
	choices := map[string]map[string]int{}
	unpriced := map[string]int{}
	for _, p := range points {
		hw, err := hardware.Lookup(p.product)
		require.NoError(t, err)
		doc, err := PriceOnProduct(hw, ProductQuery{Op: p.op, Bytes: p.bytes, Servers: p.servers, NPUsPerServer: p.npus})
		if err != nil {
			unpriced[err.Error()]++
			continue
		}
		e := (doc.Cost.TimeUs - p.us) / p.us
		band := benchBand(p.bytes)
		errs[key{p.product, p.op, band}] = append(errs[key{p.product, p.op, band}], e)
		if !p.floor {
			clean[key{p.product, p.op, band}] = append(clean[key{p.product, p.op, band}], e)
		}
		bySource[srcKey{p.source, band}] = append(bySource[srcKey{p.source, band}], e)
		if choices[p.source] == nil {
			choices[p.source] = map[string]int{}
		}
		choices[p.source][doc.Choice.Algo]++
	}
	median := func(e []float64) (absMed, signedMed, worst float64) {
		abs := make([]float64, len(e))
		for i, x := range e {
			abs[i] = math.Abs(x)
		}
		slices.Sort(abs)
		s := slices.Clone(e)
		slices.Sort(s)
		return abs[len(abs)/2], s[len(s)/2], abs[len(abs)-1]
	}
	keys := make([]key, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.product != b.product {
			return a.product > b.product
		}
		if a.op != b.op {
			return a.op < b.op
		}
		return a.band < b.band
	})
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-5s %-14s %-14s %4s %12s %14s %12s   %s\n", "gpu", "op", "band", "n", "median |err|", "median signed", "worst |err|", "without the 1×8 floor: n, median |err|")
	got := map[key]float64{}
	for _, k := range keys {
		m, s, w := median(errs[k])
		got[k] = m
		c := "-"
		if len(clean[k]) > 0 {
			cm, _, _ := median(clean[k])
			c = fmt.Sprintf("%d, %.0f%%", len(clean[k]), 100*cm)
		}
		fmt.Fprintf(&b, "%-5s %-14s %-14s %4d %11.0f%% %13.0f%% %11.0f%%   %s\n", k.product, k.op, k.band[2:], len(errs[k]), 100*m, 100*s, 100*w, c)
	}
	fmt.Fprintf(&b, "\nper source:\n")
	srcKeys := make([]srcKey, 0, len(bySource))
	for k := range bySource {
		srcKeys = append(srcKeys, k)
	}
	sort.Slice(srcKeys, func(i, j int) bool {
		if srcKeys[i].source != srcKeys[j].source {
			return srcKeys[i].source < srcKeys[j].source
		}
		return srcKeys[i].band < srcKeys[j].band
	})
	for _, k := range srcKeys {
		m, s, _ := median(bySource[k])
		fmt.Fprintf(&b, "  %-62s %-12s n %2d median |err| %4.0f%% signed %+5.0f%%\n", k.source, k.band[2:], len(bySource[k]), 100*m, 100*s)
	}
	for src, c := range choices {
		fmt.Fprintf(&b, "  choices %s: %v\n", src, c)
	}
	for why, n := range unpriced {
		fmt.Fprintf(&b, "not priced (%d points): %s\n", n, why)
	}
	t.Log(b.String())
	for k, bound := range ncclBounds {
		m, ok := got[k]
		if assert.True(t, ok, "%v priced", k) {
			assert.LessOrEqual(t, m, bound, "%s %s %s: median |error| grew", k.product, k.op, k.band)
		}
	}
}
