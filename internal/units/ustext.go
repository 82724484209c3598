package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The µs the profilers write as decimal text (trace timestamps, CSV and JSON
// figures), read as int64 ns without a float64 round trip where the text is a plain
// decimal: an epoch timestamp in µs has 16 digits before the point, and float64
// would lose its last nanosecond.

// NsFromPlainUs is NsFromUsText for the common form, digits with at most three
// decimals (a trace's timestamps), read from the bytes without making a string of
// them; ok is false for anything else, which NsFromUsText then reads.
func NsFromPlainUs(b []byte) (ns int64, ok bool) {
	i, n := 0, len(b)
	var us int64
	for i < n && b[i] >= '0' && b[i] <= '9' {
		us = us*10 + int64(b[i]-'0')
		i++
	}
	if i == 0 || i > 16 || us > math.MaxInt64/1000-1 {
		return 0, false
	}
	var frac int64
	digits := 0
	if i < n {
		if b[i] != '.' {
			return 0, false
		}
		for i++; i < n; i++ {
			if b[i] < '0' || b[i] > '9' || digits == 3 {
				return 0, false
			}
			frac = frac*10 + int64(b[i]-'0')
			digits++
		}
	}
	for ; digits < 3; digits++ {
		frac *= 10
	}
	return us*1000 + frac, true
}

// NsFromUsText parses a decimal microsecond value ("1736408883732241.564", "56635864652.490005",
// "-3", "1.5e3") into int64 nanoseconds without going through float64 when the text is a
// plain decimal, so epoch timestamps keep their last nanosecond. Digits beyond the
// nanosecond are rounded half away from zero.
func NsFromUsText(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty time value")
	}
	neg := false
	body := s
	if body[0] == '-' || body[0] == '+' {
		neg = body[0] == '-'
		body = body[1:]
	}
	intPart, frac, hasDot := strings.Cut(body, ".")
	if !plainDigits(intPart) || (hasDot && !plainDigits(frac)) || (intPart == "" && frac == "") {
		// Exponent forms and the like: rare, small values; float64 is exact enough.
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9e12*1000 {
			return 0, fmt.Errorf("bad time value %q", s)
		}
		return int64(math.Round(f * 1000)), nil
	}
	if len(intPart) > 16 {
		return 0, fmt.Errorf("time value %q out of range", s)
	}
	var us int64
	for i := 0; i < len(intPart); i++ {
		us = us*10 + int64(intPart[i]-'0')
	}
	if us > math.MaxInt64/1000-1 {
		return 0, fmt.Errorf("time value %q out of range", s)
	}
	var fracNs int64
	for i := 0; i < 3; i++ {
		fracNs *= 10
		if i < len(frac) {
			fracNs += int64(frac[i] - '0')
		}
	}
	if len(frac) > 3 && frac[3] >= '5' {
		fracNs++
	}
	ns := us*1000 + fracNs
	if neg {
		ns = -ns
	}
	return ns, nil
}

func plainDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// NsFromUsFigureText converts the text of a µs figure to ns: exactly for a plain decimal
// (NsFromUsText), through NsFromUsFigure for anything else. ok is false when s is not a
// finite number.
func NsFromUsFigureText(s string) (ns int64, ok bool) {
	if ns, err := NsFromUsText(s); err == nil {
		return ns, true
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return NsFromUsFigure(f), true
}
