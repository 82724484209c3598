package parser

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/hcclprof/hcclprof/internal/order"
	"github.com/hcclprof/hcclprof/internal/vfs"
)

// ErrNothingFound is returned when the arguments hold no profile hcclprof can read.
var ErrNothingFound = errors.New("no profiler output found")

// RankInput is one rank's files, found by Discover.
type RankInput struct {
	Rank int    // global rank; -1 until known
	Dir  string // the rank directory (*_ascend_pt), or the folder of loose files
	// OutputDir holds the exported files (ASCEND_PROFILER_OUTPUT, or Dir for loose files).
	OutputDir string
	InfoFile  string // profiler_info_N.json, "" if none
	// Files are extra single files named on the command line (a lone trace_view.json).
	Files []string
	// DB is the torch_npu db export's ascend_pytorch_profiler_{rank}.db, "" if none.
	// When set the rank is read from it (and analysis.db beside it) rather than from
	// the text export, as msprof-analyze prefers db data when both exist.
	DB string

	// format is the format whose detector found the input, which reads it (nil: the
	// default format's); source, what that format needs to read it beyond Dir (an
	// msprof device, msprof-analyze's cluster output). A Kineto trace's and a rank
	// summary's Dir is the file itself.
	format *inputFormat
	source any

	notes []string // discovery remarks about this rank, moved to Inputs.Notes
	// loadErr is why the rank directory could not be read (permissions); LoadRank
	// reports it as the rank's problem.
	loadErr error
	// missing says why a directory that states its rank (a profiler_info file) holds no
	// profile; LoadRank reports it as the rank's problem.
	missing string
	// conflicts say which other inputs claimed this rank while profiling at the same
	// time (rankClaim); LoadRank reports them as the rank's problems.
	conflicts []string
	// problems are what discovery found wrong in the input itself; LoadRank reports
	// them as the rank's problems.
	problems []string
	// claim is a rank summary's claim of its rank, from its header.
	claim rankClaim
	// claimed is the rank the input said it was when another input claimed it too
	// (len(conflicts) > 0): Rank is that rank, or the number discovery gave it anew.
	claimed int
}

// Inputs is what discovery found.
type Inputs struct {
	Ranks []RankInput // sorted by rank
	Notes []string

	// archives are those opened (and registered) to find the ranks; Release lets
	// them go.
	archives []*vfs.Archive
}

// Release closes the archives Discover opened for these inputs (a tar's members are
// held in memory until then). The ranks cannot be loaded after it.
func (in *Inputs) Release() {
	for _, a := range in.archives {
		vfs.Release(a)
	}
	in.archives = nil
}

// discoverOptions tune Discover.
type discoverOptions struct {
	// Archive bounds what reading each archive (.zip, .tar.gz, .tgz, .tar) may cost;
	// zero fields take vfs.DefaultArchiveLimits.
	Archive vfs.ArchiveLimits
}

// maxWalkDepth bounds the directory walk, as msprof-analyze does (docs/formats.md §1.5).
const maxWalkDepth = 10

const ascendOutput = "ASCEND_PROFILER_OUTPUT"

// listDir lists a directory that discovery or loading must read in full; a variable
// so that tests can make it fail as a permission error does (tests run as root, which
// permissions do not stop).
var listDir = vfs.ReadDir

// Discover finds every rank under the arguments: cluster roots, torch_npu and
// MindSpore rank directories (*_ascend_pt, *_ascend_ms or any name), ASCEND_PROFILER_OUTPUT
// directories, folders of loose exported files, or single files; msprof's PROF_*
// directories, or their mindstudio_profiler_output/ copied alone (one msprof device
// each); msprof-analyze's cluster_analysis_output; and PyTorch (Kineto) traces. Ranks come from profiler_info_<rank>.json (or its
// rank_id); ranks without one are numbered after the known ones. When a rank appears
// twice the latest directory (by its timestamp) is kept and the others are noted.
//
// An archive (.zip, .tar.gz, .tgz, .tar), named or found in a directory, is searched
// as a directory, read in place; its files are named ARCHIVE!/MEMBER.
func Discover(args []string) (*Inputs, error) {
	return discoverWith(args, discoverOptions{})
}

