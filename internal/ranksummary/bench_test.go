package ranksummary_test

import (
	"bytes"
	"testing"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/profile"
)

// BenchmarkReadRankSummary reads rank summaries as an analyze over gathered summaries
// does, thousands of times: the bundled sample's rank 2, and the same rank as a
// 4096-rank job's would be, its world group's rank list in its metadata.
func BenchmarkReadRankSummary(b *testing.B) {
	small, big := sampleRank(b), worldRank(b)
	for _, c := range []struct {
		name string
		r    *profile.Rank
	}{{"sample", small}, {"world4096", big}} {
		data := summaryBytes(b, c.r, nil)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := ranksummary.ReadFrom("bench", bytes.NewReader(data))
				if err != nil || len(r.CommTasks) != len(c.r.CommTasks) {
					b.Fatal("unexpected result")
				}
			}
		})
	}
}
