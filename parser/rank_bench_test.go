package parser

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSummaryFiles reads one real rank's summary files (communication.json, the
// matrix, profiler_info) from disk, as a cluster's parse does for each of thousands of
// ranks: the trees' reused memory and the per-file costs show here.
func BenchmarkSummaryFiles(b *testing.B) {
	comm := summaryRealFile(b, summaryL1R0+summaryAPO+"communication.json")
	matrix := summaryRealFile(b, summaryL1R0+summaryAPO+"communication_matrix.json")
	info := summaryRealFile(b, summaryL1R0+"profiler_info_0.json")
	var size int64
	for _, p := range []string{comm, matrix, info} {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range []string{comm, matrix, info} {
			f, err := os.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			switch i {
			case 0:
				ops, err := parseCommunicationJSON(f, p)
				must(b, err == nil && len(ops) == 4)
			case 1:
				links, err := parseCommMatrixJSON(f, p)
				must(b, err == nil && len(links) > 0)
			case 2:
				_, err := parseProfilerInfo(f, p)
				must(b, err == nil)
			}
			f.Close()
		}
	}
}

// BenchmarkLoadRank is the whole per-rank load of a cluster's parse (discovery of the
// rank's files, the 2.2 MB trace, the summaries, the checks) on one real rank.
func BenchmarkLoadRank(b *testing.B) {
	dir := filepath.Dir(summaryRealFile(b, summaryL1R0+"profiler_info_0.json"))
	b.ReportAllocs()
	for b.Loop() {
		c, err := LoadCluster([]string{dir}, LoadOptions{})
		must(b, err == nil && len(c.Ranks) == 1 && len(c.Ranks[0].CommOps) > 0)
	}
}

func must(b *testing.B, ok bool) {
	b.Helper()
	if !ok {
		b.Fatal("unexpected result")
	}
}
