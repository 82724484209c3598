package units

import "strconv"

// Count is n and the noun for n of them: "1 step", "2 steps", "0 steps". The plural
// is the noun with "s" added; countOf takes an irregular one.
func Count(n int, noun string) string { return countOf(n, noun, noun+"s") }

// countOf is n and one or many: countOf(1, "copy", "copies") is "1 copy".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
