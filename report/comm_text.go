package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
)

// writeCommunication writes, briefly, who waits for whom, link use per transport,
// and the slow ranks, links, servers and retransmissions with their evidence.
// allNCCL says every rank is an NCCL run (analysis.Result.AllNCCL), which the HCCL checks never apply to.
func writeCommunication(p *printer, c analysis.Communication, v *reportView, allNCCL bool) {
	if len(c.Ops) == 0 {
		return
	}
	// Link use per transport: the spread of the links' bandwidth.
	if len(v.Links) > 0 {
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
		for _, l := range v.Links {
			peak, use := "-", "-"
			if l.HasPeak {
				peak, use = fmt.Sprintf("%.1f", l.PeakGBps), pct(l.MedianGBps/l.PeakGBps)
			}
			t.Append(l.Transport, strconv.Itoa(l.Links), fmt.Sprintf("%.2f", float64(l.Bytes)/1e9),
				fmt.Sprintf("%.2f", l.MinGBps), fmt.Sprintf("%.2f", l.MedianGBps), fmt.Sprintf("%.2f", l.MaxGBps), peak, use)
		}
		p.table(t)
		for _, note := range abovePeakNotes(hw, v.Links) {
			p.printf("  %s\n", note)
		}
	}
	// Top waits: the ops whose ranks waited longest for the others.
	if len(v.TopWaits) > 0 {
		p.printf("\nTop waits (ranks waiting in a collective for the last to arrive; ms summed over the waiting ranks)\n")
		t := newTextTable(column{name: "Op", cut: true}, col("Step"), col("Waited"), column{name: "Ranks waiting", short: "Ranks\nwaiting"},
			column{name: "Last to arrive", short: "Last to\narrive"})
		for _, w := range v.TopWaits {
			t.Append(w.Name, analysis.StepLabel(w.Step), ms(w.WaitNs), strconv.Itoa(w.Waiting), strconv.Itoa(w.Last))
		}
		p.table(t)
	}
	det := v.Detections
	fired, unevaluated := v.FiredChecks, v.UnevaluatedChecks
	if len(unevaluated) > 0 && len(unevaluated) < len(det.Checks) {
		p.printf("\nChecks not evaluated (nothing to examine): %s\n", strings.Join(unevaluated, ", "))
	} else if len(unevaluated) > 0 && allNCCL {
		p.printf("\nChecks not evaluated: they examine HCCL's ops and task rows, and an NCCL (Kineto) run has none\n")
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
	if len(det.SlowRanks)+len(det.SlowLinks)+len(det.SlowServers)+len(det.SlowGroups)+len(c.Retransmissions) == 0 {
		p.printf("\nNo slow rank, slow link or retransmission found.\n")
		return
	}
	p.printf("\nFound\n")
	for _, r := range det.SlowRanks {
		p.printf("  slow rank %d (cause: %s): %s\n", r.Rank, r.Cause, r.Evidence)
	}
	for _, n := range det.SlowServers {
		p.printf("  slow server: %s\n", n.Evidence)
	}
	for _, g := range det.SlowGroups {
		p.printf("  slow group: %s\n", g.Evidence)
	}
	for i, l := range det.SlowLinks {
		if i == 5 {
			p.printf("  ... and %d more slow links (see the JSON report)\n", len(det.SlowLinks)-5)
			break
		}
		p.printf("  slow link: %s\n", l.Evidence)
	}
	for _, r := range c.Retransmissions {
		if r.FromOpTotal {
			p.printf("  RDMA retransmission (suspected): rank %d in step %s, %s spent %.3f s in RDMA transfers (the op's total: its transfers were not recorded)\n",
				r.Src, analysis.StepLabel(r.Step), r.Op, float64(r.TimeNs)/1e9)
			continue
		}
		p.printf("  RDMA retransmission: %s in step %s, %s took %.3f s (packet loss on the RoCE path)\n",
			r.Link(), analysis.StepLabel(r.Step), r.Op, float64(r.TimeNs)/1e9)
	}
}
