package parser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// This file reads the PyTorch profiler's (Kineto's) Chrome trace of a GPU rank, as
// torch.profiler's export_chrome_trace / tensorboard_trace_handler write it
// (<worker>.<timestamp>.pt.trace.json, often gzipped), into the same data model as
// the Ascend timeline:
//
//	{"schemaVersion": 1, "deviceProperties": [...],
//	 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2,
//	                     "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": [0, 1]}], ...},
//	 "traceEvents": [...], ...}
//
// Of the events it keeps:
//   - GPU kernels (cat "kernel"; gpu_memcpy and gpu_memset are copies, not kernels):
//     NCCL kernels (ncclKernel_*, ncclDevKernel_*) become CommOps, the others Compute
//     (every stream);
//   - ProfilerStep#N (cat user_annotation; cpu_op in some versions): the steps;
//   - the collective's size, dtype and process group, from the NCCL kernel's own args
//     ("Collective name", "In msg nelems", "dtype", "Process Group Name", ... as in
//     the real sample) or else from the record_param_comms CPU op with the kernel's
//     "External id" (the same arguments; older traces have them only there).
//
// Everything else (CPU ops, CUDA runtime calls, ac2g flows, memcpy/memset) is scanned
// but not kept. Host and device timestamps share one clock in Kineto, so the rank is
// marked ClipToStepWindows: a step is its ProfilerStep#N window, kernels clipped to it.

// commParams are the arguments PyTorch records for a collective.
type commParams struct {
	collective   string // "Collective name": allreduce, broadcast, _allgather_base, send, recv, ...
	inN, outN    int64  // "In msg nelems", "Out msg nelems"
	dtype        string // "dtype": PyTorch's scalar type name (Float, BFloat16, Long, ...)
	groupSize    int    // "Group size"
	pgName       string // "Process Group Name"
	pgDesc       string // "Process Group Description"
	pgRanks      string // "Process Group Ranks", e.g. "[0, 1]" (long lists may be cut)
	hasAnyParams bool
}

// kinetoKernel is one NCCL kernel.
type kinetoKernel struct {
	iv     profile.Interval
	name   string // without the parameter list
	extID  int64  // "External id", -1 when absent
	corr   int64  // "correlation", the CUPTI correlation id of its launch; -1 when absent
	params commParams
}

// distInfo is the part of distributedInfo hcclprof uses.
type distInfo struct {
	rank, worldSize int // -1 when absent
	groups          []kinetoGroup
	args            map[string]any // every member except pg_config, as written
}

type kinetoGroup struct {
	name, desc string
	size       int
	ranks      []int
}

type kinetoState struct {
	file    string
	compute []profile.Interval
	kernels []kinetoKernel
	steps   []profile.StepMarker
	params  map[int64]commParams // record_param_comms by External id
	// p2pRecords are the record_param_comms of sends and receives, launches the CUDA
	// launch calls that may be a batched kernel's: to find the ops of a
	// batch_isend_irecv's kernel (kinetobatch.go).
	p2pRecords []p2pRecord
	launches   launchSet
	names      map[string]string // interned kernel names
	dist       distInfo
	chip       string // deviceProperties' first name
	events     int
	// hostName is the trace's host_name member; cpuPID the pid of its ProfilerStep#N
	// events (the profiled process), -1 before one is seen (kinetohost.go).
	hostName  string
	traceName string // the path the trace was exported to, as Kineto wrote it
	cpuPID    int64
}

// parseKineto reads one rank's PyTorch profiler (Kineto) trace, plain JSON (see
// openKineto for gzip). The rank is never nil: on a syntax error or truncation it
// holds what was read before that point and the error, a *SyntaxError naming the file
// and byte offset, says so; the caller records the error in the rank's Problems.
// The rank number is distributedInfo.rank (-1 when the trace has none).
func parseKineto(r io.Reader, file string) (*profile.Rank, error) {
	st := newKinetoState(file)
	err := st.read(r)
	rank := st.finish()
	if err != nil && st.events > 0 {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.Msg += fmt.Sprintf(" (the trace is partial: %d events read before this point)", st.events)
		}
	}
	return rank, err
}

