package parser

import (
	"path"
	"regexp"
)

// This file says which members of an archive hcclprof reads (internal/vfs reads the
// archive): only those are kept from a tar.

// keptNameRe matches the base names of the files hcclprof reads: the torch_npu and
// MindSpore exports (profiler_info*.json, profiler_metadata.json, trace_view.json,
// communication*.json, ...), msprof's info.json.N, timelines and analyze/ files, and
// Kineto traces (*.json, *.json.gz), the CSVs read and the profiler dbs.
var keptNameRe = regexp.MustCompile(`(?i)(\.json|\.json\.gz|^info\.json\.\d+)$`)

// archiveKeeps reports whether a member (slash path) is one hcclprof may read, so
// worth keeping from a tar, and whether it is a database (read at random).
func archiveKeeps(member string) (keep, seekable bool) {
	base := path.Base(member)
	_, isDB := isProfilerDB(base)
	isDB = isDB || base == analysisDBName
	return isDB || keptNameRe.MatchString(base) || exportedFiles[base], isDB
}
