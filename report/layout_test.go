package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		width int
		want  []string
	}{
		{"fits", "  short line", 20, []string{"  short line"}},
		{"no limit", strings.Repeat("word ", 30), 0, []string{strings.Repeat("word ", 30)}},
		{"margin text continues two in", "Verdict: communication is the bottleneck here", 24,
			[]string{"Verdict: communication", "  is the bottleneck here"}},
		{"list item continues under its text", "  - a warning that is long enough", 20,
			[]string{"  - a warning that", "    is long enough"}},
		{"severity item", "  [HIGH] Exposed communication is high", 24,
			[]string{"  [HIGH] Exposed", "         communication", "         is high"}},
		{"indented paragraph keeps its indent", "         mean Stage 73.603 ms of which", 24,
			[]string{"         mean Stage", "         73.603 ms of", "         which"}},
		{"numbered item", "  1. bucket_cap_mb = 128 MiB: step 84.188 ms", 24,
			[]string{"  1. bucket_cap_mb = 128", "     MiB: step 84.188 ms"}},
		{"labelled line", "       risk: larger buckets start communication later", 32,
			[]string{"       risk: larger buckets", "             start communication", "             later"}},
		{"a word wider than the line is broken", "  path /a/very/long/directory/name/rank0", 16,
			[]string{"  path", "    /a/very/long", "    /directory/n", "    ame/rank0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wrap(tc.line, tc.width)
			assert.Equal(t, tc.want, got)
			for _, l := range got {
				if tc.width > 0 {
					assert.LessOrEqual(t, utf8.RuneCountInString(l), tc.width, l)
				}
			}
		})
	}
}

// TestTableGivesWay: a table too wide first takes its short headers, then says once
// the columns that hold one value, then leaves out the least needed columns, naming
// them; a row is never wrapped; too narrow for any of that, one line per row.
func TestTableGivesWay(t *testing.T) {
	tab := newTextTable(col("Rank"), column{name: "Comm not overlapped", short: "Comm not\noverlapped"},
		column{name: "Source", drop: 1}, column{name: "Overlapped", drop: 3}, column{name: "Free", drop: 2}, col("comm_share"))
	tab.Append("0", "35.722", "timeline", "9.004", "0.041", "48.43%")
	tab.Append("1", "35.224", "timeline", "9.032", "0.035", "48.00%")
	render := func(width int) string {
		var b strings.Builder
		p := newPrinter(&b, width)
		p.table(tab)
		assert.NoError(t, p.done())
		return b.String()
	}
	full := render(0)
	assert.Contains(t, full, "Comm not overlapped")
	assert.Equal(t, 75, utf8.RuneCountInString(strings.SplitN(full, "\n", 2)[0]), full)
	assert.Equal(t, full, render(75), "a table that fits is as without a width")

	narrow := render(52)
	assert.Contains(t, narrow, "(in every row: Source = timeline)")
	assert.Contains(t, narrow, "(left out at this width: Free; --width 75 shows\n    it)")
	assert.Contains(t, narrow, "│ Rank │  Comm not  │ Overlapped │ comm_share │")
	for _, l := range strings.Split(strings.TrimSpace(narrow), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 52, l)
	}

	assert.Contains(t, render(40), "│ Rank │  Comm not  │ comm_share │")

	// Columns that may not go and names too long to cut: one line per row.
	wide := newTextTable(col("Communication group"), col("Communication not overlapped"))
	wide.Append("dp-0-1-2-3-4-5-6-7", "35.722")
	var b strings.Builder
	p := newPrinter(&b, MinWidth)
	p.table(wide)
	assert.NoError(t, p.done())
	assert.Equal(t, "  - Communication group\n    dp-0-1-2-3-4-5-6-7, Communication\n    not overlapped 35.722\n", b.String())
}

func TestCutName(t *testing.T) {
	assert.Equal(t, "hcom_all…698_0_1", cutName("hcom_allReduce__698_0_1", 16))
	assert.Equal(t, 16, utf8.RuneCountInString(cutName("hcom_allReduce__698_0_1", 16)))
}
