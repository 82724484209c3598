package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// traceEvent is one event of the Trace Event Format; ts and dur are µs written from
// int64 ns with their three decimals, so no precision is lost. Args is a map because
// encoding/json writes map keys sorted: the bytes do not depend on map order.
type traceEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur,omitempty"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Lanes (threads) of each process, in the order viewers show them.
const (
	laneFindings = iota + 1
	laneOps
	laneWait
	laneExposed
)

type lane struct {
	tid  int
	name string
}

var laneNames = []lane{{laneFindings, "findings"}, {laneOps, "collectives"}, {laneWait, "waiting for other ranks"}, {laneExposed, "exposed communication"}}

// findingsPid is the process of the findings that point at no rank. Rank r is process
// r+1: viewers treat pid 0 as "no process" (Perfetto advises against it).
const findingsPid = 1 << 30

func rankPid(rank int) int { return rank + 1 }

func nsNumber(ns int64) json.Number {
	neg := ns < 0
	if neg {
		ns = -ns
	}
	s := strconv.FormatInt(ns/1000, 10) + "." + fmt.Sprintf("%03d", ns%1000)
	if neg {
		s = "-" + s
	}
	return json.Number(s)
}

// span is a time window in ns; empty until it holds an interval.
type span struct{ lo, hi int64 }

func (s *span) add(lo, hi int64) {
	if s.hi <= s.lo {
		s.lo, s.hi = lo, hi
		return
	}
	s.lo, s.hi = min(s.lo, lo), max(s.hi, hi)
}

func (s span) empty() bool { return s.hi <= s.lo }

