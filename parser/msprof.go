package parser

// msprof command-line output: PROF_* directories (docs/formats.md §1.3, §1.5, §9.1).
//
// Two layouts are read:
//
//   - CANN ≥ 8 text export: mindstudio_profiler_output/msprof_{YYYYMMDDhhmmss}.json (the
//     timeline, without a Python layer; or msprof_slice_{k}_{ts}.json slices, read as one
//     timeline) and analyze/communication.json, communication_matrix.json (the flat
//     layout, §3.3, §4.4). An op-based (PyTorch) run has no step marker in msprof's
//     output, so the rank is one step (-1), as msprof-analyze reads it (§10.4).
//   - the older per-iteration layout (CANN ≤ 7, MindSpore graph mode, §9.1):
//     device_N/timeline/msprof_{dev}_{model}_{iter}.json, one timeline per iteration,
//     read together as one run, and step_trace_{dev}_{model}_{iter}.json, whose
//     "Iteration {i}" events (cat "Iteration Time") become the step markers. Their
//     timestamps are device time (CLOCK_MONOTONIC_RAW µs numbers), the same clock as the
//     tasks, so a marker is the iteration's device window directly (there are no
//     host→device flows); markers of iterations without a timeline are dropped.
//
// Ranks come from device_N/info.json.N's rank_id; -1 (not set) is left for
// assignMsprofRanks, which numbers such devices in (hostUid, device) order as
// msprof-analyze does.

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// File and directory names of a PROF_* directory (docs/formats.md §1.3).
const (
	msprofExportDir  = "mindstudio_profiler_output"
	msprofAnalyzeDir = "analyze"
	msprofTimelineIn = "timeline" // device_N/timeline, the older layout
)

var (
	// profDirRe is msprof-analyze's PROF directory name (profiling_data_version_config.yaml).
	profDirRe      = regexp.MustCompile(`^PROF_\d{6}_\d{17}_\w+$`)
	msprofDeviceRe = regexp.MustCompile(`^device_(\d{1,2})$`)
	msprofInfoRe   = regexp.MustCompile(`^info\.json\.(\d{1,2})$`)
	// CANN 8 export files: one 14-digit export time shared by every file of an export.
	exportTimelineRe  = regexp.MustCompile(`^msprof_(\d{14})\.json$`)
	exportSliceRe     = regexp.MustCompile(`^msprof_slice_(\d+)_(\d{14})\.json$`)
	exportStepTraceRe = regexp.MustCompile(`^step_trace_(\d{14})\.json$`)
	// Older device_N/timeline files: msprof_{dev}_{model}_{iter}.json (2023),
	// msprof_{dev}_{model}_{iter}_{ts}.json (7.0.RC1), msprof_{n}_{n}_{ts}.json (7.0.0).
	oldTimelineRe  = regexp.MustCompile(`^msprof((?:_\d+)+)\.json$`)
	oldStepTraceRe = regexp.MustCompile(`^step_trace((?:_\d+)+)\.json$`)
	// oldCompanionRe: the per-iteration files exported beside msprof_{suffix}.json.
	oldCompanionRe = regexp.MustCompile(`^(?:hccl|task_time)((?:_\d+)+)\.json$`)
	// msprofDBRe is the unified db `msprof --type=db` writes at the PROF root
	// (msprof-analyze's ^msprof_\d{1,20}\.db$; the CLI writes 14 digits).
	msprofDBRe = regexp.MustCompile(`^msprof_(\d{1,20})\.db$`)
	// op_summary: CANN 8 export op_summary_{ts}.csv, older device_N/summary/op_summary_{n}_..._{ts}.csv.
	opSummaryRe = regexp.MustCompile(`^op_summary((?:_\d+)+)\.csv$`)
)

// msprofCommAnalyzerDB is the analysis db msprof writes in analyze/ (docs/formats.md §7.3).
const msprofCommAnalyzerDB = "communication_analyzer.db"

// isMsprofDir reports whether path is an msprof PROF directory: a directory named
// PROF_{6 digits}_{17 digits}_{word} (docs/formats.md §1.3), or one holding
// device_N/info.json.M (§1.5: how msprof-analyze finds a PROF directory's device).
//
// Discovery note: torch_npu (*_ascend_pt) and MindSpore (*_ascend_ms) rank directories
// hold a PROF_* directory of raw CANN data too; that one is part of their rank, not an
// msprof rank of its own.
func isMsprofDir(path string) bool {
	if !vfs.IsDir(path) {
		return false
	}
	if profDirRe.MatchString(filepath.Base(path)) {
		return true
	}
	for _, d := range msprofDeviceDirs(path) {
		if d.info != "" {
			return true
		}
	}
	return false
}

