package parser

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/profile"
)

// torch_npu's db export (docs/formats.md §7): with _export_type "db" a rank's
// ASCEND_PROFILER_OUTPUT holds ascend_pytorch_profiler_{rank}.db, the unified profiler
// db (device tasks, HCCL ops and tasks, host APIs, steps; §7.1), and analysis.db,
// the profiler's own derived tables (the step breakdown and the communication
// analysis; §7.2) in place of the text export's files.

// profilerDBRe matches the unified db's name; the rank is its group
// (msprof-analyze's PyTorch pattern, docs/formats.md §1.5).
var profilerDBRe = regexp.MustCompile(`^ascend_(?:pytorch|mindspore)_profiler(?:_(\d+))?\.db$`)

// analysisDBName is the derived-table db beside the profiler db.
const analysisDBName = "analysis.db"

// isProfilerDB reports whether a file name is a torch_npu profiler db, and its rank
// (-1 when the name has none).
func isProfilerDB(name string) (rank int, ok bool) {
	m := profilerDBRe.FindStringSubmatch(name)
	if m == nil {
		return -1, false
	}
	if m[1] == "" || len(m[1]) > 9 {
		return -1, true
	}
	r, err := strconv.Atoi(m[1])
	if err != nil {
		return -1, true
	}
	return r, true
}

// OVERLAP_ANALYSIS.type values. The table has no ENUM table to join: the meaning
// was read off imagenet-2rank-db, where the sums of types 0..3 over step 50 equal
// analysis.db's computing, communication, communication_not_overlapped and free to
// the ns (8903431, 102108100, 98071947, 25258144).
const (
	overlapComputing = iota
	overlapCommunication
	overlapCommNotOverlapped
	overlapFree
)

// torchDB is what hcclprof keeps of ascend_pytorch_profiler_{rank}.db: the timeline
// (in the same form the text export's trace_view.json gives) and META_DATA.
// Timeline.Events counts the rows read.
type torchDB struct {
	traceTimeline
	// Metadata holds the META_DATA rows ENV_VARIABLES, parallel_group_info and
	// distributed_args; a section the db lacks is left nil.
	Metadata profile.Metadata
	// ChipName is NPU_INFO's name ("Ascend910B"), "" when the db has none.
	ChipName string
}

