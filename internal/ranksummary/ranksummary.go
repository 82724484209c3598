// Package ranksummary is hcclprof's own file format, the rank summary: what
// hcclprof summarize writes of each rank (Write, Install) and what analyze reads back
// (Read, through parser's rank-summary format, which recognises the files and claims
// their ranks). It knows the profile model and no profiler's format.
package ranksummary

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// A rank summary (hcclprof summarize) is a gzip stream of two lines: a header naming
// the format, its version and the rank, then the rank's body, both JSON. Readers refuse
// another format, a later version and anything they cannot account for, so a summary
// is never half-understood.
const (
	// Suffix ends the name of every rank summary file.
	Suffix = ".hcclprof-summary.json.gz"
	// Version is the version this build writes; it reads it and every one
	// before. Raise it when the body changes in any way an older reader would misread.
	// Version 2 writes group rank lists as steps (summaryParallelGroup.RankSteps);
	// version 3 the rank's host from msprof's info.json (Info.Host, Info.HostUID),
	// which a version-2 reader would refuse as an unknown field; version 4 the
	// header's claim of the rank (Worker, AtNs), with which analyze tells two
	// processes' claims of one rank from a re-run, the rank's Notes and
	// Info.CollectionEndNs; version 5 the compute's data types (ComputeDTypeNs).
	Version = 5
	// maxSummaryHeader bounds the header line a reader accepts.
	maxSummaryHeader = 1 << 20
)

// Name is the file name of rank's summary.
func Name(rank int) string {
	return "rank" + strconv.Itoa(rank) + Suffix
}

// Install moves the summary written at tmp into dir under its rank's name,
// never over the summary of another input: summarize runs on every node into one
// shared directory, and when two inputs claim one rank (a re-run beside the first, or
// nodes that wrote local rank ids) the second would have replaced the first, and
// analyze would have read half such a job as whole. A summary of the same input (the
// same claim in its header, or neither has one) is replaced; another goes beside it,
// rank{N}.{k}.hcclprof-summary.json.gz, and analyze tells a re-run from a conflict by
// their claims. The name is taken with a hard link, which fails when it exists, so
// writers on different servers cannot both take it; where the filesystem has no hard
// links the summary is renamed into place, replacing any. It returns the path.
func Install(tmp, dir string, rank int) (string, error) {
	mine, err := ReadHeader(tmp)
	if err != nil {
		return "", err
	}
	for k := 1; k <= 1000; k++ {
		name := Name(rank)
		if k > 1 {
			name = "rank" + strconv.Itoa(rank) + "." + strconv.Itoa(k) + Suffix
		}
		final := filepath.Join(dir, name)
		err := os.Link(tmp, final)
		if err == nil {
			return final, os.Remove(tmp)
		}
		if !errors.Is(err, fs.ErrExist) {
			return final, os.Rename(tmp, final)
		}
		theirs, err := ReadHeader(final)
		if err != nil || theirs.Rank == mine.Rank && theirs.Worker == mine.Worker && theirs.AtNs == mine.AtNs {
			return final, os.Rename(tmp, final) // the same input summarised again, or a damaged file
		}
	}
	return "", fmt.Errorf("%s: a thousand summaries of rank %d already", dir, rank)
}

// IsName reports whether a file name is that of a rank summary.
func IsName(name string) bool { return strings.HasSuffix(name, Suffix) }

var summaryNameRank = regexp.MustCompile(`^rank(\d+)\.`)

