package units

import "math"

// NsFromUsFigure converts a µs figure a profiler computed (a step_trace_time.csv or
// analysis.db value) to ns. A value int64 ns cannot hold saturates, and NaN becomes
// the most negative value, so that the range checks after the parse reject the row
// (naming the field) rather than the parse failing the file.
func NsFromUsFigure(us float64) int64 {
	ns := math.Round(us * 1e3)
	switch {
	case math.IsNaN(ns), ns <= math.MinInt64:
		return math.MinInt64
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(ns)
}

// NoteSaturated records in *at, when it is the row's first, that a µs figure named
// name (text as written) saturated its ns (NsFromUsFigure), so that the row's problem
// gives the figure as written rather than the saturated value.
func NoteSaturated(at *string, name string, ns int64, text string) {
	if *at == "" && (ns == math.MaxInt64 || ns == math.MinInt64) {
		*at = name + " = " + text
	}
}
