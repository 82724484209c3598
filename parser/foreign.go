package parser

import (
	"fmt"
	"io/fs"
	"regexp"

	"github.com/hcclprof/hcclprof/internal/vfs"
)

// Profiles of formats hcclprof does not read are named when nothing else is found, so
// that "no profiler output found" says which output was found and what to collect
// instead, rather than listing what hcclprof expects.

// foreignFormat is a format recognised by one of its file names.
type foreignFormat struct {
	name *regexp.Regexp
	what string // what the file is, and what to collect instead
}

var foreignFormats = []foreignFormat{
	{regexp.MustCompile(`^(step_trace_raw_\d+_detail_time\.csv|ascend_timeline_display_\d+\.json|hccl_raw_\d+\.csv)$`),
		"older MindSpore profiler output (1.x and 2.0 write it), which hcclprof does not read (nor does msprof-analyze): profile with MindSpore 2.3 or later, whose *_ascend_ms rank directories it reads"},
	{regexp.MustCompile(`\.(nsys-rep|qdrep)$`),
		"an Nsight Systems report, which hcclprof does not read: profile the GPU ranks with torch.profiler (tensorboard_trace_handler writes the Kineto traces it reads)"},
	{regexp.MustCompile(`\.ncu-rep$`),
		"an Nsight Compute report (one kernel's metrics, no timeline of the step): profile the GPU ranks with torch.profiler"},
}

// maxForeignEntries bounds the look: it runs only when nothing was found, over what the
// user named, which may be a large tree of something else.
const maxForeignEntries = 100000

// foreignProfiles names the first file of each foreign format under args, as
// "PATH: what it is"; nil when none is found.
func foreignProfiles(args []string) []string {
	seen := map[int]bool{}
	var out []string
	budget := maxForeignEntries
	for _, arg := range args {
		vfs.WalkLimited(arg, maxWalkDepth, &budget, func(path string, e fs.DirEntry, _ int) {
			if e.IsDir() {
				return
			}
			for i, f := range foreignFormats {
				if !seen[i] && f.name.MatchString(e.Name()) {
					seen[i] = true
					out = append(out, fmt.Sprintf("%s: %s", path, f.what))
				}
			}
		})
	}
	return out
}
