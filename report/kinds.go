package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
)

// The reports speak in parallel dimensions (issue 37): the communication per
// dimension in the summary, and on a large cluster the collectives table rolled up
// by dimension and op, the worst group named, instead of one row per group.

// maxCollectiveRows is the number of per-group collective rows above which the text
// and markdown reports roll them up by parallel dimension (the JSON report keeps
// every row beside the rollup).
const maxCollectiveRows = 24

// kindsPhrase is the communication per dimension in a sentence: "tensor/sequence
// parallel (sp) 33.73% of the step, exposed 33.73%; data parallel (dp) 20.79%,
// exposed 6.92%"; "" when no group's ops were seen.
func kindsPhrase(kinds []analysis.KindShare) string {
	var parts []string
	for i, k := range kinds {
		of := ""
		if i == 0 {
			of = " of the step"
		}
		exposed, bounded := kindExposed(k)
		if bounded {
			exposed += " (" + kindBoundsNote + ")"
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %.2f%%%s, exposed %s", analysis.KindTitle(k.Kind), k.Kind,
			100*k.CommTotalShare, of, exposed))
	}
	return strings.Join(parts, "; ")
}

// kindExposed is a dimension's exposed share: measured ("6.92%"), or bounded where
// some rank has no timeline ("0.00-27.66%", bounded true).
func kindExposed(k analysis.KindShare) (text string, bounded bool) {
	if k.Measured() {
		return fmt.Sprintf("%.2f%%", 100*k.CommShare), false
	}
	return fmt.Sprintf("%.2f-%.2f%%", 100*k.CommShareMin, 100*k.CommShareMax), true
}

// kindBoundsNote says why a dimension's exposed share is a range.
const kindBoundsNote = "bounded: not every rank has a device timeline"

// kindsInferred says which dimensions were inferred rather than read from the
// profile, "" when none was.
func kindsInferred(kinds []analysis.KindShare) string {
	var inferred []string
	for _, k := range kinds {
		for _, s := range k.Sources {
			if strings.HasPrefix(s, "inferred") {
				inferred = append(inferred, k.Kind)
				break
			}
		}
	}
	if len(inferred) == 0 {
		return ""
	}
	return "(" + strings.Join(inferred, ", ") + " inferred from the ranks and ops)"
}

// rolledCollectives is the collectives table by dimension and op when the per-group
// table is too long to read, nil otherwise.
func rolledCollectives(r *analysis.Result) []analysis.KindCollective {
	if len(r.Collectives) <= maxCollectiveRows {
		return nil
	}
	rows := analysis.CollectiveKinds(r.Collectives, r.Communication.Groups)
	if len(rows) >= len(r.Collectives) {
		return nil
	}
	return rows
}

// kindCollectiveCells are a rolled-up row's cells shared by text and markdown.
type kindCollectiveCells struct {
	size, mbPerOp, worst, busbw string
}

func kindCollectiveRow(k analysis.KindCollective) kindCollectiveCells {
	c := kindCollectiveCells{size: "-", mbPerOp: "-", busbw: "-"}
	if k.GroupSize > 0 {
		c.size = strconv.Itoa(k.GroupSize)
	}
	if k.Bytes > 0 && k.Count > 0 {
		c.mbPerOp = fmt.Sprintf("%.2f", float64(k.Bytes)/float64(k.Count)/1e6)
	}
	if k.MedianGroupBusBwGBps > 0 {
		c.busbw = fmt.Sprintf("%.2f", k.MedianGroupBusBwGBps)
	}
	g := k.WorstGroup
	if len(g) > 8 {
		g = "…" + g[len(g)-6:]
	}
	c.worst = namedGroup(k.WorstName, analysis.GroupKeyText(g))
	return c
}

func writeKindCollectives(p *printer, rows []analysis.KindCollective, perGroup int) {
	p.printf("\nCollectives per parallel dimension (%d rows, one per group and op, in the JSON report; times in ms, bandwidth in GB/s)\n", perGroup)
	t := newTextTable(col("Kind"), column{name: "Op", cut: true}, col("Groups"), column{name: "Size", drop: 4}, column{name: "Count", drop: 5},
		column{name: "MB/op", drop: 3}, column{name: "Total", drop: 6}, col("Mean"), column{name: "Median group", short: "Median\ngroup", drop: 2},
		column{name: "Worst group", cut: true}, column{name: "its mean", short: "its\nmean"}, column{name: "busbw", drop: 1})
	for _, k := range rows {
		c := kindCollectiveRow(k)
		t.Append(k.Kind, k.Op, strconv.Itoa(k.Groups), c.size, strconv.Itoa(k.Count), c.mbPerOp, ms(k.TotalNs), msf(k.MeanNs),
			msf(k.MedianGroupMeanNs), c.worst, msf(k.WorstMeanNs), c.busbw)
	}
	p.table(t)
}

func mdKindCollectives(p *printer, rows []analysis.KindCollective, perGroup int) {
	p.printf("<details><summary>Collectives per parallel dimension (%d per-group rows in the JSON report)</summary>\n\n", perGroup)
	p.printf("| kind | op | groups | size | count | MB/op | total ms | mean ms | median group ms | worst group | its mean ms | busbw GB/s (median group) |\n")
	p.printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n")
	for _, k := range rows {
		c := kindCollectiveRow(k)
		p.printf("| %s | %s | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", k.Kind, mdText(k.Op), k.Groups, c.size, k.Count, c.mbPerOp,
			ms(k.TotalNs), msf(k.MeanNs), msf(k.MedianGroupMeanNs), mdText(c.worst), msf(k.WorstMeanNs), c.busbw)
	}
	p.printf("\n</details>\n\n")
}

// expertLines say, for each expert-parallel group, how its AlltoAll(v) bytes spread
// over its ranks and which rank moves the most (the slowest expert's).
func expertLines(r *analysis.Result) []string {
	var out []string
	for _, g := range analysis.ExpertImbalance(r) {
		if g.HotRank < 0 {
			continue
		}
		lo, hi := g.Ranks[0].Bytes, g.Ranks[0].Bytes
		for _, x := range g.Ranks {
			lo, hi = min(lo, x.Bytes), max(hi, x.Bytes)
		}
		key := g.Group
		if len(key) > 8 {
			key = "…" + key[len(key)-6:]
		}
		waits := ""
		if g.HotWaitsLeast {
			waits = ", and waits least"
		}
		if g.BytesSkew < 1.1 {
			out = append(out, fmt.Sprintf("expert parallel group %s: AlltoAll(v) %.2f–%.2f GB per rank, balanced (the most %.2f× the median)",
				analysis.GroupKeyText(key), float64(lo)/1e9, float64(hi)/1e9, g.BytesSkew))
			continue
		}
		out = append(out, fmt.Sprintf("expert parallel group %s: AlltoAll(v) %.2f–%.2f GB per rank; rank %d moves the most, %.2f× the median bytes and %.2f× the time moving data%s",
			analysis.GroupKeyText(key), float64(lo)/1e9, float64(hi)/1e9, g.HotRank, g.BytesSkew, g.MovingSkew, waits))
	}
	return out
}