// RankOfName is the rank a summary's file name gives (rank{N}...), false when it
// gives none.
func RankOfName(name string) (int, bool) {
	m := summaryNameRank.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// Header is a rank summary's first line.
type Header struct {
	Format  profile.Format `json:"format"`
	Version int            `json:"version"`
	Rank    int            `json:"rank"`
	// Worker and AtNs are the summarised input's claim of its rank (Claim): the
	// process that profiled it and when; absent when the input does not say.
	Worker string `json:"worker,omitempty"`
	AtNs   int64  `json:"at_ns,omitempty"`
	// Notes are the discovery remarks of the run that wrote this summary (a rank
	// numbered for want of its profiler_info, a duplicate skipped), carried by the
	// lowest rank of that run so that a report from summaries keeps them.
	Notes []string `json:"notes,omitempty"`
}

// summaryBody is a rank summary's second line: profile.Rank, its intervals as flat
// delta lists (see packIntervals) so that a compressed summary stays small.
type summaryBody struct {
	Dir             string
	Format          profile.Format
	Info            profile.Info
	Metadata        summaryMetadata
	HasTimeline     bool
	Steps           intColumn   // step numbers, by Steps
	StepWindows     int64Column // packed
	Compute         int64Column // packed
	BackwardCompute int64Column `json:",omitempty"` // packed
	// MicroBatchesByWindow: see profile.Rank.
	MicroBatchesByWindow intColumn `json:",omitempty"`
	CommOps              []profile.CommOp
	CommOpsSource        string
	CommTasks            *packedTasks `json:",omitempty"`
	Computing            int64Column  // Overlap Analysis rows, packed
	Communication        int64Column
	CommNotOverlapped    int64Column
	Free                 int64Column
	Flows                int64Column // device, host pairs, flat
	ClipToStepWindows    bool
	StepTrace            []summaryStepTraceRow
	CommStats            []profile.CommOpStats
	CommMatrix           []profile.MatrixLink
	KernelCommOps        []profile.CommOp
	FilesUsed            []string
	FilesIgnored         []string
	Problems             []string
	// Notes: profile.Rank.Notes (version 4).
	Notes []string `json:",omitempty"`
	// ComputeDTypeNs: profile.Rank.ComputeDTypeNs (version 5).
	ComputeDTypeNs map[string]int64 `json:",omitempty"`
}

// summaryStepTraceRow is profile.StepTraceRow as version 1 of the summary writes it:
// in µs, as the profiler's files do, so that summaries written before the model held
// ns read the same.
type summaryStepTraceRow struct {
	Step    int
	HasStep bool
	ComputingUs, CommNotOverlappedUs, OverlappedUs, CommunicationUs,
	FreeUs, StageUs, BubbleUs, CommNotOverlappedExclRecvUs, PreparingUs float64
	HasPreparing bool
}

func packStepTrace(rows []profile.StepTraceRow) []summaryStepTraceRow {
	if rows == nil {
		return nil
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	out := make([]summaryStepTraceRow, len(rows))
	for i, r := range rows {
		out[i] = summaryStepTraceRow{Step: r.Step, HasStep: r.HasStep,
			ComputingUs: us(r.ComputingNs), CommNotOverlappedUs: us(r.CommNotOverlappedNs), OverlappedUs: us(r.OverlappedNs),
			CommunicationUs: us(r.CommunicationNs), FreeUs: us(r.FreeNs), StageUs: us(r.StageNs), BubbleUs: us(r.BubbleNs),
			CommNotOverlappedExclRecvUs: us(r.CommNotOverlappedExclRecvNs), PreparingUs: us(r.PreparingNs), HasPreparing: r.HasPreparing}
	}
	return out
}

func unpackStepTrace(rows []summaryStepTraceRow) []profile.StepTraceRow {
	if rows == nil {
		return nil
	}
	out := make([]profile.StepTraceRow, len(rows))
	for i, r := range rows {
		out[i] = profile.StepTraceRow{Step: r.Step, HasStep: r.HasStep,
			ComputingNs: units.NsFromUsFigure(r.ComputingUs), CommNotOverlappedNs: units.NsFromUsFigure(r.CommNotOverlappedUs),
			OverlappedNs: units.NsFromUsFigure(r.OverlappedUs), CommunicationNs: units.NsFromUsFigure(r.CommunicationUs),
			FreeNs: units.NsFromUsFigure(r.FreeUs), StageNs: units.NsFromUsFigure(r.StageUs), BubbleNs: units.NsFromUsFigure(r.BubbleUs),
			CommNotOverlappedExclRecvNs: units.NsFromUsFigure(r.CommNotOverlappedExclRecvUs), PreparingNs: units.NsFromUsFigure(r.PreparingUs),
			HasPreparing: r.HasPreparing}
		for _, f := range []struct {
			name string
			us   float64
		}{{"Computing", r.ComputingUs}, {"Communication(Not Overlapped)", r.CommNotOverlappedUs}, {"Overlapped", r.OverlappedUs},
			{"Communication", r.CommunicationUs}, {"Free", r.FreeUs}, {"Stage", r.StageUs}, {"Bubble", r.BubbleUs}, {"Preparing", r.PreparingUs}} {
			units.NoteSaturated(&out[i].OutOfRange, f.name, units.NsFromUsFigure(f.us), strconv.FormatFloat(f.us, 'g', -1, 64))
		}
	}
	return out
}

// packedTasks holds a rank's HCCL tasks column by column, their strings once each and
// their times packed: the tasks are most of a summary, and columns compress several
// times better than one object per task.
type packedTasks struct {
	Strings                         []string  // GroupRow, Name, TransportType and LinkType values
	GroupRow, Name, Transport, Link intColumn // indexes into Strings
	Plane, SrcRank, DstRank         intColumn
	Times                           int64Column // packed
	SizeBytes                       int64Column
}

func packTasks(tasks []profile.CommTask) *packedTasks {
	if len(tasks) == 0 {
		return nil
	}
	p := &packedTasks{}
	index := map[string]int{}
	str := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(p.Strings)
			index[s] = i
			p.Strings = append(p.Strings, s)
		}
		return i
	}
	// Sized up front: a big trace has hundreds of thousands of tasks, and columns
	// grown by append were copied a dozen times each.
	n := len(tasks)
	p.GroupRow, p.Name, p.Transport, p.Link = make(intColumn, n), make(intColumn, n), make(intColumn, n), make(intColumn, n)
	p.Plane, p.SrcRank, p.DstRank, p.SizeBytes = make(intColumn, n), make(intColumn, n), make(intColumn, n), make(int64Column, n)
	p.Times = make(int64Column, 0, 2*n)
	var prev int64
	for i, t := range tasks {
		p.GroupRow[i], p.Name[i], p.Transport[i], p.Link[i] = str(t.GroupRow), str(t.Name), str(t.TransportType), str(t.LinkType)
		p.Plane[i], p.SrcRank[i], p.DstRank[i], p.SizeBytes[i] = t.Plane, t.SrcRank, t.DstRank, t.SizeBytes
		p.Times = appendPacked(p.Times, t.Interval, &prev)
	}
	return p
}

