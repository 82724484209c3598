package ranksummary

import (
	"io"

	"github.com/hcclprof/hcclprof/profile"
)

// What the tests (package ranksummary_test, which reads real ranks through parser)
// see of the reader's and writer's insides.

type (
	Body          = summaryBody
	Metadata      = summaryMetadata
	ParallelGroup = summaryParallelGroup
)

var (
	BodyOf       = summaryBodyOf
	DecodeBody   = decodeSummaryBody
	InflatedSize = inflatedSize
	MaxInflated  = maxInflatedSummary
)

// KnownFormat is the tests' list of the source formats a summary may name: those
// parser reads.
func KnownFormat(f profile.Format) bool {
	switch f {
	case profile.FormatTorchNPUText, profile.FormatTorchNPUDB, profile.FormatMindSporeText, profile.FormatMindSporeDB,
		profile.FormatMsprof, profile.FormatMsprofDB, profile.FormatMsprofAnalyze, profile.FormatKineto:
		return true
	}
	return false
}

func ReadFast(data []byte, size int64) (*profile.Rank, bool) {
	return readFast(data, size, KnownFormat)
}

func ReadPlain(path string, r io.Reader, limit int64) (*profile.Rank, error) {
	return readPlain(path, r, limit, KnownFormat)
}

func ReadFrom(path string, r io.Reader) (*profile.Rank, error) { return read(path, r, KnownFormat) }

func DecodeIntArray(b []byte, dst []int64, lo, hi int64) ([]int64, error) {
	return decodeIntArray(b, dst, lo, hi)
}

// SetBounds sets the bounds on a decompressed summary (maxSummaryBytes,
// trustedSummaryClaim) and returns what restores them.
func SetBounds(total, trusted int64) (restore func()) {
	oldTotal, oldTrusted := maxSummaryBytes, trustedSummaryClaim
	maxSummaryBytes, trustedSummaryClaim = total, trusted
	return func() { maxSummaryBytes, trustedSummaryClaim = oldTotal, oldTrusted }
}
