package parser

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hcclprof/hcclprof/internal/vfs"
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

// claimOf is the claim of a rank input, as its format makes it (inputFormat.claim):
// of a torch_npu or MindSpore rank directory, a Kineto trace, or a rank summary (the
// claim of the input it summarises, from its header); the zero claim for others
// (msprof devices are compared in assignMsprofRanks).
func claimOf(ri RankInput) rankClaim {
	if f := formatOf(ri); f.claim != nil {
		return f.claim(ri)
	}
	return rankClaim{}
}

// claimOfRank is the claim of a loaded rank, which its summary carries.
func claimOfRank(r *profile.Rank) rankClaim {
	switch r.Format {
	case profile.FormatMsprof, profile.FormatMsprofDB:
		if r.Info.Device == nil {
			return rankClaim{}
		}
		device, ok := strings.CutPrefix(filepath.Dir(r.Info.Device.File), "device_")
		n, err := strconv.Atoi(device)
		if !ok || err != nil {
			return rankClaim{}
		}
		return msprofClaim(msprofDevice{ProfDir: r.Dir, Device: n, HostUID: r.Info.HostUID, Host: r.Info.Host, Timestamp: msprofDirTimestamp(r.Dir)})
	case profile.FormatMsprofAnalyze, profile.FormatSummary:
		return rankClaim{}
	}
	return nameClaim(r.Dir, r.Info.CollectionEndNs)
}

// nameClaim is the claim an input's name makes (inputName), its time the end of its
// collection when known (endNs, profiler_info's), else the one in its name.
func nameClaim(path string, endNs int64) rankClaim {
	n := parseInputName(path)
	if n.worker == "" {
		return rankClaim{}
	}
	c := rankClaim{worker: n.worker, atNs: endNs}
	switch {
	case c.atNs != 0:
	case n.kind == "epoch":
		c.atNs = epochNs(n.ts)
	case n.kind == "date":
		c.atNs, _ = date17Ns(strconv.FormatInt(n.ts, 10))
	}
	return c
}

// inputName is what a rank input's name says of the process that wrote it and when.
type inputName struct {
	// worker is the process: the {worker} of a {worker}_{date}_ascend_pt (or
	// _ascend_ms) directory or of a Kineto trace {worker}.{time}.pt.trace.json(.gz);
	// "" when the name names none (msprof's PROF_{n}_{date}_{id}) or has no time.
	worker string
	// kind says what ts is: "date", the 17-digit YYYYMMDDhhmmssmmm of a rank
	// directory or a PROF directory (the third field from the end of a rank
	// directory's name, as "ascend_pt" holds an underscore); "epoch", a Kineto
	// trace's time since the epoch (ms, µs or ns), tensorboard_trace_handler's, one
	// file per profiling cycle; "" when the name has no time. Times of different
	// kinds do not compare.
	kind string
	ts   int64
}

// parseInputName reads a rank input's name.
func parseInputName(path string) inputName {
	base := filepath.Base(path)
	for _, suffix := range []string{".pt.trace.json", ".pt.trace.json.gz"} {
		if stem, ok := strings.CutSuffix(base, suffix); ok {
			i := strings.LastIndexByte(stem, '.')
			ts, err := strconv.ParseInt(stem[i+1:], 10, 64)
			if err != nil || ts <= 0 {
				return inputName{}
			}
			n := inputName{kind: "epoch", ts: ts}
			if i > 0 {
				n.worker = stem[:i]
			}
			return n
		}
	}
	parts := strings.Split(base, "_")
	var n inputName
	field := ""
	switch {
	case len(parts) == 4 && parts[0] == "PROF":
		field = parts[2]
	case len(parts) >= 4:
		field = parts[len(parts)-3]
		if parts[len(parts)-2] == "ascend" {
			n.worker = strings.Join(parts[:len(parts)-3], "_")
		}
	}
	ts, err := strconv.ParseInt(field, 10, 64)
	if len(field) != 17 || err != nil {
		return inputName{}
	}
	n.kind, n.ts = "date", ts
	return n
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

// collectionEndNs is a profiler_info file's end of collection
// (profile.Info.CollectionEndNs), 0 when it has none or cannot be read.
func collectionEndNs(infoFile string) int64 {
	f, err := vfs.Open(infoFile)
	if err != nil {
		return 0
	}
	defer f.Close()
	info, _ := parseProfilerInfo(f, infoFile)
	return info.CollectionEndNs
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

// untimedClaimProblem is the problem of a rank claimed by two inputs whose names carry
// no time (or the same one) to tell a re-run from another rank.
func untimedClaimProblem(rank int, first, second string) string {
	return fmt.Sprintf("rank %d is claimed by both %s and %s, and neither name carries a time that tells a re-run from another rank: "+
		"which of the two is rank %d is not known (remove or rename the one that is not)", rank, first, second, rank)
}