// parseTorchDB reads torch_npu's unified profiler db, ascend_pytorch_profiler_{rank}.db
// (docs/formats.md §7.1), opened read-only and immutable: the file is never written, and
// no journal is created beside it. Strings are read through STRING_IDS and enum
// values through the ENUM_* tables, by JOIN; no id is hard-coded. What is kept:
//
//   - Steps: STEP_TIME(id, startNs, endNs), the host-side step windows
//     (ProfilerStep#N of the text export).
//   - Compute: the TASK rows that have a COMPUTE_TASK_INFO row, as msprof-analyze
//     decides computation in db data. On imagenet-2rank-db this set (AI_CORE,
//     AI_VECTOR_CORE, MIX_AIV and the two DSA_SQE dropout-mask tasks, 187 rows) is
//     exactly the profiler's OVERLAP_ANALYSIS Computing rows and gives analysis.db's
//     Computing of step 50 (8903.431 µs). The FFTS+ AI_CORE task that wraps each HCCL
//     op has no COMPUTE_TASK_INFO row, and is rightly left out.
//   - CommOps: COMMUNICATION_OP, with Group the decimal profile.DoubleHash of the raw
//     HCCL group name: the @hash of communication.json, which the text path puts in
//     CommOp.Group, so both exports give the same keys. GroupRow is the raw group
//     name (the db has no timeline rows; tasks carry the same, to tie them to ops). DataType is ENUM_HCCL_DATA_TYPE's name ("" for N/A and
//     INVALID_TYPE); Step is -1 (analysis assigns steps).
//   - CommTasks: COMMUNICATION_TASK_INFO joined with TASK on globalTaskId for the
//     start and end; Name is the task type (Memcpy, Notify_Wait, ...; the table's
//     name column is the parent op), Plane the planeId, ranks group-local
//     (4294967295 is none: -1), transport and link types by their ENUM tables.
//   - Flows: the host launch time of device work, for the analysis's step windows.
//     A framework op (PYTORCH_API, startNs stored as TEXT) links through
//     CONNECTION_IDS (id = PYTORCH_API.connectionId) to the CANN connection ids of
//     what it launched (CONNECTION_IDS.connectionId), which TASK.connectionId and
//     COMMUNICATION_OP.connectionId carry. One flow per CANN connection id, as the
//     text export draws one torch_to_npu flow per launch: its device end is the
//     COMMUNICATION_OP start for an HCCL launch (every task of the op carries the
//     op's connection id; the text export's flow ends at the op), else the first TASK
//     start. Checked on imagenet-2rank-db (190 kernel launches and the first of the
//     four HcclAllreduce ops are linked; acl calls such as memcpy are not, and give
//     no flow) and on generated dbs, whose step windows come out as the text
//     export's. The launches are the one table-sized map the parse keeps (a host
//     time per linked connection id, see hostLaunches); all else is streamed.
//   - Overlap: OVERLAP_ANALYSIS when present (type 0..3 = Computing, Communication,
//     Communication(Not Overlapped), Free). Real rank dbs may lack it: it is never
//     required.
//   - Metadata: META_DATA's ENV_VARIABLES, parallel_group_info and distributed_args
//     (JSON text), read with profiler_metadata.json's rules.
//
// TASK and STRING_IDS are required; the other tables are read when present. A
// missing table or column, a file that is not a database, or a corrupt or truncated
// one is an error naming the file. Rows are streamed; on an error the tables read
// so far are returned with it, so callers can report a partial result.
func parseTorchDB(path string) (*torchDB, error) {
	d, err := table.OpenSQLite(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out := &torchDB{}
	r := torchDBReader{d: d, out: out}
	err = r.read()
	r.finish()
	return out, err
}

type torchDBReader struct {
	d   *table.DB
	out *torchDB
	// launches are the CANN connection ids a framework op launched, with the host
	// time and, once found, the device start (see flows).
	launches map[int64]launch
	// unlinked counts linked framework ops (PYTORCH_API.connectionId set) that
	// CONNECTION_IDS has no CANN connection id for: reported once all is read.
	unlinked int
}

// launch is one host→device link being assembled.
type launch struct {
	hostNs int64
	devNs  int64 // math.MaxInt64 until a device row is seen
	hccl   bool  // the connection launched an HCCL op: the op's start is the device end
}

func (r *torchDBReader) read() error {
	d := r.d
	if err := d.Require("STRING_IDS", "id", "value"); err != nil {
		return err
	}
	if err := d.Require("TASK", "startNs", "endNs", "globalTaskId", "connectionId"); err != nil {
		return err
	}
	for _, step := range []func() error{r.steps, r.hostLaunches, r.commOps, r.tasks, r.commTasks, r.flows, r.overlap, r.metadata, r.npuInfo} {
		if err := step(); err != nil {
			return err
		}
	}
	if r.unlinked > 0 {
		// In the real db every connectionId of PYTORCH_API has its CONNECTION_IDS
		// rows: lost ones take their launches' flows, which map steps to the device.
		return d.Wrap("reading PYTORCH_API ⋈ CONNECTION_IDS", fmt.Errorf("%d PYTORCH_API rows link to a connectionId with no CONNECTION_IDS row (or a NULL one): their host→device flows are lost", r.unlinked))
	}
	return nil
}

// finish sorts what was read by start time, as the text path does.
func (r *torchDBReader) finish() {
	tl := &r.out.traceTimeline
	byStart := func(a, b profile.Interval) int { return cmp.Compare(a.StartNs, b.StartNs) }
	sortIvs := func(ivs []profile.Interval) {
		if !slices.IsSortedFunc(ivs, byStart) {
			slices.SortFunc(ivs, byStart)
		}
	}
	slices.SortStableFunc(tl.Steps, func(a, b profile.StepMarker) int { return byStart(a.Interval, b.Interval) })
	sortIvs(tl.Compute)
	sortIvs(tl.BackwardCompute)
	slices.SortStableFunc(tl.CommOps, func(a, b profile.CommOp) int { return byStart(a.Interval, b.Interval) })
	slices.SortStableFunc(tl.CommTasks, func(a, b profile.CommTask) int { return byStart(a.Interval, b.Interval) })
	for _, ivs := range [][]profile.Interval{tl.Overlap.Computing, tl.Overlap.Communication, tl.Overlap.CommNotOverlapped, tl.Overlap.Free} {
		sortIvs(ivs)
	}
	slices.SortFunc(tl.Flows, func(a, b profile.DeviceFlow) int {
		return cmp.Or(cmp.Compare(a.DeviceNs, b.DeviceNs), cmp.Compare(a.HostNs, b.HostNs))
	})
}

// taskWhat names a communication task in errors.
const taskWhat = "a communication task"

// The names of ids are read through STRING_IDS (value) and the ENUM_* tables (name),
// as table.Ref: a damaged db (STRING_IDS cut short, an ENUM table missing) had its ops
// and tasks lose their names, types and groups without a word.
func (r *torchDBReader) str(alias, expr string) (sel, join string) {
	return r.d.Lookup("STRING_IDS", "value", alias, expr)
}

func (r *torchDBReader) enum(table, alias, expr string) (sel, join string) {
	return r.d.Lookup(table, "name", alias, expr)
}

func (r *torchDBReader) steps() error {
	if !r.d.Has("STEP_TIME") {
		return nil
	}
	if err := r.d.Require("STEP_TIME", "id", "startNs", "endNs"); err != nil {
		return err
	}
	var id, start, end table.Int
	q := r.d.Query("reading STEP_TIME", "SELECT id, startNs, endNs FROM STEP_TIME", &id, &start, &end)
	for err := range table.Each(q) {
		if err != nil {
			return err
		}
		r.out.Events++
		if !id.Valid || !start.Valid || !end.Valid {
			return q.Errf("a step row with a NULL id, startNs or endNs")
		}
		if id.V < -1<<31 || id.V >= 1<<31 {
			return q.Errf("step id %d out of range", id.V)
		}
		r.out.Steps = append(r.out.Steps, profile.StepMarker{Step: int(id.V),
			Interval: profile.Interval{StartNs: start.V, EndNs: end.V}})
	}
	return nil
}

// tasks scans TASK once for two things: the compute tasks (those with a
// COMPUTE_TASK_INFO row) and the first device start of each framework launch.
func (r *torchDBReader) tasks() error {
	cti := "NULL"
	if r.d.Has("COMPUTE_TASK_INFO") {
		if err := r.d.Require("COMPUTE_TASK_INFO", "globalTaskId"); err != nil {
			return err
		}
		cti = "c.globalTaskId"
	}
	// The kernel's name, to tell a backward pass's kernels (profile.IsBackwardKernel).
	nameExpr := "NULL"
	if cti != "NULL" {
		ok, err := r.d.HasColumns("COMPUTE_TASK_INFO", "name")
		if err != nil {
			return err
		}
		if ok {
			nameExpr = "c.name"
		}
	}
	nameSel, nameJoin := r.str("kn", nameExpr)
	q := "SELECT t.startNs, t.endNs, t.connectionId, " + cti + ", " + nameSel + " FROM TASK AS t"
	if cti != "NULL" {
		q += " LEFT JOIN COMPUTE_TASK_INFO AS c ON c.globalTaskId = t.globalTaskId" + nameJoin
	}
	var start, end, conn, compute table.Int
	var name table.Ref
	dests := append([]any{&start, &end, &conn, &compute}, name.Dests()...)
	rows := r.d.Query("reading TASK ⋈ COMPUTE_TASK_INFO", q, dests...)
	for err := range table.Each(rows) {
		if err != nil {
			return err
		}
		r.out.Events++
		if err := name.Resolve("a compute task", "COMPUTE_TASK_INFO.name", "STRING_IDS", false); err != nil {
			return rows.Wrap(err)
		}
		if !start.Valid || !end.Valid {
			continue // a task the device never ran: no time to count
		}
		if compute.Valid {
			iv := profile.Interval{StartNs: start.V, EndNs: end.V}
			r.out.Compute = append(r.out.Compute, iv)
			if name.Name.Valid && profile.IsBackwardKernel(name.Name.V) {
				r.out.BackwardCompute = append(r.out.BackwardCompute, iv)
			}
		}
		if conn.Valid && r.launches != nil {
			if l, ok := r.launches[conn.V]; ok && !l.hccl && start.V < l.devNs {
				l.devNs = start.V
				r.launches[conn.V] = l
			}
		}
	}
	return nil
}

func (r *torchDBReader) commOps() error {
	if !r.d.Has("COMMUNICATION_OP") {
		return nil
	}
	if err := r.d.Require("COMMUNICATION_OP", "opName", "startNs", "endNs"); err != nil {
		return err
	}
	c, err := r.d.OptionalColumns("COMMUNICATION_OP", "o", "opType", "groupName", "dataType", "count", "algType", "connectionId")
	if err != nil {
		return err
	}
	nameSel, nameJoin := r.str("n", "o.opName")
	typeSel, typeJoin := r.str("ty", c[0])
	groupSel, groupJoin := r.str("g", c[1])
	dtSel, dtJoin := r.enum("ENUM_HCCL_DATA_TYPE", "dt", c[2])
	algSel, algJoin := r.str("a", c[4])
	q := "SELECT " + strings.Join([]string{nameSel, typeSel, groupSel, "o.startNs", "o.endNs", dtSel, c[3], algSel, c[5]}, ", ") +
		" FROM COMMUNICATION_OP AS o" + nameJoin + typeJoin + groupJoin + dtJoin + algJoin
	var nameRef, typeRef, groupRef, dataRef, algRef table.Ref
	var start, end, count, conn table.Int
	dests := slices.Concat(nameRef.Dests(), typeRef.Dests(), groupRef.Dests(), []any{&start, &end}, dataRef.Dests(), []any{&count}, algRef.Dests(), []any{&conn})
	hashes := map[string]string{} // raw group name → hash: a handful of groups
	rows := r.d.Query("reading COMMUNICATION_OP", q, dests...)
	for err := range table.Each(rows) {
		if err != nil {
			return err
		}
		r.out.Events++
		if err := cmp.Or(
			nameRef.Resolve("an op", "opName", "STRING_IDS", true),
			typeRef.Resolve("an op", "opType", "STRING_IDS", false),
			groupRef.Resolve("an op", "groupName", "STRING_IDS", c[1] != "NULL"),
			dataRef.Resolve("an op", "dataType", "ENUM_HCCL_DATA_TYPE", false),
			algRef.Resolve("an op", "algType", "STRING_IDS", false),
		); err != nil {
			if nameRef.Name.Valid {
				err = fmt.Errorf("op %q: %w", nameRef.Name.V, err)
			}
			return rows.Wrap(err)
		}
		name, opType, group, dataType, alg := nameRef.Name, typeRef.Name, groupRef.Name, dataRef.Name, algRef.Name
		if !start.Valid || !end.Valid {
			return rows.Errf("op %q has a NULL startNs or endNs", name.V)
		}
		if conn.Valid && r.launches != nil {
			if l, ok := r.launches[conn.V]; ok {
				if !l.hccl || start.V < l.devNs {
					l.devNs = start.V
				}
				l.hccl = true
				r.launches[conn.V] = l
			}
		}
		n := name.V
		if n == "" {
			n = opType.V
		}
		op := profile.CommOp{Name: n, Type: profile.OpType(n), Step: -1,
			Interval: profile.Interval{StartNs: start.V, EndNs: end.V}, Count: count.V, AlgType: alg.V}
		if dt := dataType.V; dt != "N/A" && dt != "INVALID_TYPE" {
			op.DataType = dt
		}
		op.GroupRow = group.V
		if group.V != "" {
			h, ok := hashes[group.V]
			if !ok {
				h = strconv.FormatUint(profile.DoubleHash(group.V), 10)
				hashes[group.V] = h
			}
			op.Group = h
		} else {
			op.Group = profile.GroupIDFromName(n)
		}
		r.out.CommOps = append(r.out.CommOps, op)
	}
	return nil
}

// dbNoRank is the db's "no rank" (UINT32_MAX).
const dbNoRank = 4294967295

func (r *torchDBReader) commTasks() error {
	if !r.d.Has("COMMUNICATION_TASK_INFO") {
		return nil
	}
	if err := r.d.Require("COMMUNICATION_TASK_INFO", "globalTaskId", "taskType"); err != nil {
		return err
	}
	c, err := r.d.OptionalColumns("COMMUNICATION_TASK_INFO", "c", "planeId", "srcRank", "dstRank", "transportType", "linkType", "size", "groupName")
	if err != nil {
		return err
	}
	typeSel, typeJoin := r.str("tt", "c.taskType")
	groupSel, groupJoin := r.str("gn", c[6])
	trSel, trJoin := r.enum("ENUM_HCCL_TRANSPORT_TYPE", "tr", c[3])
	lkSel, lkJoin := r.enum("ENUM_HCCL_LINK_TYPE", "lk", c[4])
	// TASK drives the join (CROSS JOIN fixes the order): SQLite then indexes the
	// smaller COMMUNICATION_TASK_INFO on globalTaskId (neither table declares one)
	// rather than the whole TASK table.
	q := "SELECT " + strings.Join([]string{"t.startNs", "t.endNs", typeSel, c[0], c[1], c[2], trSel, lkSel, c[5], groupSel}, ", ") +
		" FROM TASK AS t CROSS JOIN COMMUNICATION_TASK_INFO AS c ON c.globalTaskId = t.globalTaskId" + typeJoin + trJoin + lkJoin + groupJoin
	var start, end, plane, src, dst, size table.Int
	var typeRef, transportRef, linkRef, groupRef table.Ref
	dests := slices.Concat([]any{&start, &end}, typeRef.Dests(), []any{&plane, &src, &dst}, transportRef.Dests(), linkRef.Dests(), []any{&size}, groupRef.Dests())
	var labels profile.TaskLabelSet
	rank := func(v table.Int) int {
		if !v.Valid || v.V < 0 || v.V >= dbNoRank || v.V > 1<<31-1 {
			return -1
		}
		return int(v.V)
	}
	joined := 0
	rows := r.d.Query("reading COMMUNICATION_TASK_INFO ⋈ TASK", q, dests...)
	for err := range table.Each(rows) {
		if err != nil {
			return err
		}
		joined++
		r.out.Events++
		if err := cmp.Or(
			typeRef.Resolve(taskWhat, "taskType", "STRING_IDS", true),
			transportRef.Resolve(taskWhat, "transportType", "ENUM_HCCL_TRANSPORT_TYPE", c[3] != "NULL"),
			linkRef.Resolve(taskWhat, "linkType", "ENUM_HCCL_LINK_TYPE", c[4] != "NULL"),
			groupRef.Resolve(taskWhat, "groupName", "STRING_IDS", c[6] != "NULL"),
		); err != nil {
			return rows.Wrap(err)
		}
		if c[5] != "NULL" && !size.Valid {
			return rows.Errf("%s: size is NULL", taskWhat)
		}
		taskType, transport, link, group := typeRef.Name, transportRef.Name, linkRef.Name, groupRef.Name
		if !start.Valid || !end.Valid {
			continue
		}
		t := profile.CommTask{TaskLabels: labels.Of(profile.TaskLabels{Name: taskType.V, TransportType: transport.V, LinkType: link.V, GroupRow: group.V}),
			Interval: profile.Interval{StartNs: start.V, EndNs: end.V}, SrcRank: rank(src), DstRank: rank(dst), SizeBytes: size.V}
		if plane.Valid && plane.V >= 0 && plane.V < 1<<31 {
			t.Plane = int(plane.V)
		}
		r.out.CommTasks = append(r.out.CommTasks, t)
	}
	// A task whose globalTaskId names no TASK row has no time and is lost to the
	// join: say so, as for any row that cannot be read (a NULL id lost them silently).
	var all int
	for err := range table.Each(r.d.Query("counting COMMUNICATION_TASK_INFO", "SELECT COUNT(*) FROM COMMUNICATION_TASK_INFO", &all)) {
		if err != nil {
			return err
		}
	}
	if all > joined {
		return r.d.Wrap("reading COMMUNICATION_TASK_INFO ⋈ TASK", fmt.Errorf("%d of the %d COMMUNICATION_TASK_INFO rows have no TASK row with their globalTaskId: their times are lost", all-joined, all))
	}
	return nil
}

// hostLaunches reads the framework side of the host→device links (see
// parseTorchDB): for every CANN connection id a PYTORCH_API row links to through
// CONNECTION_IDS, the launch's host start (the earliest, should several host rows
// share it). commOps and tasks then find each launch's device start, and flows emits
// them. The join is done here, in one map keyed by connection id, rather than in SQL:
// TASK has no index on connectionId, and SQLite's grouping and automatic indexes took
// four times as long as the rest of the parse together. A db without PYTORCH_API or
// CONNECTION_IDS (no framework layer) has no flows, and the analysis then uses the
// host step windows as they are.
func (r *torchDBReader) hostLaunches() error {
	d := r.d
	ok, err := d.HasColumns("PYTORCH_API", "startNs", "connectionId")
	if err != nil || !ok {
		return err
	}
	if ok, err = d.HasColumns("CONNECTION_IDS", "id", "connectionId"); err != nil || !ok {
		return err
	}
	// PYTORCH_API may hold millions of rows, most unlinked (NULL connectionId);
	// CONNECTION_IDS is what SQLite indexes for the join. A LEFT JOIN, so that a
	// linked row without its CONNECTION_IDS row is counted rather than lost.
	const q = `SELECT c.connectionId, p.startNs FROM PYTORCH_API AS p LEFT JOIN CONNECTION_IDS AS c ON c.id = p.connectionId
WHERE p.connectionId IS NOT NULL`
	r.launches = map[int64]launch{}
	var conn, host table.Int
	rows := d.Query("reading PYTORCH_API ⋈ CONNECTION_IDS", q, &conn, &host)
	// startNs is TEXT ('1736410576395167660'): table.Int parses it strictly, where a
	// CAST in SQL would read a bad value as 0 without a word.
	rows.ScanContext("PYTORCH_API.startNs")
	for err := range table.Each(rows) {
		if err != nil {
			return err
		}
		r.out.Events++
		if !conn.Valid {
			r.unlinked++
			continue
		}
		if !host.Valid {
			return rows.Errf("PYTORCH_API.startNs is NULL on a linked row")
		}
		if l, ok := r.launches[conn.V]; !ok || host.V < l.hostNs {
			r.launches[conn.V] = launch{hostNs: host.V, devNs: math.MaxInt64}
		}
	}
	return nil
}

// flows emits one flow per launch that reached the device, as the text export
// draws one torch_to_npu flow per launch.
func (r *torchDBReader) flows() error {
	for _, l := range r.launches {
		if l.devNs != math.MaxInt64 {
			r.out.Flows = append(r.out.Flows, profile.DeviceFlow{DeviceNs: l.devNs, HostNs: l.hostNs})
		}
	}
	r.launches = nil
	return nil
}

func (r *torchDBReader) overlap() error {
	ok, err := r.d.HasColumns("OVERLAP_ANALYSIS", "startNs", "endNs", "type")
	if err != nil || !ok {
		return err
	}
	var start, end, typ table.Int
	ov := &r.out.Overlap
	q := r.d.Query("reading OVERLAP_ANALYSIS", "SELECT startNs, endNs, type FROM OVERLAP_ANALYSIS", &start, &end, &typ)
	for err := range table.Each(q) {
		if err != nil {
			return err
		}
		r.out.Events++
		if !start.Valid || !end.Valid || !typ.Valid {
			continue
		}
		iv := profile.Interval{StartNs: start.V, EndNs: end.V}
		switch typ.V {
		case overlapComputing:
			ov.Computing = append(ov.Computing, iv)
		case overlapCommunication:
			ov.Communication = append(ov.Communication, iv)
		case overlapCommNotOverlapped:
			ov.CommNotOverlapped = append(ov.CommNotOverlapped, iv)
		case overlapFree:
			ov.Free = append(ov.Free, iv)
		}
	}
	return nil
}

// npuInfo reads the chip's name from NPU_INFO(id, name), optional.
func (r *torchDBReader) npuInfo() error {
	ok, err := r.d.HasColumns("NPU_INFO", "name")
	if err != nil || !ok {
		return err
	}
	var name table.Text
	for err := range table.Each(r.d.Query("reading NPU_INFO", "SELECT name FROM NPU_INFO", &name)) {
		if err != nil {
			return err
		}
		if name.Valid && r.out.ChipName == "" {
			r.out.ChipName = strings.TrimSpace(name.V)
		}
	}
	return nil
}

// metadataKeys are the META_DATA rows that are profiler_metadata.json's sections.
var metadataKeys = []string{"ENV_VARIABLES", "parallel_group_info", "distributed_args"}

func (r *torchDBReader) metadata() error {
	ok, err := r.d.HasColumns("META_DATA", "name", "value")
	if err != nil || !ok {
		return err
	}
	var name, value table.Text
	vals := map[string]string{}
	for err := range table.Each(r.d.Query("reading META_DATA", "SELECT name, value FROM META_DATA", &name, &value)) {
		if err != nil {
			return err
		}
		r.out.Events++
		if slices.Contains(metadataKeys, name.V) && value.Valid {
			vals[name.V] = value.V
		}
	}
	md := &r.out.Metadata
	for _, key := range metadataKeys {
		v, ok := vals[key]
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		// Each value is the JSON of one profiler_metadata.json section: read it with
		// that file's parser, wrapped as a one-key document.
		doc := `{"` + key + `": ` + v + "}"
		part, err := parseProfilerMetadata(strings.NewReader(doc), r.d.File+": META_DATA "+key)
		if err != nil {
			return err
		}
		switch key {
		case "ENV_VARIABLES":
			md.Env = part.Env
		case "parallel_group_info":
			md.ParallelGroups = part.ParallelGroups
		case "distributed_args":
			md.DistributedArgs = part.DistributedArgs
		}
	}
	return nil
}
