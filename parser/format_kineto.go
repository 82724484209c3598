package parser

import (
	"path/filepath"
	"strings"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// kinetoFormat is a PyTorch profiler (Kineto) trace of a GPU rank (kineto.go), named
// alone or met in a directory beside other files; it claims no directory.
var kinetoFormat = &inputFormat{
	name:    "PyTorch profiler (Kineto) trace",
	formats: []profile.Format{profile.FormatKineto},
	file: func(d *discovery, path string) bool {
		ri, ok := kinetoInput(path)
		if ok {
			d.add(ri)
		}
		return ok
	},
	dir: func(d *discovery, path string) bool {
		entries, _ := vfs.ReadDir(path)
		for _, e := range entries {
			// A rank summary is claimed by its own format; opening each of thousands
			// gathered in one directory to rule out Kineto took a fifth of a second a
			// thousand.
			if e.IsDir() || exportedFiles[e.Name()] || ranksummary.IsName(e.Name()) {
				continue
			}
			if ri, ok := kinetoInput(filepath.Join(path, e.Name())); ok {
				d.add(ri)
			}
		}
		return false
	},
	load: func(ri RankInput) *profile.Rank {
		r, err := openKineto(ri.Dir)
		if r == nil {
			r = &profile.Rank{Format: profile.FormatKineto, Info: profile.Info{RankID: -1}}
		}
		if err != nil {
			r.Problems = append(r.Problems, err.Error())
		}
		r.Rank, r.Dir = ri.Rank, ri.Dir
		return r
	},
	claim:    func(ri RankInput) rankClaim { return nameClaim(ri.Dir, 0) },
	unranked: "no rank in its distributedInfo",
	fuzz:     []string{"FuzzKineto"},
}

// kinetoInput recognises a PyTorch profiler (Kineto) trace by its content (a JSON
// object with schemaVersion before traceEvents, plain or gzip); names such as
// *.pt.trace.json(.gz) or nccl_data.json.gz vary too much to rely on.
func kinetoInput(path string) (RankInput, bool) {
	if !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".json.gz") {
		return RankInput{}, false
	}
	rank, ok := sniffKineto(path)
	if !ok {
		return RankInput{}, false
	}
	return RankInput{Rank: rank, Dir: path}, true // Dir is the trace
}
