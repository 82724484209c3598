package parser

import (
	"cmp"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/order"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// Keys of communication.json (docs/formats.md §3).
const (
	cjTimeInfo    = "Communication Time Info"
	cjBwInfo      = "Communication Bandwidth Info"
	cjStart       = "Start Timestamp(us)"
	cjElapse      = "Elapse Time(ms)"
	cjTransit     = "Transit Time(ms)"
	cjWait        = "Wait Time(ms)"
	cjSync        = "Synchronization Time(ms)"
	cjIdle        = "Idle Time(ms)"
	cjSizeMB      = "Transit Size(MB)"
	cjBandwidth   = "Bandwidth(GB/s)"
	cjLargeRatio  = "Large Packet Ratio"
	cjSizeDist    = "Size Distribution"
	cjP2P         = "p2p"
	cjCollective  = "collective"
	cjTotalPrefix = "total"
)

// parseCommunicationJSON reads communication.json, the profiler's per-op HCCL
// statistics (docs/formats.md §3): for every op, its time split (elapse, transit, wait,
// synchronization, idle, in ms) and per-transport traffic (MB, ms, GB/s and a packet
// size histogram). Two layouts exist:
//
//   - torch_npu / MindSpore (§3.1): {"step50": {"p2p": {...}, "collective": {...}}};
//     the step key is "step<N>", or "step" (Step -1) when the run had no step markers;
//     keys other than p2p and collective inside a step are ignored.
//   - msprof CLI (§3.3): a flat {"<op>@<group>": OpInfo} map, recognised because its
//     values hold "Communication Time Info" directly. It has no step (Step -1) and no
//     p2p/collective split, so P2P comes from the op name (profile.IsP2P).
//
// Op keys are "<opName>@<groupHash>", split at the last '@'. "Total Op Info" entries
// (keys starting with "Total", in any case as msprof-analyze's adapter does) are
// per-rank sums and are skipped; recompute totals from the ops. Times become ns, MB
// (10^6 bytes) become bytes; Start Timestamp(us) goes to ns from its decimal text, not
// through float64. Every transport key is kept, known (RDMA, HCCS, PCIE, SDMA, SIO) or
// not; note that SDMA is the sum of HCCS, PCIE and SIO, so do not add it to them.
// Size Distribution keys are packet sizes in MB written as Python float reprs
// ("2.064384", "2e-05") and become bytes; bins are sorted by size. Zeros appear as 0
// and 0.0; NaN and Infinity read as 0. The result is sorted by (Step, StartNs, Name)
// so that it does not depend on the file's key order. Errors are *SyntaxError values
// giving file and byte offset.
func parseCommunicationJSON(r io.Reader, file string) ([]profile.CommOpStats, error) {
	ops, err := readCommOpsStream(r, file)
	if err != nil {
		return nil, err
	}
	sortCommOps(ops)
	return ops, nil
}

// sortCommOps sorts ops by (Step, StartNs, Name, Group, P2P).
func sortCommOps(ops []profile.CommOpStats) {
	slices.SortFunc(ops, func(a, b profile.CommOpStats) int {
		return cmp.Or(
			cmp.Compare(a.Step, b.Step),
			cmp.Compare(a.StartNs, b.StartNs),
			strings.Compare(a.Name, b.Name),
			strings.Compare(a.Group, b.Group),
			order.CompareBool(a.P2P, b.P2P),
		)
	})
}

// isFlatCommJSON reports whether a communication.json root is the flat msprof
// layout: some top-level value holds "Communication Time Info" itself.
func isFlatCommJSON(root *jsonx.Node) bool {
	for _, m := range root.Members {
		if m.Val.Get(cjTimeInfo) != nil {
			return true
		}
	}
	return false
}

// isTotalKey reports whether a key is a per-rank total ("Total Op Info").
func isTotalKey(key string) bool {
	return len(key) >= len(cjTotalPrefix) && strings.EqualFold(key[:len(cjTotalPrefix)], cjTotalPrefix)
}

// splitOpKey splits "<name>@<group>" at the last '@'; without '@' the group is "".
func splitOpKey(key string) (name, group string) {
	if i := strings.LastIndexByte(key, '@'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return key, ""
}

func opKeyName(key string) string { n, _ := splitOpKey(key); return n }

// forEachOp calls fn for every op entry of communication.json or
// communication_matrix.json, in either layout: flat (msprof: Step -1, P2P from the op
// name) or nested by step and p2p/collective (torch_npu). "Total" keys are skipped.
func (d treeReader) forEachOp(root *jsonx.Node, flat bool, fn func(m jsonx.Member, step int, p2p bool) error) error {
	if flat {
		for _, m := range root.Members {
			if isTotalKey(m.Key) {
				continue
			}
			if err := fn(m, -1, profile.IsP2P(opKeyName(m.Key))); err != nil {
				return err
			}
		}
		return nil
	}
	for _, sm := range root.Members {
		step, err := d.stepKey(sm)
		if err != nil {
			return err
		}
		if err := d.Object(sm.Val, "step "+strconv.Quote(sm.Key)); err != nil {
			return err
		}
		for _, kind := range [...]string{cjP2P, cjCollective} {
			group := sm.Val.Get(kind)
			if group.IsNull() {
				continue
			}
			if err := d.Object(group, strconv.Quote(sm.Key)+"."+kind); err != nil {
				return err
			}
			for _, m := range group.Members {
				if isTotalKey(m.Key) {
					continue
				}
				if err := fn(m, step, kind == cjP2P); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// stepKey reads a step key of the torch_npu layout ("step50" → 50, "step" → -1),
// the advisor's rule: strip "step" (any case), nothing left means no step.
func (d treeReader) stepKey(m jsonx.Member) (int, error) {
	k := strings.TrimSpace(m.Key)
	if len(k) >= 4 && strings.EqualFold(k[:4], "step") {
		rest := k[4:]
		if rest == "" {
			return -1, nil
		}
		if n, err := strconv.Atoi(rest); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
			return n, nil
		}
	}
	return 0, errAtOffset(d.File, m.KeyOff, "unexpected top-level key %q: expected \"step<N>\" or \"step\"", m.Key)
}

// commOp reads one OpInfo member of communication.json.
func (d treeReader) commOp(m jsonx.Member, step int, p2p bool) (profile.CommOpStats, error) {
	op := profile.CommOpStats{Step: step, P2P: p2p}
	op.Name, op.Group = splitOpKey(m.Key)
	what := strconv.Quote(m.Key)
	if err := d.Object(m.Val, what); err != nil {
		return op, err
	}
	ti := m.Val.Get(cjTimeInfo)
	if ti == nil {
		return op, d.ErrAt(m.Val, "%s: no %q", what, cjTimeInfo)
	}
	if err := d.Object(ti, what+": "+strconv.Quote(cjTimeInfo)); err != nil {
		return op, err
	}
	if st := ti.Get(cjStart); st != nil { // absent in older layouts; null is refused
		ns, err := d.microsNs(st, cjStart)
		if err != nil {
			return op, err
		}
		op.StartNs = ns
	}
	var err error
	for _, f := range []struct {
		key string
		dst *int64
	}{
		{cjElapse, &op.ElapseNs},
		{cjTransit, &op.TransitNs},
		{cjWait, &op.WaitNs},
		{cjSync, &op.SyncNs},
		{cjIdle, &op.IdleNs},
	} {
		if *f.dst, err = d.MsNs(ti.Get(f.key), f.key); err != nil {
			return op, err
		}
	}
	if ti.Get(cjIdle) == nil {
		op.IdleNs = derivedIdleNs(op)
	}
	bw := m.Val.Get(cjBwInfo)
	if bw == nil {
		return op, nil // an op without transfers' figures: no transport
	}
	if bw.IsNull() { // every real file writes the object, with 0s for no traffic
		return op, d.ErrAt(bw, "%s: %q is null", what, cjBwInfo)
	}
	if err := d.Object(bw, what+": "+strconv.Quote(cjBwInfo)); err != nil {
		return op, err
	}
	op.Transports = make(map[string]profile.TransportStats, len(bw.Members))
	for _, tm := range bw.Members {
		ts, err := d.transport(tm)
		if err != nil {
			return op, err
		}
		op.Transports[tm.Key] = ts
	}
	return op, nil
}

// derivedIdleNs is an op's Idle Time where its record lacks it (an older layout): what
// the profilers write it as, Elapse − Transit − Wait (docs/formats.md §3.2), not 0.
func derivedIdleNs(op profile.CommOpStats) int64 { return op.ElapseNs - op.TransitNs - op.WaitNs }

// microsNs reads a µs timestamp from its number text, exactly.
func (d treeReader) microsNs(n *jsonx.Node, what string) (int64, error) {
	if n.Kind != jsonx.Number && n.Kind != jsonx.String {
		return 0, d.ErrAt(n, "%s: expected a number, found %s", what, n.Kind)
	}
	if n.Kind == jsonx.Number && (n.Text == "NaN" || strings.HasSuffix(n.Text, "Infinity")) {
		return 0, nil
	}
	ns, err := units.NsFromUsText(n.Text)
	if err != nil {
		return 0, d.ErrAt(n, "%s: %v", what, err)
	}
	return ns, nil
}

// transport reads one "Communication Bandwidth Info" entry.
func (d treeReader) transport(m jsonx.Member) (profile.TransportStats, error) {
	var ts profile.TransportStats
	what := "transport " + strconv.Quote(m.Key)
	if err := d.Object(m.Val, what); err != nil {
		return ts, err
	}
	var err error
	if ts.Bytes, err = d.MbBytes(m.Val.Get(cjSizeMB), cjSizeMB); err != nil {
		return ts, err
	}
	if ts.TimeNs, err = d.MsNs(m.Val.Get(cjTransit), cjTransit); err != nil {
		return ts, err
	}
	if ts.BandwidthGBps, err = d.Float(m.Val.Get(cjBandwidth), cjBandwidth); err != nil {
		return ts, err
	}
	if ts.LargePacketRatio, err = d.Float(m.Val.Get(cjLargeRatio), cjLargeRatio); err != nil {
		return ts, err
	}
	dist := m.Val.Get(cjSizeDist)
	if dist.IsNull() {
		return ts, nil
	}
	if err := d.Object(dist, what+": "+strconv.Quote(cjSizeDist)); err != nil {
		return ts, err
	}
	// At its length: every op's distributions are kept until the cluster is measured.
	if len(dist.Members) > 0 {
		ts.SizeDistribution = make([]profile.PacketBin, 0, len(dist.Members))
	}
	for _, bm := range dist.Members {
		bin, err := d.packetBin(bm)
		if err != nil {
			return ts, err
		}
		ts.SizeDistribution = append(ts.SizeDistribution, bin)
	}
	slices.SortStableFunc(ts.SizeDistribution, func(a, b profile.PacketBin) int {
		return cmp.Compare(a.SizeBytes, b.SizeBytes)
	})
	return ts, nil
}

// packetBin reads one Size Distribution entry: "<size MB>": [count, total ms].
func (d treeReader) packetBin(m jsonx.Member) (profile.PacketBin, error) {
	var bin profile.PacketBin
	mb, err := strconv.ParseFloat(strings.TrimSpace(m.Key), 64)
	if err != nil || math.IsNaN(mb) || math.IsInf(mb, 0) || math.Abs(mb*1e6) > jsonx.MaxScaled {
		return bin, errAtOffset(d.File, m.KeyOff, "Size Distribution: key %q is not a packet size in MB", m.Key)
	}
	bin.SizeBytes = units.BytesFromDecimalMB(mb)
	v := m.Val
	if v == nil || v.Kind != jsonx.Array || len(v.Elems) < 2 {
		return bin, d.ErrAt(v, "Size Distribution %q: expected [count, time in ms]", m.Key)
	}
	count, err := d.Float(v.Elems[0], "Size Distribution count")
	if err != nil {
		return bin, err
	}
	if count < 0 || count != math.Trunc(count) || count > jsonx.MaxScaled {
		return bin, d.ErrAt(v.Elems[0], "Size Distribution %q: bad packet count %v", m.Key, count)
	}
	bin.Count = int64(count)
	if bin.TimeNs, err = d.MsNs(v.Elems[1], "Size Distribution time"); err != nil {
		return bin, err
	}
	return bin, nil
}
