// Package driver runs hcclprof's commands once their flags are parsed: it loads the
// run (parser), analyses it (analysis), advises (advisor), renders (report), and
// decides the exit code. The command line (cmd/hcclprof) only defines the flags and
// hands their values here, so a whole command runs in-process, as pprof's
// internal/driver does for pprof. It is internal: its types are the flags' values,
// not an API.
package driver

import (
	"errors"
	"fmt"
	"io"

	"github.com/hcclprof/hcclprof/report"
)

// Exit codes, documented in docs/exit-codes.md and docs/usage.md §15.
const (
	ExitOK         = 0
	ExitGateFailed = 1
	ExitUsage      = 2 // usage or input error
	ExitIncomplete = 3 // input incomplete (a rank unreadable) without --allow-partial
)

// Env is one invocation of a command: where it writes, which flags were given, and
// what a report records of it.
type Env struct {
	Stdout, Stderr io.Writer
	// Args are the command line's arguments after the program's name; a report
	// records them, quoted, as the command that made it.
	Args []string
	// Version is the tool's version and commit that a report records.
	Version string
	// Changed reports whether a flag was given on the command line (nil: none was).
	Changed func(flag string) bool
}

func (e Env) changed(flag string) bool { return e.Changed != nil && e.Changed(flag) }

// command is the command line a report records: "hcclprof" and the arguments, each
// quoted for a POSIX shell, so that pasting it runs the same command.
func (e Env) command() string { return commandLine("hcclprof", e.Args) }

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// UsageError marks an error as a usage or input error (exit 2).
func UsageError(err error) error { return &exitError{code: ExitUsage, err: err} }

func usageError(err error) error { return UsageError(err) }

// ExitCode is the exit-code policy: nil is 0; an error of a command carries its code
// and is printed on stderr, but for a failed gate, whose report already said so; any
// other error (cobra's: an unknown flag, a missing argument) is a usage error.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != ExitGateFailed {
			fmt.Fprintln(stderr, "hcclprof:", report.SafeMessage(ee.err.Error()))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "hcclprof:", report.SafeMessage(err.Error()))
	return ExitUsage
}