// msprofDevice is one device_N of a PROF directory: what discovery needs to number
// and load it.
type msprofDevice struct {
	ProfDir  string // the PROF_* directory
	Device   int    // N of device_N
	InfoFile string // device_N/info.json.N; "" when absent
	// RankID is info.json.N's rank_id as written; -1 when unset or unreadable.
	RankID int
	// Rank is the global rank to load the device as: RankID, or the rank
	// assignMsprofRanks gave a device whose RankID is -1 (-1 until then).
	Rank    int
	HostUID string // info.json.N's hostUid ("" in data before CANN 8)
	Host    string // info.json.N's hostname ("" when absent)
	// Chip is info.json.N's chip description (core counts, platform_version); nil
	// when it has none or could not be read.
	Chip *profile.DeviceInfo
	// Timestamp is the collection time in the PROF directory's name
	// (PROF_000001_{this}_XXXX, msprof-analyze's split('_')[-2]); 0 when the name has none.
	Timestamp int64
	// Others are the other devices of the same PROF directory. A CANN 8 export
	// (mindstudio_profiler_output/, analyze/) is per PROF directory: it is read as the
	// lowest device's.
	Others []int
	// Problem is set when info.json.N could not be read.
	Problem string
	// ExportOnly marks an export copied without its PROF directory: ProfDir is then
	// the export directory itself (mindstudio_profiler_output/), with no info.json.N
	// (RankID -1, no chip), device_N/ or analyze/ around it. Device is the one its
	// files name, -1 when they name none.
	ExportOnly bool
	// OpSummary is the op_summary file named alone on the command line: the device is
	// that file (ExportOnly), read rather than the newest op_summary beside it.
	OpSummary string
}

type msprofDeviceDir struct {
	n    int
	dir  string
	info string
}

