// Package export writes the analysis for other tools: typed Parquet or CSV tables with
// units in their column names (steps, ops, tasks, links, findings; NULL where the
// profile does not give a value), streamed as the ranks are read, and a Chrome trace
// of the analysis (exposed communication, waits, findings) that opens in Perfetto or
// MindStudio Insight beside the profiler's own trace.
package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// traceEvent is one Chrome-trace event; ts and dur are µs written from int64 ns with
// their three decimals, so no precision is lost.
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

// Lanes of each rank's process.
const (
	laneOps = iota + 1
	laneWait
	laneExposed
	laneFindings
)

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

// WriteTrace streams the analysis as a Chrome trace: a process per rank with lanes for
// its collectives (with their split), the time it waited for the other ranks, its
// exposed communication (needs the cluster's timelines: c may be nil), and findings
// as instant events. Timestamps are the profile's own, so the file lines up with the
// profiler's trace.
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
	meta := func(pid, tid int, kind, name string) error {
		return emit(traceEvent{Name: kind, Ph: "M", Pid: pid, Tid: tid, Ts: "0", Args: map[string]any{"name": name}})
	}
	for _, r := range res.Ranks {
		if err := meta(r.Rank, 0, "process_name", fmt.Sprintf("rank %d (hcclprof)", r.Rank)); err != nil {
			return err
		}
		for tid, name := range map[int]string{laneOps: "collectives", laneWait: "waiting for other ranks", laneExposed: "exposed communication", laneFindings: "findings"} {
			if err := meta(r.Rank, tid, "thread_name", name); err != nil {
				return err
			}
		}
	}
	for _, o := range res.Communication.Ops {
		if err := emit(traceEvent{Name: o.Name, Ph: "X", Pid: o.Rank, Tid: laneOps, Ts: nsNumber(o.StartNs), Dur: nsNumber(o.ElapseNs),
			Args: map[string]any{"step": o.Step, "group": o.Group, "bytes": o.Bytes, "transit_us": float64(o.TransitNs) / 1e3,
				"wait_us": float64(o.WaitNs) / 1e3, "cross_rank_wait_us": float64(o.CrossWaitNs) / 1e3}}); err != nil {
			return err
		}
		if o.CrossWaitNs > 0 {
			if err := emit(traceEvent{Name: "wait: " + o.Name, Ph: "X", Pid: o.Rank, Tid: laneWait, Ts: nsNumber(o.StartNs), Dur: nsNumber(o.CrossWaitNs)}); err != nil {
				return err
			}
		}
	}
	if c != nil {
		for _, r := range c.Ranks {
			for _, iv := range analysis.ExposedCommunication(r) {
				if err := emit(traceEvent{Name: "exposed", Ph: "X", Pid: r.Rank, Tid: laneExposed, Ts: nsNumber(iv.StartNs), Dur: nsNumber(iv.DurNs())}); err != nil {
					return err
				}
			}
		}
	}
	if adv != nil {
		for _, x := range adv.Findings {
			for _, ref := range x.Refs {
				if ref.Rank < 0 || ref.StartUs <= 0 {
					continue
				}
				if err := emit(traceEvent{Name: x.Title, Ph: "i", S: "p", Pid: ref.Rank, Tid: laneFindings,
					Ts: json.Number(strconv.FormatFloat(ref.StartUs, 'f', 3, 64)), Args: map[string]any{"id": x.ID, "severity": x.Severity, "evidence": x.Evidence}}); err != nil {
					return err
				}
			}
		}
	}
	if _, err := bw.WriteString("]}\n"); err != nil {
		return err
	}
	return bw.Flush()
}
