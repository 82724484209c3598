package parser_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// ncclTestsSample is nccl-tests' output as all_reduce_perf prints it (2.17-style:
// version, "Collective test starting", a rank line per GPU, redop and root columns).
const ncclTestsSample = `# nccl-tests version 2.17.6 nccl-headers=22808 nccl-library=22808
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  11 on nodeA device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  12 on nodeA device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  13 on nodeA device  2 [0000:3a:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  14 on nodeA device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
NCCL version 2.21.5+cuda12.4
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    34.98    0.00    0.00      0    34.52    0.00    0.00      0
     1048576        262144     float     sum      -1    46.52   22.54   33.81      0    46.44   22.58   33.87      0
   134217728      33554432     float     sum      -1    702.5  191.04  286.57      0    697.9  192.32  288.48      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 106.8
#
# Collective test concluded: all_reduce_perf
`

// hcclTestSample is hccl_test's output (CANN tools/hccl_test, all_gather_test).
const hcclTestSample = `the minbytes is 1024, maxbytes is 4194304, iters is 20, warmup_iters is 5
data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:
1024              | 16.12          | 0.06352              | success
1048576           | 40.50          | 25.89077             | success
4194304           | 120.25         | 34.88017             | failed
`

func TestParseBench(t *testing.T) {
	for _, c := range []struct {
		name, text string
		opts       parser.BenchOptions
		format     string
		want       []profile.BenchPoint
		note       string
	}{
		{"nccl-tests", ncclTestsSample, parser.BenchOptions{}, "nccl-tests", []profile.BenchPoint{
			{Op: "allreduce", Ranks: 4, Bytes: 8, TimeUs: 34.98, Source: "x.log:15"},
			{Op: "allreduce", Ranks: 4, Bytes: 1 << 20, TimeUs: 46.52, Source: "x.log:16"},
			{Op: "allreduce", Ranks: 4, Bytes: 128 << 20, TimeUs: 702.5, Source: "x.log:17"},
		}, ""},
		{"nccl-tests indented, srun-labelled, old columns", strings.NewReplacer("#  Rank", "0: #  Rank", "     sum      -1", "").Replace(
			strings.ReplaceAll(ncclTestsSample, "\n", "\n    ")), parser.BenchOptions{}, "nccl-tests", []profile.BenchPoint{
			{Op: "allreduce", Ranks: 4, Bytes: 8, TimeUs: 34.98, Source: "x.log:15"},
			{Op: "allreduce", Ranks: 4, Bytes: 1 << 20, TimeUs: 46.52, Source: "x.log:16"},
			{Op: "allreduce", Ranks: 4, Bytes: 128 << 20, TimeUs: 702.5, Source: "x.log:17"},
		}, ""},
		{"nccl-tests, ranks given", ncclTestsSample, parser.BenchOptions{Ranks: 16}, "nccl-tests", []profile.BenchPoint{
			{Op: "allreduce", Ranks: 16, Bytes: 8, TimeUs: 34.98, Source: "x.log:15"},
			{Op: "allreduce", Ranks: 16, Bytes: 1 << 20, TimeUs: 46.52, Source: "x.log:16"},
			{Op: "allreduce", Ranks: 16, Bytes: 128 << 20, TimeUs: 702.5, Source: "x.log:17"},
		}, "the output lists ranks up to 3; --ranks 16 wins"},
		{"hccl_test all_gather: per-rank sizes, a failed row left out", hcclTestSample, parser.BenchOptions{Op: "all_gather", Ranks: 8}, "hccl_test", []profile.BenchPoint{
			{Op: "allgather", Ranks: 8, Bytes: 8 << 10, TimeUs: 16.12, Source: "x.log:3"},
			{Op: "allgather", Ranks: 8, Bytes: 8 << 20, TimeUs: 40.5, Source: "x.log:4"},
		}, "line 5: check_result failed: the row is left out"},
		{"hccl_test counted as totals", hcclTestSample, parser.BenchOptions{Op: "allgather", Ranks: 8, Size: profile.SizeTotal}, "hccl_test", []profile.BenchPoint{
			{Op: "allgather", Ranks: 8, Bytes: 1024, TimeUs: 16.12, Source: "x.log:3"},
			{Op: "allgather", Ranks: 8, Bytes: 1 << 20, TimeUs: 40.5, Source: "x.log:4"},
		}, ""},
		{"CSV with its own op and ranks, a millisecond column beside", "# a comment\nop,nranks,size_B,dtype,latency_ms_verbatim,time_us_derived\nall_reduce,2,128,half,0.00411,4.11\nall_gather,4,256,half,0.004,4.0\nsend,2,64,half,0.001,1\n",
			parser.BenchOptions{Size: profile.SizePerRank}, "csv", []profile.BenchPoint{
				{Op: "allreduce", Ranks: 2, Bytes: 128, TimeUs: 4.11, Source: "x.log:3"},
				{Op: "allgather", Ranks: 4, Bytes: 1024, TimeUs: 4.0, Source: "x.log:4"},
			}, `1 rows of op "send" left out: not a collective the model prices`},
		{"CSV in milliseconds, sizes with units", "Collective, Ranks, Size, Time (ms)\nreduce_scatter, 8, 4M, 0.25\n", parser.BenchOptions{}, "csv", []profile.BenchPoint{
			{Op: "reducescatter", Ranks: 8, Bytes: 4 << 20, TimeUs: 250, Source: "x.log:2"},
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, info, err := parser.ParseBench(strings.NewReader(c.text), "x.log", c.opts)
			require.NoError(t, err)
			assert.Equal(t, c.format, info.Format)
			assert.Equal(t, c.want, got)
			if c.note != "" {
				assert.Contains(t, info.Notes, c.note)
			}
		})
	}
}

