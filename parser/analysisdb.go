package parser

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// analysisDB is what hcclprof keeps of torch_npu's analysis.db: the same figures as
// the text export's step_trace_time.csv, communication.json and
// communication_matrix.json, in the same units.
type analysisDB struct {
	StepTrace  []profile.StepTraceRow
	CommStats  []profile.CommOpStats
	CommMatrix []profile.MatrixLink
}

// parseAnalysisDB reads analysis.db (docs/formats.md §7.2), opened read-only and
// immutable. Every table is optional and columns are found by name:
//
//   - StepTraceTime → StepTrace, with step_trace_time.csv's rules (parseStepTraceCSV):
//     step is TEXT ('50'; empty or NULL is a run without step markers), figures in µs;
//     step, computing, communication_not_overlapped, communication, free and stage
//     are required, overlapped, bubble, the "exclude receive" column and preparing are
//     derived or dropped as in the CSV. torch_npu 2.7.1's leading deviceId column is
//     ignored (it is not the rank).
//   - CommAnalyzerTime and CommAnalyzerBandwidth → CommStats, as communication.json
//     gives them: step 'step50' (a bare 'step' is -1), type 'p2p' or 'collective',
//     start_timestamp in µs, times in ms, sizes in MB. Bandwidth rows are one per
//     (op, transport, packet size), the transport's totals repeated on each; the SDMA
//     aggregate's row has package_size 0 and count 0 and adds no bin. Transports
//     without traffic have no row (communication.json lists them with zeros).
//   - CommAnalyzerMatrix → CommMatrix: src_rank and dst_rank are TEXT local ranks;
//     op_name is the empty string on -total rows.
//
// Results are sorted as the JSON parsers sort theirs. Errors name the file.
func parseAnalysisDB(path string) (*analysisDB, error) {
	d, err := table.OpenSQLite(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out := &analysisDB{}
	if err := readStepTraceTime(d, out); err != nil {
		return out, err
	}
	if err := readCommAnalyzer(d, out); err != nil {
		return out, err
	}
	if err := readCommMatrix(d, out); err != nil {
		return out, err
	}
	return out, nil
}

// stepOf reads a step column of t: '50' or 'step50' → 50, true; an empty string, NULL or
// 'step' → -1, false.
func stepOf(t *table.Rows, col string) (int, bool, error) {
	s := strings.TrimSpace(t.Text(col))
	if len(s) >= 4 && strings.EqualFold(s[:4], "step") {
		s = strings.TrimSpace(s[4:])
	}
	if s == "" {
		return -1, false, nil
	}
	var n table.Int
	if err := n.Parse(s); err != nil || n.V < -1<<31 || n.V >= 1<<31 {
		return 0, false, t.Errf("column %s: %q is not a step number", col, t.Text(col))
	}
	return int(n.V), true, nil
}

// StepTraceTime columns (docs/formats.md §7.2).
const (
	sttStep          = "step"
	sttComputing     = "computing"
	sttCommNotOvl    = "communication_not_overlapped"
	sttOverlapped    = "overlapped"
	sttCommunication = "communication"
	sttFree          = "free"
	sttStage         = "stage"
	sttBubble        = "bubble"
	sttExclReceive   = "communication_not_overlapped_and_exclude_receive"
	sttPreparing     = "preparing"
)

func readStepTraceTime(d *table.DB, out *analysisDB) error {
	t, err := d.SelectAll("StepTraceTime", sttStep, sttComputing, sttCommNotOvl, sttCommunication, sttFree, sttStage)
	if err != nil || t == nil {
		return err
	}
	defer t.Close()
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		row, err := stepTraceRowOf(t)
		if err != nil {
			return err
		}
		out.StepTrace = append(out.StepTrace, row)
	}
	return nil
}

