package parser

import "github.com/hcclprof/hcclprof/internal/units"

// The names trace.go's timeNs reads µs text by, kept until it calls internal/units
// directly.

func plainMicrosToNs(b []byte) (int64, bool) { return units.NsFromPlainUs(b) }

func microsToNs(s string) (int64, error) { return units.NsFromUsText(s) }