// discoverWith is Discover with options.
func discoverWith(args []string, opts discoverOptions) (*Inputs, error) {
	in := &Inputs{}
	openArchive := func(p string) (string, error) {
		a, err := vfs.OpenShared(p, opts.Archive, archiveKeeps)
		if err != nil {
			return "", err
		}
		in.archives = append(in.archives, a)
		return a.Root(), nil
	}
	seen := map[string]bool{}
	var found []RankInput
	d := &discovery{openArchive: openArchive, notes: &in.Notes, held: map[*inputFormat][]any{}, heldAt: map[string]bool{}}
	d.add = func(ri RankInput) {
		key := ri.Dir + "\x00" + strings.Join(ri.Files, "\x00")
		if seen[key] {
			return
		}
		seen[key] = true
		if ri.format == nil {
			ri.format = d.at
		}
		in.Notes = append(in.Notes, ri.notes...)
		ri.notes = nil
		found = append(found, ri)
	}
	for _, arg := range args {
		st, err := vfs.Stat(arg)
		if err != nil {
			in.Release()
			return nil, fmt.Errorf("%s: %w", arg, err)
		}
		root := arg
		if !st.IsDir() && vfs.IsArchiveName(arg) && !vfs.InArchive(arg) {
			if root, err = openArchive(arg); err != nil {
				in.Release()
				return nil, err
			}
		} else if !st.IsDir() {
			if !d.detectFile(arg, false) {
				in.Notes = append(in.Notes, fmt.Sprintf("ignored %s: not a profiler file hcclprof reads", arg))
			}
			continue
		}
		n, nHeld := len(found), d.nHeld()
		if err := walkRanks(root, d); err != nil {
			in.Release()
			return nil, err
		}
		if len(found) == n && d.nHeld() == nHeld {
			in.Notes = append(in.Notes, fmt.Sprintf("%s: no rank directory (one with %s/ or a profiler db, PROF_*) or Kineto trace found", arg, ascendOutput))
		}
	}
	d.gather()
	in.Ranks = d.fill(assignRanks(found, &in.Notes))
	if len(in.Ranks) == 0 {
		in.Release()
		if foreign := foreignProfiles(args); len(foreign) > 0 {
			return in, fmt.Errorf("%w in %s, only %s", ErrNothingFound, strings.Join(args, " "), strings.Join(foreign, "; "))
		}
		var skipped []string // msprof-analyze's outputs that gave no rank, and why
		for _, n := range in.Notes {
			if strings.HasPrefix(n, skippedSummaryNote) {
				skipped = append(skipped, n)
			}
		}
		if len(skipped) > 0 {
			return in, fmt.Errorf("%w in %s: %s", ErrNothingFound, strings.Join(args, " "), strings.Join(skipped, "; "))
		}
		return in, fmt.Errorf("%w in %s: expected rank directories (*_ascend_pt, *_ascend_ms or any name) with profiler_info_<rank>.json and %s/, msprof PROF_* directories or their mindstudio_profiler_output, a trace_view.json, an ascend_pytorch_profiler_<rank>.db, a PyTorch (Kineto) trace or msprof-analyze's cluster_analysis_output; seen: %s",
			ErrNothingFound, strings.Join(args, " "), ascendOutput, seenIn(args))
	}
	return in, nil
}

