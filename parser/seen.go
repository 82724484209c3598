package parser

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/internal/vfs"
)

// hcclSumNotebookMarker is the file msprof-analyze's hccl_sum recipe writes (with
// all_stats.csv, top_op_stats.csv and group_name_map.csv) under --export_type
// notebook: per-rank statistics per op type, which hold no step.
const hcclSumNotebookMarker = "rank_stats.csv"

// maxSeenNames bounds how many names seenIn lists per argument.
const maxSeenNames = 8

// seenIn says what the arguments hold, for "no profiler output found": that message
// listed only what hcclprof looks for, and a user could not tell a wrong directory
// from a profile it failed to recognise. It names, per argument, whether it is empty,
// a file (its size), or a tree (how many files and directories, and the first few
// names, shallowest first); at most maxForeignEntries entries are looked at.
func seenIn(args []string) string {
	var parts []string
	for _, arg := range args {
		st, err := os.Stat(arg)
		switch {
		case err != nil:
			parts = append(parts, fmt.Sprintf("%s: %v", arg, err))
			continue
		case !st.IsDir():
			what := fmt.Sprintf("%s is a file of %d bytes", arg, st.Size())
			if strings.HasSuffix(strings.ToLower(arg), ".json") || strings.HasSuffix(strings.ToLower(arg), ".json.gz") {
				what += " that is not a Kineto trace (no \"schemaVersion\" before \"traceEvents\"), nor a timeline named as one"
			}
			parts = append(parts, what)
			continue
		}
		root := filepath.Clean(arg) + string(filepath.Separator)
		type seen struct {
			rel   string
			depth int
			dir   bool
		}
		var all []seen
		var recipeDirs []string
		files, dirs := 0, 0
		budget := maxForeignEntries + 1 // the walk counts arg itself
		cut := vfs.WalkLimited(arg, maxWalkDepth, &budget, func(path string, e fs.DirEntry, depth int) {
			if path == root {
				return
			}
			rel, _ := filepath.Rel(root, path)
			if e.IsDir() {
				dirs++
				all = append(all, seen{rel + string(filepath.Separator), depth, true})
				return
			}
			files++
			all = append(all, seen{rel, depth, false})
			if e.Name() == hcclSumNotebookMarker && vfs.IsFile(filepath.Join(filepath.Dir(path), "top_op_stats.csv")) {
				recipeDirs = append(recipeDirs, filepath.Dir(path))
			}
		})
		if files+dirs == 0 {
			parts = append(parts, arg+" is empty")
			continue
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].depth < all[j].depth })
		var names []string
		for _, s := range all[:min(len(all), maxSeenNames)] {
			names = append(names, s.rel)
		}
		if len(all) > maxSeenNames {
			names = append(names, "...")
		}
		count := fmt.Sprintf("%d files and %d directories", files, dirs)
		if cut {
			count = "more than " + count
		}
		parts = append(parts, fmt.Sprintf("%s holds %s (%s), none of them one of these", arg, count, strings.Join(names, ", ")))
		for _, d := range recipeDirs {
			parts = append(parts, fmt.Sprintf("%s is msprof-analyze's hccl_sum recipe output (--export_type notebook): statistics per op type over the steps collected, no step breakdown; "+
				"a step breakdown is what `msprof-analyze -m all -d CLUSTER` writes, or `-m cluster_time_summary` (db export), or the rank directories themselves", d))
		}
	}
	return strings.Join(parts, "; ")
}