func (p *packedTasks) unpack() ([]profile.CommTask, error) {
	if p == nil {
		return nil, nil
	}
	n := len(p.Plane)
	for _, col := range [][]int{p.GroupRow, p.Name, p.Transport, p.Link, p.SrcRank, p.DstRank} {
		if len(col) != n {
			return nil, fmt.Errorf("CommTasks: columns of %d and %d tasks", n, len(col))
		}
	}
	if len(p.SizeBytes) != n {
		return nil, fmt.Errorf("CommTasks: columns of %d and %d tasks", n, len(p.SizeBytes))
	}
	ivs, err := unpackIntervals("CommTasks.Times", p.Times)
	if err != nil {
		return nil, err
	}
	if len(ivs) != n {
		return nil, fmt.Errorf("CommTasks: %d times for %d tasks", len(ivs), n)
	}
	// Each string index is checked before any task is made: this loop runs for every
	// task of thousands of summaries.
	for _, col := range [][]int{p.GroupRow, p.Name, p.Transport, p.Link} {
		for i, k := range col {
			if k < 0 || k >= len(p.Strings) {
				return nil, fmt.Errorf("CommTasks[%d]: string %d of %d", i, k, len(p.Strings))
			}
		}
	}
	out := make([]profile.CommTask, n)
	type key struct{ group, name, transport, link int }
	var labels profile.TaskLabelCache[key]
	for i := range out {
		k := key{p.GroupRow[i], p.Name[i], p.Transport[i], p.Link[i]}
		taskLabels := labels.Of(k, func() profile.TaskLabels {
			return profile.TaskLabels{GroupRow: p.Strings[k.group], Name: p.Strings[k.name], TransportType: p.Strings[k.transport], LinkType: p.Strings[k.link]}
		})
		out[i] = profile.CommTask{Plane: p.Plane[i], TaskLabels: taskLabels, Interval: ivs[i], SrcRank: p.SrcRank[i], DstRank: p.DstRank[i], SizeBytes: p.SizeBytes[i]}
	}
	return out, nil
}

