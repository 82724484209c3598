package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// junitSuites is the document's root. Jenkins' junit-10 schema allows no skipped
// count on it (only on each testsuite), and a report carrying one fails there.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitOutcome `xml:"skipped,omitempty"`
	Failure   *junitOutcome `xml:"failure,omitempty"`
}

type junitOutcome struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitGate is a gate as a JUnit test case: its expression, its metric, and, when it
// failed, what breached it.
type junitGate struct {
	expr, metric, failure string
}

// noGateCase is the case of a run with no gate. An empty suite would make Jenkins'
// junit step fail the build ("no test results"), and a passing case would claim a check
// that was not made: the case is skipped, saying why.
func noGateCase() junitCase {
	return junitCase{Name: "no --fail-on gate set", ClassName: "hcclprof.gates", Time: "0",
		Skipped: &junitOutcome{Message: "no --fail-on gate was given, so nothing was checked; add one, e.g. --fail-on 'comm_share>30%'"}}
}

// writeJUnit writes one suite, one case per gate (gates take no measurable time:
// time is 0), failed gates with their message and the detail as text.
func writeJUnit(w io.Writer, name string, gates []junitGate, detail string) error {
	s := junitSuite{Name: name, Tests: len(gates), Time: "0"}
	for _, g := range gates {
		c := junitCase{Name: g.expr, ClassName: "hcclprof." + g.metric, Time: "0"}
		if g.failure != "" {
			s.Failures++
			c.Failure = &junitOutcome{Message: g.failure, Type: "gate", Text: g.failure + "\n" + detail}
		}
		s.Cases = append(s.Cases, c)
	}
	if len(gates) == 0 {
		s.Cases, s.Tests, s.Skipped = []junitCase{noGateCase()}, 1, 1
	}
	doc := junitSuites{Name: "hcclprof", Tests: s.Tests, Failures: s.Failures, Time: s.Time, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// writeGatesJUnit writes the gates as JUnit XML: one test suite "hcclprof gates", one test
// case per --fail-on gate, failed gates with their measured value; with no gate, one
// skipped case that says so.
func writeGatesJUnit(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	v := d.view()
	gates := make([]junitGate, 0, len(v.Gates))
	for _, g := range v.Gates {
		jg := junitGate{expr: g.Expr, metric: g.Metric}
		if !g.Passed {
			jg.failure = fmt.Sprintf("%s = %s breaches %s", g.Metric, g.Value, g.Expr)
		}
		gates = append(gates, jg)
	}
	return writeJUnit(w, "hcclprof gates", gates, v.Verdict)
}

// diffGateFailure says why a diff gate failed: its figure breaches it, or the diff
// has no such figure (a change in percent of a zero base), so nothing was checked.
func diffGateFailure(g advisor.GateResult) string {
	if g.Unmeasured {
		return fmt.Sprintf("%s is not measured in this diff: %s cannot be checked", g.Metric, g.Expr)
	}
	return fmt.Sprintf("%s = %.6g breaches %s", g.Metric, g.Value, g.Expr)
}

// writeDiffJUnit writes a diff's gates as JUnit XML, as writeGatesJUnit does: one suite
// "hcclprof diff gates", named after the two runs in each failure's text.
func writeDiffJUnit(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	gates := make([]junitGate, 0, len(d.Gates))
	for _, g := range d.Gates {
		jg := junitGate{expr: g.Expr, metric: g.Metric}
		if !g.Passed {
			jg.failure = diffGateFailure(g)
		}
		gates = append(gates, jg)
	}
	return writeJUnit(w, "hcclprof diff gates", gates, fmt.Sprintf("%s → %s", d.Diff.Base.Label, d.Diff.New.Label))
}

// writeGitHubAnnotations writes GitHub Actions workflow commands: an error per failed
// gate, a warning per high-severity finding and per analysis warning.
func writeGitHubAnnotations(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	p := &printer{w: w}
	v := d.view()
	for _, g := range v.failedGates() {
		p.printf("::error title=hcclprof gate %s::%s\n", ghEscapeProp(g.Expr),
			ghEscape(fmt.Sprintf("%s = %s breaches %s (%s)", g.Metric, g.Value, g.Expr, v.Verdict)))
	}
	if v.Advice != nil {
		for _, f := range v.Advice.Findings {
			if f.Severity == "high" {
				p.printf("::warning title=%s::%s\n", ghEscapeProp(f.Title), ghEscape(f.Evidence))
			}
		}
	}
	for _, x := range d.Result.Warnings {
		p.printf("::warning title=hcclprof::%s\n", ghEscape(x))
	}
	return p.firstErr
}

// writeDiffGitHubAnnotations writes a diff's GitHub Actions workflow commands: an
// error per failed gate, a warning per warning of the comparison.
func writeDiffGitHubAnnotations(w io.Writer, d DiffDoc) error {
	sanitize.Value(&d) // names come from untrusted profiles
	p := &printer{w: w}
	runs := fmt.Sprintf("%s → %s", d.Diff.Base.Label, d.Diff.New.Label)
	for _, g := range d.Gates {
		if !g.Passed {
			p.printf("::error title=hcclprof diff gate %s::%s\n", ghEscapeProp(g.Expr),
				ghEscape(fmt.Sprintf("%s (%s)", diffGateFailure(g), runs)))
		}
	}
	for _, x := range d.Diff.Warnings {
		p.printf("::warning title=hcclprof diff::%s\n", ghEscape(x))
	}
	return p.firstErr
}

// ghEscape escapes a workflow command's message (%, CR, LF), as the Actions toolkit does.
func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghEscapeProp escapes a property value, which also may not hold ':' or ','.
func ghEscapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