// WriteTrace streams the analysis as a Chrome trace (the Trace Event Format): a
// process per rank, pid rank+1, named "rank N" and sorted by rank, with lanes for its
// findings, its collectives (with their split), the time it waited for the other
// ranks and its exposed communication (needs the cluster's timelines: c may be nil).
// Findings that point at no rank go on a "findings" process listed first. Timestamps
// are µs since the run's first event, whose time on the profile's own clock (ns) is
// otherData.time_origin_ns: µs since the epoch with their three decimals do not fit a
// float64, which a viewer reads them into, and back-to-back collectives then overlap
// and nest wrongly. The same input gives the same bytes.
func WriteTrace(w io.Writer, res *analysis.Result, c *profile.Cluster, adv *advisor.Advice) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString("{\"traceEvents\":[\n"); err != nil {
		return err
	}
	enc := json.NewEncoder(bw)
	first := true
	emit := func(e traceEvent) error {
		if !first {
			if _, err := bw.WriteString(","); err != nil {
				return err
			}
		}
		first = false
		sanitize.Value(&e) // names come from untrusted profiles
		return enc.Encode(e)
	}
	meta := func(pid, tid int, kind string, args map[string]any) error {
		return emit(traceEvent{Name: kind, Ph: "M", Pid: pid, Tid: tid, Ts: "0", Args: args})
	}

	// Every rank the trace draws, and the windows findings without a time are drawn over.
	var ranks []int
	seen := map[int]bool{}
	addRank := func(r int) {
		if r >= 0 && !seen[r] {
			seen[r] = true
			ranks = append(ranks, r)
		}
	}
	type rankStep struct{ rank, step int }
	var whole span
	rankSpan, stepSpan := map[int]*span{}, map[rankStep]*span{}
	widen := func(m map[int]*span, k int, lo, hi int64) {
		if m[k] == nil {
			m[k] = &span{}
		}
		m[k].add(lo, hi)
	}
	for _, r := range res.Ranks {
		addRank(r.Rank)
	}
	for _, o := range res.Communication.Ops {
		addRank(o.Rank)
		end := o.StartNs + max(o.ElapseNs, 1)
		whole.add(o.StartNs, end)
		widen(rankSpan, o.Rank, o.StartNs, end)
		k := rankStep{o.Rank, o.Step}
		if stepSpan[k] == nil {
			stepSpan[k] = &span{}
		}
		stepSpan[k].add(o.StartNs, end)
	}
	var exposed [][]profile.Interval
	if c != nil {
		exposed = make([][]profile.Interval, len(c.Ranks))
		for i, r := range c.Ranks {
			addRank(r.Rank)
			exposed[i] = analysis.ExposedCommunication(r)
			for _, iv := range exposed[i] {
				whole.add(iv.StartNs, iv.EndNs)
				widen(rankSpan, r.Rank, iv.StartNs, iv.EndNs)
			}
		}
	}
	var origin int64 // the run's first event: every ts is µs after it
	if !whole.empty() {
		origin = whole.lo
	}
	placed := placeFindings(res, adv, func(ref advisor.Ref) (span, bool) {
		if ref.Step >= 0 {
			if s := stepSpan[rankStep{ref.Rank, ref.Step}]; s != nil {
				return *s, true
			}
		}
		if s := rankSpan[ref.Rank]; s != nil {
			return *s, true
		}
		return span{}, false
	}, whole, origin)
	// Lanes are named only where they hold events: an empty named lane is an empty row.
	used := map[[2]int]bool{}
	global := false
	for _, p := range placed {
		addRank(p.rank)
		global = global || p.rank < 0
		used[[2]int{p.event.Pid, laneFindings}] = true
	}
	for _, o := range res.Communication.Ops {
		used[[2]int{rankPid(o.Rank), laneOps}] = true
		if o.CrossWaitNs > 0 {
			used[[2]int{rankPid(o.Rank), laneWait}] = true
		}
	}
	if c != nil {
		for i, r := range c.Ranks {
			if len(exposed[i]) > 0 {
				used[[2]int{rankPid(r.Rank), laneExposed}] = true
			}
		}
	}
	slices.Sort(ranks)

	if global {
		if err := processMeta(meta, findingsPid, "findings (all ranks)", -1, used); err != nil {
			return err
		}
	}
	for _, r := range ranks {
		if err := processMeta(meta, rankPid(r), fmt.Sprintf("rank %d", r), r, used); err != nil {
			return err
		}
	}
	for _, p := range placed {
		if err := emit(p.event); err != nil {
			return err
		}
	}
	for _, o := range res.Communication.Ops {
		if err := emit(traceEvent{Name: o.Name, Ph: "X", Pid: rankPid(o.Rank), Tid: laneOps, Ts: nsNumber(o.StartNs - origin), Dur: nsNumber(o.ElapseNs),
			Args: opArgs(o)}); err != nil {
			return err
		}
		if o.CrossWaitNs > 0 {
			if err := emit(traceEvent{Name: "wait: " + o.Name, Ph: "X", Pid: rankPid(o.Rank), Tid: laneWait, Ts: nsNumber(o.StartNs - origin), Dur: nsNumber(o.CrossWaitNs)}); err != nil {
				return err
			}
		}
	}
	if c != nil {
		for i, r := range c.Ranks {
			for _, iv := range exposed[i] {
				if err := emit(traceEvent{Name: "exposed", Ph: "X", Pid: rankPid(r.Rank), Tid: laneExposed, Ts: nsNumber(iv.StartNs - origin), Dur: nsNumber(iv.DurNs())}); err != nil {
					return err
				}
			}
		}
	}
	if _, err := fmt.Fprintf(bw, "],\"otherData\":{\"time_origin_ns\":\"%d\",\"ts\":\"µs since time_origin_ns, on the profile's clock\"}}\n", origin); err != nil {
		return err
	}
	return bw.Flush()
}

// processMeta names a process and its used lanes and gives each a sort index, so viewers
// list the ranks in order (without it they order them by first event or at random).
func processMeta(meta func(pid, tid int, kind string, args map[string]any) error, pid int, name string, sortIndex int, used map[[2]int]bool) error {
	if err := meta(pid, 0, "process_name", map[string]any{"name": name}); err != nil {
		return err
	}
	if err := meta(pid, 0, "process_sort_index", map[string]any{"sort_index": sortIndex}); err != nil {
		return err
	}
	for _, l := range laneNames {
		if !used[[2]int{pid, l.tid}] {
			continue
		}
		if err := meta(pid, l.tid, "thread_name", map[string]any{"name": l.name}); err != nil {
			return err
		}
		if err := meta(pid, l.tid, "thread_sort_index", map[string]any{"sort_index": l.tid}); err != nil {
			return err
		}
	}
	return nil
}