func newKinetoState(file string) *kinetoState {
	return &kinetoState{
		file:   file,
		params: map[int64]commParams{},
		names:  map[string]string{},
		dist:   distInfo{rank: -1, worldSize: -1},
		cpuPID: -1,
	}
}

// read reads a trace into st.
func (st *kinetoState) read(r io.Reader) error {
	return jsonx.ReadStream(r, st.file, func(s *jsonx.Stream) error {
		return readChromeTrace(s, st.file, wholeEvent(st.event), st.member)
	})
}

// openKineto opens and parses a Kineto trace file, plain (.json) or gzip-compressed
// (.json.gz; recognised by its magic bytes, whatever the name, and decompressed as it
// is read). It returns a nil rank only when the file cannot be opened or its gzip
// header is bad; otherwise it behaves as parseKineto (a truncated .gz gives the
// partial rank and an error). For a gzip file the byte offsets in errors count bytes
// of the decompressed JSON.
func openKineto(path string) (*profile.Rank, error) {
	rd, closeFn, gz, err := vfs.OpenMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	rank, err := parseKineto(rd, path)
	if err != nil && gz {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.Msg += " (offsets count bytes of the decompressed JSON)"
		}
	}
	if err == nil && gz {
		err = vfs.GzipRest(rd, path)
	}
	return rank, err
}

// kinetoSniffLimit bounds what isKinetoTrace reads: the members before traceEvents
// (deviceProperties, distributedInfo) are a few kB.
const kinetoSniffLimit = 1 << 20

// isKinetoTrace reports whether path holds a PyTorch profiler (Kineto) trace, plain or
// gzip-compressed: its top level is a JSON object with a "schemaVersion" member before
// "traceEvents". Kineto writes schemaVersion first, then deviceProperties,
// distributedInfo, ..., then traceEvents; torch_npu's trace_view.json and msprof's
// timelines are bare arrays, and other Chrome traces have no schemaVersion. Only the
// head of the file is read (at most 1 MB of JSON).
func isKinetoTrace(path string) bool {
	_, ok := sniffKineto(path)
	return ok
}

// sniffKineto is isKinetoTrace that also returns distributedInfo's rank when it comes
// before traceEvents, as Kineto writes it (-1 otherwise).
func sniffKineto(path string) (rank int, ok bool) {
	rank = -1
	rd, closeFn, _, err := vfs.OpenMaybeGzip(path)
	if err != nil {
		return rank, false
	}
	defer closeFn()
	s := jsonx.NewStream(io.LimitReader(rd, kinetoSniffLimit))
	defer s.Release()
	if c, ok := s.Peek(); !ok || c != '{' {
		return rank, false
	}
	s.Pos++
	schema := false
	for n := 0; ; n++ {
		c, ok := s.Peek()
		if !ok || c == '}' {
			return rank, false
		}
		if n > 0 && s.Consume(',') != nil {
			return rank, false
		}
		key, _, err := s.ReadValue()
		if err != nil {
			return rank, false
		}
		name, ok := jsonx.Unquote(key)
		if !ok || s.Consume(':') != nil {
			return rank, false
		}
		if name == "traceEvents" {
			return rank, schema
		}
		v, _, err := s.ReadValue()
		if err != nil {
			return rank, false
		}
		switch name {
		case "schemaVersion":
			schema = true
		case "distributedInfo":
			if d, err := parseDistInfo(v); err == nil {
				rank = d.rank
			}
		}
	}
}

// member reads the top-level members other than traceEvents.
func (st *kinetoState) member(name string, v []byte, off int64) error {
	switch name {
	case "deviceProperties": // [{"id": 0, "name": "NVIDIA A100-PG509-200", ...}, ...]
		var devs []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(v, &devs); err != nil {
			return errAtOffset(st.file, off, "deviceProperties: %v", err)
		}
		if len(devs) > 0 {
			st.chip = strings.TrimSpace(devs[0].Name)
		}
		return nil
	case "host_name", "traceName": // kinetohost.go
		var h string
		if json.Unmarshal(v, &h) == nil && name == "host_name" {
			st.hostName = h
		} else if name == "traceName" {
			st.traceName = h
		}
		return nil
	case "distributedInfo":
	default:
		return nil
	}
	d, err := parseDistInfo(v)
	if err != nil {
		return errAtOffset(st.file, off, "distributedInfo: %v", err)
	}
	st.dist = d
	return nil
}

