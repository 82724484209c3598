package jsonx

import "strconv"

// The readings of one raw value (its JSON text, as ObjIter gives it) that the format
// readers share: the profilers write a number as a number or as a string.

// RawStringBody is a JSON string's bytes without the quotes (escapes kept), or the
// value as it is when it is not a string.
func RawStringBody(v []byte) []byte {
	if len(v) >= 2 && v[0] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}

// IntOrZero parses an integer written as a number or a string, a non-negative
// fraction or exponent form truncated to an integer; 0 if absent or bad.
func IntOrZero(v []byte) int64 {
	v = RawStringBody(v)
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		if f, ferr := strconv.ParseFloat(string(v), 64); ferr == nil && f >= 0 && f < 9e18 {
			return int64(f)
		}
		return 0
	}
	return n
}

// OptInt parses an integer written as a number or a string; ok is false when it is
// absent or not an integer.
func OptInt(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(RawStringBody(v)), 10, 64)
	return n, err == nil
}

// CanonicalInt parses b when it is an integer written as strconv.FormatInt writes it,
// so that two ids are equal as integers exactly when they are equal as text.
func CanonicalInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	digits := b
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] == '0' && (len(digits) > 1 || len(b) > 1) {
		return 0, false // a leading zero, "-0"
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}
