package parser

import (
	"sort"

	"github.com/hcclprof/hcclprof/profile"
)

// inputFormat is one layout of profiler output hcclprof reads: how discovery
// recognises it, how one rank of it is read, and the fuzz targets that hold its
// reader. Each is declared in a file of its own (format_*.go); inputFormats lists them.
// Adding a format is that file and its line in inputFormats: a rank input carries the
// format that found it and what that format needs to read it (RankInput.source), and
// discovery calls the format's hooks only.
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
	// gather turns what the format's detectors held (discovery.hold) into rank inputs
	// once every argument is walked, before the ranks are numbered; nil when the
	// format holds nothing.
	gather func(held []any, notes *[]string) []RankInput
	// fill is gather for a format whose ranks only fill in those no other format gave:
	// it runs after the ranks are numbered, given them, and returns the inputs to add.
	fill func(held []any, ranks []RankInput, notes *[]string) []RankInput
	// load reads one rank of the format as its files give it (LoadRank then
	// normalises the result); nil for a layout whose ranks another entry loads.
	load func(ri RankInput) *profile.Rank
	// claim is who claimed a rank input of the format, and when (claims.go); nil: the
	// zero claim.
	claim func(ri RankInput) rankClaim
	// unranked is what discovery says of an input of the format that gives no rank,
	// numbered after the known ones ("" for the rank directories' wording).
	unranked string
	// isDefault marks the one format that reads every rank input no other format
	// reads: those of a format without load, and those discovery made itself (a rank
	// directory it could not list).
	isDefault bool
	// complete says its ranks were completed when written (their ops chosen), so
	// LoadRank does not choose them again.
	complete bool
	// fuzz are the fuzz targets that feed its readers arbitrary bytes: Fuzz* of this
	// package's tests, or of another package's as "dir.FuzzX" (dir from the module
	// root). make fuzz runs every target go test lists; a test holds each format to
	// naming one, and each named to exist.
	fuzz []string
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
	// add adds a rank input, read by the format whose hook found it.
	add         func(RankInput)
	openArchive func(string) (string, error)
	notes       *[]string
	// walked are the real paths of the trees walked so far (the roots and the
	// directories reached through links), so that a link into one of them, or above
	// one, is not walked twice.
	walked []string
	// at is the format whose hook runs; held, what each format's hooks held for its
	// gather or fill.
	at     *inputFormat
	held   map[*inputFormat][]any
	heldAt map[string]bool // the keys of what was held
}

func (d *discovery) note(s string) { *d.notes = append(*d.notes, s) }

// hold keeps something the running format found for its gather or fill, which see
// all of it at once when the walk is done (msprof numbers the devices of every PROF
// directory together; msprof-analyze's ranks fill in those the raw data lack). What
// was held under a key already is not held again; "" is no key.
func (d *discovery) hold(key string, v any) {
	if key != "" {
		key = d.at.name + "\x00" + key
		if d.heldAt[key] {
			return
		}
		d.heldAt[key] = true
	}
	d.held[d.at] = append(d.held[d.at], v)
}

// nHeld is how many things the formats hold.
func (d *discovery) nHeld() int {
	n := 0
	for _, h := range d.held {
		n += len(h)
	}
	return n
}

// detectFile offers a file named on the command line (or, walked, met in a directory
// walk) to the formats in order; false when none recognises it.
func (d *discovery) detectFile(path string, walked bool) bool {
	defer func() { d.at = nil }()
	for _, f := range inputFormats {
		if d.at = f; f.file != nil && (!walked || f.walkedFile) && f.file(d, path) {
			return true
		}
	}
	return false
}

// detectDir offers a directory to the formats in order; true when one claims it.
func (d *discovery) detectDir(path string) bool {
	defer func() { d.at = nil }()
	for _, f := range inputFormats {
		if d.at = f; f.dir != nil && f.dir(d, path) {
			return true
		}
	}
	return false
}

// gather adds the rank inputs the formats make of what they held, before the ranks
// are numbered.
func (d *discovery) gather() {
	defer func() { d.at = nil }()
	for _, f := range inputFormats {
		if held := d.held[f]; f.gather != nil && len(held) > 0 {
			d.at = f
			for _, ri := range f.gather(held, d.notes) {
				d.add(ri)
			}
		}
	}
}

// fill adds, to the numbered ranks, those the formats that fill in make of what they
// held, and keeps the ranks in order.
func (d *discovery) fill(ranks []RankInput) []RankInput {
	for _, f := range inputFormats {
		if held := d.held[f]; f.fill != nil && len(held) > 0 {
			for _, ri := range f.fill(held, ranks, d.notes) {
				ri.format = f
				ranks = append(ranks, ri)
			}
			sort.SliceStable(ranks, func(i, j int) bool { return ranks[i].Rank < ranks[j].Rank })
		}
	}
	return ranks
}

// formatOf is the format that reads a rank input.
func formatOf(ri RankInput) *inputFormat {
	if ri.format != nil && ri.format.load != nil {
		return ri.format
	}
	for _, f := range inputFormats {
		if f.isDefault {
			return f
		}
	}
	panic("parser: no default input format")
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