func parseDistInfo(v []byte) (distInfo, error) {
	d := distInfo{rank: -1, worldSize: -1}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return d, err
	}
	d.args = map[string]any{}
	for k, raw := range m {
		if k == "pg_config" {
			continue
		}
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			return d, fmt.Errorf("%s: %v", k, err)
		}
		d.args[k] = x
	}
	d.rank = anyInt(d.args["rank"], -1)
	d.worldSize = anyInt(d.args["world_size"], -1)
	// Present but not what a job can have: read as absent, it changed the job's size
	// (and its unprofiled ranks) with exit 0.
	if x, ok := d.args["rank"]; ok && x != nil && d.rank < 0 {
		return d, fmt.Errorf("rank: %v is not a rank", x)
	}
	if x, ok := d.args["world_size"]; ok && x != nil && d.worldSize < 1 {
		return d, fmt.Errorf("world_size: %v is not a job size", x)
	}
	if raw, ok := m["pg_config"]; ok {
		// A list of {pg_name, pg_desc, pg_size, ranks}; a dict keyed by group name is
		// accepted too. Entries of another shape are ignored.
		var list []map[string]any
		if json.Unmarshal(raw, &list) != nil {
			var byName map[string]map[string]any
			if err := json.Unmarshal(raw, &byName); err != nil && string(raw) != "null" {
				return d, fmt.Errorf("pg_config: neither a list of groups nor groups by name")
			}
			for name, g := range byName {
				if _, ok := g["pg_name"]; !ok {
					g["pg_name"] = name
				}
				list = append(list, g)
			}
		}
		for _, g := range list {
			kg := kinetoGroup{name: anyString(g["pg_name"]), desc: anyString(g["pg_desc"]), size: anyInt(g["pg_size"], 0)}
			if rs, ok := g["ranks"].([]any); ok {
				for _, r := range rs {
					v := anyInt(r, -1)
					if v < 0 { // read as member -1, with exit 0
						return d, fmt.Errorf("pg_config: group %q: %v is not a rank", kg.name, r)
					}
					kg.ranks = append(kg.ranks, v)
				}
				if problem := rankListProblem(kg.ranks); problem != "" {
					return d, fmt.Errorf("pg_config: group %q: %s", kg.name, problem)
				}
			}
			if kg.name != "" {
				d.groups = append(d.groups, kg)
			}
		}
		sort.Slice(d.groups, func(i, j int) bool { return d.groups[i].name < d.groups[j].name })
	}
	return d, nil
}

// anyInt is an integer written as a JSON number or a decimal string; def otherwise.
func anyInt(v any, def int) int {
	switch x := v.(type) {
	case float64:
		if x == float64(int(x)) {
			return int(x)
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n
		}
	}
	return def
}

func anyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

var (
	catKernel          = []byte(`"kernel"`)
	catKernelOld       = []byte(`"Kernel"`) // older Kineto versions
	catCudaRuntime     = []byte(`"cuda_runtime"`)
	catCudaDriver      = []byte(`"cuda_driver"`) // cuLaunchKernelEx (NCCL ≥ 2.22 launches with it)
	nameRecordParams   = []byte(`"record_param_comms"`)
	kinetoGPUCatPrefix = []byte(`"gpu_`)
)