// msprofDeviceDirs lists the device_N directories of dir that hold an info.json.M
// file or a timeline/ directory, by device number.
func msprofDeviceDirs(dir string) []msprofDeviceDir {
	entries, err := vfs.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []msprofDeviceDir
	for _, e := range entries {
		m := msprofDeviceRe.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		d := msprofDeviceDir{n: n, dir: filepath.Join(dir, e.Name())}
		sub, err := vfs.ReadDir(d.dir)
		if err != nil {
			continue
		}
		hasTimeline := false
		for _, s := range sub {
			if s.IsDir() {
				hasTimeline = hasTimeline || s.Name() == msprofTimelineIn
				continue
			}
			if mi := msprofInfoRe.FindStringSubmatch(s.Name()); mi != nil {
				// info.json.N names the device; prefer the one that matches device_N.
				if d.info == "" || mi[1] == m[1] {
					d.info = filepath.Join(d.dir, s.Name())
				}
			}
		}
		// A device directory that lost its info.json.N is still the device of the
		// PROF directory's export: skipped, its whole timeline left the job unnoticed
		// (scanMsprofDir makes the loss a problem of the rank).
		if d.info != "" || hasTimeline || hasExport(dir) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	return out
}

// hasExport reports whether a PROF directory holds msprof's export directory.
func hasExport(profDir string) bool {
	return vfs.IsDir(filepath.Join(profDir, msprofExportDir))
}

// msprofDirTimestamp is the collection time in a PROF directory's name
// (split('_')[-2]), 0 when it is not a number.
func msprofDirTimestamp(dir string) int64 {
	parts := strings.Split(filepath.Base(dir), "_")
	if len(parts) < 3 {
		return 0
	}
	ts, err := strconv.ParseInt(parts[len(parts)-2], 10, 64)
	if err != nil {
		return 0
	}
	return ts
}

var (
	// npuLabelRe is the process label msprof 25 gives a device's timeline processes
	// (process_labels "NPU 0"); the host's are "CPU".
	npuLabelRe = regexp.MustCompile(`^NPU (\d{1,2})$`)
	taskTimeRe = regexp.MustCompile(`^task_time((?:_\d+)+)\.csv$`)
)

// scanMsprofExport recognises an msprof export directory without its PROF directory
// (someone kept only mindstudio_profiler_output/): a directory holding a CANN 8 export
// timeline (msprof_{ts}.json or its slices), or one named mindstudio_profiler_output
// holding an op_summary_{ts}.csv. It returns the device it stands for, and where its
// device number came from: the Device_id column of op_summary (else task_time), which
// the 8.x exports write first, else the timeline's process_labels "NPU N". Its rank is
// -1: msprof writes the rank_id only in device_N/info.json.N, which such a copy lacks.
func scanMsprofExport(dir string) (dev msprofDevice, deviceFrom string, ok bool) {
	entries, err := vfs.ReadDir(dir)
	if err != nil {
		return msprofDevice{}, "", false
	}
	var timeline string
	for _, e := range entries {
		if !e.IsDir() && (exportTimelineRe.MatchString(e.Name()) || exportSliceRe.MatchString(e.Name())) {
			timeline = filepath.Join(dir, e.Name())
			break
		}
	}
	summary := vfs.NewestMatch(dir, opSummaryRe)
	if timeline == "" && (summary == "" || filepath.Base(dir) != msprofExportDir) {
		return msprofDevice{}, "", false
	}
	dev = msprofDevice{ProfDir: dir, Device: -1, RankID: -1, Rank: -1, ExportOnly: true}
	for _, csvFile := range []string{summary, vfs.NewestMatch(dir, taskTimeRe)} {
		if csvFile == "" {
			continue
		}
		if n, ok := firstDeviceID(csvFile); ok {
			dev.Device = n
			return dev, filepath.Base(csvFile) + "'s Device_id", true
		}
	}
	if timeline != "" {
		if n, ok := timelineNPULabel(timeline); ok {
			dev.Device = n
			return dev, filepath.Base(timeline) + "'s process label \"NPU " + strconv.Itoa(n) + "\"", true
		}
	}
	return dev, "", true
}

// firstDeviceID reads the Device_id of a CSV export's first row; false when the
// file has no such column or its first row holds no device number (the host rows
// of api_statistic say "host").
func firstDeviceID(file string) (int, bool) {
	f, err := vfs.Open(file)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	t, err := table.OpenCSV(f, file)
	if err != nil {
		return 0, false
	}
	i := t.Col("Device_id", "Device ID")
	if i < 0 {
		return 0, false
	}
	if ok, err := t.Next(); !ok || err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(t.Field(i)))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// errFoundLabel stops timelineNPULabel's scan at the first device label.
var errFoundLabel = errors.New("found")

// timelineNPULabel returns the device number of the first process_labels "NPU N"
// metadata event of a timeline; false when it has none (the labels may be plain "NPU").
func timelineNPULabel(file string) (int, bool) {
	f, err := vfs.Open(file)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	device := -1
	s := jsonx.NewStream(f)
	defer s.Release()
	_ = readChromeTrace(s, file, func(ev []byte) (int, error) {
		e, n, err := parseRawEvent(ev)
		if err != nil {
			return n, err
		}
		if string(e.ph) != `"M"` {
			return n, nil
		}
		if name, _ := jsonx.Unquote(e.name); name != "process_labels" || len(e.arg.labels) == 0 {
			return n, nil
		}
		label, _ := jsonx.Unquote(e.arg.labels)
		if m := npuLabelRe.FindStringSubmatch(label); m != nil {
			device, _ = strconv.Atoi(m[1])
			return n, errFoundLabel
		}
		return n, nil
	}, nil)
	return device, device >= 0
}

// scanMsprofDir lists the devices of a PROF directory, reading only their
// info.json.N (rank_id, hostUid). A device whose info.json.N is unreadable is
// listed with RankID -1 and Problem set. It fails when the directory cannot be read
// or has no device_N directory.
func scanMsprofDir(profDir string) ([]msprofDevice, error) {
	if _, err := vfs.ReadDir(profDir); err != nil {
		return nil, err
	}
	dirs := msprofDeviceDirs(profDir)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no device_N directory with info.json.N or timeline/: not an msprof PROF directory", profDir)
	}
	ts := msprofDirTimestamp(profDir)
	devs := make([]msprofDevice, 0, len(dirs))
	for _, d := range dirs {
		dev := msprofDevice{ProfDir: profDir, Device: d.n, InfoFile: d.info, RankID: -1, Rank: -1, Timestamp: ts}
		for _, o := range dirs {
			if o.n != d.n {
				dev.Others = append(dev.Others, o.n)
			}
		}
		if d.info != "" {
			if err := readMsprofInfo(&dev); err != nil {
				dev.Problem = err.Error()
			}
		} else {
			dev.Problem = fmt.Sprintf("%s: no info.json.%d (msprof writes one in every device directory): the device's rank, host and chip are not known, and it is numbered as a device without a rank_id",
				filepath.Join(profDir, filepath.Base(d.dir)), d.n)
		}
		dev.Rank = dev.RankID
		devs = append(devs, dev)
	}
	return devs, nil
}

// readMsprofInfo reads rank_id (an int, -1 when unset), hostUid (a decimal string)
// and the chip description from device_N/info.json.N.
func readMsprofInfo(dev *msprofDevice) error {
	f, err := vfs.Open(dev.InfoFile)
	if err != nil {
		return err
	}
	defer f.Close()
	root, err := jsonx.ReadTree(f, dev.InfoFile)
	if err != nil {
		return err
	}
	d := treeReader{jsonx.TreeReader{File: dev.InfoFile}}
	if err := d.Object(root, "info.json"); err != nil {
		return err
	}
	rank, err := d.IntVal(root.Get("rank_id"), -1, "rank_id")
	if err != nil {
		return err
	}
	if rank < -1 {
		rank = -1
	}
	uid, err := d.Text(root.Get("hostUid"), "hostUid")
	if err != nil {
		return err
	}
	host, err := d.Text(root.Get("hostname"), "hostname")
	if err != nil {
		return err
	}
	chip, err := d.deviceInfo(root, dev.Device)
	if err != nil {
		return err
	}
	dev.RankID, dev.HostUID, dev.Host, dev.Chip = rank, uid, host, chip
	return nil
}

