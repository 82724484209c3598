package driver

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// textWidth is the width the text output is laid out for: --width when given; else,
// for stdout, $COLUMNS, else the terminal's width when stdout is a terminal. A file
// (-o) or a pipe has no limit: the full tables, as a script or a file expects them,
// the same on every machine. The report lays out no narrower than report.MinWidth.
func textWidth(env Env, flag int, toFile bool) (int, error) {
	if env.changed("width") {
		if flag < 0 {
			return 0, usageError(fmt.Errorf("--width %d: want a number of columns, or 0 for no limit", flag))
		}
		return flag, nil
	}
	if toFile {
		return 0, nil
	}
	if c := strings.TrimSpace(os.Getenv("COLUMNS")); c != "" {
		// A malformed $COLUMNS is not the user's command line: it is ignored.
		if n, err := strconv.Atoi(c); err == nil && n > 0 {
			return n, nil
		}
	}
	if f, ok := env.Stdout.(*os.File); ok {
		if n := terminalWidth(f); n > 0 {
			return n, nil
		}
	}
	return 0, nil
}
