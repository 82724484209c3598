package parser

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/parallel"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// exportedFiles are the files of ASCEND_PROFILER_OUTPUT that hcclprof reads.
var exportedFiles = map[string]bool{
	"trace_view.json":           true,
	"step_trace_time.csv":       true,
	"communication.json":        true,
	"communication_matrix.json": true,
	"kernel_details.csv":        true,
}

// LoadOptions tune LoadCluster.
type LoadOptions struct {
	Workers int // ranks parsed at once; 0 means GOMAXPROCS
	// Archive bounds what reading each archive may cost; zero fields take
	// vfs.DefaultArchiveLimits.
	Archive vfs.ArchiveLimits
	// OnRank, when set, is called from the worker with each rank as soon as it is read
	// (for instance analysis.Accumulator.Add, which summarises and trims it), so a
	// large cluster need not hold every trace at once.
	OnRank func(r *profile.Rank)
	// InOrder, when set, is called after OnRank with each rank, one rank at a time in
	// the order of the cluster's ranks: a worker that finishes a rank before the ranks
	// ahead of it waits for them. It is for output written as the ranks are read that
	// must not depend on which worker finished first.
	InOrder func(r *profile.Rank)
	// Progress, when set, is told after each rank how many of the total are read.
	Progress func(done, total int)
}

// LoadCluster discovers and parses every rank under args, ranks in parallel.
// Unreadable or malformed files do not stop the load: they are recorded in the rank's
// Problems, so the result is partial and says what is missing.
func LoadCluster(args []string, opts LoadOptions) (*profile.Cluster, error) {
	in, err := discoverWith(args, discoverOptions{Archive: opts.Archive})
	if err != nil {
		return nil, err
	}
	defer in.Release()
	c := &profile.Cluster{Ranks: make([]*profile.Rank, len(in.Ranks)), Notes: in.Notes}
	var done atomic.Int64
	// parallel.For hands out the ranks in order, so the rank whose turn it is has a
	// worker and never waits: the turns cannot deadlock.
	var turn struct {
		sync.Mutex
		next int
	}
	ready := sync.NewCond(&turn)
	parallel.For(len(in.Ranks), opts.Workers, func(i int) {
		c.Ranks[i] = LoadRank(in.Ranks[i])
		if opts.OnRank != nil {
			opts.OnRank(c.Ranks[i])
		}
		if opts.InOrder != nil {
			turn.Lock()
			for turn.next != i {
				ready.Wait()
			}
			turn.Unlock()
			opts.InOrder(c.Ranks[i])
			turn.Lock()
			turn.next++
			turn.Unlock()
			ready.Broadcast()
		}
		if opts.Progress != nil {
			opts.Progress(int(done.Add(1)), len(in.Ranks))
		}
	})
	jsonx.DropStreamBuffers()
	if note := ignoredNote(c.Ranks); note != "" {
		c.Notes = append(c.Notes, note)
	}
	if note := formatsNote(c.Ranks); note != "" {
		c.Notes = append(c.Notes, note)
	}
	return c, nil
}

// formatsNote says which format each rank came from when a cluster mixes formats
// (msprof-analyze refuses such a cluster; hcclprof analyses it as one run).
func formatsNote(ranks []*profile.Rank) string {
	byFormat := map[profile.Format][]int{}
	for _, r := range ranks {
		byFormat[r.Format] = append(byFormat[r.Format], r.Rank)
	}
	if len(byFormat) < 2 {
		return ""
	}
	var parts []string
	for f, rs := range byFormat {
		parts = append(parts, fmt.Sprintf("%s: ranks %s", f, intList(rs)))
	}
	sort.Strings(parts)
	return "mixed cluster, analysed as one run: " + strings.Join(parts, "; ")
}

func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// readableFile reports whether hcclprof reads a file of ASCEND_PROFILER_OUTPUT (in
// one export or the other).
func readableFile(name string) bool {
	_, isDB := isProfilerDB(name)
	return exportedFiles[name] || isDB || name == analysisDBName
}

// LoadRank reads one rank with the format that owns it (inputFormats), gives it its
// format's traits (formatTraits), then normalises the result (profile.Rank.Normalize)
// and, unless the format's ranks were completed when written, chooses where its ops
// come from.
func LoadRank(ri RankInput) *profile.Rank {
	f := formatOf(ri)
	r := f.load(ri)
	r.Traits = formatTraits[r.Format]
	r.Problems = append(r.Problems, ri.problems...)
	r.Problems = append(r.Problems, ri.conflicts...)
	r.Normalize()
	if !f.complete {
		opsFromCommStats(r)
	}
	return r
}

