package parser

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hcclprof/hcclprof/profile"
)

// msprofAnalyzeFormat is msprof-analyze's cluster output (msprofanalyze.go): a rank
// known only from its summaries. Found beside the raw ranks, it claims no directory;
// its ranks fill in those the raw ranks lack (summaryRanks), as raw data win.
var msprofAnalyzeFormat = &inputFormat{
	name:    "msprof-analyze cluster output",
	formats: []profile.Format{profile.FormatMsprofAnalyze},
	file: func(d *discovery, path string) bool {
		if !isClusterSummaryFile(filepath.Base(path)) {
			return false
		}
		d.hold(path, summaryInput{dir: filepath.Dir(path), files: []string{path}})
		return true
	},
	dir: func(d *discovery, path string) bool {
		if files := clusterSummaryFilesIn(path); len(files) > 0 {
			// Walked on, as it may sit beside rank directories in the cluster
			// directory it analysed.
			d.hold(strings.Join(files, "\x00"), summaryInput{dir: path, files: files})
		} else if filepath.Base(path) == clusterOutputDir {
			d.note(fmt.Sprintf("skipped %s: none of msprof-analyze's files hcclprof reads (%s)", path, strings.Join(clusterSummaryFiles, ", ")))
		}
		return false
	},
	fill: summaryRanks,
	load: func(ri RankInput) *profile.Rank {
		if r := ri.source.(*clusterSummary).Ranks[ri.Rank]; r != nil {
			return r
		}
		return &profile.Rank{Rank: ri.Rank, Dir: ri.Dir, Format: profile.FormatMsprofAnalyze, Info: profile.Info{RankID: ri.Rank},
			Problems: []string{"msprof-analyze's cluster output has no data for this rank"}}
	},
	fuzz: []string{"FuzzMsprofAnalyzeOutputs"},
}
