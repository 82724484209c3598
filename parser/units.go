package parser

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MicrosToNs parses a decimal microsecond value ("1736408883732241.564", "56635864652.490005",
// "-3", "1.5e3") into int64 nanoseconds without going through float64 when the text is a
// plain decimal, so epoch timestamps keep their last nanosecond. Digits beyond the
// nanosecond are rounded half away from zero.
func MicrosToNs(s string) (int64, error) {
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