// msprofClaim is a device's claim of its rank (rankClaim): its host and device number,
// and the date in its PROF directory's name; no worker without a host (data before
// CANN 8 may have none), where only devices of one PROF directory are known to be
// different devices.
func msprofClaim(d msprofDevice) rankClaim {
	host := cmp.Or(d.HostUID, d.Host)
	if host == "" {
		return rankClaim{}
	}
	c := rankClaim{worker: msprofWorker(host, d.Device)}
	c.atNs, _ = date17Ns(strconv.FormatInt(d.Timestamp, 10))
	return c
}

func joinProblems(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// assignMsprofRanks numbers msprof devices as msprof-analyze does (docs/formats.md §1.5)
// and drops duplicates:
//
//   - a device with a rank_id keeps it; when several devices claim one rank, the one
//     of the latest PROF directory (largest Timestamp) is kept;
//   - devices with rank_id -1 are keyed by (HostUID, Device); a key seen in several
//     PROF directories keeps the earliest one (smallest Timestamp); the keys, sorted by
//     HostUID (as a string) then Device, are given ranks 0, 1, 2, … in that order,
//     skipping ranks a rank_id already holds (msprof-analyze does not skip them: it
//     never mixes the two within one job).
//
// It returns the kept devices sorted by Rank, and one note per dropped device and per
// assignment.
func assignMsprofRanks(devs []msprofDevice) ([]msprofDevice, []string) {
	var notes []string
	label := func(d msprofDevice) string {
		if d.ExportOnly {
			return fmt.Sprintf("%s (device %d)", d.ProfDir, d.Device)
		}
		return fmt.Sprintf("%s device_%d", d.ProfDir, d.Device)
	}
	byRank := map[int]int{} // rank → index into kept
	var kept, unknown []msprofDevice
	conflicts := 0
	for _, d := range devs {
		if d.RankID < 0 {
			unknown = append(unknown, d)
			continue
		}
		d.Rank = d.RankID
		i, dup := byRank[d.Rank]
		if !dup {
			byRank[d.Rank] = len(kept)
			kept = append(kept, d)
			continue
		}
		old := kept[i]
		co, cd := msprofClaim(old), msprofClaim(d)
		oneCollection := old.ProfDir == d.ProfDir && old.Device != d.Device // whatever their hosts say
		if oneCollection {
			co.worker, cd.worker = cmp.Or(co.worker, fmt.Sprintf("device %d", old.Device)), cmp.Or(cd.worker, fmt.Sprintf("device %d", d.Device))
		}
		if oneCollection || co.concurrent(cd) {
			// Two devices of one collection: both are read (claims.go).
			kept[i].Problem = joinProblems(old.Problem, conflictProblem(d.Rank, label(d), co, cd))
			d.Problem = joinProblems(d.Problem, conflictProblem(d.Rank, label(old), cd, co)+"; numbered as a device without a rank_id")
			unknown = append(unknown, d)
			conflicts++
			continue
		}
		if d.Timestamp > old.Timestamp || (d.Timestamp == old.Timestamp && d.ProfDir > old.ProfDir) {
			kept[i], old = d, kept[i]
		}
		notes = append(notes, fmt.Sprintf("rank %d: %s ignored, %s is the latest", d.Rank, label(old), label(kept[i])))
	}
	type key struct {
		host string
		dev  int
		// export is the directory of an export without its PROF directory: having no
		// hostUid, two such copies of one device number are different devices.
		export string
	}
	byKey := map[key]int{}
	var keyed []msprofDevice
	for _, d := range unknown {
		k := key{host: d.HostUID, dev: d.Device}
		if d.ExportOnly {
			k.export = d.ProfDir
		}
		i, dup := byKey[k]
		if !dup {
			byKey[k] = len(keyed)
			keyed = append(keyed, d)
			continue
		}
		old := keyed[i]
		if d.Timestamp < old.Timestamp || (d.Timestamp == old.Timestamp && d.ProfDir < old.ProfDir) {
			keyed[i], old = d, keyed[i]
		}
		notes = append(notes, fmt.Sprintf("host %q device %d: %s ignored, %s is the earliest", d.HostUID, d.Device, label(old), label(keyed[i])))
	}
	slices.SortFunc(keyed, func(a, b msprofDevice) int {
		return cmp.Or(strings.Compare(a.HostUID, b.HostUID), cmp.Compare(a.Device, b.Device), strings.Compare(a.ProfDir, b.ProfDir))
	})
	next := 0
	for i := range keyed {
		d := &keyed[i]
		for {
			if _, taken := byRank[next]; !taken {
				break
			}
			next++
		}
		d.Rank = next
		byRank[next] = len(kept)
		kept = append(kept, *d)
	}
	if len(keyed) > 0 {
		claimed := ""
		if conflicts > 0 {
			claimed = fmt.Sprintf("; %d of them with a rank_id another device claimed at the same time", conflicts)
		}
		notes = append(notes, fmt.Sprintf("%d msprof device(s) without a rank_id (-1 in info.json.N, or no info.json.N in an export without its PROF directory%s): numbered in (hostUid, device) order from %s (rank %d), as msprof-analyze does",
			len(keyed), claimed, label(keyed[0]), keyed[0].Rank))
	}
	slices.SortStableFunc(kept, func(a, b msprofDevice) int { return cmp.Compare(a.Rank, b.Rank) })
	return kept, notes
}

// loadMsprofDir reads every device of a PROF directory, one Rank each (a PROF
// directory normally holds one device). Rank is info.json.N's rank_id, -1 when it is
// not set: number those with scanMsprofDir, assignMsprofRanks and loadMsprofDevice
// instead when loading a cluster. Unreadable or malformed files do not stop the load:
// they are recorded in the rank's Problems. It fails only when profDir cannot be read
// or has no device_N directory.
func loadMsprofDir(profDir string) ([]*profile.Rank, error) {
	devs, err := scanMsprofDir(profDir)
	if err != nil {
		return nil, err
	}
	ranks := make([]*profile.Rank, len(devs))
	for i, d := range devs {
		ranks[i] = loadMsprofDevice(d)
	}
	return ranks, nil
}

// msprofLoader collects one device's files into a Rank.
type msprofLoader struct {
	r   *profile.Rank
	dir string
}

func (l *msprofLoader) rel(p string) string {
	if s, err := filepath.Rel(l.dir, p); err == nil {
		return s
	}
	return p
}

func (l *msprofLoader) problem(format string, args ...any) {
	l.r.Problems = append(l.r.Problems, fmt.Sprintf(format, args...))
}

// open reads one file with parse; a missing file is not a problem here.
func (l *msprofLoader) open(path string, parse func(io.Reader, string) error) {
	f, err := vfs.Open(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			l.problem("%v", err)
		}
		return
	}
	defer f.Close()
	l.r.FilesUsed = append(l.r.FilesUsed, l.rel(path))
	if err := parse(f, path); err != nil {
		l.problem("%v", err)
	}
}