func (st *kinetoState) event(b []byte) error {
	var ph, cat, name, ts, dur, args, pid, tid []byte
	// corr is args' "correlation", read as args is walked: a compute kernel's args are
	// not read again for it (launchSet).
	corr := int64(-1)
	it := jsonx.NewObjIter(b)
	for {
		k, ok := it.NextKey()
		if !ok {
			break
		}
		if string(k) == "args" {
			if ai, isObject := it.ObjectValue(); isObject {
				corr = correlationMember(&ai)
				if args, ok = it.After(&ai); !ok {
					break
				}
				continue
			}
		}
		v, ok := it.Value()
		if !ok {
			break
		}
		switch string(k) {
		case "ph":
			ph = v
		case "cat":
			cat = v
		case "name":
			name = v
		case "ts":
			ts = v
		case "dur":
			dur = v
		case "args":
			args, corr = v, -1
		case "pid":
			pid = v
		case "tid":
			tid = v
		}
	}
	if it.Err != nil {
		return it.Err
	}
	st.events++
	if string(ph) != `"X"` {
		return nil
	}
	switch {
	case bytes.Equal(cat, catKernel) || bytes.Equal(cat, catKernelOld):
		return st.kernel(name, ts, dur, args, corr)
	case len(cat) == 0 || bytes.HasPrefix(cat, kinetoGPUCatPrefix):
		return nil // GPU annotations, memcpy and memset; events without a cat
	case bytes.Equal(cat, catCudaRuntime) || bytes.Equal(cat, catCudaDriver):
		if bytes.Contains(name, []byte("Launch")) {
			return st.launch(tid, ts, name, corr)
		}
	case bytes.HasPrefix(name, profilerStepPrefix):
		s, _ := jsonx.Unquote(name)
		n, err := strconv.Atoi(strings.TrimPrefix(s, "ProfilerStep#"))
		if err != nil {
			return nil
		}
		iv, err := kinetoInterval(ts, dur)
		if err != nil {
			return err
		}
		// A marker repeated is kept: Rank.Normalize drops the second and says so.
		st.steps = append(st.steps, profile.StepMarker{Step: n, Interval: iv})
		if p, err := strconv.ParseInt(string(pid), 10, 64); err == nil && st.cpuPID < 0 {
			st.cpuPID = p
		}
	case bytes.Equal(name, nameRecordParams):
		p, ext, _, err := parseCommArgs(args)
		if err != nil {
			return err
		}
		if ext >= 0 && p.hasAnyParams {
			st.params[ext] = p
		}
		if t := torchCollectiveType(p.collective); t == "send" || t == "receive" {
			return st.p2pRecord(tid, ts, ext, p)
		}
	}
	return nil
}

func (st *kinetoState) kernel(name, ts, dur, args []byte, corr int64) error {
	iv, err := kinetoInterval(ts, dur)
	if err != nil {
		return err
	}
	body := jsonx.RawStringBody(name)
	body = bytes.TrimPrefix(body, []byte("void "))
	if !bytes.HasPrefix(body, []byte("nccl")) {
		st.compute = append(st.compute, iv)
		st.launches.addKernel(corr, false)
		return nil
	}
	if i := bytes.IndexByte(body, '('); i >= 0 {
		body = body[:i]
	}
	n, ok := st.names[string(body)]
	if !ok {
		n, _ = jsonx.Unquote(append(append([]byte{'"'}, body...), '"'))
		st.names[string(body)] = n
	}
	k := kinetoKernel{iv: iv, name: n, extID: -1, corr: -1}
	if len(args) > 0 {
		if k.params, k.extID, k.corr, err = parseCommArgs(args); err != nil {
			return err
		}
	}
	st.launches.addKernel(k.corr, k.mayBeBatched())
	st.kernels = append(st.kernels, k)
	return nil
}

// kinetoInterval parses ts and dur, µs numbers, from their decimal text: exact ns.
func kinetoInterval(ts, dur []byte) (profile.Interval, error) {
	start, err := timeNs(ts)
	if err != nil {
		return profile.Interval{}, err
	}
	var d int64
	if len(dur) > 0 {
		if d, err = units.NsFromUsText(string(jsonx.RawStringBody(dur))); err != nil || d < 0 {
			return profile.Interval{}, fmt.Errorf("bad dur %s", dur)
		}
	}
	return profile.Interval{StartNs: start, EndNs: start + d}, nil
}

