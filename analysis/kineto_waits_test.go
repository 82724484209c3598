package analysis_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
)

// kinetoRank writes the real A100 trace as rank `rank` into dir, every NCCL kernel's
// duration scaled by ncclScale (numbers kept as written: json.Number), its drop-th
// NCCL kernel left out (-1: none).
func kinetoRank(t *testing.T, dir string, rank int, ncclScale float64, drop int) {
	t.Helper()
	f, err := os.Open(filepath.Join(realdata.Path(t, "kineto-nccl-a100-2gpu"), "nccl_data.json.gz"))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	require.NoError(t, dec.Decode(&doc))
	doc["distributedInfo"].(map[string]any)["rank"] = json.Number(strconv.Itoa(rank))
	var kept []any
	n := 0
	for _, e := range doc["traceEvents"].([]any) {
		ev := e.(map[string]any)
		name, _ := ev["name"].(string)
		if ev["cat"] != "kernel" || !strings.HasPrefix(name, "ncclKernel") {
			kept = append(kept, e)
			continue
		}
		n++
		if n-1 == drop {
			continue
		}
		kept = append(kept, e)
		dur, err := ev["dur"].(json.Number).Float64()
		require.NoError(t, err)
		ev["dur"] = json.Number(strconv.FormatFloat(dur*ncclScale, 'f', 3, 64))
	}
	doc["traceEvents"] = kept
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rank"+strconv.Itoa(rank)+".pt.trace.json"), out, 0o644))
}

// Issue 34, case 7: NCCL kernels are named by what they do, so one rank's seven
// ncclKernel_AllReduce_RING_LL_Sum_float of a step were no identity and every op's
// cross_rank_wait_us was null: no straggler could be found on NVIDIA. They are now
// matched by their order in the communicator and step. Two ranks from the real A100
// trace, rank 1's NCCL kernels half as long (it arrives last, so it waits least):
// every op has a wait, rank 1's are 0 and rank 0's are the difference.
func TestKinetoCrossRankWaitsByOrder(t *testing.T) {
	type key struct {
		rank, step  int
		group, name string
		nth         int
	}
	load := func(drop int) (*analysis.Result, map[key]int64) {
		dir := t.TempDir()
		kinetoRank(t, dir, 0, 1, -1)
		kinetoRank(t, dir, 1, 0.5, drop)
		c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
		require.NoError(t, err)
		require.Len(t, c.Ranks, 2)
		res := analysis.Analyze(c, analysis.Options{})
		require.NotEmpty(t, res.Communication.Ops)
		elapse := map[key]int64{}
		nth := map[key]int{}
		for _, o := range res.Communication.Ops {
			k := key{o.Rank, o.Step, o.Group, o.Name, 0}
			k.nth = nth[k]
			nth[key{o.Rank, o.Step, o.Group, o.Name, 0}]++
			elapse[k] = o.ElapseNs
		}
		return res, elapse
	}
	res, elapse := load(-1)
	nth := map[key]int{}
	for _, o := range res.Communication.Ops {
		require.True(t, o.CrossWaitKnown, "rank %d step %d %s", o.Rank, o.Step, o.Name)
		k := key{o.Rank, o.Step, o.Group, o.Name, 0}
		k.nth = nth[k]
		nth[key{o.Rank, o.Step, o.Group, o.Name, 0}]++
		other := k
		other.rank = 1 - o.Rank
		peer, ok := elapse[other]
		require.True(t, ok, "the same op on the other rank")
		assert.Equal(t, o.ElapseNs-min(o.ElapseNs, peer), o.CrossWaitNs, "rank %d step %d %s #%d", o.Rank, o.Step, o.Name, k.nth)
		if o.Rank == 1 {
			assert.Zero(t, o.CrossWaitNs, "rank 1 arrives last at %s", o.Name)
		} else {
			assert.Greater(t, o.CrossWaitNs, int64(0), o.Name)
		}
	}
	// Rank 1 without its first NCCL kernel: in that step the order is no identity
	// (rank 0 has one more), so its ops wait for nobody measurable; the other steps
	// still match.
	res, _ = load(0)
	known, unknown := 0, 0
	for _, o := range res.Communication.Ops {
		if o.CrossWaitKnown {
			known++
		} else {
			unknown++
		}
	}
	assert.Positive(t, unknown)
	assert.Positive(t, known)
}