func (l *msprofLoader) ignore(paths ...string) {
	for _, p := range paths {
		l.r.FilesIgnored = append(l.r.FilesIgnored, l.rel(p))
	}
}

// loadMsprofDevice reads one device of a PROF directory as rank dev.Rank; for an
// export without its PROF directory (ExportOnly) only the export's timeline is read,
// as it is inside a PROF directory.
func loadMsprofDevice(dev msprofDevice) *profile.Rank {
	r := &profile.Rank{Rank: dev.Rank, Dir: dev.ProfDir, Format: profile.FormatMsprof,
		Info: profile.Info{RankID: dev.RankID, Host: dev.Host, HostUID: dev.HostUID}}
	l := &msprofLoader{r: r, dir: dev.ProfDir}
	if dev.InfoFile != "" {
		r.FilesUsed = append(r.FilesUsed, l.rel(dev.InfoFile))
	}
	if dev.Chip != nil {
		chip := *dev.Chip
		chip.File = l.rel(dev.InfoFile)
		r.Info.Device = &chip
	}
	if dev.Problem != "" {
		l.problem("%s", dev.Problem)
	}
	owner := true // the PROF directory's export is read as its lowest device's
	for _, o := range dev.Others {
		owner = owner && o > dev.Device
	}

	// A unified db at the PROF root is what msprof-analyze reads first (data type db):
	// it holds the device's timeline in the torch_npu db schema.
	if db := vfs.NewestMatch(dev.ProfDir, msprofDBRe); owner && !dev.ExportOnly && db != "" {
		l.readUnifiedDB(db)
		return l.finish()
	}

	var timelines, stepTraces []string
	exportDir := filepath.Join(dev.ProfDir, msprofExportDir)
	if dev.ExportOnly {
		exportDir = dev.ProfDir
	}
	if vfs.IsDir(exportDir) && dev.OpSummary == "" { // a file named alone is read alone
		if owner {
			timelines, stepTraces = l.pickExport(exportDir)
		} else {
			l.problem("%s/ is one export for all %d devices of this PROF directory; hcclprof reads it as device %d's, so device %d has no timeline of its own",
				msprofExportDir, len(dev.Others)+1, slices.Min(dev.Others), dev.Device)
		}
	}
	if len(timelines) == 0 && !dev.ExportOnly {
		if dir := filepath.Join(dev.ProfDir, fmt.Sprintf("device_%d", dev.Device), msprofTimelineIn); vfs.IsDir(dir) {
			timelines, stepTraces = l.pickOldTimeline(dir)
		}
	}
	if len(timelines) > 0 {
		l.readTimeline(timelines)
		l.readStepMarkers(stepTraces)
	} else if owner {
		// Without a timeline, op_summary's HCCL rows are the only record of the ops.
		summary := vfs.NewestMatch(exportDir, opSummaryRe)
		if dev.OpSummary != "" {
			summary = dev.OpSummary
		}
		if summary == "" && !dev.ExportOnly {
			summary = vfs.NewestMatch(filepath.Join(dev.ProfDir, fmt.Sprintf("device_%d", dev.Device), "summary"), opSummaryRe)
		}
		if summary != "" && kernelTimelineOf(r, summary, parseOpSummaryTimeline, l.rel) {
			// Its Step Id gives the steps: the task list is the timeline.
		} else {
			if summary != "" {
				l.open(summary, func(rd io.Reader, name string) error {
					rows, err := parseOpSummaryComm(rd, name)
					r.KernelCommOps = append(r.KernelCommOps, kernelOps(rows)...)
					return err
				})
			}
			l.noTimeline(dev)
		}
	}

	if analyze := filepath.Join(dev.ProfDir, msprofAnalyzeDir); owner && !dev.ExportOnly && vfs.IsDir(analyze) {
		l.readAnalyze(analyze)
	}
	return l.finish()
}

