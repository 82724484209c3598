package advisor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hcclprof/hcclprof/parser"
)

// clusterRanks are the two sample ranks the cluster fuzz target writes, one of each
// server.
var clusterRanks = []string{
	"node0_3000000_20250109074733000_ascend_pt",
	"node1_3001000_20250109074733000_ascend_pt",
}

// Mutations of FuzzClusterDir, the classes of damage issue 36 met on real copies.
const (
	mutReplace  = iota // the target file's bytes replaced
	mutAppend          // the fuzzed bytes appended (records written twice, trailing junk)
	mutTwice           // the target file written twice over (every record twice)
	mutSameRank        // the second rank given the first rank's profiler_info (both claim it)
	mutTruncate        // the target file cut at len(content) modulo its length
	mutCount
)

// FuzzClusterDir fuzzes a whole two-rank cluster directory: which files each rank
// keeps (keepA, keepB: bit i keeps file i), a target file of the first rank and a
// mutation of it (how). The contract is the rank fuzz target's (checkFiguresInRange)
// and one of the cluster: ranks are never lost silently, so when no rank is flagged
// incomplete and nothing is refused, both ranks are there.
func FuzzClusterDir(f *testing.F) {
	names, data := rankFiles(f)
	all := uint16(1)<<len(names) - 1
	for how := range uint8(mutCount) {
		for i, n := range names {
			f.Add(all, uint16(1)<<len(names)-1, uint8(i), how, data[n])
		}
	}
	// The damaged copies issue 36 names, as seeds: a second Stage column first, an
	// empty communication.json, a step repeated in the step table.
	for i, n := range names {
		switch filepath.Base(n) {
		case "step_trace_time.csv":
			header, rest, _ := bytes.Cut(data[n], []byte("\n"))
			f.Add(all, all, uint8(i), uint8(mutReplace), append(append([]byte("Stage,"), header...), append([]byte("\n9,"), rest...)...))
			f.Add(all, all, uint8(i), uint8(mutAppend), rest)
		case "communication.json":
			f.Add(all, all, uint8(i), uint8(mutReplace), []byte("{}"))
		}
	}
	namesB, dataB := rankFilesOf(f, filepath.Join("..", "fixtures", "samples", "demo-2server-8rank", clusterRanks[1]))
	allB := uint16(1)<<len(namesB) - 1
	f.Fuzz(func(t *testing.T, keepA, keepB uint16, target, how uint8, content []byte) {
		root := t.TempDir()
		tgt := int(target) % len(names)
		how %= mutCount
		write := func(rank, name string, b []byte) {
			p := filepath.Join(root, rank, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i, n := range names {
			if keepA&(1<<i) == 0 {
				continue
			}
			b := data[n]
			if i == tgt {
				switch how {
				case mutReplace:
					b = content
				case mutAppend:
					b = append(slices.Clone(b), content...)
				case mutTwice:
					b = append(slices.Clone(b), b...)
				case mutTruncate:
					if len(b) > 0 {
						b = b[:len(content)%len(b)]
					}
				}
			}
			write(clusterRanks[0], n, b)
		}
		for i, n := range namesB {
			if keepB&(1<<i) == 0 {
				continue
			}
			if how == mutSameRank && isProfilerInfo(n) {
				// The second rank claims the first one's rank.
				for _, a := range names {
					if isProfilerInfo(a) {
						write(clusterRanks[1], a, data[a])
					}
				}
				continue
			}
			write(clusterRanks[1], n, dataB[n])
		}
		c, err := parser.LoadCluster([]string{root}, parser.LoadOptions{Workers: 1})
		if err != nil {
			return // refused
		}
		res := checkFiguresInRange(t, c)
		flagged := res.Summary.Incomplete
		for _, r := range c.Ranks {
			flagged = flagged || r.Incomplete()
		}
		for _, rr := range res.Ranks {
			flagged = flagged || rr.Incomplete || len(rr.Problems) > 0
		}
		if !flagged && keepA == all && keepB == allB && len(c.Ranks) != 2 {
			t.Errorf("%d rank(s) read from two whole rank directories, none flagged", len(c.Ranks))
		}
	})
}

func isProfilerInfo(name string) bool {
	return filepath.Dir(name) == "." && strings.HasPrefix(name, "profiler_info")
}