// loadTorchRank reads a torch_npu (or MindSpore) rank directory.
func loadTorchRank(ri RankInput) *profile.Rank {
	r := &profile.Rank{Rank: ri.Rank, Dir: ri.Dir, Format: profile.FormatTorchNPUText, Info: profile.Info{RankID: -1}}
	rel := func(p string) string {
		if s, err := filepath.Rel(ri.Dir, p); err == nil {
			return s
		}
		return p
	}
	problem := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }

	// open reads one file with parse; a missing file is not a problem here.
	open := func(path string, parse func(io.Reader, string) error) {
		f, err := vfs.Open(path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				problem("%v", err)
			}
			return
		}
		defer f.Close()
		r.FilesUsed = append(r.FilesUsed, rel(path))
		if err := parse(f, path); err != nil {
			problem("%v", err)
		}
	}
	if ri.InfoFile != "" {
		open(ri.InfoFile, func(rd io.Reader, name string) (err error) {
			r.Info, err = parseProfilerInfo(rd, name)
			return err
		})
	}
	open(filepath.Join(ri.Dir, "profiler_metadata.json"), func(rd io.Reader, name string) (err error) {
		r.Metadata, err = parseProfilerMetadata(rd, name)
		return err
	})
	chip, chipProblems := rawDeviceInfo(ri.Dir)
	if chip != nil {
		r.Info.Device = chip
		r.FilesUsed = append(r.FilesUsed, chip.File)
	}
	r.Problems = append(r.Problems, chipProblems...)

	files, listed := torchFiles(ri, r, rel, problem)
	if listed && len(files) == 0 {
		// A rank directory whose output holds nothing hcclprof reads is a rank
		// without data: say so rather than leave it silently empty.
		defer problem("%s holds none of the files hcclprof reads (trace_view.json, step_trace_time.csv, communication.json, communication_matrix.json, kernel_details.csv, or a profiler db)", rel(ri.OutputDir))
	}
	if ri.DB != "" {
		loadTorchDB(r, ri, files, rel, problem)
		sort.Strings(r.FilesUsed)
		sort.Strings(r.FilesIgnored)
		return r
	}
	loadTorchText(r, files, open, rel, problem)
	attachGroupHashes(r)
	sort.Strings(r.FilesUsed)
	sort.Strings(r.FilesIgnored)
	return r
}

// torchFiles are the files of a rank's export hcclprof reads, by name: those named on
// the command line, else those its output directory holds (with the db export, the
// text export's files are ignored); listed says the directory was listed.
func torchFiles(ri RankInput, r *profile.Rank, rel func(string) string, problem func(string, ...any)) (files map[string]string, listed bool) {
	files = map[string]string{}
	if len(ri.Files) > 0 {
		for _, f := range ri.Files {
			files[filepath.Base(f)] = f
		}
	} else {
		entries, err := listDir(ri.OutputDir)
		if err != nil {
			problem("%v", err)
		}
		listed = err == nil
		for _, e := range entries {
			p := filepath.Join(ri.OutputDir, e.Name())
			if e.IsDir() {
				// A directory where a file hcclprof reads belongs: that file is missing.
				if _, isDB := isProfilerDB(e.Name()); exportedFiles[e.Name()] || isDB || e.Name() == analysisDBName {
					problem("%s is a directory, not a file: not read", rel(p))
				}
				continue
			}
			switch {
			case ri.DB != "" && (e.Name() == analysisDBName || p == ri.DB):
				files[e.Name()] = p
			case ri.DB == "" && exportedFiles[e.Name()]:
				files[e.Name()] = p
			default: // with the db export, the text export's files too
				r.FilesIgnored = append(r.FilesIgnored, rel(p))
			}
		}
	}
	return files, listed
}

