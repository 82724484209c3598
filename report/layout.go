package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// The terminal layout. A text writer given a width (the terminal's) keeps every line
// within it: a table that is too wide gives way step by step, losing as little as it
// can (shorter headers, then columns whose value is the same in every row, said once
// below the table, first among them those that are "-" in every row, which no column
// order protects, then its least needed columns, named below it, then long names cut
// with "…"), and, when even that does not fit, is printed as one wrapped line per row.
// A column that names the rows (key) is never left out while rows would then read
// alike.
// A table row is never wrapped; free text wraps at word boundaries. Width 0 is no
// limit: the full tables and lines, as the golden files hold them.

// MinWidth is the narrowest layout the text writers make; a narrower width is taken
// as this one.
const MinWidth = 40

// column is a table column and how it gives way when the table is too wide.
type column struct {
	name string
	// short is the header used once the table is too wide; "\n" splits it over lines.
	short string
	// drop orders the columns that may be left out, lowest first; 0 is never left out.
	drop int
	// cut marks names (ops, groups) that may be shortened with "…".
	cut bool
	// label names the column in the notes under the table where its header alone
	// would be ambiguous; "" is its name.
	label string
	// key marks a column that, with the table's other key columns, names a row (a
	// collective's op and group): it is not left out while two rows would then bear
	// the same names.
	key bool
}

func (c column) noteName() string {
	if c.label != "" {
		return c.label
	}
	return c.name
}

// textTable is a table whose layout is chosen when it is printed.
type textTable struct {
	cols []column
	rows [][]string
}

func newTextTable(cols ...column) *textTable { return &textTable{cols: cols} }

// col is a column that is always shown.
func col(name string) column { return column{name: name} }

func (t *textTable) Append(cells ...string) { t.rows = append(t.rows, cells) }

// render draws the columns keep with tablewriter, headers short or not, names cut to
// at most cutTo display columns (0: not cut).
func (t *textTable) render(keep []int, short bool, cutTo int) string {
	var b bytes.Buffer
	tw := newTable(&b)
	header := make([]any, len(keep))
	for i, c := range keep {
		header[i] = t.cols[c].name
		if short && t.cols[c].short != "" {
			header[i] = t.cols[c].short
		}
	}
	tw.Header(header...)
	for _, r := range t.rows {
		row := make([]any, len(keep))
		for i, c := range keep {
			cell := r[c]
			if cutTo > 0 && t.cols[c].cut && twwidth.Width(cell) > cutTo {
				cell = cutName(cell, cutTo)
			}
			row[i] = cell
		}
		_ = tw.Append(row...)
	}
	_ = tw.Render()
	return b.String()
}

// cutName shortens a name to n display columns, keeping its head and tail, which is
// where names differ (hcom_allReduce__698_0_1).
func cutName(s string, n int) string {
	r := []rune(s)
	tail := (n - 1) / 2
	for head := n - 1 - tail; head >= 0; head-- {
		c := string(r[:head]) + "…" + string(r[len(r)-tail:])
		if twwidth.Width(c) <= n {
			return c
		}
	}
	return "…"
}

// maxWidth is the widest line of s, in display columns.
func maxWidth(s string) int {
	m := 0
	for _, l := range strings.Split(s, "\n") {
		m = max(m, twwidth.Width(l))
	}
	return m
}