// packIntervals writes intervals as start-from-previous-start, duration pairs: small
// numbers, compressed well, still exact int64 ns.
func packIntervals(ivs []profile.Interval) []int64 {
	if len(ivs) == 0 {
		return nil
	}
	out := make([]int64, 0, 2*len(ivs))
	var prev int64
	for _, iv := range ivs {
		out = appendPacked(out, iv, &prev)
	}
	return out
}

// appendPacked appends iv to a packed list whose last start is *prevNs.
func appendPacked(out []int64, iv profile.Interval, prevNs *int64) []int64 {
	out = append(out, iv.StartNs-*prevNs, iv.EndNs-iv.StartNs)
	*prevNs = iv.StartNs
	return out
}

// unpackIntervals reverses packIntervals; what a writer cannot have written (an odd
// count, a negative duration, an overflow) is an error naming the list and item.
func unpackIntervals(what string, p []int64) ([]profile.Interval, error) {
	if len(p) == 0 {
		return nil, nil
	}
	if len(p)%2 != 0 {
		return nil, fmt.Errorf("%s: %d numbers, not start and duration pairs", what, len(p))
	}
	out := make([]profile.Interval, len(p)/2)
	var prev int64
	for i := range out {
		d, dur := p[2*i], p[2*i+1]
		start := prev + d
		if (d > 0 && start < prev) || (d < 0 && start > prev) {
			return nil, fmt.Errorf("%s[%d]: start overflows", what, i)
		}
		if dur < 0 || start+dur < start {
			return nil, fmt.Errorf("%s[%d]: duration %d ns is impossible", what, i, dur)
		}
		out[i] = profile.Interval{StartNs: start, EndNs: start + dur}
		prev = start
	}
	return out, nil
}

// Claim is who profiled a summarised rank, and when (the parser's claim of the rank):
// the header carries it so that analyze tells two processes' claims of one rank
// from a re-run.
type Claim struct {
	Worker string
	AtNs   int64
}

// Write writes r as a rank summary, with its claim and the discovery notes of its run
// (see Header.Notes). r should be what analysis.Compact returned; any rank is
// written faithfully.
func Write(w io.Writer, r *profile.Rank, claim Claim, notes []string) error {
	b := summaryBodyOf(r)
	// The header and the body are gzip members of their own (one stream to a reader):
	// discovery reads the header of every summary, and when it shared the body's
	// first deflate block, that was decompressed too, thousands of times.
	zw := summaryWriters.Get().(*gzip.Writer)
	defer summaryWriters.Put(zw)
	header := Header{Format: profile.FormatSummary, Version: Version, Rank: r.Rank, Worker: claim.Worker, AtNs: claim.AtNs, Notes: notes}
	for _, v := range []any{header, b} {
		zw.Reset(w)
		if err := jsonx.EncodeMembers(zw, v); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
	}
	return nil
}

