package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// writeCommunication writes, briefly, who waits for whom, link use per transport,
// and the slow ranks, links, nodes and retransmissions with their evidence.
func writeCommunication(p *printer, c analysis.Communication) {
	if len(c.Ops) == 0 {
		return
	}
	// Link use per transport: the spread of the links' bandwidth.
	byTransport := map[string][]float64{}
	var bytes = map[string]int64{}
	for _, l := range c.Links {
		byTransport[l.Transport] = append(byTransport[l.Transport], l.BandwidthGBps())
		bytes[l.Transport] += l.Bytes
	}
	if len(byTransport) > 0 {
		hw := c.Hardware
		assumed := ""
		switch {
		case hw.Assumed:
			assumed = ", assumed: set --hardware"
		case hw.Source != "":
			assumed = ", from " + hw.Source
		}
		p.printf("\nLinks per transport (bandwidth of each src→dst link, GB/s; peak per link of %s%s)\n", hw.Name, assumed)
		t := newTextTable(col("Transport"), column{name: "Links", drop: 1}, column{name: "GB moved", short: "GB\nmoved", drop: 2},
			column{name: "Min", drop: 3}, col("Median"), column{name: "Max", drop: 4}, column{name: "Peak", drop: 5}, column{name: "Median use", short: "Median\nuse"})
		names := make([]string, 0, len(byTransport))
		for n := range byTransport {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v := byTransport[n]
			sort.Float64s(v)
			peak, use := "-", "-"
			if pk, ok := hw.Peak(n); ok {
				peak, use = fmt.Sprintf("%.1f", pk), pct(stats.UpperMedianSorted(v)/pk)
			}
			t.Append(n, strconv.Itoa(len(v)), fmt.Sprintf("%.2f", float64(bytes[n])/1e9),
				fmt.Sprintf("%.2f", v[0]), fmt.Sprintf("%.2f", stats.UpperMedianSorted(v)), fmt.Sprintf("%.2f", v[len(v)-1]), peak, use)
		}
		p.table(t)
	}
	// Top waits: the ops whose ranks waited longest for the others.
	type waitRow struct {
		name    string
		step    int
		waitNs  int64
		waiting int
		last    int
	}
	byOp := map[[2]string]*waitRow{}
	for _, o := range c.Ops {
		k := [2]string{o.Group, o.Name}
		w := byOp[k]
		if w == nil {
			w = &waitRow{name: o.Name, step: o.Step, last: -1}
			byOp[k] = w
		}
		w.waitNs += o.CrossWaitNs
		if o.CrossWaitNs > 0 {
			w.waiting++
		} else {
			w.last = o.Rank
		}
	}
	rows := make([]*waitRow, 0, len(byOp))
	for _, w := range byOp {
		if w.waiting > 0 {
			rows = append(rows, w)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].waitNs > rows[j].waitNs })
	if len(rows) > 0 {
		p.printf("\nTop waits (ranks waiting in a collective for the last to arrive; ms summed over the waiting ranks)\n")
		t := newTextTable(column{name: "Op", cut: true}, col("Step"), col("Waited"), column{name: "Ranks waiting", short: "Ranks\nwaiting"},
			column{name: "Last to arrive", short: "Last to\narrive"})
		for _, w := range rows[:min(5, len(rows))] {
			t.Append(w.name, analysis.StepLabel(w.step), ms(w.waitNs), strconv.Itoa(w.waiting), strconv.Itoa(w.last))
		}
		p.table(t)
	}
	var fired []analysis.Check
	var unevaluated []string
	for _, ch := range c.Checks {
		if ch.Fired {
			fired = append(fired, ch)
		}
		if !ch.Evaluated() {
			unevaluated = append(unevaluated, ch.Title)
		}
	}
	if len(unevaluated) > 0 && len(unevaluated) < len(c.Checks) {
		p.printf("\nChecks not evaluated (nothing to examine): %s\n", strings.Join(unevaluated, ", "))
	} else if len(unevaluated) > 0 {
		p.printf("\nChecks not evaluated: no HCCL task rows to examine\n")
	}
	if len(fired) > 0 {
		p.printf("\nChecks that fired\n")
		for _, ch := range fired {
			p.printf("  %s: %d of %d (%s)", ch.Title, ch.Count, ch.Total, ch.Threshold)
			if ch.Evidence != "" {
				p.printf("; e.g. %s", ch.Evidence)
			}
			p.printf("\n")
		}
	}
	if len(c.SlowRanks)+len(c.SlowLinks)+len(c.SlowNodes)+len(c.Retransmissions) == 0 {
		p.printf("\nNo slow rank, slow link or retransmission found.\n")
		return
	}
	p.printf("\nFound\n")
	for _, r := range c.SlowRanks {
		p.printf("  slow rank %d (cause: %s): %s\n", r.Rank, r.Cause, r.Evidence)
	}
	for _, n := range c.SlowNodes {
		p.printf("  slow node: %s\n", n.Evidence)
	}
	for i, l := range c.SlowLinks {
		if i == 5 {
			p.printf("  ... and %d more slow links (see the JSON report)\n", len(c.SlowLinks)-5)
			break
		}
		p.printf("  slow link: %s\n", l.Evidence)
	}
	for _, r := range c.Retransmissions {
		p.printf("  RDMA retransmission: %d→%d in step %s, %s took %.3f s (packet loss on the RoCE path)\n",
			r.Src, r.Dst, analysis.StepLabel(r.Step), r.Op, float64(r.TimeNs)/1e9)
	}
}