// parseCommArgs reads a collective's arguments, the event's External id and its
// correlation (-1 when absent) from an args object.
func parseCommArgs(args []byte) (p commParams, ext, corr int64, err error) {
	ext, corr = -1, -1
	if len(args) == 0 {
		return p, ext, corr, nil
	}
	it := jsonx.NewObjIter(args)
	str := func(v []byte) string {
		s, ok := jsonx.Unquote(v)
		if !ok {
			return string(v) // a number written without quotes
		}
		return s
	}
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		switch string(k) {
		case "External id":
			if n, ok := jsonx.OptInt(v); ok {
				ext = n
			}
			continue
		case "correlation":
			if n, ok := jsonx.OptInt(v); ok {
				corr = n
			}
			continue
		case "Collective name":
			p.collective = str(v)
		case "In msg nelems", "In msg size": // element counts ("msg size": an older spelling)
			p.inN = jsonx.IntOrZero(v)
		case "Out msg nelems", "Out msg size":
			p.outN = jsonx.IntOrZero(v)
		case "dtype":
			p.dtype = str(v)
		case "Group size":
			p.groupSize = int(jsonx.IntOrZero(v))
		case "Process Group Name":
			p.pgName = str(v)
		case "Process Group Description":
			p.pgDesc = str(v)
		case "Process Group Ranks":
			p.pgRanks = str(v)
		default:
			continue
		}
		p.hasAnyParams = true
	}
	if it.Err != nil {
		return p, ext, corr, fmt.Errorf("args: %v", it.Err)
	}
	return p, ext, corr, nil
}

// worldGroup is the group key of ops that name no process group: assumed to be the
// whole job (distributedInfo.world_size).
const worldGroup = "world"

// finish builds the rank once every event is read.
func (st *kinetoState) finish() *profile.Rank {
	r := &profile.Rank{
		Rank:              st.dist.rank,
		Dir:               st.file,
		Format:            profile.FormatKineto,
		Info:              profile.Info{RankID: st.dist.rank, ChipName: st.chip},
		HasTimeline:       st.events > 0,
		ClipToStepWindows: true,
		Timeline:          profile.Timeline{Steps: st.steps, Compute: st.compute},
		FilesUsed:         []string{filepath.Base(st.file)},
	}
	r.Metadata.DistributedArgs = st.dist.args
	r.Info.Host, r.Info.HostSource = kinetoHost(st.file, st.traceName, st.hostName, st.cpuPID)

	// Groups named by the ops' own arguments, beyond those of distributedInfo.
	type opGroup struct {
		desc, ranks string
		size        int
	}
	opGroups := map[string]opGroup{}
	usesWorld := false
	r.CommOps = make([]profile.CommOp, 0, len(st.kernels))
	batched := st.batchedP2P()
	for i, k := range st.kernels {
		p := k.params
		if p.collective == "" && p.pgName == "" && k.extID >= 0 {
			if q, ok := st.params[k.extID]; ok {
				p = q
			}
		}
		if q, ok := batched[i]; ok {
			p = q
		}
		nameType, alg, nameDType := ncclKernelInfo(k.name)
		op := profile.CommOp{Name: k.name, Type: nameType, Interval: k.iv, Step: -1, AlgType: alg, DataType: nameDType}
		// PyTorch's collective name is more specific than the kernel's (SendRecv is a
		// send, a recv or an all-to-all; Generic names nothing).
		if t := torchCollectiveType(p.collective); t != "" {
			op.Type = t
		}
		if op.Type == "" {
			op.Type = "unknown"
		}
		if p.dtype != "" {
			// The kernel's own type is not the tensor's (NCCL broadcasts bytes).
			op.DataType = torchDataType(p.dtype)
		}
		// nccl-tests' message size: the larger buffer (AllGather's output,
		// ReduceScatter's input), so that busbw follows its definitions.
		op.Count = max(p.inN, p.outN)
		op.Group = p.pgName
		if op.Group == "" {
			op.Group, usesWorld = worldGroup, true
		} else if g := opGroups[p.pgName]; g.size == 0 || g.desc == "" {
			opGroups[p.pgName] = opGroup{desc: p.pgDesc, ranks: p.pgRanks, size: p.groupSize}
		}
		r.CommOps = append(r.CommOps, op)
	}

	// Process groups: distributedInfo's pg_config, then those the ops name, then the
	// assumed world group.
	known := map[string]bool{}
	for _, g := range st.dist.groups {
		known[g.name] = true
		r.Metadata.ParallelGroups = append(r.Metadata.ParallelGroups, profile.ParallelGroup{
			Key: g.name, Name: g.desc, GlobalRanks: g.ranks, Size: g.size,
			GroupRank: slices.Index(g.ranks, st.dist.rank), Source: "distributedInfo.pg_config",
		})
	}
	for name, g := range opGroups {
		if known[name] {
			continue
		}
		pg := profile.ParallelGroup{Key: name, Name: g.desc, Size: g.size, GroupRank: -1, Source: "process group args of the NCCL ops"}
		var ranks []int
		if json.Unmarshal([]byte(g.ranks), &ranks) == nil && (g.size == 0 || len(ranks) == g.size) {
			pg.GlobalRanks = ranks // a cut list ("[0, 1, ..., 29, ...]") does not parse
			pg.GroupRank = slices.Index(ranks, st.dist.rank)
		}
		r.Metadata.ParallelGroups = append(r.Metadata.ParallelGroups, pg)
	}
	if usesWorld && st.dist.worldSize > 0 && !known[worldGroup] {
		ranks := make([]int, st.dist.worldSize)
		for i := range ranks {
			ranks[i] = i
		}
		r.Metadata.ParallelGroups = append(r.Metadata.ParallelGroups, profile.ParallelGroup{
			Key: worldGroup, Name: worldGroup, GlobalRanks: ranks, GroupRank: slices.Index(ranks, st.dist.rank),
			Source: "distributedInfo.world_size (assumed: the ops name no process group)",
		})
	}
	sort.Slice(r.Metadata.ParallelGroups, func(i, j int) bool {
		return r.Metadata.ParallelGroups[i].Key < r.Metadata.ParallelGroups[j].Key
	})

	sort.Slice(r.Steps, func(i, j int) bool { return r.Steps[i].StartNs < r.Steps[j].StartNs })
	sort.Slice(r.Compute, func(i, j int) bool { return r.Compute[i].StartNs < r.Compute[j].StartNs })
	sort.SliceStable(r.CommOps, func(i, j int) bool { return r.CommOps[i].StartNs < r.CommOps[j].StartNs })
	return r
}

