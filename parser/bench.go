package parser

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/profile"
)

// Benchmark sweeps: the timings a team takes of its own cluster, read to calibrate
// the cost model. Three forms:
//
//   - nccl-tests' text output (all_reduce_perf and its siblings): comment lines
//     starting with '#' (one "#  Rank  N Group ..." line per rank, and in newer
//     versions "# Collective test starting: all_reduce_perf"), then a row per size:
//     size(B) count(elements) type [redop] [root], then time(us) algbw busbw #wrong
//     out-of-place and the same in place. The size is the total (every rank's piece
//     for AllGather and ReduceScatter). The out-of-place time is taken.
//   - hccl_test's output (CANN tools/hccl_test): a header "data_size(Bytes): |
//     aveg_time(us): | alg_bandwidth(GB/s): | check_result:" (avg_time in its
//     documentation) and rows "8192 | 12.50 | 18.25 | success". It names neither
//     the op nor the rank count; its data_size is the data on one NPU, read as an
//     AllGather's or ReduceScatter's piece (the CANN documentation does not say
//     which side; BenchOptions.Size overrides).
//   - a CSV table with a header naming op, ranks, bytes and time columns (aliases
//     below); '#' lines are comments. Columns it lacks come from BenchOptions.

// BenchOptions give what a benchmark's output does not say.
type BenchOptions struct {
	Op    string // the collective (all_reduce, allreduce, hcom_allReduce, ...)
	Ranks int    // the ranks it ran on
	// Size is how the output counts an AllGather's, ReduceScatter's or AlltoAll's
	// size; "" takes the format's own (nccl-tests and CSV: total; hccl_test: per rank).
	Size profile.BenchSizeSemantics
}

// BenchInfo says what was read.
type BenchInfo struct {
	Format string // nccl-tests, hccl_test or csv
	Notes  []string
}

// maxBenchBytes bounds a benchmark file: sweeps are a few hundred lines.
const maxBenchBytes = 64 << 20

// ReadBench reads the benchmark output at path.
func ReadBench(path string, opts BenchOptions) ([]profile.BenchPoint, BenchInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, BenchInfo{}, err
	}
	defer f.Close()
	return parseBench(f, path, opts)
}

// parseBench reads a benchmark's output from r; name is used in errors.
func parseBench(r io.Reader, name string, opts BenchOptions) ([]profile.BenchPoint, BenchInfo, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBenchBytes+1))
	if err != nil {
		return nil, BenchInfo{}, err
	}
	if len(data) > maxBenchBytes {
		return nil, BenchInfo{}, fmt.Errorf("%s: larger than %d MiB: not a benchmark sweep", name, maxBenchBytes>>20)
	}
	text := string(data)
	var pts []profile.BenchPoint
	var info BenchInfo
	switch {
	case strings.Contains(text, "data_size(Bytes)"):
		info.Format = "hccl_test"
		pts, err = parseHCCLTest(text, name, opts, &info)
	case ncclTestsMarker.MatchString(text):
		info.Format = "nccl-tests"
		pts, err = parseNCCLTests(text, name, opts, &info)
	default:
		info.Format = "csv"
		pts, err = parseBenchCSV(text, name, opts, &info)
	}
	if err != nil {
		return nil, info, err
	}
	if len(pts) == 0 {
		return nil, info, fmt.Errorf("%s: no timing rows found (read as %s)", name, info.Format)
	}
	return pts, info, nil
}

var (
	ncclTestsMarker   = regexp.MustCompile(`(?m)^\s*(\d+:\s*)?#\s*(nThread|Collective test starting|Using devices|nccl-tests version|Rank\s+\d+\s+Group|size\s+count\s+type)`)
	ncclTestsRankLine = regexp.MustCompile(`^#\s*Rank\s+(\d+)\s+Group`)
	ncclTestsOpLine   = regexp.MustCompile(`^#\s*Collective test starting:\s*(\S+)`)
)

// benchOp normalises a benchmark's op name; "" when it is not a collective the
// cost model prices.
func benchOp(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, "_perf")
	s = strings.TrimSuffix(s, "_test")
	s = strings.TrimPrefix(s, "hcom_")
	s = strings.TrimPrefix(s, "hcom")
	s = strings.NewReplacer("_", "", "-", "", " ", "").Replace(s)
	switch s {
	case "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall":
		return s
	case "alltoallv", "alltoallvc":
		return "alltoall"
	}
	return ""
}

// toModelBytes converts a benchmark's size to the model's n.
func toModelBytes(op string, ranks int, size int64, sem profile.BenchSizeSemantics) int64 {
	if sem == profile.SizePerRank && (op == "allgather" || op == "reducescatter" || op == "alltoall") {
		return size * int64(ranks)
	}
	return size
}