type placedFinding struct {
	rank  int // -1: the findings process
	event traceEvent
}

// placeFindings draws every finding at least once: at each reference's time on its
// rank's findings lane (a slice when it has a duration, an instant otherwise); a
// reference to a rank or step without a time spans that rank's (step's) collectives;
// a finding with no usable reference spans the whole trace on the findings process.
func placeFindings(res *analysis.Result, adv *advisor.Advice, window func(advisor.Ref) (span, bool), whole span, origin int64) []placedFinding {
	if adv == nil {
		return nil
	}
	var out []placedFinding
	for _, x := range adv.Findings {
		args := map[string]any{"id": x.ID, "severity": string(x.Severity), "evidence": x.Evidence}
		name := fmt.Sprintf("%s: %s", x.Severity, x.Title)
		drawn := false
		for _, ref := range x.Refs {
			pid, rank := findingsPid, -1
			if ref.Rank >= 0 {
				pid, rank = rankPid(ref.Rank), ref.Rank
			}
			e := traceEvent{Name: name, Pid: pid, Tid: laneFindings, Args: args}
			switch {
			case ref.StartUs > 0:
				start := refStartNs(res, ref)
				e.Ts = nsNumber(start - origin)
				if ref.DurUs > 0 {
					e.Ph, e.Dur = "X", nsNumber(int64(math.Round(ref.DurUs*1e3)))
				} else {
					e.Ph, e.S = "i", "t"
				}
			case rank >= 0:
				s, ok := window(ref)
				if !ok {
					continue
				}
				e.Ph, e.Ts, e.Dur = "X", nsNumber(s.lo-origin), nsNumber(s.hi-s.lo)
			default:
				continue
			}
			out = append(out, placedFinding{rank, e})
			drawn = true
		}
		if drawn {
			continue
		}
		e := traceEvent{Name: name, Pid: findingsPid, Tid: laneFindings, Args: args}
		if whole.empty() {
			e.Ph, e.S, e.Ts = "i", "t", "0"
		} else {
			e.Ph, e.Ts, e.Dur = "X", nsNumber(whole.lo-origin), nsNumber(whole.hi-whole.lo)
		}
		out = append(out, placedFinding{-1, e})
	}
	return out
}

// refStartNs is a reference's start in ns: its op's own int64 start when the op is
// found (a float µs near 1.7e15 keeps only about a quarter of a µs), else the float
// rounded.
func refStartNs(res *analysis.Result, ref advisor.Ref) int64 {
	ns := int64(math.Round(ref.StartUs * 1e3))
	if ref.Op == "" {
		return ns
	}
	for _, o := range res.Communication.Ops {
		if o.Rank == ref.Rank && o.Name == ref.Op && (ref.Step < 0 || o.Step == ref.Step) && abs(o.StartNs-ns) < 1000 {
			return o.StartNs
		}
	}
	return ns
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// opArgs are an op's figures in the trace, null where they are not known: the size
// of an op without a byte count, the time split of an op whose source has none, the
// wait for the others where no other profiled rank ran the op.
func opArgs(o analysis.OpStat) map[string]any {
	args := map[string]any{"step": o.Step, "group": o.Group, "bytes": nil, "transit_us": nil, "wait_us": nil, "cross_rank_wait_us": nil}
	if o.Bytes > 0 {
		args["bytes"] = o.Bytes
	}
	if o.Source != "none" {
		args["transit_us"], args["wait_us"] = nsNumber(o.TransitNs), nsNumber(o.WaitNs)
	}
	if o.CrossWaitKnown {
		args["cross_rank_wait_us"] = nsNumber(o.CrossWaitNs)
	}
	return args
}