// summaryBodyOf is what a summary writes of r.
func summaryBodyOf(r *profile.Rank) summaryBody {
	b := summaryBody{
		Dir: r.Dir, Format: r.Format, Info: r.Info, Metadata: toSummaryMetadata(r.Metadata), HasTimeline: r.HasTimeline,
		Compute: packIntervals(r.Compute), BackwardCompute: packIntervals(r.BackwardCompute), MicroBatchesByWindow: r.MicroBatchesByWindow, CommOps: r.CommOps, CommOpsSource: r.CommOpsSource, CommTasks: packTasks(r.CommTasks),
		Computing: packIntervals(r.Overlap.Computing), Communication: packIntervals(r.Overlap.Communication),
		CommNotOverlapped: packIntervals(r.Overlap.CommNotOverlapped), Free: packIntervals(r.Overlap.Free),
		ClipToStepWindows: r.ClipToStepWindows, StepTrace: packStepTrace(r.StepTrace), CommStats: r.CommStats, CommMatrix: r.CommMatrix,
		KernelCommOps: r.KernelCommOps, FilesUsed: r.FilesUsed, FilesIgnored: r.FilesIgnored, Problems: r.Problems, Notes: r.Notes,
		ComputeDTypeNs: r.ComputeDTypeNs,
	}
	windows := make([]profile.Interval, len(r.Steps))
	for i, s := range r.Steps {
		b.Steps = append(b.Steps, s.Step)
		windows[i] = s.Interval
	}
	b.StepWindows = packIntervals(windows)
	for _, f := range r.Flows {
		b.Flows = append(b.Flows, f.DeviceNs, f.HostNs)
	}
	return b
}

// summaryWriters are compressors for summaries, reused: each holds a megabyte of
// state, and making two a summary was a tenth of summarize's time.
var summaryWriters = sync.Pool{New: func() any {
	zw, err := gzip.NewWriterLevel(nil, gzip.BestCompression)
	if err != nil {
		panic(err) // a valid level
	}
	return zw
}}

// summaryError names the summary and where in its decompressed text reading stopped.
func summaryError(path string, offset int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d of the decompressed summary: %s", path, offset, fmt.Sprintf(format, args...))
}

// byteCounter counts the bytes read through it, and fails past limit bytes.
type byteCounter struct {
	r     io.Reader
	n     int64
	limit int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, errInflateLimit
	}
	if int64(len(p)) > c.limit-c.n {
		p = p[:c.limit-c.n]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readSummaryHeader reads and checks the header line.
func readSummaryHeader(path string, br *bufio.Reader) (Header, int64, error) {
	var h Header
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxSummaryHeader {
			return h, 0, summaryError(path, int64(len(line)), "no header line in the first %d bytes: not an hcclprof rank summary", maxSummaryHeader)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return h, int64(len(line)), summaryError(path, int64(len(line)), "cannot read the header: %v", gzipCause(err))
		}
		break
	}
	h, err := checkSummaryHeader(path, line)
	if err != nil {
		return h, 0, err
	}
	return h, int64(len(line)), nil
}

// checkSummaryHeader decodes and checks a summary's header line.
func checkSummaryHeader(path string, line []byte) (Header, error) {
	var h Header
	// The version is read before the fields are held to this version's: a later
	// version's header may have fields this one does not know, and is refused by its
	// version, not as foreign.
	var v struct {
		Format  profile.Format `json:"format"`
		Version int            `json:"version"`
	}
	if err := json.Unmarshal(line, &v); err == nil && v.Format == profile.FormatSummary && v.Version > Version {
		h.Format, h.Version = v.Format, v.Version
		return h, summaryError(path, 0, "summary version %d; this hcclprof reads versions 1 to %d (summarize the rank again with this version, or use the hcclprof that wrote it)", h.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || h.Format != profile.FormatSummary {
		return h, summaryError(path, 0, "not an hcclprof rank summary (its first line is not a %q header)", profile.FormatSummary)
	}
	if h.Version < 1 || h.Version > Version {
		return h, summaryError(path, 0, "summary version %d; this hcclprof reads versions 1 to %d (summarize the rank again with this version, or use the hcclprof that wrote it)", h.Version, Version)
	}
	if h.Rank < 0 {
		return h, summaryError(path, 0, "rank %d is impossible", h.Rank)
	}
	if h.Version < 4 && (h.Worker != "" || h.AtNs != 0) {
		return h, summaryError(path, 0, "a claim of its rank (worker, at_ns) in a version %d summary: no writer of that version wrote one", h.Version)
	}
	if h.AtNs < 0 {
		return h, summaryError(path, 0, "at_ns %d is impossible", h.AtNs)
	}
	return h, nil
}

// gzipCause says what a read error means for a compressed summary.
func gzipCause(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("the file is truncated")
	}
	return err
}

// ReadHeader returns a summary's header.
func ReadHeader(path string) (Header, error) {
	f, err := vfs.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return Header{}, summaryError(path, 0, "not gzip: %v", gzipCause(err))
	}
	zr.Multistream(false) // the header's member only (a summary of one member is read on)
	h, _, err := readSummaryHeader(path, bufio.NewReader(zr))
	return h, err
}

