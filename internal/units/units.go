// Package units is hcclprof's one vocabulary for quantities, so that a figure means
// the same thing in every package:
//
//   - durations are int64 nanoseconds in the model; µs and ms are for reading
//     profiler text and for printing;
//   - buffer and bucket sizes follow HCCL's rule: MB means MiB (HCCL_BUFFSIZE=200 is
//     200·2²⁰ bytes, as is PyTorch's bucket_cap_mb=25 → 25·2²⁰), and so KB and GB
//     mean KiB and GiB;
//   - bandwidth is decimal GB/s (10⁹ bytes per second), as the profilers report it,
//     and bytes per ns is exactly that.
//
// Sizes the profilers themselves print in MB (msprof's communication figures) are
// decimal: BytesFromDecimalMB reads them.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Binary size units.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

// NsFromUs converts a float microsecond figure to ns, rounding to the nearest.
func NsFromUs(us float64) int64 { return int64(math.Round(us * 1e3)) }

// nsFromMs converts a float millisecond figure to ns, rounding to the nearest.
func nsFromMs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// Us is ns in microseconds.
func Us(ns int64) float64 { return float64(ns) / 1e3 }

// Ms is ns in milliseconds.
func Ms(ns int64) float64 { return float64(ns) / 1e6 }

// FormatMs writes ns as milliseconds with three decimals (µs resolution), the
// reports' duration format.
func FormatMs(ns float64) string { return fmt.Sprintf("%.3f", ns/1e6) }

// FormatSeconds writes a limit given in seconds as it was given: "4 s", "0.5 s".
func FormatSeconds(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) + " s" }

// GBps is bytes over ns in decimal GB/s (bytes per ns), 0 without a positive time.
func GBps(bytes, ns int64) float64 {
	if ns <= 0 {
		return 0
	}
	return float64(bytes) / float64(ns)
}

// BytesFromDecimalMB converts a profiler's MB figure (10⁶ bytes) to bytes.
func BytesFromDecimalMB(mb float64) int64 { return int64(math.Round(mb * 1e6)) }

// bytesFromMB converts an HCCL-style MB count (HCCL_BUFFSIZE, bucket_cap_mb) to bytes.
func bytesFromMB(mb int) int64 { return int64(mb) * MiB }

// sizeUnits are the suffixes ParseSize reads, longest first so that "MiB" is not
// taken for "B". KB, MB, GB and TB are binary, as HCCL reads them.
var sizeUnits = []struct {
	suffix string
	scale  int64
}{
	{"KiB", KiB}, {"MiB", MiB}, {"GiB", GiB}, {"TiB", TiB},
	{"KB", KiB}, {"MB", MiB}, {"GB", GiB}, {"TB", TiB}, {"B", 1},
}

// sizeHelp says what ParseSize accepts, for flag help and errors.
const sizeHelp = "bytes, or a number with KiB, MiB, GiB or TiB; KB, MB, GB and TB mean the same binary units, as HCCL reads HCCL_BUFFSIZE and PyTorch bucket_cap_mb"

// ParseSize reads a size: a number of bytes, or a number with a unit. Units are
// binary whatever their spelling (MB = MiB = 2²⁰ bytes), case-insensitive, and may
// follow a space: "400MB", "400 MiB", "1.5gb", "4096".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	scale := int64(1)
	for _, u := range sizeUnits {
		if len(t) >= len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, scale = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v*float64(scale) > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q: want %s", s, sizeHelp)
	}
	return int64(math.Round(v * float64(scale))), nil
}

// FormatBytes writes a size in binary units: whole GiB as "2 GiB", else MiB or KiB
// with at most two decimals ("16.89 MiB"), else bytes.
func FormatBytes(n int64) string {
	switch {
	case n >= GiB && n%GiB == 0:
		return fmt.Sprintf("%d GiB", n/GiB)
	case n >= MiB:
		return trimZeros(float64(n)/float64(MiB)) + " MiB"
	case n >= KiB:
		return trimZeros(float64(n)/float64(KiB)) + " KiB"
	}
	return fmt.Sprintf("%d B", n)
}

// trimZeros writes x with at most two decimals, without trailing zeros.
func trimZeros(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
