package analysis

import (
	"strconv"
	"strings"
)

// BuffsizeBytes is HCCL_BUFFSIZE in effect for a rank or run whose environment is
// env, in bytes (HCCL reads its MB as MiB): env's value, else l.DefaultBuffsizeMB
// (the configuration's checks.default_buffsize_mb), else HCCL's own default
// (DefaultLimits). The checks (rankCheckSamples), and the advisor's facts and the
// cost model from the Limits the analysis measured at (Communication.Limits), read
// it here.
func (l Limits) BuffsizeBytes(env map[string]string) int64 {
	mb := l.DefaultBuffsizeMB
	if mb <= 0 {
		mb = DefaultLimits.DefaultBuffsizeMB
	}
	if v, ok, _ := BuffsizeMB(env); ok {
		mb = v
	}
	return int64(mb) << 20
}

// BuffsizeMB reads HCCL_BUFFSIZE from a rank's environment (ENV_VARIABLES): MB, which
// HCCL reads as MiB. ok is false when it is unset, or set to what is not a whole
// number ≥ 1, which bad then quotes (HCCL does not take it; it read as unset, without
// a word).
func BuffsizeMB(env map[string]string) (mb int, ok bool, bad string) {
	s, set := env["HCCL_BUFFSIZE"]
	if !set || strings.TrimSpace(s) == "" {
		return 0, false, ""
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < 1 {
		return 0, false, s
	}
	return v, true, ""
}