// Read reads a rank summary written by Write. A damaged,
// truncated, foreign or later-version file is an error naming the file and the
// position where reading stopped; values a writer cannot have written (a negative
// duration, an unsorted timeline) are refused too.
//
// known says which source formats a summary may name (those the reading build reads);
// a summary of another is refused.
func Read(path string, known func(profile.Format) bool) (*profile.Rank, error) {
	f, err := vfs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(path, f, known)
}

func read(path string, f io.Reader, known func(profile.Format) bool) (*profile.Rank, error) {
	// A file that is not gzip (a trace named as a summary) is refused by the plain
	// reader from its first bytes, not read whole first.
	size := jsonx.SizeOf(f)
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(2); !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return readPlain(path, br, math.MaxInt64, known)
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), 1<<30)+bytes.MinRead)) // small: that is a summary's point
	if _, err := buf.ReadFrom(br); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	data := buf.Bytes()
	limit := maxInflatedSummary(int64(len(data)))
	// The fast path holds the decompressed text, so it is told how much there is
	// before it allocates: the size the gzip trailer claims when that is small, else
	// the size counted by decompressing once and keeping nothing. Past the limit,
	// the file is refused where it crosses it.
	size, counted := int64(gzipClaimedSize(data)), false
	if size > min(limit, trustedSummaryClaim) {
		n, err := inflatedSize(data, limit)
		if errors.Is(err, errInflateLimit) {
			return nil, overInflateLimit(path, data, n)
		}
		size, counted = n, true
	}
	if r, ok := readFast(data, size, known); ok {
		return r, nil
	}
	// The plain reader (encoding/json) holds a whole value too: count first unless
	// done, so that a trailer claiming less than the stream holds is caught here.
	if !counted {
		if n, err := inflatedSize(data, limit); errors.Is(err, errInflateLimit) {
			return nil, overInflateLimit(path, data, n)
		}
	}
	return readPlain(path, bytes.NewReader(data), limit, known)
}

// overInflateLimit is the error for a summary that decompresses past limit bytes,
// counted: a header that is not a summary's is named first, as the plain reader
// names it (reading at most the header's bound).
func overInflateLimit(path string, data []byte, limit int64) error {
	if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
		if _, _, err := readSummaryHeader(path, bufio.NewReader(&byteCounter{r: zr, limit: limit})); err != nil {
			return err
		}
	}
	return summaryError(path, limit, "%v", errInflateLimit)
}

// gzipClaimedSize is the decompressed size a gzip file's trailer states (ISIZE, of
// its last member, modulo 2^32): a hint, checked when the file is read.
func gzipClaimedSize(data []byte) uint32 {
	if len(data) < 18 {
		return 0
	}
	return binary.LittleEndian.Uint32(data[len(data)-4:])
}