func checkPoint(p profile.BenchPoint, file string, line int) error {
	switch {
	case p.Ranks < 2:
		return errAtLine(file, line, "%d ranks: a collective needs two or more", p.Ranks)
	case p.Bytes <= 0:
		return errAtLine(file, line, "size %d bytes: want a positive size", p.Bytes)
	case math.IsNaN(p.TimeUs) || math.IsInf(p.TimeUs, 0) || p.TimeUs <= 0:
		return errAtLine(file, line, "time %v µs: want a positive, finite time", p.TimeUs)
	case p.TimeUs > 3.6e9:
		return errAtLine(file, line, "time %v µs is over an hour: not one collective", p.TimeUs)
	}
	return nil
}

func semanticsOr(opts BenchOptions, def profile.BenchSizeSemantics) profile.BenchSizeSemantics {
	if opts.Size != "" {
		return opts.Size
	}
	return def
}

func parseNCCLTests(text, file string, opts BenchOptions, info *BenchInfo) ([]profile.BenchPoint, error) {
	override := benchOp(opts.Op)
	if opts.Op != "" && override == "" {
		return nil, fmt.Errorf("%s: op %q: want allreduce, allgather, reducescatter, broadcast, reduce or alltoall", file, opts.Op)
	}
	// One output may hold several runs (a script's loop): each "Collective test
	// starting" line begins one, with its own op and rank lines.
	nt := &ncclTestsRun{file: file, opts: opts, info: info, override: override, sem: semanticsOr(opts, profile.SizeTotal),
		ranks: map[int]bool{}, maxRank: -1, said: map[string]bool{}}
	var out []profile.BenchPoint
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		// srun --label prefixes each line with its task: "0: # ...".
		if i := strings.Index(s, ": "); i > 0 && i < 6 && isDigits(s[:i]) {
			s = strings.TrimSpace(s[i+2:])
		}
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "#") {
			if err := nt.comment(s, line); err != nil {
				return nil, err
			}
			continue
		}
		p, ok, err := nt.row(strings.Fields(s), line)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, sc.Err()
}

// ncclTestsRun is what nccl-tests' output has said so far of the run its rows
// belong to: the op and the ranks listed, and the notes already given.
type ncclTestsRun struct {
	file     string
	opts     BenchOptions
	info     *BenchInfo
	override string
	sem      profile.BenchSizeSemantics
	op       string
	ranks    map[int]bool
	maxRank  int
	said     map[string]bool
}

// world is the run's rank count: the one given, or the ranks it lists.
func (nt *ncclTestsRun) world() (int, error) {
	opts, info, file, said := nt.opts, nt.info, nt.file, nt.said
	if opts.Ranks > 0 {
		if nt.maxRank >= 0 && nt.maxRank+1 != opts.Ranks && !said["ranks"] {
			said["ranks"] = true
			info.Notes = append(info.Notes, fmt.Sprintf("the output lists ranks up to %d; --ranks %d wins", nt.maxRank, opts.Ranks))
		}
		return opts.Ranks, nil
	}
	if nt.maxRank < 0 {
		return 0, fmt.Errorf("%s: nccl-tests output without its \"#  Rank\" lines: give the rank count", file)
	}
	if len(nt.ranks) != nt.maxRank+1 && !said["gaps"] {
		said["gaps"] = true
		info.Notes = append(info.Notes, fmt.Sprintf("the output lists %d rank lines for ranks up to %d: the world is taken as %d ranks (give the rank count if it is not)", len(nt.ranks), nt.maxRank, nt.maxRank+1))
	}
	return nt.maxRank + 1, nil
}

// comment reads a "#" line (s, at line): a run's start, with its op, or a rank.
func (nt *ncclTestsRun) comment(s string, line int) error {
	if m := ncclTestsOpLine.FindStringSubmatch(s); m != nil {
		nt.op, nt.ranks, nt.maxRank = benchOp(m[1]), map[int]bool{}, -1
		if nt.op == "" && nt.override == "" {
			return errAtLine(nt.file, line, "collective %q: not one the cost model prices", m[1])
		}
	}
	if m := ncclTestsRankLine.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		nt.ranks[n] = true
		nt.maxRank = max(nt.maxRank, n)
	}
	return nil
}

