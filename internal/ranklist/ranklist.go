// Package ranklist writes lists of ranks as people read them: sorted, without
// repeats, runs collapsed ("0-7, 12, 15"). Notes, reports and diffs name rank sets
// this one way.
package ranklist

import (
	"slices"
	"strconv"
	"strings"
)

// Format writes ranks sorted and without repeats, runs of consecutive ranks
// collapsed: "0-7, 12, 15". ranks is not modified.
func Format(ranks []int) string {
	s := slices.Clone(ranks)
	slices.Sort(s)
	s = slices.Compact(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}
