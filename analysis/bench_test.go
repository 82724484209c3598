package analysis_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/benchtrace"
	"github.com/hcclprof/hcclprof/parser"
)

// BenchmarkAnalyze is a whole analyze (discovery, parse, analysis) of one rank whose
// ~120 MB trace repeats the real rank-0 trace 60 times (60 steps, 240 AllReduce ops).
func BenchmarkAnalyze(b *testing.B) {
	dir, p := benchtrace.Default(b)
	st, err := os.Stat(p)
	require.NoError(b, err)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		res := analysis.Analyze(c, analysis.Options{})
		if res.Summary.Steps != 60 || res.Summary.CommShare < 0.7 {
			b.Fatalf("steps %d, comm_share %.4f", res.Summary.Steps, res.Summary.CommShare)
		}
	}
}