// walkRanks walks root for the directories and files the formats recognise
// (inputFormats, in order). Archives found on the way are opened with
// d.openArchive (which returns the path of their root) and walked in turn.
func walkRanks(root string, d *discovery) error {
	root = filepath.Clean(root)
	rootDepth := strings.Count(root, string(os.PathSeparator))
	// WalkDir does not follow a root that is a symbolic link (`analyze ./latest`, a
	// link to the run), and would see one file; through a trailing separator the
	// system resolves it. Links below the root are not followed as directories.
	walkRoot := root
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if st, err := os.Stat(root); err == nil && st.IsDir() {
			walkRoot = root + string(os.PathSeparator)
		}
	}
	if !vfs.InArchive(root) {
		if real, err := vfs.RealPath(root); err == nil {
			d.walked = append(d.walked, real)
		}
	}
	return vfs.WalkDir(walkRoot, func(path string, e fs.DirEntry, err error) error {
		if path == walkRoot {
			path = root // the user's spelling, without the separator
		}
		if err != nil {
			d.note(fmt.Sprintf("skipped %s: %v", path, err))
			if e != nil && e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if path != root && e.Type()&fs.ModeSymlink != 0 && !vfs.InArchive(path) {
			if st, err := os.Stat(path); err == nil && st.IsDir() {
				return walkLinkedDir(path, d)
			}
		}
		if !e.IsDir() {
			if vfs.IsArchiveName(e.Name()) && !vfs.InArchive(path) && e.Type().IsRegular() {
				aroot, err := d.openArchive(path)
				if err != nil {
					d.note(fmt.Sprintf("skipped %v", err))
					return nil
				}
				return walkRanks(aroot, d)
			}
			d.detectFile(path, true)
			return nil
		}
		if strings.Count(path, string(os.PathSeparator))-rootDepth > maxWalkDepth {
			if isRankCandidate(path) {
				d.note(fmt.Sprintf("skipped %s: more than %d levels below %s (msprof-analyze's limit too)", path, maxWalkDepth, root))
			}
			return fs.SkipDir
		}
		if _, err := listDir(path); err != nil {
			// A directory that cannot be listed (permissions): when it looks like a
			// rank it becomes a rank whose loading reports the error, so the rank is
			// counted as unreadable rather than silently missing.
			if rankLikeName(e.Name()) {
				d.add(RankInput{Rank: -1, Dir: path, OutputDir: filepath.Join(path, ascendOutput), loadErr: err})
			} else {
				d.note(fmt.Sprintf("skipped %s: cannot read it: %v", path, err))
			}
			return fs.SkipDir
		}
		if d.detectDir(path) {
			return fs.SkipDir
		}
		return nil
	})
}

// walkLinkedDir walks a directory reached through a symbolic link below a root (ranks
// gathered into one directory by links), unless its real path is inside a tree walked
// already or holds one: that would read ranks twice, or loop.
func walkLinkedDir(path string, d *discovery) error {
	real, err := vfs.RealPath(path)
	if err != nil {
		d.note(fmt.Sprintf("skipped %s: %v", path, err))
		return nil
	}
	for _, w := range d.walked {
		if vfs.Within(real, w) || vfs.Within(w, real) {
			d.note(fmt.Sprintf("skipped %s: a link to %s, which overlaps %s, read already", path, real, w))
			return nil
		}
	}
	return walkRanks(path, d)
}

// rankLikeName reports whether a directory's name is that of a torch_npu or
// MindSpore rank directory ({worker}_{ts}_ascend_pt, ..._ascend_ms).
func rankLikeName(name string) bool {
	return strings.HasSuffix(name, "ascend_pt") || strings.HasSuffix(name, "ascend_ms")
}

// isProfilerInfoName reports whether a file is profiler_info_<rank>.json or the
// non-distributed profiler_info.json.
func isProfilerInfoName(n string) bool {
	return strings.HasPrefix(n, "profiler_info") && strings.HasSuffix(n, ".json")
}

// isRankCandidate reports whether a directory looks like a rank, whatever its name:
// it holds ASCEND_PROFILER_OUTPUT or a profiler_info file.
func isRankCandidate(dir string) bool {
	return vfs.IsDir(filepath.Join(dir, ascendOutput)) || profilerInfoIn(dir) != ""
}

// profilerInfoIn returns the first profiler_info*.json in dir (by name), "" if none.
// rankInfos lists the profiler_info_N.json files in dir, one per rank N: a rank
// directory has one.
func rankInfos(dir string) []string {
	entries, _ := vfs.ReadDir(dir)
	seen := map[int]bool{}
	var out []string
	for _, e := range entries {
		if r, ok := rankFromInfoFileName(e.Name()); ok && !e.IsDir() && !seen[r] {
			seen[r] = true
			out = append(out, e.Name())
		}
	}
	return out
}

func profilerInfoIn(dir string) string {
	entries, _ := vfs.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() && isProfilerInfoName(e.Name()) {
			return e.Name()
		}
	}
	return ""
}

// notRankReason says why a directory that looks like a rank (a rank directory's name,
// or a profiler_info file inside) is not read as one; "" when it does not look like
// a rank. It is called for directories rankDir refused.
func notRankReason(dir string) string {
	info := profilerInfoIn(dir)
	if info == "" && !rankLikeName(filepath.Base(dir)) {
		return ""
	}
	if db, _ := findProfilerDB(dir); db != "" || vfs.IsFile(filepath.Join(dir, "trace_view.json")) || vfs.IsFile(filepath.Join(dir, "step_trace_time.csv")) {
		return "" // read as a folder of loose exported files
	}
	var has string
	if info != "" {
		has = "has " + info + " but "
	}
	reason := has + "no " + ascendOutput + "/ and no profiler db inside"
	entries, _ := vfs.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "PROF_") {
			return reason + " (only the raw " + e.Name() + "/: the profile was not exported; torch_npu's offline analyse exports it)"
		}
	}
	return reason
}