// loadTorchText reads the text export's files into the rank (and analysis.db, named
// alone on the command line).
func loadTorchText(r *profile.Rank, files map[string]string, open func(string, func(io.Reader, string) error), rel func(string) string, problem func(string, ...any)) {
	if p, ok := files[analysisDBName]; ok { // named alone on the command line
		loadAnalysisDB(r, p, rel, problem)
	}
	if p, ok := files["trace_view.json"]; ok {
		open(p, func(rd io.Reader, name string) error {
			tl, err := parseTraceView(rd, name)
			if tl != nil {
				r.Problems = append(r.Problems, tl.Problems...)
			}
			if tl != nil && tl.Events > 0 {
				r.HasTimeline, r.Timeline, r.Overlap = true, tl.Timeline, tl.Overlap
			}
			if err != nil && r.HasTimeline {
				return fmt.Errorf("%v (the timeline is partial: %d events read before this point)", err, tl.Events)
			}
			return err
		})
	}
	if p, ok := files["step_trace_time.csv"]; ok {
		open(p, func(rd io.Reader, name string) (err error) {
			r.StepTrace, err = parseStepTraceCSV(rd, name)
			return err
		})
	}
	emptyComm := ""
	if p, ok := files["communication.json"]; ok {
		open(p, func(rd io.Reader, name string) (err error) {
			r.CommStats, err = parseCommunicationJSON(rd, name)
			if err == nil && len(r.CommStats) == 0 {
				emptyComm = rel(p)
			}
			return err
		})
	}
	if p, ok := files["communication_matrix.json"]; ok {
		open(p, func(rd io.Reader, name string) (err error) {
			r.CommMatrix, err = parseCommMatrixJSON(rd, name)
			return err
		})
	}
	// kernel_details.csv's communication rows are needed when there is no timeline
	// (Level0): they are then the only record of the ops. Its first rows say what
	// the model computes in, which no timeline records.
	if p, ok := files["kernel_details.csv"]; ok {
		// Read as the rank's timeline when nothing else gives its steps (a step table
		// present but empty is damage, said elsewhere, not a reason to look here).
		if _, stepTable := files["step_trace_time.csv"]; !r.HasTimeline && !stepTable && kernelTimelineOf(r, p, parseKernelDetailsTimeline, rel) {
		} else if !r.HasTimeline {
			open(p, func(rd io.Reader, name string) error {
				rows, err := parseKernelDetailsComm(rd, name)
				r.KernelCommOps = append(r.KernelCommOps, kernelOps(rows)...)
				return err
			})
		}
		// No step figure depends on the data type: a file that cannot be read for
		// it is a note, not a problem.
		if f, err := vfs.Open(p); err == nil {
			dts, err := parseKernelDTypes(f, p, maxDTypeRows)
			f.Close()
			switch {
			case err != nil:
				r.Notes = append(r.Notes, fmt.Sprintf("the compute's data type is not read: %v", err))
			case len(dts) > 0:
				r.ComputeDTypeNs = dts
				if !slices.Contains(r.FilesUsed, rel(p)) {
					r.FilesUsed = append(r.FilesUsed, rel(p))
				}
			default:
				if r.HasTimeline {
					r.FilesIgnored = append(r.FilesIgnored, rel(p))
				}
			}
		}
	}
	if emptyComm != "" && (len(r.CommOps) > 0 || len(r.KernelCommOps) > 0) {
		// communication.json of no op ({}) beside a rank's HCCL ops: the file lost its
		// content, and with it the ops' groups (their hashes) and per-op figures.
		// Its ops would be put in a group named after the id in their names, which
		// no rank shares.
		problem("%s holds no communication op, but the rank ran %d HCCL op(s): its communication data (the ops' groups, their transit and wait) is missing",
			emptyComm, max(len(r.CommOps), len(r.KernelCommOps)))
	}
}

// loadTorchDB reads the db export: the profiler db (the timeline and META_DATA) and,
// when present, analysis.db (the profiler's step breakdown and communication
// analysis). META_DATA's sections replace those of profiler_metadata.json, which
// LoadRank read already and which fills the sections the db lacks.
func loadTorchDB(r *profile.Rank, ri RankInput, files map[string]string, rel func(string) string, problem func(string, ...any)) {
	r.Format = profile.FormatTorchNPUDB
	r.FilesUsed = append(r.FilesUsed, rel(ri.DB))
	tdb, err := parseTorchDB(ri.DB)
	fillFromUnifiedDB(r, tdb)
	if err != nil {
		if r.HasTimeline {
			problem("%v (the timeline is partial: %d rows read before this point)", err, tdb.Events)
		} else {
			problem("%v", err)
		}
	}
	if p, ok := files[analysisDBName]; ok {
		loadAnalysisDB(r, p, rel, problem)
	}
	attachGroupHashes(r)
}

// loadAnalysisDB reads analysis.db into the rank; what was read before an error is
// kept.
func loadAnalysisDB(r *profile.Rank, path string, rel func(string) string, problem func(string, ...any)) {
	r.FilesUsed = append(r.FilesUsed, rel(path))
	adb, err := parseAnalysisDB(path)
	if adb != nil {
		r.StepTrace, r.CommStats, r.CommMatrix = adb.StepTrace, adb.CommStats, adb.CommMatrix
	}
	if err != nil {
		problem("%v", err)
	}
}

