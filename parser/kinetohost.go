package parser

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Which server a Kineto rank ran on. distributedInfo names the rank, the world and
// the process groups, deviceProperties every GPU the process could see, but neither
// names the machine. Two things in a trace can:
//
//   - "host_name", a top-level member Kineto's trace logger writes among the trace's
//     metadata (gethostname() of the profiled process) since pytorch/kineto#1323
//     (March 2026); older traces, such as the A100 sample in ../shared, have none;
//   - the file name torch.profiler.tensorboard_trace_handler gives the trace when no
//     worker_name is passed: {hostname}_{pid}.{timestamp}.pt.trace.json(.gz), the
//     hostname being socket.gethostname() and the pid the profiled process's. A
//     worker_name of the user's own, or a trace exported elsewhere under another name
//     (export_chrome_trace, a copied file), says nothing of the host, so the name is
//     believed only when its pid is the process id the trace's own CPU events carry.
//     The trace's last member, traceName, is the path Kineto wrote it to (the same
//     name, unless tensorboard_trace_handler gzipped it: then a temporary file's), so
//     a trace renamed after the fact may still name its host there.
//
// Where neither says, the host stays unknown: it is never guessed from the rank
// number and the GPUs per node.

// Where a Kineto rank's host was read, as Info.HostSource says it.
const (
	kinetoHostFromMetadata  = "the trace's host_name"
	kinetoHostFromFileName  = "the trace file's name ({hostname}_{pid}.{timestamp}.pt.trace.json)"
	kinetoHostFromTraceName = "the trace's traceName ({hostname}_{pid}.{timestamp}.pt.trace.json)"
)

// kinetoHost is the host a Kineto trace names and where it was read: the trace's
// host_name when it has one, else a tensorboard_trace_handler name (the file's, then
// its traceName's) whose pid is the trace's CPU process id (cpuPID, -1 when the trace
// showed none); "" when none says.
func kinetoHost(file, traceName, hostName string, cpuPID int64) (host, source string) {
	if h := strings.TrimSpace(hostName); h != "" {
		return h, kinetoHostFromMetadata
	}
	if cpuPID < 0 {
		return "", ""
	}
	if h, pid, ok := kinetoWorkerName(file); ok && pid == cpuPID {
		return h, kinetoHostFromFileName
	}
	if h, pid, ok := kinetoWorkerName(traceName); ok && pid == cpuPID {
		return h, kinetoHostFromTraceName
	}
	return "", ""
}

// kinetoWorkerName splits a trace file name as tensorboard_trace_handler writes it,
// {host}_{pid}.{timestamp}.pt.trace.json with .gz when gzipped, into its host and
// pid. A hostname may hold dots and underscores; the pid is the digits after the
// last underscore of the worker name, the timestamp the digits after its last dot.
func kinetoWorkerName(file string) (host string, pid int64, ok bool) {
	base := strings.TrimSuffix(filepath.Base(file), ".gz")
	worker, found := strings.CutSuffix(base, ".pt.trace.json")
	if !found {
		return "", 0, false
	}
	dot := strings.LastIndexByte(worker, '.')
	if dot < 0 || !isDigits(worker[dot+1:]) {
		return "", 0, false
	}
	worker = worker[:dot]
	us := strings.LastIndexByte(worker, '_')
	if us <= 0 || !isDigits(worker[us+1:]) {
		return "", 0, false
	}
	pid, err := strconv.ParseInt(worker[us+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return worker[:us], pid, true
}