// noTimeline says that a device has no timeline, and how to export one.
func (l *msprofLoader) noTimeline(dev msprofDevice) {
	if dev.ExportOnly {
		l.problem("%s: no timeline (msprof_*.json) in this export, and no PROF directory beside it to export one from: only op_summary's communication rows are read",
			dev.ProfDir)
		return
	}
	l.problem("%s: no timeline (%s/msprof_*.json, or device_%d/timeline/msprof_*.json): export it with msprof --export=on --output=%s",
		dev.ProfDir, msprofExportDir, dev.Device, dev.ProfDir)
}

// readAnalyze reads analyze/: communication.json and communication_matrix.json, or
// when those are absent communication_analyzer.db (the --type=db analysis); other
// files are listed as ignored.
func (l *msprofLoader) readAnalyze(analyze string) {
	r := l.r
	if _, err := vfs.Stat(filepath.Join(analyze, "communication.json")); err != nil {
		if db := filepath.Join(analyze, msprofCommAnalyzerDB); vfs.IsFile(db) {
			loadAnalysisDB(r, db, l.rel, l.problem)
			if entries, err := vfs.ReadDir(analyze); err == nil {
				for _, e := range entries {
					if n := e.Name(); !e.IsDir() && n != msprofCommAnalyzerDB {
						l.ignore(filepath.Join(analyze, n))
					}
				}
			}
			return
		}
	}
	{
		l.open(filepath.Join(analyze, "communication.json"), func(rd io.Reader, name string) (err error) {
			r.CommStats, err = parseCommunicationJSON(rd, name)
			return err
		})
		l.open(filepath.Join(analyze, "communication_matrix.json"), func(rd io.Reader, name string) (err error) {
			r.CommMatrix, err = parseCommMatrixJSON(rd, name)
			return err
		})
		if entries, err := vfs.ReadDir(analyze); err == nil {
			for _, e := range entries {
				if n := e.Name(); !e.IsDir() && n != "communication.json" && n != "communication_matrix.json" {
					l.ignore(filepath.Join(analyze, n))
				}
			}
		}
	}
}

// finish completes a device's rank.
func (l *msprofLoader) finish() *profile.Rank {
	attachGroupHashes(l.r)
	sort.Strings(l.r.FilesUsed)
	sort.Strings(l.r.FilesIgnored)
	return l.r
}

// readUnifiedDB reads msprof_{ts}.db (the torch_npu db schema without PYTORCH_API,
// docs/formats.md §7.1), the text export beside it being ignored, and analyze/'s analysis.
func (l *msprofLoader) readUnifiedDB(db string) {
	r := l.r
	r.Format = profile.FormatMsprofDB
	r.FilesUsed = append(r.FilesUsed, l.rel(db))
	tdb, err := parseTorchDB(db)
	fillFromUnifiedDB(r, tdb)
	if err != nil {
		l.problem("%v", err)
	}
	if exportDir := filepath.Join(l.dir, msprofExportDir); vfs.IsDir(exportDir) {
		l.ignore(exportDir)
	}
	if analyze := filepath.Join(l.dir, msprofAnalyzeDir); vfs.IsDir(analyze) {
		l.readAnalyze(analyze)
	}
}