// rankDir recognises a torch_npu rank directory, whatever its name: ASCEND_PROFILER_OUTPUT
// inside, and normally a profiler_info_<rank>.json. When ASCEND_PROFILER_OUTPUT holds an
// ascend_pytorch_profiler*.db the rank is read from the db export (DB), whose file
// name gives the rank as msprof-analyze takes it for db data; a text export beside it
// is then skipped, with a note. An ASCEND_PROFILER_OUTPUT that cannot be looked at
// (permissions) still makes a rank, whose loading reports the error.
func rankDir(dir string) (RankInput, bool) {
	out := filepath.Join(dir, ascendOutput)
	st, err := vfs.Stat(out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return RankInput{Rank: -1, Dir: dir, OutputDir: out, loadErr: err}, true
	}
	if err != nil || !st.IsDir() {
		return RankInput{}, false
	}
	ri := RankInput{Rank: -1, Dir: dir, OutputDir: out}
	if n := profilerInfoIn(dir); n != "" {
		ri.InfoFile = filepath.Join(dir, n)
		if r, ok := rankFromInfoFileName(n); ok {
			ri.Rank = r
		}
		if infos := rankInfos(dir); len(infos) > 1 {
			ri.problems = append(ri.problems, fmt.Sprintf("%s: holds the profiler_info of %d ranks (%s): which rank it is is not known (read as %s says)",
				dir, len(infos), strings.Join(infos, ", "), n))
		}
	}
	db, dbRank := findProfilerDB(out)
	if db == "" {
		return ri, true
	}
	ri.DB = db
	if dbRank >= 0 {
		if ri.Rank >= 0 && ri.Rank != dbRank {
			ri.notes = append(ri.notes, fmt.Sprintf("%s: %s says rank %d, %s says %d; using %d (the db's, as msprof-analyze does)",
				dir, filepath.Base(db), dbRank, filepath.Base(ri.InfoFile), ri.Rank, dbRank))
		}
		ri.Rank = dbRank
	}
	for _, n := range []string{"trace_view.json", "step_trace_time.csv", "communication.json", "kernel_details.csv"} {
		if vfs.IsFile(filepath.Join(out, n)) {
			ri.notes = append(ri.notes, fmt.Sprintf("%s: holds both the db and the text export; reading %s (the db is preferred, as msprof-analyze does)",
				dir, filepath.Base(db)))
			break
		}
	}
	return ri, true
}

// findProfilerDB returns the first ascend_pytorch_profiler*.db in dir (by name) and
// the rank its name gives (-1 if none); "" when there is none.
func findProfilerDB(dir string) (path string, rank int) {
	entries, _ := vfs.ReadDir(dir) // sorted by name
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if r, ok := isProfilerDB(e.Name()); ok {
			return filepath.Join(dir, e.Name()), r
		}
	}
	return "", -1
}

// latestCycles keeps, of inputs without a rank that one process wrote (one worker in
// their names: a schedule's profiling cycles, each its own directory or trace), the
// latest by the time in its name; the others are named in a note. Without it, the
// cycles of one unranked process read as that many ranks of one job.
func latestCycles(unranked []RankInput, notes *[]string) []RankInput {
	byWorker := map[string]int{}
	var out []RankInput
	for _, ri := range unranked {
		name := parseInputName(ri.Dir)
		i, seen := byWorker[name.worker]
		if name.worker == "" || len(ri.conflicts) > 0 || !seen {
			if name.worker != "" && len(ri.conflicts) == 0 {
				byWorker[name.worker] = len(out)
			}
			out = append(out, ri)
			continue
		}
		keep, drop := out[i], ri
		if name.ts > parseInputName(keep.Dir).ts { // one worker: one kind of time
			keep, drop = drop, keep
		}
		out[i] = keep
		*notes = append(*notes, fmt.Sprintf("skipped %s: an earlier profiling cycle of the process that wrote %s (worker %s), by the time in its name", drop.Dir, keep.Dir, name.worker))
	}
	return out
}