// stepTraceRowOf reads the current row of a step trace table (StepTraceTime, or
// msprof-analyze's ClusterStepTraceTime), with step_trace_time.csv's rules.
func stepTraceRowOf(t *table.Rows) (profile.StepTraceRow, error) {
	var err error
	var row profile.StepTraceRow
	if row.Step, row.HasStep, err = stepOf(t, sttStep); err != nil {
		return row, err
	}
	for _, c := range []struct {
		col string
		dst *int64
	}{
		{sttComputing, &row.ComputingNs}, {sttCommNotOvl, &row.CommNotOverlappedNs},
		{sttCommunication, &row.CommunicationNs}, {sttFree, &row.FreeNs}, {sttStage, &row.StageNs},
	} {
		v, err := t.MustFloat(c.col)
		if err != nil {
			return row, err
		}
		*c.dst = units.NsFromUsFigure(v)
		units.NoteSaturated(&row.OutOfRange, c.col, *c.dst, strconv.FormatFloat(v, 'g', -1, 64))
	}
	opt := func(col string) (int64, bool, error) {
		v, has, err := t.Float(col)
		ns := units.NsFromUsFigure(v)
		if has && err == nil {
			units.NoteSaturated(&row.OutOfRange, col, ns, strconv.FormatFloat(v, 'g', -1, 64))
		}
		return ns, has, err
	}
	var has bool
	if row.OverlappedNs, has, err = opt(sttOverlapped); err != nil {
		return row, err
	} else if !has {
		row.OverlappedNs = row.CommunicationNs - row.CommNotOverlappedNs
	}
	if row.BubbleNs, _, err = opt(sttBubble); err != nil {
		return row, err
	}
	if row.CommNotOverlappedExclRecvNs, has, err = opt(sttExclReceive); err != nil {
		return row, err
	} else if !has {
		row.CommNotOverlappedExclRecvNs = row.CommNotOverlappedNs - row.BubbleNs
	}
	if row.PreparingNs, row.HasPreparing, err = opt(sttPreparing); err != nil {
		return row, err
	}
	if row.PreparingNs > maxPreparingNs {
		row.PreparingNs, row.HasPreparing = 0, false
	}
	return row, nil
}

// commKey identifies one op of the communication analysis.
type commKey struct {
	step        int
	p2p         bool
	name, group string
}

func readCommAnalyzer(d *table.DB, out *analysisDB) error {
	t, err := d.SelectAll("CommAnalyzerTime", "hccl_op_name", "group_name")
	if err != nil || t == nil {
		return err
	}
	defer t.Close()
	index := map[commKey]int{}
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		op, err := commOpOf(t)
		if err != nil {
			return err
		}
		if err := commTimesOf(t, &op, "elapse_time"); err != nil {
			return err
		}
		index[commKey{op.Step, op.P2P, op.Name, op.Group}] = len(out.CommStats)
		out.CommStats = append(out.CommStats, op)
	}
	if err := readCommBandwidth(d, out, index); err != nil {
		return err
	}
	sortCommOps(out.CommStats)
	return nil
}

// commOpOf reads the key columns of a CommAnalyzer* row.
func commOpOf(t *table.Rows) (profile.CommOpStats, error) {
	op := profile.CommOpStats{Name: t.Text("hccl_op_name"), Group: t.Text("group_name")}
	for _, col := range []string{"hccl_op_name", "group_name"} { // the op's key: NULL names no op
		if err := t.NotNull(col); err != nil {
			return op, err
		}
	}
	var err error
	if op.Step, _, err = stepOf(t, "step"); err != nil {
		return op, err
	}
	if t.Has("type") {
		op.P2P = strings.EqualFold(strings.TrimSpace(t.Text("type")), cjP2P)
	} else {
		op.P2P = profile.IsP2P(op.Name) // communication_analyzer.db has no type (§7.3)
	}
	return op, nil
}

// commTimesOf reads the times of a CommAnalyzerTime row (or of msprof-analyze's
// cluster tables, whose elapse column is elapsed_time) into op: start_timestamp in
// µs, the times in ms; idle_time, when the table has none, derived as
// communication.json's readers derive it.
func commTimesOf(t *table.Rows, op *profile.CommOpStats, elapseCol string) error {
	if f, has, err := t.Float("start_timestamp"); err != nil {
		return err
	} else if has {
		if op.StartNs, err = microsNsOf(f); err != nil {
			return t.Errf("start_timestamp: %v", err)
		}
	}
	for _, f := range []struct {
		col string
		dst *int64
	}{
		{elapseCol, &op.ElapseNs}, {"transit_time", &op.TransitNs}, {"wait_time", &op.WaitNs},
		{"synchronization_time", &op.SyncNs}, {"idle_time", &op.IdleNs},
	} {
		var err error
		if *f.dst, err = t.Scaled(f.col); err != nil {
			return err
		}
	}
	if !t.Has("idle_time") {
		op.IdleNs = derivedIdleNs(*op)
	}
	return nil
}

