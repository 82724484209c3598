package advisor

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Gate is one --fail-on condition: the run fails when Metric Op Threshold holds.
// "comm_share>30%" fails when comm_share is above 0.30. The advisor decides the gates
// of analyze (Advice.Gates, on analysis.Summary.Metrics) and of diff (on
// compare.Diff.GateValues); the report lists them and the driver exits 1 when one
// failed (FailedGates).
type Gate struct {
	Expr      string
	Metric    string
	Op        string // > >= < <=
	Threshold float64
}

// GateResult is a gate evaluated on a result.
type GateResult struct {
	Gate
	Value  float64
	Passed bool
	// Unmeasured is set when the run has no value for the metric (per-op shares of a
	// run without per-op records): such a gate fails, since nothing was checked.
	Unmeasured bool
}

var gateRe = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(>=|<=|>|<)\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(%?)\s*$`)

// defaultGateMetric is the metric of a gate written without one ("--fail-on '>30%'").
const defaultGateMetric = "comm_share"

// ParseGate parses METRIC OP VALUE, where OP is one of > >= < <= and VALUE a number or
// a percentage (30% = 0.30). METRIC may be left out: it is then comm_share, the
// headline. known lists the accepted metric names.
func ParseGate(expr string, known []string) (Gate, error) {
	if t := strings.TrimSpace(expr); t != "" && strings.ContainsRune("<>", rune(t[0])) {
		expr = defaultGateMetric + t
	}
	m := gateRe.FindStringSubmatch(expr)
	if m == nil {
		return Gate{}, fmt.Errorf("bad --fail-on %q: want METRIC OP VALUE, OP one of > >= < <=, VALUE a number or a percentage (e.g. 'comm_share>30%%')", expr)
	}
	metric := m[1]
	ok := false
	for _, k := range known {
		if k == metric {
			ok = true
			break
		}
	}
	if !ok {
		names := append([]string(nil), known...)
		sort.Strings(names)
		return Gate{}, fmt.Errorf("bad --fail-on %q: unknown metric %q (known: %s)", expr, metric, strings.Join(names, ", "))
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return Gate{}, fmt.Errorf("bad --fail-on %q: %v", expr, err)
	}
	switch {
	case m[4] == "%" && strings.HasSuffix(metric, ".delta_pct"):
		// Its values are percents already (5 is 5%): 5% is 5, not 0.05, which every
		// change above a twentieth of a percent breached.
	case m[4] == "%":
		v /= 100
		if fractionMetric(metric) && math.Abs(v) > 1 {
			return Gate{}, fmt.Errorf("bad --fail-on %q: %s is a share of at most 100%%, so %s%% can never be reached", expr, metric, m[3])
		}
	case fractionMetric(metric) && math.Abs(v) > 1:
		// comm_share>30 means 3000%: no run breaches it, and the gate passes forever.
		return Gate{}, fmt.Errorf("bad --fail-on %q: %s is a fraction (0.30 = 30%%), so %s would mean %s%%: did you mean %s%%?",
			expr, metric, m[3], strconv.FormatFloat(v*100, 'f', -1, 64), m[3])
	}
	return Gate{Expr: strings.TrimSpace(expr), Metric: metric, Op: m[2], Threshold: v}, nil
}

// fractionMetric reports whether a gate's metric is a fraction of 1 (a share, a ratio,
// their base and delta in a diff, a p-value), whose threshold cannot exceed 1.
func fractionMetric(metric string) bool {
	base, suffix, _ := strings.Cut(metric, ".")
	if !strings.HasSuffix(base, "_share") && !strings.HasSuffix(base, "_ratio") {
		return false
	}
	switch suffix {
	case "", "base", "delta", "p":
		return true
	}
	return false
}

// Breached reports whether value breaches the gate.
func (g Gate) Breached(value float64) bool {
	switch g.Op {
	case ">":
		return value > g.Threshold
	case ">=":
		return value >= g.Threshold
	case "<":
		return value < g.Threshold
	case "<=":
		return value <= g.Threshold
	}
	return false
}

// EvaluateGates checks every gate against the measured metrics by name.
func EvaluateGates(gates []Gate, metrics map[string]float64) []GateResult {
	out := make([]GateResult, 0, len(gates))
	for _, g := range gates {
		v, ok := metrics[g.Metric]
		if !ok {
			out = append(out, GateResult{Gate: g, Unmeasured: true})
			continue
		}
		out = append(out, GateResult{Gate: g, Value: v, Passed: !g.Breached(v)})
	}
	return out
}

// FailedGates returns the gates that did not hold.
func FailedGates(results []GateResult) []GateResult {
	var out []GateResult
	for _, g := range results {
		if !g.Passed {
			out = append(out, g)
		}
	}
	return out
}
