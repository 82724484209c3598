package parser

import (
	"github.com/hcclprof/hcclprof/profile"
)

// inputFormat is one layout of profiler output hcclprof reads: how discovery
// recognises it and how one rank of it is read. Each is declared in a file of its
// own (format_*.go); inputFormats lists them. Adding a format is that file and its
// line in inputFormats.
type inputFormat struct {
	name string // for tests and messages
	// formats are the profile.Format values its ranks carry; a rank summary of
	// another format is refused.
	formats []profile.Format
	// file recognises a file named on the command line as the format's, adding what
	// it found to d; nil when the format has no single-file form.
	file func(d *discovery, path string) bool
	// walkedFile says that file also recognises the files met in a directory walk
	// (other formats are found there through their directory).
	walkedFile bool
	// dir looks at a directory the walk reaches and adds what it recognises to d;
	// claimed says the directory is the format's and the walk goes no deeper.
	dir func(d *discovery, path string) (claimed bool)
	// owns reports whether a rank input found by discovery is the format's; nil for
	// the one default format, which owns every input no other format owns.
	owns func(ri RankInput) bool
	// load reads one rank of the format as its files give it (LoadRank then
	// normalises the result); nil for a layout whose ranks another entry loads.
	load func(ri RankInput) *profile.Rank
	// complete says its ranks were completed when written (their ops chosen), so
	// LoadRank does not choose them again.
	complete bool
}

// inputFormats are the formats in the order discovery tries them: on a directory, the
// first that claims it ends the look (msprof-analyze's output and Kineto traces are
// found beside others and claim nothing); on a file named alone, the first that
// recognises it.
var inputFormats []*inputFormat

// Set in init: a summary's reader checks its format against the list, which holds the
// summary format.
func init() {
	inputFormats = []*inputFormat{
		rankSummaryFormat,   // hcclprof summarize's rank files
		msprofAnalyzeFormat, // msprof-analyze's cluster_analysis_output
		torchRankFormat,     // torch_npu and MindSpore rank directories (text or db export)
		msprofFormat,        // msprof's PROF_* directories and their exports
		kinetoFormat,        // PyTorch profiler (Kineto) traces of GPU ranks
		torchLooseFormat,    // torch_npu's exported files without the rank layout
	}
}

// discovery is what the formats' detectors report to while Discover runs.
type discovery struct {
	add         func(RankInput)
	addDevs     func([]MsprofDevice) // msprof devices, numbered together at the end
	addSummary  func(summaryInput)   // msprof-analyze outputs, read after the raw ranks
	openArchive func(string) (string, error)
	notes       *[]string
	// walked are the real paths of the trees walked so far (the roots and the
	// directories reached through links), so that a link into one of them, or above
	// one, is not walked twice.
	walked []string
}

func (d *discovery) note(s string) { *d.notes = append(*d.notes, s) }

// detectFile offers a file named on the command line (or, walked, met in a directory
// walk) to the formats in order; false when none recognises it.
func (d *discovery) detectFile(path string, walked bool) bool {
	for _, f := range inputFormats {
		if f.file != nil && (!walked || f.walkedFile) && f.file(d, path) {
			return true
		}
	}
	return false
}

// detectDir offers a directory to the formats in order; true when one claims it.
func (d *discovery) detectDir(path string) bool {
	for _, f := range inputFormats {
		if f.dir != nil && f.dir(d, path) {
			return true
		}
	}
	return false
}

// formatOf is the format that reads a rank input.
func formatOf(ri RankInput) *inputFormat {
	var def *inputFormat
	for _, f := range inputFormats {
		switch {
		case f.load == nil:
		case f.owns == nil:
			def = f
		case f.owns(ri):
			return f
		}
	}
	return def
}

// knownFormat reports whether a rank summary's source format is one this build reads.
func knownFormat(f profile.Format) bool {
	for _, in := range inputFormats {
		for _, g := range in.formats {
			if g == f {
				return true
			}
		}
	}
	return false
}
