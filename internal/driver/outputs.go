package driver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcclprof/hcclprof/report"
)

// An outputFormat is one format the commands write: a value of their --format
// (export's --to).
type outputFormat struct {
	name string
	// commands are the commands that write it.
	commands []string
	// as is the form a command's document is written in (its Write method in
	// report); export's outputs are report/export's files, which it names by name.
	as report.Format
	// note is what the flag's help says of it beyond its name.
	note string
}

// The commands that write a report document, and export.
const (
	cmdAnalyze   = "analyze"
	cmdDiff      = "diff"
	cmdAdvise    = "advise"
	cmdCalibrate = "calibrate"
	cmdInspect   = "inspect"
	cmdModel     = "model"
	cmdWhatIf    = "whatif"
	cmdExport    = "export"
)

// outputs is the one table of output formats: which commands write each, and as
// what. A command's --format (export's --to), its help, its shell completion and the
// check of its value (an unknown one is a usage error, exit 2) are made from it, in
// this order, a command's first being its default (export has none: --to is
// required). A new output is a row here and its renderer in report (the document's
// Write); a command it is added to writes it with no other change.
var outputs = []outputFormat{
	{name: "text", as: report.Text, commands: []string{cmdAnalyze, cmdDiff, cmdAdvise, cmdCalibrate, cmdInspect, cmdModel, cmdWhatIf}},
	{name: "json", as: report.JSON, commands: []string{cmdAnalyze, cmdDiff, cmdAdvise, cmdCalibrate, cmdInspect, cmdModel, cmdWhatIf}},
	{name: "markdown", as: report.Markdown, commands: []string{cmdAnalyze, cmdDiff}},
	{name: "html", as: report.HTML, commands: []string{cmdAnalyze}, note: "one self-contained file: -o report.html"},
	{name: "parquet", commands: []string{cmdExport}},
	{name: "csv", commands: []string{cmdExport}},
	{name: "trace", commands: []string{cmdExport}},
}

// Formats are the output formats command writes, its default first; nil for a
// command that writes none of them.
func Formats(command string) []string {
	var out []string
	for _, o := range outputs {
		if slices.Contains(o.commands, command) {
			out = append(out, o.name)
		}
	}
	return out
}

// FormatFlag is the flag that names command's output format: export's --to, every
// other command's --format.
func FormatFlag(command string) string {
	if command == cmdExport {
		return "to"
	}
	return "format"
}

// DefaultFormat is command's output format when its flag is not given: its first,
// or "" for export, which must be told.
func DefaultFormat(command string) string {
	if f := Formats(command); len(f) > 0 && command != cmdExport {
		return f[0]
	}
	return ""
}

// FormatHelp is the help of command's format flag: its formats, and what some add.
func FormatHelp(command string) string {
	var notes []string
	for _, o := range outputs {
		if o.note != "" && slices.Contains(o.commands, command) {
			notes = append(notes, o.name+": "+o.note)
		}
	}
	help := orList(Formats(command))
	if len(notes) > 0 {
		help += " (" + strings.Join(notes, "; ") + ")"
	}
	return help
}

// CheckFormat is the usage error (exit 2) of a format command does not write; nil
// when it writes it.
func CheckFormat(command, format string) error {
	_, err := outputOf(command, format)
	return err
}

// outputOf is the row of command's format; "" is its default. Any other format is a
// usage error: nothing is written in a form that was not asked for.
func outputOf(command, format string) (outputFormat, error) {
	if format == "" {
		format = DefaultFormat(command)
	}
	for _, o := range outputs {
		if o.name == format && slices.Contains(o.commands, command) {
			return o, nil
		}
	}
	return outputFormat{}, UsageError(fmt.Errorf("unknown --%s %q: want %s", FormatFlag(command), format, orList(Formats(command))))
}

// orList writes names as "a, b or c".
func orList(names []string) string {
	s := strings.Join(names, ", ")
	if i := strings.LastIndex(s, ", "); i >= 0 {
		s = s[:i] + " or " + s[i+2:]
	}
	return s
}
