package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the gates as JUnit XML: one test suite "hcclprof gates", one test
// case per --fail-on gate, failed gates with their measured value.
func WriteJUnit(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	s := junitSuite{Name: "hcclprof gates", Tests: len(d.Gates)}
	for _, g := range d.Gates {
		c := junitCase{Name: g.Expr, ClassName: "hcclprof." + g.Metric}
		if !g.Passed {
			s.Failures++
			msg := fmt.Sprintf("%s = %s breaches %s", g.Metric, gateValue(g), g.Expr)
			c.Failure = &junitFailure{Message: msg, Text: msg + "\n" + d.verdict()}
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteGitHubAnnotations writes GitHub Actions workflow commands: an error per failed
// gate, a warning per high-severity finding and per analysis warning.
func WriteGitHubAnnotations(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	p := &printer{w: w}
	for _, g := range d.FailedGates() {
		p.printf("::error title=hcclprof gate %s::%s\n", ghEscapeProp(g.Expr),
			ghEscape(fmt.Sprintf("%s = %s breaches %s (%s)", g.Metric, gateValue(g), g.Expr, d.verdict())))
	}
	if d.Advice != nil {
		for _, f := range d.Advice.Findings {
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

// ghEscape escapes a workflow command's message (%, CR, LF), as the Actions toolkit does.
func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghEscapeProp escapes a property value, which also may not hold ':' or ','.
func ghEscapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