// assignRanks fills unknown ranks from profiler_info's rank_id or in order, drops
// duplicates (keeping the latest directory) and sorts.
func assignRanks(found []RankInput, notes *[]string) []RankInput {
	for i := range found {
		if found[i].Rank < 0 && found[i].InfoFile != "" {
			if f, err := vfs.Open(found[i].InfoFile); err == nil {
				info, err := parseProfilerInfo(f, found[i].InfoFile)
				f.Close()
				if err == nil && info.RankID >= 0 {
					found[i].Rank = info.RankID
				}
			}
		}
	}
	byRank := map[int]RankInput{}
	var unranked []RankInput
	for _, ri := range found {
		if ri.Rank < 0 {
			unranked = append(unranked, ri)
			continue
		}
		prev, dup := byRank[ri.Rank]
		if !dup {
			byRank[ri.Rank] = ri
			continue
		}
		if cp, cr := claimOf(prev), claimOf(ri); cp.concurrent(cr) {
			// Both are read: the first found keeps the rank, the other is numbered
			// after the known ones.
			if len(prev.conflicts) == 0 { // each later claimant names it: one problem says enough
				prev.conflicts = append(prev.conflicts, conflictProblem(ri.Rank, ri.Dir, cp, cr))
			}
			prev.claimed = prev.Rank
			byRank[ri.Rank] = prev
			ri.conflicts = append(ri.conflicts, conflictProblem(ri.Rank, prev.Dir, cr, cp))
			ri.claimed, ri.Rank = ri.Rank, -1
			unranked = append(unranked, ri)
			continue
		}
		np, nr := parseInputName(prev.Dir), parseInputName(ri.Dir)
		if np.kind == nr.kind && np.ts == nr.ts {
			// Neither name tells a re-run from another rank (rank1_a and rank1_b, or
			// the same time in both): keeping one would show the other's figures
			// as this rank's without a word. Both are read, and both incomplete.
			if len(prev.conflicts) == 0 {
				prev.conflicts = append(prev.conflicts, untimedClaimProblem(ri.Rank, prev.Dir, ri.Dir))
			}
			prev.claimed = prev.Rank
			byRank[ri.Rank] = prev
			ri.conflicts = append(ri.conflicts, untimedClaimProblem(ri.Rank, prev.Dir, ri.Dir))
			ri.claimed, ri.Rank = ri.Rank, -1
			unranked = append(unranked, ri)
			continue
		}
		keep, drop := prev, ri
		why := "older, by the timestamp in its name"
		switch {
		case np.kind != "" && nr.kind != "" && np.kind != nr.kind: // a name without a time counts as the oldest
			why = "not newer by the timestamp in its name; the first found is kept"
		case nr.ts > np.ts:
			keep, drop = ri, prev
		}
		byRank[ri.Rank] = keep
		*notes = append(*notes, fmt.Sprintf("skipped %s: duplicate of rank %d (%s), %s", drop.Dir, ri.Rank, keep.Dir, why))
	}
	out := make([]RankInput, 0, len(byRank)+len(unranked))
	for _, ri := range byRank {
		out = append(out, ri)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rank < out[j].Rank })
	next := 0
	if len(out) > 0 {
		next = out[len(out)-1].Rank + 1
	}
	// In the names' natural order: a job's traces named by worker "rank2" and "rank10"
	// are numbered 2 before 10, not by their bytes.
	sort.Slice(unranked, func(i, j int) bool { return order.NaturalLess(unranked[i].Dir, unranked[j].Dir) })
	unranked = latestCycles(unranked, notes)
	for _, ri := range unranked {
		ri.Rank = next
		switch {
		case len(ri.conflicts) > 0:
			ri.conflicts[len(ri.conflicts)-1] += fmt.Sprintf("; read as rank %d", next)
		case formatOf(ri).unranked != "":
			*notes = append(*notes, fmt.Sprintf("%s: %s; numbered rank %d", ri.Dir, formatOf(ri).unranked, next))
		default:
			*notes = append(*notes, fmt.Sprintf("%s: no profiler_info_<rank>.json; numbered rank %d", ri.Dir, next))
		}
		next++
		out = append(out, ri)
	}
	return out
}
