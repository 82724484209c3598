package advisor_test

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// sampleRank is one rank of the bundled sample, in the text export.
const sampleRank = "../fixtures/samples/demo-2server-8rank/node0_3000000_20250109074733000_ascend_pt"

// rankFiles are the sample rank's files (paths relative to the rank directory, sorted)
// and their contents.
func rankFiles(tb testing.TB) ([]string, map[string][]byte) {
	tb.Helper()
	return rankFilesOf(tb, sampleRank)
}

// rankFilesOf is rankFiles of any rank directory.
func rankFilesOf(tb testing.TB, sampleRank string) ([]string, map[string][]byte) {
	tb.Helper()
	var names []string
	data := map[string][]byte{}
	err := filepath.WalkDir(sampleRank, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(sampleRank, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		names = append(names, rel)
		data[rel] = b
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(names)
	return names, data
}

// FuzzRankDir fuzzes a whole rank directory: keep chooses which of the sample rank's
// files are written (bit i keeps file i), and the file numbered target gets the
// fuzzed bytes in place of its own. The rank is read, analysed and advised on; the
// contract: no panic, and a rank that is not flagged incomplete has every figure in
// range (Stage > 0, each part within Stage + Bubble, no negative duration, shares
// within [0, 1]).
func FuzzRankDir(f *testing.F) {
	names, data := rankFiles(f)
	all := uint16(1)<<len(names) - 1
	for i, n := range names {
		f.Add(all, uint8(i), data[n])
		f.Add(all&^(1<<i), uint8((i+1)%len(names)), data[names[(i+1)%len(names)]])
	}
	// Summaries only (no timeline), the timeline alone.
	for i, n := range names {
		if filepath.Base(n) == "trace_view.json" {
			f.Add(all&^(1<<i), uint8(i), []byte(nil))
			f.Add(uint16(1)<<i, uint8(i), data[n])
		}
	}
	f.Fuzz(func(t *testing.T, keep uint16, target uint8, content []byte) {
		dir := filepath.Join(t.TempDir(), "node0_3000000_20250109074733000_ascend_pt")
		tgt := int(target) % len(names)
		for i, n := range names {
			if keep&(1<<i) == 0 {
				continue
			}
			b := data[n]
			if i == tgt {
				b = content
			}
			p := filepath.Join(dir, n)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{Workers: 1})
		if err != nil {
			return // refused
		}
		checkFiguresInRange(t, c)
	})
}

// checkFiguresInRange analyses and advises on a cluster read and holds the contract
// of the directory fuzz targets: a rank that is not flagged incomplete has every
// figure in range (Stage > 0, each part within Stage + Bubble, no negative duration),
// and a run none of whose ranks is flagged has its shares within [0, 1].
func checkFiguresInRange(t *testing.T, c *profile.Cluster) *analysis.Result {
	t.Helper()
	res := analysis.Analyze(c, analysis.Options{Workers: 1})
	advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)

	incomplete := map[int]bool{}
	for _, r := range c.Ranks {
		if r.Incomplete() {
			incomplete[r.Rank] = true
		}
	}
	anyIncomplete := len(incomplete) > 0
	for _, rr := range res.Ranks {
		if rr.Incomplete || len(rr.Problems) > 0 || incomplete[rr.Rank] {
			anyIncomplete = true
			continue
		}
		for _, s := range rr.Steps {
			if s.StageNs <= 0 {
				t.Errorf("rank %d step %d: Stage %d ns on a complete rank", rr.Rank, s.Step, s.StageNs)
			}
			span := s.StageNs + s.BubbleNs
			const slackNs = 20 // the profiler's figures are rounded to the ns, twice
			for _, part := range []struct {
				name string
				ns   int64
			}{
				{"Computing", s.ComputingNs}, {"Communication", s.CommunicationNs}, {"Communication(Not Overlapped)", s.CommNotOverlappedNs},
				{"Overlapped", s.OverlappedNs}, {"Free", s.FreeNs}, {"Bubble", s.BubbleNs}, {"Preparing", s.PreparingNs},
				{"AllReduce", s.AllReduceNs}, {"TailCompute", s.TailComputeNs},
			} {
				if part.ns < 0 {
					t.Errorf("rank %d step %d: %s %d ns is negative", rr.Rank, s.Step, part.name, part.ns)
				}
				if part.name != "Preparing" && part.name != "Bubble" && part.ns > span+slackNs {
					t.Errorf("rank %d step %d: %s %d ns exceeds Stage %d + Bubble %d ns", rr.Rank, s.Step, part.name, part.ns, s.StageNs, s.BubbleNs)
				}
			}
		}
	}
	if anyIncomplete || res.Summary.Steps == 0 {
		return res
	}
	sm := res.Summary
	overlap, allReduce := 0.0, 0.0 // absent when not known: nothing to range-check
	if sm.OverlapRatio != nil {
		overlap = *sm.OverlapRatio
	}
	if sm.AllReduceShare != nil {
		allReduce = *sm.AllReduceShare
	}
	for _, sh := range []struct {
		name string
		v    float64
	}{{"comm_share", sm.CommShare}, {"comm_total_share", sm.CommTotalShare}, {"allreduce_share", allReduce}, {"overlap_ratio", overlap}} {
		if math.IsNaN(sh.v) || sh.v < 0 || sh.v > 1+1e-9 {
			t.Errorf("%s = %g on a complete run", sh.name, sh.v)
		}
	}
	if sm.StepTimeNs <= 0 {
		t.Errorf("step time %d ns on a complete run with %d steps", sm.StepTimeNs, sm.Steps)
	}
	return res
}
