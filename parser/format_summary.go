package parser

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/profile"
)

// rankSummaryFormat is hcclprof summarize's rank file (internal/ranksummary), found by its
// name alone or in a walked directory. Its ranks keep the Format they were
// summarised from, and were completed when written.
var rankSummaryFormat = &inputFormat{
	name: "hcclprof rank summary",
	file: func(d *discovery, path string) bool {
		if !ranksummary.IsName(filepath.Base(path)) {
			return false
		}
		d.add(rankSummaryInput(path))
		return true
	},
	walkedFile: true,
	load:       loadRankSummary,
	claim:      func(ri RankInput) rankClaim { return ri.claim },
	complete:   true,
	fuzz:       []string{"internal/ranksummary.FuzzRankSummary", "internal/ranksummary.FuzzSummaryFastPath", "internal/ranksummary.FuzzDecodeIntArray"},
}

// renumbered reports whether a summarised rank was numbered anew when it was read
// (another input claimed its rank: its problems say so), so that its header's rank
// and its profiler's rank id differ by design.
func renumbered(r *profile.Rank) bool {
	for _, p := range r.Problems {
		if strings.Contains(p, "is claimed also by") || strings.Contains(p, "is claimed by both") {
			return true
		}
	}
	return false
}

// rankSummaryInput is the rank input of a summary file: its rank (and its run's
// notes) from its header, else from its name (reading it then reports the damage),
// else unknown.
func rankSummaryInput(path string) RankInput {
	h, err := ranksummary.ReadHeader(path)
	if err == nil {
		return RankInput{Rank: h.Rank, Dir: path, notes: h.Notes, claim: rankClaim{worker: h.Worker, atNs: h.AtNs}}
	}
	rank, ok := ranksummary.RankOfName(filepath.Base(path))
	if !ok {
		rank = -1
	}
	return RankInput{Rank: rank, Dir: path}
}

// loadRankSummary reads a summary as a rank; a summary that cannot be read is a rank
// whose problem says why, as a damaged trace is.
func loadRankSummary(ri RankInput) *profile.Rank {
	r, err := ranksummary.Read(ri.Dir, knownFormat)
	if err != nil {
		return &profile.Rank{Rank: ri.Rank, Dir: ri.Dir, Format: profile.FormatSummary, Info: profile.Info{RankID: -1},
			Problems: []string{err.Error()}}
	}
	header := ri.Rank
	if len(ri.conflicts) > 0 {
		header = ri.claimed // numbered anew: another input claimed its rank too
	}
	if r.Rank != header {
		// Discovery numbered it from its header; only a file changed in between differs.
		r.Problems = append(r.Problems, fmt.Sprintf("%s: changed while read (rank %d, then %d)", ri.Dir, header, r.Rank))
	}
	if id := r.Info.RankID; id >= 0 && id != r.Rank && len(ri.conflicts) == 0 && !renumbered(r) {
		// The body is another rank's (its profiler said so): a header edited, or two
		// files spliced. Read as the header's rank, its figures may be another's.
		r.Problems = append(r.Problems, fmt.Sprintf("%s:2: the header (line 1) says rank %d, but the body is of rank %d (its profiler's rank id, from %s): "+
			"which rank these figures are is not known", ri.Dir, r.Rank, id, r.Dir))
	}
	r.Rank = ri.Rank
	return r
}

// SummaryClaim is the claim of r a rank summary's header carries (ranksummary.Write):
// the process that profiled it and when, so that analyze tells two processes' claims
// of one rank from a re-run.
func SummaryClaim(r *profile.Rank) ranksummary.Claim {
	c := claimOfRank(r)
	return ranksummary.Claim{Worker: c.worker, AtNs: c.atNs}
}
