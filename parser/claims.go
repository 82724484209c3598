package parser

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hcclprof/hcclprof/profile"
)

// Two inputs that claim one rank are usually a re-run (or an earlier profiling cycle)
// of that rank, and the latest is kept. But two processes that claim one rank while
// profiling at the same time cannot both be it: the job's rank ids are not global
// (each node's processes wrote their local rank, or two jobs' profiles are mixed).
// Keeping one of them silently analysed half of such a job, with exit 0; both are now
// kept, the second numbered like a rank without an id, and both are incomplete.

// concurrentWindowNs is how close in time two claims of one rank by different
// processes must be to be read as one run's: a re-run starts over (launch, model
// loading) and ends minutes later, while the ranks of one job stop profiling within
// seconds of each other.
const concurrentWindowNs = int64(time.Minute)

// rankClaim is who claimed a rank, and when: the process that wrote the input
// (torch_npu's and MindSpore's {worker}_{time}_ascend_pt directory, whose worker is
// {host}_{pid} unless the user named it; Kineto's {worker}.{time}.pt.trace.json;
// msprof's host and device) and a time of its collection. Either is empty (0) when
// the input does not say.
type rankClaim struct {
	worker string
	atNs   int64
}

// concurrent reports whether two claims of one rank are different processes of one
// run.
func (a rankClaim) concurrent(b rankClaim) bool {
	if a.worker == "" || b.worker == "" || a.worker == b.worker || a.atNs == 0 || b.atNs == 0 {
		return false
	}
	d := a.atNs - b.atNs
	return d > -concurrentWindowNs && d < concurrentWindowNs
}

// claimOf is the claim of a rank input: of a torch_npu or MindSpore rank directory, a
// Kineto trace, or a rank summary (the claim of the input it summarises, from its
// header); the zero claim for others (msprof devices are compared in
// AssignMsprofRanks).
func claimOf(ri RankInput) rankClaim {
	switch {
	case ri.RankSummary != "":
		return ri.claim
	case ri.Kineto != "":
		return kinetoClaim(ri.Dir)
	case ri.Msprof != nil || ri.Summary != nil:
		return rankClaim{}
	}
	return dirClaim(ri.Dir, ri.InfoFile)
}

// claimOfRank is the claim of a loaded rank, which its summary carries.
func claimOfRank(r *profile.Rank) rankClaim {
	switch r.Format {
	case profile.FormatKineto:
		return kinetoClaim(r.Dir)
	case profile.FormatMsprof, profile.FormatMsprofDB:
		if r.Info.Device == nil {
			return rankClaim{}
		}
		device, ok := strings.CutPrefix(filepath.Dir(r.Info.Device.File), "device_")
		n, err := strconv.Atoi(device)
		if !ok || err != nil {
			return rankClaim{}
		}
		return msprofClaim(MsprofDevice{ProfDir: r.Dir, Device: n, HostUID: r.Info.HostUID, Host: r.Info.Host, Timestamp: msprofDirTimestamp(r.Dir)})
	case profile.FormatMsprofAnalyze, profile.FormatSummary:
		return rankClaim{}
	}
	info := ""
	for _, f := range r.FilesUsed {
		if f == filepath.Base(f) && isProfilerInfoName(f) {
			info = filepath.Join(r.Dir, f)
		}
	}
	return dirClaim(r.Dir, info)
}

// kinetoClaim reads {worker}.{time}.pt.trace.json(.gz).
func kinetoClaim(path string) rankClaim {
	base := filepath.Base(path)
	for _, suffix := range []string{".pt.trace.json", ".pt.trace.json.gz"} {
		if stem, ok := strings.CutSuffix(base, suffix); ok {
			if i := strings.LastIndexByte(stem, '.'); i > 0 {
				if _, ts := nameTime(path); ts > 0 {
					return rankClaim{worker: stem[:i], atNs: epochNs(ts)}
				}
			}
		}
	}
	return rankClaim{}
}

// dirClaim reads a {worker}_{date}_ascend_pt (or _ascend_ms) directory: its time is
// its profiler_info's end of collection (end_info.collectionTimeEnd, ns since the
// epoch) when it has one, else the date in its name.
func dirClaim(dir, infoFile string) rankClaim {
	parts := strings.Split(filepath.Base(dir), "_")
	if len(parts) < 4 || parts[len(parts)-2] != "ascend" || len(parts[len(parts)-3]) != 17 {
		return rankClaim{}
	}
	c := rankClaim{worker: strings.Join(parts[:len(parts)-3], "_")}
	if infoFile != "" {
		c.atNs = collectionEndNs(infoFile)
	}
	if c.atNs == 0 {
		c.atNs, _ = date17Ns(parts[len(parts)-3])
	}
	return c
}

// msprofWorker names an msprof device as a claimant.
func msprofWorker(host string, device int) string {
	return fmt.Sprintf("host %s device %d", host, device)
}

// epochNs reads a Kineto file name's time, in ms (older PyTorch), µs or ns since the
// epoch, as ns.
func epochNs(ts int64) int64 {
	switch {
	case ts < 1e14:
		return ts * 1e6
	case ts < 1e17:
		return ts * 1e3
	}
	return ts
}

// date17Ns reads a 17-digit YYYYMMDDhhmmssmmm (the profilers' directory names, in
// the host's local time: only differences are used) as ns.
func date17Ns(s string) (int64, bool) {
	if len(s) != 17 {
		return 0, false
	}
	t, err := time.Parse("20060102150405.000", s[:14]+"."+s[14:])
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

// collectionEndNs is profiler_info's end_info.collectionTimeEnd, 0 when it has none
// or cannot be read.
func collectionEndNs(infoFile string) int64 {
	f, err := openPath(infoFile)
	if err != nil {
		return 0
	}
	defer f.Close()
	p := newTreeParser()
	defer p.recycle()
	root, err := p.read(f, infoFile, false)
	if err != nil {
		return 0
	}
	n := root.get("end_info").get("collectionTimeEnd")
	if n == nil || n.kind != treeNumber {
		return 0
	}
	v, err := strconv.ParseInt(n.text, 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// conflictProblem is the problem of an input whose rank another process claimed at the
// same time.
func conflictProblem(rank int, other string, a, b rankClaim) string {
	d := a.atNs - b.atNs
	if d < 0 {
		d = -d
	}
	return fmt.Sprintf("rank %d is claimed also by %s, which another process (%s) profiled at the same time (%s apart): "+
		"the job's rank ids are not its global ranks (local ranks, or two jobs mixed), so which rank each is is not known",
		rank, other, b.worker, time.Duration(d).Round(time.Millisecond))
}
