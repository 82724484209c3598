package costmodel

import (
	"encoding/csv"
	"fmt"
	"maps"
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
)

// a3Measurements is the published A3 (910C) HCCL sweep: torch.distributed with the
// profiler's kernel time per op, 2–16 ranks in one server and 32 on two.
const a3Measurements = "hccl_a3_910c_torchdist_profiler_2to32ranks_allops_msmodeling-via-aiconfigurator-npu.csv"

// benchBand is a size band of the model's own byte count (the vector, or the total).
func benchBand(n int64) string {
	switch {
	case n < 64<<10:
		return "a <64KiB"
	case n < 1<<20:
		return "b 64KiB-1MiB"
	case n < 16<<20:
		return "c 1-16MiB"
	}
	return "d >=16MiB"
}

// TestModelAgainstPublishedA3 holds `hcclprof model --product A3` (HCCL_OP_EXPANSION_MODE=AIV,
// as the sweep's vLLM-Ascend stack sets it) against the published A3 measurements,
// per op and size band, and over all ops per band. The model's shape follows the
// hardware and HCCL: the vector-core path under HCCL's entry sizes, the AI-CPU launch
// above them, one die's UB ceiling, SIO for the die pair (a3.go).
//
// Measured when written, median |error| over all ops: <64 KiB 20%, 64 KiB–1 MiB 21%,
// 1–16 MiB 17%, ≥16 MiB 16% (the target: 25%). Per op, AllReduce, AllGather
// and ReduceScatter are within 9–24% in every band; AlltoAll (50% under 64 KiB: its
// vector-core floor grows faster with ranks than a flag per peer) and Broadcast (26–41%:
// HCCL's source has no A3 Broadcast entry size) are not.
// benchBounds are those per-op figures rounded up: a change that makes the model
// worse fails.
var benchBounds = map[struct{ op, band string }]float64{
	{"allreduce", "a <64KiB"}: 0.17, {"allreduce", "b 64KiB-1MiB"}: 0.15, {"allreduce", "c 1-16MiB"}: 0.14, {"allreduce", "d >=16MiB"}: 0.10,
	{"allgather", "a <64KiB"}: 0.21, {"allgather", "b 64KiB-1MiB"}: 0.25, {"allgather", "c 1-16MiB"}: 0.11, {"allgather", "d >=16MiB"}: 0.17,
	{"reducescatter", "a <64KiB"}: 0.16, {"reducescatter", "b 64KiB-1MiB"}: 0.19, {"reducescatter", "c 1-16MiB"}: 0.15, {"reducescatter", "d >=16MiB"}: 0.12,
	{"alltoall", "a <64KiB"}: 0.51, {"alltoall", "b 64KiB-1MiB"}: 0.41, {"alltoall", "c 1-16MiB"}: 0.30, {"alltoall", "d >=16MiB"}: 0.30,
	{"broadcast", "a <64KiB"}: 0.41, {"broadcast", "b 64KiB-1MiB"}: 0.33, {"broadcast", "c 1-16MiB"}: 0.42, {"broadcast", "d >=16MiB"}: 0.27,
}

// a3BandTarget is issue 35's target for the priors: median |error| ≤ 25% in every
// size band.
const a3BandTarget = 0.25

func TestModelAgainstPublishedA3(t *testing.T) {
	path := realdata.BenchPath(t, a3Measurements)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	require.Equal(t, "op", rows[0][0])
	a3, err := hardware.Lookup("A3")
	require.NoError(t, err)
	opName := map[string]string{"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter",
		"broadcast": "broadcast", "all_to_all": "alltoall"}
	type key struct{ op, band string }
	errs := map[key][]float64{}
	n := 0
	unpriced := map[string]int{}
	for _, row := range rows[1:] {
		op := opName[row[0]]
		ranks, err1 := strconv.Atoi(row[1])
		size, err2 := strconv.ParseInt(row[2], 10, 64)
		ms, err3 := strconv.ParseFloat(row[4], 64)
		if op == "" || err1 != nil || err2 != nil || err3 != nil || ms <= 0 {
			continue
		}
		// The sweep's sizes are per rank: AllGather's input, ReduceScatter's output;
		// the model takes the total for those.
		bytes := size
		if op == "allgather" || op == "reducescatter" {
			bytes = size * int64(ranks)
		}
		servers, npus := 1, ranks
		if ranks > 16 {
			servers, npus = ranks/16, 16
		}
		doc, err := PriceOnProduct(a3, ProductQuery{Op: op, Bytes: bytes, Servers: servers, NPUsPerServer: npus, RDMALite: true, Expansion: ExpansionAIV})
		if err != nil {
			unpriced[op+": "+err.Error()]++
			continue
		}
		measUs := ms * 1000
		k := key{op, benchBand(bytes)}
		errs[k] = append(errs[k], (doc.Cost.TimeUs-measUs)/measUs)
		n++
	}
	require.Greater(t, n, 500, "rows priced")
	keys := make([]key, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].op != keys[j].op {
			return keys[i].op < keys[j].op
		}
		return keys[i].band < keys[j].band
	})
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-14s %-14s %4s %12s %14s %12s\n", "op", "band", "n", "median |err|", "median signed", "worst (all ops: p90)")
	medianAbs := map[key]float64{}
	for _, k := range keys {
		e := errs[k]
		abs := make([]float64, len(e))
		for i, x := range e {
			abs[i] = math.Abs(x)
		}
		slices.Sort(abs)
		signed := slices.Clone(e)
		slices.Sort(signed)
		medianAbs[k] = abs[len(abs)/2]
		fmt.Fprintf(&b, "%-14s %-14s %4d %11.0f%% %13.0f%% %11.0f%%\n", k.op, k.band[2:], len(e), 100*abs[len(abs)/2], 100*signed[len(signed)/2], 100*abs[len(abs)-1])
	}
	byBand := map[string][]float64{}
	for k, e := range errs {
		for _, x := range e {
			byBand[k.band] = append(byBand[k.band], math.Abs(x))
		}
	}
	bandMedian := map[string]float64{}
	for _, band := range slices.Sorted(maps.Keys(byBand)) {
		abs := byBand[band]
		slices.Sort(abs)
		bandMedian[band] = abs[len(abs)/2]
		fmt.Fprintf(&b, "%-14s %-14s %4d %11.0f%% %14s %11.0f%%\n", "all ops", band[2:], len(abs), 100*abs[len(abs)/2], "", 100*abs[len(abs)*9/10])
	}
	for why, count := range unpriced {
		fmt.Fprintf(&b, "not priced (%d rows): %s\n", count, why)
	}
	t.Log(b.String())
	for band, got := range bandMedian {
		assert.LessOrEqual(t, got, a3BandTarget, "all ops, %s: median |error|", band)
	}
	for k, bound := range benchBounds {
		got, ok := medianAbs[k]
		if assert.True(t, ok, "%v priced", k) {
			assert.LessOrEqual(t, got, bound, "%s %s: median |error| grew", k.op, k.band)
		}
	}
}