// attachGroupHashes replaces the 3-digit group id of ops with the full group hash
// that communication.json gives, so ops match across files and ranks. Two groups of
// a rank can share the 3-digit id (it is the hash's last digits), and then an op name
// too: the op takes the group of the entry that started nearest to it.
func attachGroupHashes(r *profile.Rank) {
	if len(r.CommStats) == 0 {
		return
	}
	type entry struct {
		group   string
		startNs int64
	}
	byName := map[string][]entry{}
	byID := map[string]string{}
	ambiguousID := map[string]bool{}
	for _, s := range r.CommStats {
		byName[s.Name] = append(byName[s.Name], entry{s.Group, s.StartNs})
		if id := profile.GroupIDFromName(s.Name); id != "" {
			if g, ok := byID[id]; ok && g != s.Group {
				ambiguousID[id] = true
			}
			byID[id] = s.Group
		}
	}
	fix := func(ops []profile.CommOp) {
		for i := range ops {
			if es := byName[ops[i].Name]; len(es) > 0 {
				best := es[0]
				for _, e := range es[1:] {
					if absNs(e.startNs-ops[i].StartNs) < absNs(best.startNs-ops[i].StartNs) {
						best = e
					}
				}
				ops[i].Group = best.group
			} else if g, ok := byID[ops[i].Group]; ok && !ambiguousID[ops[i].Group] {
				ops[i].Group = g
			}
		}
	}
	fix(r.CommOps)
	fix(r.KernelCommOps)
}

func absNs(d int64) int64 {
	if d < 0 {
		return -d
	}
	return d
}

// ignoredNote summarises, over all ranks, the files present that hcclprof does not read.
func ignoredNote(ranks []*profile.Rank) string {
	count := map[string]int{}
	for _, r := range ranks {
		for _, f := range r.FilesIgnored {
			if !readableFile(filepath.Base(f)) {
				count[filepath.Base(f)]++
			}
		}
	}
	if len(count) == 0 {
		return ""
	}
	names := make([]string, 0, len(count))
	for n := range count {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s (%d)", n, count[n])
	}
	return "ignored files hcclprof does not read: " + strings.Join(parts, ", ")
}

// fillFromUnifiedDB copies what a unified profiler db gave (torch_npu's, MindSpore's
// or msprof's: the same schema) into the rank; META_DATA's sections replace those
// read before. tdb may be partial (read up to an error) or nil.
func fillFromUnifiedDB(r *profile.Rank, tdb *torchDB) {
	if tdb == nil {
		return
	}
	if tdb.Events > 0 {
		r.HasTimeline, r.Timeline, r.Overlap = true, tdb.traceTimeline.Timeline, tdb.Overlap
	}
	if md := tdb.Metadata; md.Env != nil {
		r.Metadata.Env = md.Env
	}
	if md := tdb.Metadata; md.ParallelGroups != nil {
		r.Metadata.ParallelGroups = md.ParallelGroups
	}
	if md := tdb.Metadata; md.DistributedArgs != nil {
		r.Metadata.DistributedArgs = md.DistributedArgs
	}
	if tdb.ChipName != "" {
		r.Info.ChipName = tdb.ChipName
	}
}

// kernelTimelineOf reads a device task list (kernel_details.csv, op_summary) as the
// rank's timeline when the rank has neither a timeline nor a step table, so that a
// lone task list with its Step Id column is read rather than refused. It reports
// whether the file gave steps; when it does not (no Step Id, or none filled), the
// caller reads its communication rows as before. A file that cannot be read as a
// timeline is a problem of the rank, as any unreadable file.
func kernelTimelineOf(r *profile.Rank, path string, parse func(io.Reader, string) (*kernelTimeline, error), rel func(string) string) bool {
	f, err := vfs.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	tl, err := parse(f, path)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		r.FilesUsed = append(r.FilesUsed, rel(path))
		return true
	}
	if len(tl.Steps) == 0 {
		return false
	}
	r.HasTimeline, r.ClipToStepWindows = true, true
	r.Timeline = profile.Timeline{Compute: tl.Compute, CommOps: tl.CommOps, Steps: tl.Steps}
	r.CommOpsSource = "timeline"
	r.FilesUsed = append(r.FilesUsed, rel(path))
	note := fmt.Sprintf("no timeline and no step table: the steps are read from %s's Step Id, each the span of its device tasks (the host's time before a step's first task is not in the file)", filepath.Base(path))
	if tl.NoStepRows > 0 {
		note += fmt.Sprintf("; %d tasks without a Step Id count where they fall inside a step's span", tl.NoStepRows)
	}
	r.Notes = append(r.Notes, note)
	return true
}

// kernelOps turns the comm rows of kernel_details.csv or op_summary into ops with the
// profiler's step (-1 when it gave none).
func kernelOps(rows []kernelCommOp) []profile.CommOp {
	out := make([]profile.CommOp, 0, len(rows))
	for _, k := range rows {
		op := k.CommOp
		op.Step = -1
		if k.HasStep {
			op.Step = k.Step
		}
		out = append(out, op)
	}
	return out
}
