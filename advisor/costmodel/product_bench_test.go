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

// TestModelAgainstPublishedA3 holds `hcclprof model --product A3` against the
// published A3 measurements and reports the error per op and size band. The priors
// are HCCL's own constants, not a fit, and one α per level misses HCCL's switch
// between its vector-core and normal paths, so small messages are far off; the test
// records the figures and fails when they get worse than measured when it was written.
// benchBounds are the median |errors| measured when the test was written, rounded
// up, for the bands where the α-β model should be closest (large messages): a change
// that makes `model` worse there fails. The model is too fast there by about 40%: A3's
// measured bus bandwidth stays near 190–220 GB/s whatever the rank count, a per-NPU
// ceiling that p−1 links of 47.6 GB/s each do not have.
var benchBounds = map[struct{ op, band string }]float64{
	{"allreduce", "c 1-16MiB"}: 0.40, {"allreduce", "d >=16MiB"}: 0.58,
	{"allgather", "c 1-16MiB"}: 0.61, {"allgather", "d >=16MiB"}: 0.74,
	{"reducescatter", "c 1-16MiB"}: 0.54, {"reducescatter", "d >=16MiB"}: 0.78,
}

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
		doc, err := PriceOnProduct(a3, ProductQuery{Op: op, Bytes: bytes, Servers: servers, NPUsPerServer: npus, RDMALite: true})
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
	fmt.Fprintf(&b, "\n%-14s %-14s %4s %12s %14s %12s\n", "op", "band", "n", "median |err|", "median signed", "worst |err|")
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
	for why, count := range unpriced {
		fmt.Fprintf(&b, "not priced (%d rows): %s\n", count, why)
	}
	t.Log(b.String())
	for k, bound := range benchBounds {
		got, ok := medianAbs[k]
		if assert.True(t, ok, "%v priced", k) {
			assert.LessOrEqual(t, got, bound, "%s %s: median |error| grew", k.op, k.band)
		}
	}
}