func readCommBandwidth(d *table.DB, out *analysisDB, index map[commKey]int) error {
	t, err := d.SelectAll("CommAnalyzerBandwidth", "hccl_op_name", "group_name", "transport_type")
	if err != nil || t == nil {
		return err
	}
	defer t.Close()
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		key, err := commOpOf(t)
		if err != nil {
			return err
		}
		i, found := index[commKey{key.Step, key.P2P, key.Name, key.Group}]
		if !found {
			// Every real analysis.db has a time row for each op it has bandwidth rows
			// for (ops without transfers have time rows only). Kept without one, the
			// op read as a time split of 0s: moving nothing, waiting for nobody.
			return t.Errf("op %s of group %s has bandwidth rows but no CommAnalyzerTime row: the time table lost rows", key.Name, key.Group)
		}
		if err := t.NotNull("transport_type"); err != nil {
			return err
		}
		if err := addBandwidthRow(&out.CommStats[i], t.Text("transport_type"), t); err != nil {
			return err
		}
	}
	for i := range out.CommStats {
		sortSizeDistributions(&out.CommStats[i])
	}
	return nil
}

// addBandwidthRow adds one row of a bandwidth table (analysis.db's
// CommAnalyzerBandwidth, msprof-analyze's cluster tables: one row per op, transport
// and packet size) to the op's transport statistics and size distribution.
func addBandwidthRow(op *profile.CommOpStats, transport string, t *table.Rows) error {
	if op.Transports == nil {
		op.Transports = map[string]profile.TransportStats{}
	}
	ts := op.Transports[transport]
	var err error
	if ts.Bytes, ts.TimeNs, ts.BandwidthGBps, err = transitOf(t); err != nil {
		return err
	}
	if ts.LargePacketRatio, _, err = t.Float("large_packet_ratio"); err != nil {
		return err
	}
	var bin profile.PacketBin
	if bin.SizeBytes, err = t.Scaled("package_size"); err != nil {
		return err
	}
	if err := t.NotNull("count"); err != nil {
		return err
	}
	if bin.Count, err = t.Int("count"); err != nil {
		return err
	}
	if bin.TimeNs, err = t.Scaled("total_duration"); err != nil {
		return err
	}
	if bin.SizeBytes != 0 || bin.Count != 0 {
		ts.SizeDistribution = append(ts.SizeDistribution, bin)
	}
	op.Transports[transport] = ts
	return nil
}

// transitOf reads the transfer figures of a bandwidth or matrix row (analysis.db's,
// msprof-analyze's cluster tables'): transit_size in MB, transit_time in ms, bandwidth
// in GB/s.
func transitOf(t *table.Rows) (bytes, timeNs int64, gbps float64, err error) {
	if bytes, err = t.Scaled("transit_size"); err != nil {
		return
	}
	if timeNs, err = t.Scaled("transit_time"); err != nil {
		return
	}
	gbps, _, err = t.Float("bandwidth")
	return
}

// sortSizeDistributions orders an op's packet bins by size, as the JSON files do.
func sortSizeDistributions(op *profile.CommOpStats) {
	for _, ts := range op.Transports {
		slices.SortStableFunc(ts.SizeDistribution, func(a, b profile.PacketBin) int {
			return cmp.Compare(a.SizeBytes, b.SizeBytes)
		})
	}
}

func readCommMatrix(d *table.DB, out *analysisDB) error {
	t, err := d.SelectAll("CommAnalyzerMatrix", "hccl_op_name", "group_name", "src_rank", "dst_rank")
	if err != nil || t == nil {
		return err
	}
	defer t.Close()
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		key, err := commOpOf(t)
		if err != nil {
			return err
		}
		l := profile.MatrixLink{Step: key.Step, P2P: key.P2P, OpKey: key.Name, Group: key.Group,
			Transport: t.Text("transport_type"), OpName: t.Text("op_name")}
		var okS, okD bool
		l.SrcLocal, okS = parseLocalRank(strings.TrimSpace(t.Text("src_rank")))
		l.DstLocal, okD = parseLocalRank(strings.TrimSpace(t.Text("dst_rank")))
		if !okS || !okD {
			return t.Errf("link %q-%q is not a pair of local ranks", t.Text("src_rank"), t.Text("dst_rank"))
		}
		if l.Bytes, l.TimeNs, l.BandwidthGBps, err = transitOf(t); err != nil {
			return err
		}
		out.CommMatrix = append(out.CommMatrix, l)
	}
	sortMatrixLinks(out.CommMatrix)
	return nil
}
