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
	tw := &traceWriter{enc: json.NewEncoder(bw), bw: bw, first: true}
	meta := func(pid, tid int, kind string, args map[string]any) error {
		return tw.emit(traceEvent{Name: kind, Ph: "M", Pid: pid, Tid: tid, Ts: "0", Args: args})
	}
	l := traceExtent(res, c)
	var origin int64 // the run's first event: every ts is µs after it
	if !l.whole.empty() {
		origin = l.whole.lo
	}
	placed := placeFindings(res, adv, l.refWindow, l.whole, origin)
	used, global := l.usedLanes(res, c, placed)
	slices.Sort(l.ranks)

	if global {
		if err := processMeta(meta, findingsPid, "findings (all ranks)", -1, used); err != nil {
			return err
		}
	}
	for _, r := range l.ranks {
		if err := processMeta(meta, rankPid(r), fmt.Sprintf("rank %d", r), r, used); err != nil {
			return err
		}
	}
	for _, p := range placed {
		if err := tw.emit(p.event); err != nil {
			return err
		}
	}
	if err := tw.communication(res, c, l.exposed, origin); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(bw, "],\"otherData\":{\"time_origin_ns\":\"%d\",\"ts\":\"µs since time_origin_ns, on the profile's clock\"}}\n", origin); err != nil {
		return err
	}
	return bw.Flush()
}

// traceWriter writes the trace's events, comma-separated.
type traceWriter struct {
	bw    *bufio.Writer
	enc   *json.Encoder
	first bool
}

func (tw *traceWriter) emit(e traceEvent) error {
	if !tw.first {
		if _, err := tw.bw.WriteString(","); err != nil {
			return err
		}
	}
	tw.first = false
	sanitize.Value(&e) // names come from untrusted profiles
	return tw.enc.Encode(e)
}

// communication writes each rank's collectives, the time they waited for the other
// ranks, and its exposed communication (exposed, per rank of c), at µs after origin.
func (tw *traceWriter) communication(res *analysis.Result, c *profile.Cluster, exposed [][]profile.Interval, origin int64) error {
	for _, o := range res.Communication.Ops {
		if err := tw.emit(traceEvent{Name: o.Name, Ph: "X", Pid: rankPid(o.Rank), Tid: laneOps, Ts: nsNumber(o.StartNs - origin), Dur: nsNumber(o.ElapseNs),
			Args: opArgs(o)}); err != nil {
			return err
		}
		if o.CrossWaitNs > 0 {
			if err := tw.emit(traceEvent{Name: "wait: " + o.Name, Ph: "X", Pid: rankPid(o.Rank), Tid: laneWait, Ts: nsNumber(o.StartNs - origin), Dur: nsNumber(o.CrossWaitNs)}); err != nil {
				return err
			}
		}
	}
	if c != nil {
		for i, r := range c.Ranks {
			for _, iv := range exposed[i] {
				if err := tw.emit(traceEvent{Name: "exposed", Ph: "X", Pid: rankPid(r.Rank), Tid: laneExposed, Ts: nsNumber(iv.StartNs - origin), Dur: nsNumber(iv.DurNs())}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// traceRankStep keys one rank's step.
type traceRankStep struct{ rank, step int }

// traceLayout is every rank the trace draws (in the order met), and the windows
// findings without a time are drawn over: the run's, each rank's and each rank's
// step's; with each rank's exposed communication when the timelines are there.
type traceLayout struct {
	ranks    []int
	seen     map[int]bool
	whole    span
	rankSpan map[int]*span
	stepSpan map[traceRankStep]*span
	exposed  [][]profile.Interval // per rank of the cluster
}

func (l *traceLayout) addRank(r int) {
	if r >= 0 && !l.seen[r] {
		l.seen[r] = true
		l.ranks = append(l.ranks, r)
	}
}

func (l *traceLayout) widen(k int, lo, hi int64) {
	if l.rankSpan[k] == nil {
		l.rankSpan[k] = &span{}
	}
	l.rankSpan[k].add(lo, hi)
}

// traceExtent finds the ranks and windows from the collectives and, when c is not
// nil, the exposed communication of its timelines.
func traceExtent(res *analysis.Result, c *profile.Cluster) *traceLayout {
	l := &traceLayout{seen: map[int]bool{}, rankSpan: map[int]*span{}, stepSpan: map[traceRankStep]*span{}}
	for _, r := range res.Ranks {
		l.addRank(r.Rank)
	}
	for _, o := range res.Communication.Ops {
		l.addRank(o.Rank)
		end := o.StartNs + max(o.ElapseNs, 1)
		l.whole.add(o.StartNs, end)
		l.widen(o.Rank, o.StartNs, end)
		k := traceRankStep{o.Rank, o.Step}
		if l.stepSpan[k] == nil {
			l.stepSpan[k] = &span{}
		}
		l.stepSpan[k].add(o.StartNs, end)
	}
	if c != nil {
		l.exposed = make([][]profile.Interval, len(c.Ranks))
		for i, r := range c.Ranks {
			l.addRank(r.Rank)
			l.exposed[i] = analysis.ExposedCommunication(r)
			for _, iv := range l.exposed[i] {
				l.whole.add(iv.StartNs, iv.EndNs)
				l.widen(r.Rank, iv.StartNs, iv.EndNs)
			}
		}
	}
	return l
}

// refWindow is the window a finding's reference is drawn over: its rank's step,
// else its rank's whole span.
func (l *traceLayout) refWindow(ref advisor.Ref) (span, bool) {
	if ref.Step >= 0 {
		if s := l.stepSpan[traceRankStep{ref.Rank, ref.Step}]; s != nil {
			return *s, true
		}
	}
	if s := l.rankSpan[ref.Rank]; s != nil {
		return *s, true
	}
	return span{}, false
}

// usedLanes are the lanes that hold events (lanes are named only there: an empty
// named lane is an empty row); global says some finding is on no rank. The placed
// findings' ranks join the ranks drawn.
func (l *traceLayout) usedLanes(res *analysis.Result, c *profile.Cluster, placed []placedFinding) (map[[2]int]bool, bool) {
	used := map[[2]int]bool{}
	global := false
	for _, p := range placed {
		l.addRank(p.rank)
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
			if len(l.exposed[i]) > 0 {
				used[[2]int{rankPid(r.Rank), laneExposed}] = true
			}
		}
	}
	return used, global
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