// maxInflatedSummary is what a summary of packedBytes may decompress to: the limit
// on archives' members (vfs.DefaultArchiveLimits.MaxRatio, from vfs.RatioMinSize on), and at
// most maxSummaryBytes, so that a crafted file cannot take gigabytes. Written
// summaries are 10 to 100 times their size.
func maxInflatedSummary(packedBytes int64) int64 {
	return min(maxSummaryBytes, max(vfs.RatioMinSize, vfs.DefaultArchiveLimits.MaxRatio*max(packedBytes, 1)))
}

// maxSummaryBytes bounds a summary decompressed: a 1.96 GB trace's is 10 MB. A
// variable for tests only.
var maxSummaryBytes int64 = 1 << 30

// trustedSummaryClaim is the largest decompressed size a summary's gzip trailer may
// claim and be believed without counting: the reader holds that much before it knows
// whether the claim was true. A larger claim is checked by decompressing the file
// once, keeping nothing. A variable for tests only.
var trustedSummaryClaim int64 = 64 << 20

// errInflateLimit is a summary decompressing past maxInflatedSummary.
type inflateLimitError struct{}

func (inflateLimitError) Error() string {
	return fmt.Sprintf("decompresses to more than %d times its size or %d MiB: refused (a limit against decompression bombs)",
		vfs.DefaultArchiveLimits.MaxRatio, maxSummaryBytes>>20)
}

var errInflateLimit error = inflateLimitError{}

// readPlain reads a summary with encoding/json alone: the reference the
// fast path (summaryfast.go) gives way to, and what words every error.
func readPlain(path string, f io.Reader, limit int64, known func(profile.Format) bool) (*profile.Rank, error) {
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, summaryError(path, 0, "not gzip: %v", gzipCause(err))
	}
	cr := &byteCounter{r: zr, limit: limit}
	br := bufio.NewReader(cr)
	h, off, err := readSummaryHeader(path, br)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(br)
	dec.DisallowUnknownFields()
	var b summaryBody
	if err := dec.Decode(&b); err != nil {
		at := off + dec.InputOffset()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			at = off + se.Offset
		case errors.As(err, &te):
			at = off + te.Offset
		}
		return nil, summaryError(path, at, "%v", gzipCause(err))
	}
	// Nothing may follow the body, and the gzip stream must end whole (its checksum).
	rest, err := io.ReadAll(io.MultiReader(dec.Buffered(), br))
	if err != nil {
		return nil, summaryError(path, cr.n, "%v", gzipCause(err))
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, summaryError(path, off+dec.InputOffset(), "unexpected data after the summary")
	}
	r, err := b.rank(h.Rank, h.Version, known)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// rank rebuilds the rank and checks what a writer cannot have written.