// pickExport chooses the timeline of a CANN 8 export directory (docs/formats.md §1.3): the
// newest export, msprof_{ts}.json with the greatest ts, or when that export is sliced,
// its msprof_slice_{k}_{ts}.json files by k. (msprof-analyze takes any whole file
// before slices, even an older one; the newest export is what the user last asked
// for.) A step_trace_{ts}.json of the same export, if any, gives the step markers
// [unverified: graph-mode runs; its events are read as in the older layout]. Other
// files are ignored.
func (l *msprofLoader) pickExport(dir string) (timelines, stepTraces []string) {
	entries, err := vfs.ReadDir(dir)
	if err != nil {
		l.problem("%v", err)
		return nil, nil
	}
	type slice struct {
		k    int
		path string
	}
	whole := map[string]string{}
	sliced := map[string][]slice{}
	steps := map[string]string{}
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		n, p := e.Name(), filepath.Join(dir, e.Name())
		files = append(files, p)
		if m := exportTimelineRe.FindStringSubmatch(n); m != nil {
			whole[m[1]] = p
		} else if m := exportSliceRe.FindStringSubmatch(n); m != nil {
			k, _ := strconv.Atoi(m[1])
			sliced[m[2]] = append(sliced[m[2]], slice{k, p})
		} else if m := exportStepTraceRe.FindStringSubmatch(n); m != nil {
			steps[m[1]] = p
		}
	}
	var ts string // 14 digits: text order is time order
	for t := range whole {
		ts = max(ts, t)
	}
	for t := range sliced {
		ts = max(ts, t)
	}
	if p, ok := whole[ts]; ok {
		timelines = []string{p}
	} else if s := sliced[ts]; len(s) > 0 {
		sort.Slice(s, func(i, j int) bool { return s[i].k < s[j].k })
		for _, x := range s {
			timelines = append(timelines, x.path)
		}
		// Slices number one timeline from 0: a number missing below the last is a part
		// of it lost, whose steps would drop out of every figure without a word.
		have := map[int]bool{}
		for _, x := range s {
			have[x.k] = true
		}
		for k := range s[len(s)-1].k {
			if have[k] {
				continue
			}
			l.problem("%s: missing, while slices up to %d of the same export are there: the timeline is partial",
				filepath.Join(dir, fmt.Sprintf("msprof_slice_%d_%s.json", k, ts)), s[len(s)-1].k)
		}
	}
	if p, ok := steps[ts]; ok && ts != "" {
		stepTraces = []string{p}
	}
	used := map[string]bool{}
	for _, p := range append(slices.Clone(timelines), stepTraces...) {
		used[p] = true
	}
	for _, p := range files {
		if !used[p] {
			l.ignore(p)
		}
	}
	return timelines, stepTraces
}

// pickOldTimeline chooses the timeline files of an older device_N/timeline directory:
// every msprof_{n}_..._{n}.json (one per iteration in 2023 data) of the latest export.
// A last number of 14 digits is an export time (7.0 file names): only the files of the
// greatest one are read. step_trace_*.json files of the same export give the step
// markers. hccl_*.json and task_time_*.json repeat rows of the merged msprof_*.json and
// are ignored, as is everything else.
func (l *msprofLoader) pickOldTimeline(dir string) (timelines, stepTraces []string) {
	entries, err := vfs.ReadDir(dir)
	if err != nil {
		l.problem("%v", err)
		return nil, nil
	}
	exportTime := func(nums string) string {
		parts := strings.Split(strings.TrimPrefix(nums, "_"), "_")
		if last := parts[len(parts)-1]; len(parts) >= 3 && len(last) == 14 {
			return last
		}
		return ""
	}
	tl := map[string][]string{}
	st := map[string][]string{}
	haveTimeline := map[string]bool{}   // by suffix: "_0_2_1"
	companions := map[string][]string{} // by suffix: the iteration's hccl_ and task_time_ files
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		n, p := e.Name(), filepath.Join(dir, e.Name())
		files = append(files, p)
		if m := oldTimelineRe.FindStringSubmatch(n); m != nil {
			t := exportTime(m[1])
			tl[t] = append(tl[t], p)
			haveTimeline[m[1]] = true
		} else if m := oldStepTraceRe.FindStringSubmatch(n); m != nil {
			t := exportTime(m[1])
			st[t] = append(st[t], p)
		} else if m := oldCompanionRe.FindStringSubmatch(n); m != nil {
			companions[m[1]] = append(companions[m[1]], n)
		}
	}
	if len(tl) == 0 {
		l.ignore(files...)
		return nil, nil
	}
	latest := "" // file names without an export time: ""
	for t := range tl {
		latest = max(latest, t) // 14 digits: text order is time order
	}
	// Each exported iteration has its msprof_, hccl_ and task_time_ files. An iteration
	// whose timeline alone is gone was lost, not left out of the export: its steps would
	// silently drop out of every figure (a real run lost its 15 ms step 2, and its mean
	// step read 31 ms instead of 26).
	for _, suffix := range slices.Sorted(maps.Keys(companions)) {
		if !haveTimeline[suffix] && exportTime(suffix) == latest {
			l.problem("%s: missing, while %s of the same iteration are there: that iteration's steps are not measured",
				filepath.Join(dir, "msprof"+suffix+".json"), strings.Join(companions[suffix], " and "))
		}
	}
	timelines, stepTraces = tl[latest], st[latest]
	vfs.SortByNumbers(timelines)
	vfs.SortByNumbers(stepTraces)
	used := map[string]bool{}
	for _, p := range append(slices.Clone(timelines), stepTraces...) {
		used[p] = true
	}
	for _, p := range files {
		if !used[p] {
			l.ignore(p)
		}
	}
	return timelines, stepTraces
}