// ncclKernelInfo reads an NCCL kernel name (parameter list removed) into the op type,
// the algorithm and protocol ("RING_LL") and the data type the kernel works on:
//
//	ncclKernel_AllReduce_RING_LL_Sum_float    NCCL ≤ 2.18: op, algorithm, protocol, reduction, type
//	ncclDevKernel_AllReduce_Sum_f32_RING_LL   NCCL ≥ 2.19: op, reduction, type, algorithm, protocol
//	ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t, ncclDevKernel_SendRecv
//	ncclAllReduceRingLLKernel_sum_f32         NCCL 2.4 to 2.7
//	ncclDevKernel_Generic                     (no op in the name: "")
//
// Unknown parts are "".
func ncclKernelInfo(name string) (opType, alg, dtype string) {
	var rest string
	switch {
	case strings.HasPrefix(name, "ncclKernel_"):
		rest = name[len("ncclKernel_"):]
	case strings.HasPrefix(name, "ncclDevKernel_"):
		rest = name[len("ncclDevKernel_"):]
	default: // ncclAllReduceRingLLKernel_sum_f32: camel case before "Kernel"
		head, tail, ok := strings.Cut(strings.TrimPrefix(name, "nccl"), "Kernel")
		if !ok {
			return "", "", ""
		}
		for _, op := range ncclOps {
			if strings.HasPrefix(head, op.name) {
				opType = op.typ
				head = head[len(op.name):]
				break
			}
		}
		// The rest of the head is Algorithm+Protocol: "RingLL", "TreeLL128", "RingSimple".
		for _, p := range []string{"LL128", "LL", "Simple"} {
			if strings.HasSuffix(head, p) {
				alg = strings.ToUpper(strings.TrimSuffix(head, p)) + "_" + strings.ToUpper(p)
				break
			}
		}
		for _, tok := range strings.Split(tail, "_") {
			if dt := ncclTypeToken(tok); dt != "" {
				dtype = dt
			}
		}
		return opType, alg, dtype
	}
	tokens := strings.Split(rest, "_")
	if len(tokens) > 0 {
		for _, op := range ncclOps {
			if tokens[0] == op.name {
				opType = op.typ
				break
			}
		}
	}
	var algo, proto string
	for i := 1; i < len(tokens); i++ {
		tok := tokens[i]
		switch tok {
		case "RING", "TREE", "PAT", "COLLNET", "NVLS":
			algo = tok
			// COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE
			if i+1 < len(tokens) && (tokens[i+1] == "DIRECT" || tokens[i+1] == "CHAIN" || (tok == "NVLS" && tokens[i+1] == "TREE")) {
				algo += "_" + tokens[i+1]
				i++
			}
		case "LL", "LL128", "SIMPLE":
			proto = tok
		default:
			if dt := ncclTypeToken(tok); dt != "" {
				dtype = dt
			}
		}
	}
	switch {
	case algo != "" && proto != "":
		alg = algo + "_" + proto
	default:
		alg = algo + proto
	}
	return opType, alg, dtype
}

