package report

import "github.com/hcclprof/hcclprof/report/internal/sanitize"

// SafeMessage is an error or warning message made safe for a terminal, as every
// report's text is: messages name files and ops from untrusted profiles, and a
// control or bidirectional character in them would reach the terminal raw (U+202E
// reverses what follows). Line breaks hcclprof wrote are kept.
func SafeMessage(s string) string { return sanitize.Lines(s) }
