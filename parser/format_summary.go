package parser

import "path/filepath"

// rankSummaryFormat is hcclprof summarize's rank file (ranksummary.go), found by its
// name alone or in a walked directory. Its ranks keep the Format they were
// summarised from, and were completed when written.
var rankSummaryFormat = &inputFormat{
	name: "hcclprof rank summary",
	file: func(d *discovery, path string) bool {
		if !IsRankSummaryName(filepath.Base(path)) {
			return false
		}
		d.add(rankSummaryInput(path))
		return true
	},
	walkedFile: true,
	load:       loadRankSummary,
	claim:      func(ri RankInput) rankClaim { return ri.claim },
	complete:   true,
	fuzz:       []string{"FuzzRankSummary", "FuzzSummaryFastPath", "FuzzDecodeIntArray"},
}