// row is the timing of the output's line of fields f (at line); ok is false for
// a line that is not a row, or a row of size 0.
func (nt *ncclTestsRun) row(f []string, line int) (p profile.BenchPoint, ok bool, err error) {
	file, op, override := nt.file, nt.op, nt.override
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || len(f) < 3 {
		return p, false, nil // nccl-tests prints other lines (the library's version, warnings)
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return p, false, nil // not a row: size and count come first
	}
	useOp := op
	if override != "" {
		if op != "" && op != override && !nt.said["op"] {
			nt.said["op"] = true
			nt.info.Notes = append(nt.info.Notes, fmt.Sprintf("the output says %s; the op given, %s, wins", op, override))
		}
		useOp = override
	}
	if useOp == "" {
		return p, false, errAtLine(file, line, "nccl-tests output that does not name its collective (no \"# Collective test starting\" line before its rows): give the op")
	}
	world, err := nt.world()
	if err != nil {
		return p, false, err
	}
	// size count type [redop] [root] then (time algbw busbw #wrong) out of place
	// and in place: the out-of-place time is the eighth field from the end.
	rest := len(f) - 3
	if rest < 8 || rest > 10 {
		return p, false, errAtLine(file, line, "a nccl-tests row of %d fields: want size, count, type, [redop, root,] and two groups of time, algbw, busbw, #wrong", len(f))
	}
	t, err := strconv.ParseFloat(f[len(f)-8], 64)
	if err != nil {
		return p, false, errAtLine(file, line, "out-of-place time %q is not a number", f[len(f)-8])
	}
	if size == 0 {
		return p, false, nil // nccl-tests' smallest sizes round to no element per rank
	}
	p = profile.BenchPoint{Op: useOp, Ranks: world, Bytes: toModelBytes(useOp, world, size, nt.sem), TimeUs: t, Source: fmt.Sprintf("%s:%d", filepath.Base(file), line)}
	if err := checkPoint(p, file, line); err != nil {
		return profile.BenchPoint{}, false, err
	}
	return p, true, nil
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func parseHCCLTest(text, file string, opts BenchOptions, info *BenchInfo) ([]profile.BenchPoint, error) {
	op := benchOp(opts.Op)
	if op == "" || opts.Ranks == 0 {
		return nil, fmt.Errorf("%s: hccl_test's output names neither its collective nor its rank count: give both (the op of the *_test binary that ran, and mpirun's -n)", file)
	}
	sem := semanticsOr(opts, profile.SizePerRank)
	if opts.Size == "" && (op == "allgather" || op == "reducescatter" || op == "alltoall") {
		info.Notes = append(info.Notes, "hccl_test's data_size is the data on one NPU, read as each rank's piece (the total is ranks times it); if your sweep counts the total, say so")
	}
	var out []profile.BenchPoint
	inTable := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if strings.Contains(s, "data_size(Bytes)") {
			inTable = true
			continue
		}
		if !inTable || s == "" {
			continue
		}
		cells := strings.Split(s, "|")
		if len(cells) < 3 {
			continue
		}
		size, err := strconv.ParseInt(strings.TrimSpace(cells[0]), 10, 64)
		if err != nil {
			continue // a line of the tool's other output
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(cells[1]), 64)
		if err != nil {
			return nil, errAtLine(file, line, "aveg_time %q is not a number", strings.TrimSpace(cells[1]))
		}
		if len(cells) >= 4 && strings.EqualFold(strings.TrimSpace(cells[3]), "failed") {
			info.Notes = append(info.Notes, fmt.Sprintf("line %d: check_result failed: the row is left out", line))
			continue
		}
		p := profile.BenchPoint{Op: op, Ranks: opts.Ranks, Bytes: toModelBytes(op, opts.Ranks, size, sem), TimeUs: t, Source: fmt.Sprintf("%s:%d", filepath.Base(file), line)}
		if err := checkPoint(p, file, line); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, sc.Err()
}

// benchColumns are the CSV header names read, lower-cased with units in brackets
// and spaces removed, in order of preference.
var benchColumns = map[string][]string{
	"op":     {"op", "collective", "operation", "coll"},
	"ranks":  {"ranks", "nranks", "world_size", "worldsize", "npus", "gpus"},
	"bytes":  {"bytes", "size_b", "size_bytes", "size", "message_size", "data_size", "msg_size"},
	"timeUs": {"time_us", "time_us_derived", "avg_time_us", "aveg_time_us", "latency_us", "oop_time_us", "duration_us"},
	"timeMs": {"time_ms", "latency_ms", "latency_ms_verbatim", "duration_ms"},
}

var bracketed = regexp.MustCompile(`\(([^)]*)\)`)

// normaliseHeader lower-cases a header and folds a bracketed unit into a suffix:
// "Time(us)" is "time_us", "size (B)" is "size_b".
func normaliseHeader(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = bracketed.ReplaceAllString(h, "_$1")
	h = strings.NewReplacer(" ", "_", "/", "_", "µs", "us").Replace(h)
	return strings.Trim(strings.ReplaceAll(h, "__", "_"), "_")
}

func parseBenchCSV(text, file string, opts BenchOptions, info *BenchInfo) ([]profile.BenchPoint, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty: not a benchmark sweep", file)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	col, err := benchCSVColumns(header, file, opts)
	if err != nil {
		return nil, err
	}
	rows := benchCSVRows{col: col, file: file, opts: opts, sem: semanticsOr(opts, profile.SizeTotal), skipped: map[string]int{}}
	var out []profile.BenchPoint
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil { // before FieldPos, which panics on a record it did not read
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		line, _ := r.FieldPos(0)
		p, ok, err := rows.point(rec, line)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p)
		}
	}
	rows.notes(info)
	return out, nil
}

