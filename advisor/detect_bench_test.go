package advisor_test

import (
	"testing"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

// BenchmarkDetect is the detectors' pass over a 64-rank run with a straggler (every
// rank's collectives compared with its peers' step by step, the links with their
// peers and, with none slow, the fabric with the peak): what advise adds per run.
func BenchmarkDetect(b *testing.B) {
	a := testkit.AnalyseBuiltin(b, "straggler-64rank", render.FormatText)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := advisor.Detect(a.Result, advisor.DefaultDetectThresholds)
		if len(d.SlowRanks) != 1 || d.SlowRanks[0].Rank != 13 {
			b.Fatalf("slow ranks %+v", d.SlowRanks)
		}
	}
}