func (b *summaryBody) rank(rank, version int, known func(profile.Format) bool) (*profile.Rank, error) {
	r := &profile.Rank{Rank: rank, Dir: b.Dir, Format: b.Format, Info: b.Info, HasTimeline: b.HasTimeline,
		Timeline: profile.Timeline{CommOps: b.CommOps}, CommOpsSource: b.CommOpsSource, ClipToStepWindows: b.ClipToStepWindows,
		Reported: profile.Reported{StepTrace: unpackStepTrace(b.StepTrace), CommStats: b.CommStats, CommMatrix: b.CommMatrix,
			KernelCommOps: b.KernelCommOps, ComputeDTypeNs: b.ComputeDTypeNs},
		FilesUsed: b.FilesUsed, FilesIgnored: b.FilesIgnored, Problems: b.Problems, Notes: b.Notes}
	if len(b.ComputeDTypeNs) > 0 && version < 5 {
		return nil, fmt.Errorf("rank %d: ComputeDTypeNs in a version %d summary: no writer of that version wrote them", rank, version)
	}
	for dt, ns := range b.ComputeDTypeNs {
		if ns < 0 || dt == "" {
			return nil, fmt.Errorf("rank %d: compute data type %q with %d ns is impossible", rank, dt, ns)
		}
	}
	if (len(b.Notes) > 0 || b.Info.CollectionEndNs != 0) && version < 4 {
		return nil, fmt.Errorf("rank %d: Notes or Info.CollectionEndNs in a version %d summary: no writer of that version wrote them", rank, version)
	}
	if b.Info.CollectionEndNs < 0 {
		return nil, fmt.Errorf("rank %d: Info.CollectionEndNs %d is impossible", rank, b.Info.CollectionEndNs)
	}
	var err error
	if r.Metadata, err = b.Metadata.metadata(version); err != nil {
		return nil, err
	}
	if !known(b.Format) {
		return nil, fmt.Errorf("rank %d: unknown source format %q", rank, b.Format)
	}
	unpack := func(what string, p []int64) []profile.Interval {
		if err != nil {
			return nil
		}
		var ivs []profile.Interval
		ivs, err = unpackIntervals(what, p)
		return ivs
	}
	windows := unpack("StepWindows", b.StepWindows)
	r.Compute = unpack("Compute", b.Compute)
	r.BackwardCompute = unpack("BackwardCompute", b.BackwardCompute)
	r.MicroBatchesByWindow = b.MicroBatchesByWindow
	r.Overlap.Computing = unpack("Computing", b.Computing)
	r.Overlap.Communication = unpack("Communication", b.Communication)
	r.Overlap.CommNotOverlapped = unpack("CommNotOverlapped", b.CommNotOverlapped)
	r.Overlap.Free = unpack("Free", b.Free)
	if err != nil {
		return nil, err
	}
	if r.CommTasks, err = b.CommTasks.unpack(); err != nil {
		return nil, err
	}
	if len(windows) != len(b.Steps) {
		return nil, fmt.Errorf("%d step numbers for %d step windows", len(b.Steps), len(windows))
	}
	for i, w := range windows {
		r.Steps = append(r.Steps, profile.StepMarker{Step: b.Steps[i], Interval: w})
	}
	if len(b.Flows)%2 != 0 {
		return nil, fmt.Errorf("Flows: %d numbers, not device and host pairs", len(b.Flows))
	}
	for i := 0; i < len(b.Flows); i += 2 {
		r.Flows = append(r.Flows, profile.DeviceFlow{DeviceNs: b.Flows[i], HostNs: b.Flows[i+1]})
	}
	for _, ops := range []struct {
		what string
		ops  []profile.CommOp
	}{{"CommOps", r.CommOps}, {"KernelCommOps", r.KernelCommOps}} {
		for i, op := range ops.ops {
			if profile.BadInterval(op.Interval) {
				return nil, fmt.Errorf("%s[%d] (%s): %d to %d ns is impossible", ops.what, i, op.Name, op.StartNs, op.EndNs)
			}
		}
	}
	for i, t := range r.CommTasks {
		if profile.BadInterval(t.Interval) || t.SizeBytes < 0 {
			return nil, fmt.Errorf("CommTasks[%d] (%s): %d to %d ns, %d bytes is impossible", i, t.Name, t.StartNs, t.EndNs, t.SizeBytes)
		}
	}
	for i, s := range r.CommStats {
		if s.ElapseNs < 0 || s.TransitNs < 0 || s.WaitNs < 0 || s.SyncNs < 0 || s.IdleNs < 0 {
			return nil, fmt.Errorf("CommStats[%d] (%s): a negative duration is impossible", i, s.Name)
		}
	}
	for i, row := range r.StepTrace {
		if why := row.Impossible(); why != "" {
			return nil, fmt.Errorf("StepTrace[%d]: %s", i, why)
		}
	}
	if !sortedByStart(r.Compute) || !sortedByStart(r.BackwardCompute) || !sortedByStart(windows) {
		return nil, errors.New("the timeline is not in time order, as a writer leaves it")
	}
	return r, nil
}

func sortedByStart(ivs []profile.Interval) bool {
	for i := 1; i < len(ivs); i++ {
		if ivs[i].StartNs < ivs[i-1].StartNs {
			return false
		}
	}
	return true
}