func TestParseBenchRefuses(t *testing.T) {
	for _, c := range []struct {
		name, text string
		opts       parser.BenchOptions
		want       string
	}{
		{"hccl_test without op and ranks", hcclTestSample, parser.BenchOptions{}, "names neither its collective nor its rank count"},
		{"nccl-tests without its op", strings.Replace(ncclTestsSample, "# Collective test starting: all_reduce_perf\n", "", 1), parser.BenchOptions{}, "x.log:14: nccl-tests output that does not name its collective"},
		{"nccl-tests without rank lines", strings.ReplaceAll(ncclTestsSample, "#  Rank", "# xRank"), parser.BenchOptions{}, "without its \"#  Rank\" lines"},
		{"nccl-tests row cut short", strings.Replace(ncclTestsSample, "46.44   22.58   33.87      0", "", 1), parser.BenchOptions{}, "x.log:16: a nccl-tests row of 9 fields"},
		{"negative time", "op,ranks,bytes,time_us\nallreduce,8,1024,-3\n", parser.BenchOptions{}, "x.log:2: time -3 µs"},
		{"one rank", "op,ranks,bytes,time_us\nallreduce,1,1024,3\n", parser.BenchOptions{}, "x.log:2: 1 ranks"},
		{"NaN time", "op,ranks,bytes,time_us\nallreduce,8,1024,NaN\n", parser.BenchOptions{}, "x.log:2: time NaN"},
		{"not a table", "a,b,c\n1,2,3\n", parser.BenchOptions{}, "not a benchmark table"},
		{"no rows", "op,ranks,bytes,time_us\n", parser.BenchOptions{}, "no timing rows"},
		// csv's FieldPos panics on a record it failed to read: it was asked first.
		{"unclosed quote", "op,ranks,bytes,time_us\nallreduce,8,1024,3\n\"allreduce,8,2048,4\n", parser.BenchOptions{}, "x.log: parse error on line 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := parser.ParseBench(strings.NewReader(c.text), "x.log", c.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func FuzzParseBench(f *testing.F) {
	for _, s := range []string{ncclTestsSample, hcclTestSample, "op,ranks,bytes,time_us\nallreduce,8,1024,3\n", "Collective, Ranks, Size, Time (ms)\nreduce_scatter, 8, 4M, 0.25\n", "op,ranks,bytes,time_us\n\"allreduce,8,2048,4\n"} {
		f.Add(s, "", 0)
		f.Add(s, "allgather", 8)
	}
	f.Fuzz(func(t *testing.T, text, op string, ranks int) {
		pts, _, err := parser.ParseBench(strings.NewReader(text), "fuzz", parser.BenchOptions{Op: op, Ranks: ranks})
		if err != nil {
			var se *parser.SyntaxError
			_ = errors.As(err, &se)
			return
		}
		for _, p := range pts {
			if p.Ranks < 2 || p.Bytes <= 0 || !(p.TimeUs > 0) || p.Op == "" {
				t.Fatalf("an impossible point: %+v", p)
			}
		}
	})
}