// readTimeline reads the timeline files into one timeline: the slices of one export,
// or the per-iteration files of one run. A file that is truncated or corrupt leaves
// what was read before the bad byte, and a problem naming the file and the offset.
func (l *msprofLoader) readTimeline(files []string) {
	st := newTraceState(files[0])
	for _, p := range files {
		l.open(p, func(rd io.Reader, name string) error {
			st.file = name
			before := st.events
			s := jsonx.NewStream(rd)
			err := st.read(s)
			s.Release()
			if n := st.events - before; err != nil && n > 0 {
				return fmt.Errorf("%v (the timeline is partial: %d events of this file read before this point)", err, n)
			} else if err == nil && n == 0 {
				// msprof writes the device's tasks into every timeline it exports: one
				// without an event lost them.
				return fmt.Errorf("%s: a timeline without any event", name)
			}
			return err
		})
	}
	tl := st.finish()
	l.r.Problems = append(l.r.Problems, tl.Problems...)
	if tl.Events == 0 {
		return
	}
	r := l.r
	r.HasTimeline, r.Timeline, r.Overlap = true, tl.Timeline, tl.Overlap
}

// readStepMarkers reads the "Iteration {i}" events of step_trace files and keeps, as
// step markers, those whose window holds a device task or op of the timeline (the
// step trace lists every iteration; a per-iteration export may hold only some). A
// timeline that has its own ProfilerStep#N markers keeps them.
func (l *msprofLoader) readStepMarkers(files []string) {
	r := l.r
	var markers []profile.StepMarker
	for _, p := range files {
		l.open(p, func(rd io.Reader, name string) error {
			m, err := parseIterationMarkers(rd, name)
			markers = append(markers, m...)
			return err
		})
	}
	if len(r.Steps) > 0 || len(markers) == 0 {
		return
	}
	sort.SliceStable(markers, func(i, j int) bool { return markers[i].StartNs < markers[j].StartNs })
	seen := map[int]bool{}
	for _, m := range markers {
		if seen[m.Step] || !(msprofAnyStartsIn(r.Compute, m.Interval) || msprofAnyOpStartsIn(r.CommOps, m.Interval)) {
			continue
		}
		seen[m.Step] = true
		r.Steps = append(r.Steps, m)
	}
	var recorded, unexported []int
	for _, m := range markers {
		recorded = append(recorded, m.Step)
		if !seen[m.Step] {
			unexported = append(unexported, m.Step)
		}
	}
	if len(unexported) > 0 && len(r.Steps) > 0 {
		kept := make([]int, len(r.Steps))
		for i, st := range r.Steps {
			kept[i] = st.Step
		}
		r.Notes = append(r.Notes, fmt.Sprintf("the profiler's step trace lists iterations %s; the exported timelines hold %s: iterations %s are not analysed (msprof --export=on without --model-id and --iteration-id exports them all)",
			ranklist.Format(recorded), ranklist.Format(kept), ranklist.Format(unexported)))
	}
}

func msprofAnyStartsIn(ivs []profile.Interval, w profile.Interval) bool {
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].StartNs >= w.StartNs })
	return i < len(ivs) && ivs[i].StartNs < w.EndNs
}

func msprofAnyOpStartsIn(ops []profile.CommOp, w profile.Interval) bool {
	i := sort.Search(len(ops), func(i int) bool { return ops[i].StartNs >= w.StartNs })
	return i < len(ops) && ops[i].StartNs < w.EndNs
}

var iterationNameRe = regexp.MustCompile(`^Iteration (\d+)$`)

// parseIterationMarkers reads the iteration events of a step trace timeline
// (docs/formats.md §2.8): X events "Iteration {i}" of cat "Iteration Time", whose window
// [ts, ts+dur) runs from the iteration's start to its "Iteration End" (dur is
// "Iteration Time(ns)"). The step number is args "Iteration ID", else the name's.
// Other events (FP_BP Time, Iteration Refresh, Reduce, Data_aug Bound) are skipped.
func parseIterationMarkers(r io.Reader, file string) ([]profile.StepMarker, error) {
	var out []profile.StepMarker
	s := jsonx.NewStream(r)
	defer s.Release()
	err := readChromeTrace(s, file, func(ev []byte) (int, error) {
		e, n, err := parseRawEvent(ev)
		if err != nil {
			return n, err
		}
		if string(e.ph) != `"X"` {
			return n, nil
		}
		name, _ := jsonx.Unquote(e.name)
		cat, _ := jsonx.Unquote(e.cat)
		m := iterationNameRe.FindStringSubmatch(name)
		if m == nil || (cat != "" && cat != "Iteration Time") {
			return n, nil
		}
		step, _ := strconv.Atoi(m[1])
		if id := jsonx.IntOrZero(e.arg.iterationID); id > 0 && id <= 1<<31-1 {
			step = int(id)
		}
		iv, err := interval(&e)
		if err != nil {
			return n, err
		}
		out = append(out, profile.StepMarker{Step: step, Interval: iv})
		return n, nil
	}, nil)
	return out, err
}
