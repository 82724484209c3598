package parser

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// torchRankFormat is a torch_npu (or MindSpore) rank directory: ASCEND_PROFILER_OUTPUT
// with the text export or the db export (load.go, discover.go). It is the default
// format: a rank input no other format owns is one of these, including the ranks
// discovery could not read or found empty, whose load reports why.
var torchRankFormat = &inputFormat{
	name: "torch_npu / MindSpore rank directory",
	formats: []profile.Format{profile.FormatTorchNPUText, profile.FormatTorchNPUDB,
		profile.FormatMindSporeText, profile.FormatMindSporeDB},
	dir: func(d *discovery, path string) bool {
		if filepath.Base(path) == ascendOutput {
			// Reached directly (the user named it, or loose layout): its parent is the rank.
			if ri, ok := rankDir(filepath.Dir(path)); ok {
				d.add(ri)
			} else {
				d.add(RankInput{Rank: -1, Dir: filepath.Dir(path), OutputDir: path})
			}
			return true
		}
		if ri, ok := rankDir(path); ok {
			d.add(ri)
			return true
		}
		if reason := notRankReason(path); reason != "" {
			if info := profilerInfoIn(path); info != "" {
				// It states its rank: a rank whose data is missing, not a gap to note.
				ri := RankInput{Rank: -1, Dir: path, OutputDir: filepath.Join(path, ascendOutput), InfoFile: filepath.Join(path, info), missing: reason}
				if r, ok := rankFromInfoFileName(info); ok {
					ri.Rank = r
				}
				d.add(ri)
			} else {
				d.note(fmt.Sprintf("skipped %s: %s", path, reason))
			}
			return true
		}
		return false
	},
	load:      loadTorchRankInput,
	isDefault: true,
	claim:     torchClaim,
	fuzz: []string{"FuzzTraceView", "FuzzTraceViewInParts", "FuzzStepTraceCSV", "FuzzCommunicationJSON",
		"FuzzCommMatrixJSON", "FuzzKernelDetails", "FuzzProfilerInfo", "internal/units.FuzzNsFromUsText"},
}

// torchClaim is a rank directory's claim: the process and time in its name, the time
// the end of its collection when its profiler_info says.
func torchClaim(ri RankInput) rankClaim {
	endNs := int64(0)
	if ri.InfoFile != "" {
		endNs = collectionEndNs(ri.InfoFile)
	}
	return nameClaim(ri.Dir, endNs)
}

// torchLooseFormat is torch_npu's exported files without the rank layout: a folder
// of them, or one named alone (a trace_view.json, a profiler db), which stands for
// its rank alone. Its ranks load as torchRankFormat's.
var torchLooseFormat = &inputFormat{
	name: "torch_npu exported files",
	file: func(d *discovery, path string) bool {
		ri, ok := exportedFileInput(path)
		if ok {
			d.add(ri)
		}
		return ok
	},
	dir: func(d *discovery, path string) bool {
		if db, dbRank := findProfilerDB(path); db != "" {
			d.add(RankInput{Rank: dbRank, Dir: path, OutputDir: path, DB: db})
		} else if vfs.IsFile(filepath.Join(path, "trace_view.json")) || vfs.IsFile(filepath.Join(path, "step_trace_time.csv")) ||
			vfs.IsFile(filepath.Join(path, "kernel_details.csv")) {
			d.add(RankInput{Rank: -1, Dir: path, OutputDir: path})
		}
		return false
	},
}

// exportedFileInput turns a single exported file into a rank input. A profiler db
// stands for its rank alone: only the named file is read, as for a lone
// trace_view.json.
func exportedFileInput(path string) (RankInput, bool) {
	base := filepath.Base(path)
	dbRank, isDB := isProfilerDB(base)
	if !isDB && !exportedFiles[base] && base != analysisDBName {
		return RankInput{}, false
	}
	dir := filepath.Dir(path)
	// A file inside a rank directory stands for that rank.
	if filepath.Base(dir) == ascendOutput {
		if ri, ok := rankDir(filepath.Dir(dir)); ok {
			ri.Files, ri.DB, ri.notes = []string{path}, "", nil
			if isDB {
				ri.DB = path
				if dbRank >= 0 {
					ri.Rank = dbRank
				}
			}
			return ri, true
		}
	}
	ri := RankInput{Rank: -1, Dir: dir, OutputDir: dir, Files: []string{path}}
	if isDB {
		ri.DB, ri.Rank = path, dbRank
	}
	return ri, true
}

// loadTorchRankInput reads a torch_npu or MindSpore rank, or says why it cannot.
func loadTorchRankInput(ri RankInput) *profile.Rank {
	if ri.missing != "" {
		r := &profile.Rank{Rank: ri.Rank, Dir: ri.Dir, Format: profile.FormatTorchNPUText, Info: profile.Info{RankID: -1}}
		r.Problems = append(r.Problems, fmt.Sprintf("%s %s", ri.Dir, ri.missing))
		return r
	}
	if ri.loadErr != nil {
		r := &profile.Rank{Rank: ri.Rank, Dir: ri.Dir, Format: profile.FormatTorchNPUText, Info: profile.Info{RankID: -1}}
		r.Problems = append(r.Problems, fmt.Sprintf("cannot read the rank directory: %v", ri.loadErr))
		return r
	}
	r := loadTorchRank(ri)
	if strings.HasSuffix(filepath.Base(ri.Dir), "ascend_ms") {
		// MindSpore writes torch_npu's layout (docs/formats.md §1.2); say which framework.
		r.Format = profile.FormatMindSporeText
		if ri.DB != "" {
			r.Format = profile.FormatMindSporeDB
		}
	}
	return r
}