// benchCSVColumns finds the op, ranks, size and time columns in a benchmark
// table's header, by their aliases (benchColumns).
func benchCSVColumns(header []string, file string, opts BenchOptions) (map[string]int, error) {
	col := map[string]int{}
	for _, want := range []string{"op", "ranks", "bytes", "timeUs", "timeMs"} {
	names:
		for _, alias := range benchColumns[want] {
			for i, h := range header {
				if normaliseHeader(h) == alias {
					col[want] = i
					break names
				}
			}
		}
	}
	_, hasUs := col["timeUs"]
	_, hasMs := col["timeMs"]
	_, hasBytes := col["bytes"]
	if !hasBytes || !hasUs && !hasMs {
		return nil, fmt.Errorf("%s: not a benchmark table: its header (%s) names no size column (bytes, size_B, size, ...) or no time column (time_us, latency_us, time_ms, ...), and it is neither nccl-tests' nor hccl_test's output", file, strings.Join(header, ","))
	}
	_, hasOp := col["op"]
	_, hasRanks := col["ranks"]
	if !hasOp && opts.Op == "" || !hasRanks && opts.Ranks == 0 {
		return nil, fmt.Errorf("%s: the table has no op or no ranks column: give them", file)
	}
	return col, nil
}

// benchCSVRows reads a benchmark table's rows (point) and counts those it leaves
// out, for notes.
type benchCSVRows struct {
	col          map[string]int
	file         string
	opts         BenchOptions
	sem          profile.BenchSizeSemantics
	skipped      map[string]int
	noTime, zero int
}

// point is the timing of one row (rec, at line); ok is false for a row left out.
func (b *benchCSVRows) point(rec []string, line int) (p profile.BenchPoint, ok bool, err error) {
	col, file, opts, sem := b.col, b.file, b.opts, b.sem
	cell := func(k string) (string, bool) {
		i, ok := col[k]
		if !ok || i >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[i]), true
	}
	opName := opts.Op
	if s, ok := cell("op"); ok && opts.Op == "" {
		opName = s
	}
	op := benchOp(opName)
	if op == "" {
		b.skipped[opName]++
		return p, false, nil
	}
	ranks := opts.Ranks
	if s, ok := cell("ranks"); ok && opts.Ranks == 0 {
		if ranks, err = strconv.Atoi(s); err != nil {
			return p, false, errAtLine(file, line, "ranks %q is not a whole number", s)
		}
	}
	s, _ := cell("bytes")
	if s == "0" {
		b.zero++ // nccl-tests' smallest sizes round to no element per rank
		return p, false, nil
	}
	size, err := parseBenchSize(s)
	if err != nil {
		return p, false, errAtLine(file, line, "%v", err)
	}
	tu, _ := cell("timeUs")
	tm, _ := cell("timeMs")
	if tu == "" && tm == "" {
		b.noTime++
		return p, false, nil
	}
	var t float64
	if s, ok := cell("timeUs"); ok && s != "" {
		t, err = strconv.ParseFloat(s, 64)
	} else if s, ok := cell("timeMs"); ok {
		t, err = strconv.ParseFloat(s, 64)
		t *= 1000
	}
	if err != nil {
		return p, false, errAtLine(file, line, "time: %v", err)
	}
	p = profile.BenchPoint{Op: op, Ranks: ranks, Bytes: toModelBytes(op, ranks, size, sem), TimeUs: t, Source: fmt.Sprintf("%s:%d", filepath.Base(file), line)}
	if err := checkPoint(p, file, line); err != nil {
		return profile.BenchPoint{}, false, err
	}
	return p, true, nil
}

// notes says which rows were left out.
func (b *benchCSVRows) notes(info *BenchInfo) {
	if b.zero > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d rows of size 0 left out", b.zero))
	}
	if b.noTime > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d rows without a time left out", b.noTime))
	}
	for op, n := range b.skipped {
		info.Notes = append(info.Notes, fmt.Sprintf("%d rows of op %q left out: not a collective the model prices", n, op))
	}
}

// parseBenchSize reads a size in bytes: a whole number, or with K, M or G (binary,
// as nccl-tests' -b/-e and MB in HCCL).
func parseBenchSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30} {
		if t, ok := strings.CutSuffix(strings.ToUpper(s), suffix); ok {
			s, mult = t, m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: want a positive whole number of bytes", s)
	}
	return n * mult, nil
}