// ncclOps are the op names of NCCL kernels; longer names first where one is the
// prefix of another.
var ncclOps = []struct{ name, typ string }{
	{"AllReduce", "allreduce"}, {"AllGather", "allgather"}, {"ReduceScatter", "reducescatter"},
	{"Broadcast", "broadcast"}, {"Reduce", "reduce"}, {"SendRecv", "sendrecv"},
	{"Send", "send"}, {"Recv", "receive"}, {"AllToAll", "alltoall"},
}

// ncclTypeToken maps a data type token of an NCCL kernel name to hcclprof's name.
// "int8_t" arrives as the tokens "int8" and "t"; "__nv_bfloat16" as "", "", "nv",
// "bfloat16".
func ncclTypeToken(tok string) string {
	switch tok {
	case "float", "f32":
		return "FP32"
	case "half", "f16":
		return "FP16"
	case "double", "f64":
		return "FP64"
	case "bfloat16", "bf16":
		return "BF16"
	case "int8", "i8":
		return "INT8"
	case "uint8", "u8":
		return "UINT8"
	case "int32", "i32":
		return "INT32"
	case "uint32", "u32":
		return "UINT32"
	case "int64", "i64":
		return "INT64"
	case "uint64", "u64":
		return "UINT64"
	case "f8e4m3", "e4m3":
		return "FP8E4M3"
	case "f8e5m2", "e5m2":
		return "FP8E5M2"
	}
	return ""
}

// torchCollectiveType normalises PyTorch's "Collective name" (allreduce, broadcast,
// _allgather_base, allgather_into_tensor_coalesced, reduce_scatter_tensor_coalesced,
// all_to_all, alltoall_base, send, recv, recvAnySource, barrier, ...) to an op type;
// "" when empty.
func torchCollectiveType(name string) string {
	n := strings.ToLower(strings.TrimLeft(name, "_"))
	if n == "" {
		return ""
	}
	for _, suffix := range []string{"_coalesced", "_base", "_into_tensor", "_tensor"} {
		n = strings.TrimSuffix(n, suffix)
	}
	n = strings.ReplaceAll(n, "_", "")
	switch {
	case n == "recv" || n == "recvanysource" || n == "receive":
		return "receive"
	case n == "alltoallv":
		return "alltoallv"
	case strings.HasPrefix(n, "alltoall"):
		return "alltoall"
	}
	return n
}

// torchDataType maps PyTorch's scalar type names to hcclprof's data type names (those
// profile.DataTypeSize knows); others are kept, upper-cased.
func torchDataType(dtype string) string {
	switch dtype {
	case "Float":
		return "FP32"
	case "Double":
		return "FP64"
	case "Half":
		return "FP16"
	case "BFloat16":
		return "BF16"
	case "Long":
		return "INT64"
	case "Int":
		return "INT32"
	case "Short":
		return "INT16"
	case "Char":
		return "INT8"
	case "Byte":
		return "UINT8"
	case "UInt16":
		return "UINT16"
	case "UInt32":
		return "UINT32"
	case "UInt64":
		return "UINT64"
	case "Bool":
		return "BOOL"
	case "Float8_e4m3fn", "Float8_e4m3fnuz":
		return "FP8E4M3"
	case "Float8_e5m2", "Float8_e5m2fnuz":
		return "FP8E5M2"
	}
	return strings.ToUpper(dtype)
}