// table prints t within the printer's width.
func (p *printer) table(t *textTable) {
	all := make([]int, len(t.cols))
	for i := range all {
		all[i] = i
	}
	full := t.render(all, false, 0)
	if p.width <= 0 || maxWidth(full) <= p.width {
		p.raw(full)
		return
	}
	keep := all
	var constant, dropped []string
	fits := func() (string, bool) {
		s := t.render(keep, true, 0)
		return s, maxWidth(s) <= p.width
	}
	s, ok := fits()
	// Columns that hold one value in every row lose nothing when said once; a column
	// that is "-" (not known) in every row says nothing, whatever its order.
	if !ok && len(t.rows) > 1 {
		keep = slices.DeleteFunc(slices.Clone(keep), func(c int) bool {
			v := t.rows[0][c]
			if t.cols[c].drop == 0 && v != "-" {
				return false
			}
			for _, r := range t.rows[1:] {
				if r[c] != v {
					return false
				}
			}
			constant = append(constant, t.cols[c].noteName()+" = "+v)
			return true
		})
		s, ok = fits()
	}
	for !ok {
		next := -1
		for i, c := range keep {
			if d := t.cols[c].drop; d > 0 && (next < 0 || d < t.cols[keep[next]].drop) && !(t.cols[c].key && t.namesAlikeWithout(keep, c)) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		dropped = append(dropped, t.cols[keep[next]].noteName())
		keep = slices.Delete(slices.Clone(keep), next, next+1)
		s, ok = fits()
	}
	// Names cut, no shorter than a dozen columns, where they still tell ops apart.
	for cutTo := 40; !ok && cutTo >= 12; cutTo -= 4 {
		s = t.render(keep, true, cutTo)
		ok = maxWidth(s) <= p.width
	}
	if !ok {
		p.records(t)
		return
	}
	p.raw(s)
	if len(constant) > 0 {
		p.printf("  (in every row: %s)\n", strings.Join(constant, ", "))
	}
	if len(dropped) > 0 {
		them := "them"
		if len(dropped) == 1 {
			them = "it"
		}
		p.printf("  (left out at this width: %s; --width %d shows %s)\n", strings.Join(dropped, ", "), maxWidth(full), them)
	}
}

// namesAlikeWithout reports whether, of the columns keep less column c, the key
// columns give two rows the same names.
func (t *textTable) namesAlikeWithout(keep []int, c int) bool {
	seen := map[string]bool{}
	for _, r := range t.rows {
		var name strings.Builder
		for _, k := range keep {
			if k != c && t.cols[k].key {
				name.WriteString(r[k])
				name.WriteByte(0)
			}
		}
		if seen[name.String()] {
			return true
		}
		seen[name.String()] = true
	}
	return false
}

// records prints each row of t as one wrapped line of "header value" pairs: the
// narrow layout, for a table that cannot fit.
func (p *printer) records(t *textTable) {
	for _, r := range t.rows {
		parts := make([]string, len(r))
		for i, cell := range r {
			parts[i] = t.cols[i].name + " " + cell
		}
		p.printf("  - %s\n", strings.Join(parts, ", "))
	}
}

// raw writes s as is: a table already laid out for the width.
func (p *printer) raw(s string) {
	p.flush()
	if p.firstErr == nil {
		_, p.firstErr = p.w.Write([]byte(s))
	}
}

// listMarker is the start of a list item, under whose text a wrapped line continues:
// "- ", "[HIGH] ", "1. ", and the labels of the advice's and the models' lines.
var listMarker = regexp.MustCompile(`^(- |\[[A-Za-z]+\] +|\d+\. |(risk|note|assumes|problem): )`)

// wrap breaks a line at spaces into lines of at most width display columns; a word
// longer than a line is broken where it must be. A continued line is indented under
// the text of a list item, else by the line's own indent (two more at the margin).
func wrap(line string, width int) []string {
	if width <= 0 || twwidth.Width(line) <= width {
		return []string{line}
	}
	text := strings.TrimLeft(line, " ")
	indent := len(line) - len(text)
	hang := indent + 2
	if m := listMarker.FindString(text); m != "" {
		hang = indent + len(m)
	} else if indent >= 4 {
		hang = indent
	}
	if hang > width/2 {
		hang = min(indent, width/2)
	}
	var out []string
	cur, curW := strings.Repeat(" ", indent), indent
	empty := true // cur holds no word yet
	for _, word := range strings.Fields(text) {
		w := twwidth.Width(word)
		if !empty && curW+1+w <= width {
			cur, curW = cur+" "+word, curW+1+w
			continue
		}
		if !empty {
			out = append(out, cur)
			cur, curW = strings.Repeat(" ", hang), hang
		}
		// A word wider than a whole line is broken across lines.
		for curW+w > width {
			r := []rune(word)
			n := 0
			for n < len(r) && curW+twwidth.Width(string(r[:n+1])) <= width {
				n++
			}
			if n == 0 {
				n = 1
			}
			out = append(out, cur+string(r[:n]))
			cur, curW = strings.Repeat(" ", hang), hang
			word = string(r[n:])
			w = twwidth.Width(word)
		}
		cur, curW = cur+word, curW+w
		empty = false
	}
	return append(out, cur)
}
