package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Helpers shared by the tests of the summary-file parsers (step trace, kernel details,
// communication, matrix, profiler info).

// summaryRealData is the shared real-data directory, relative to this package.
const summaryRealData = "../../shared/realdata"

// summaryRealFile returns the path of a real-data file, skipping the test when the
// data (or the file) is absent, as in a fresh clone.
func summaryRealFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(summaryRealData, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real data not available: %v", err)
	}
	return p
}

// openSummaryReal opens a real-data file (skipping when absent) and closes it at the
// end of the test.
func openSummaryReal(t *testing.T, rel string) *os.File {
	t.Helper()
	f, err := os.Open(summaryRealFile(t, rel))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// addRealSeeds adds the bytes of real-data files as fuzz seeds, silently doing
// nothing for files that are absent.
func addRealSeeds(f *testing.F, rels ...string) {
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(summaryRealData, rel))
		if err == nil {
			f.Add(b)
		}
	}
}

// requireSyntaxError checks that err is a *SyntaxError whose message names file and
// contains every fragment.
func requireSyntaxError(t *testing.T, err error, file string, fragments ...string) *SyntaxError {
	t.Helper()
	require.Error(t, err)
	se, ok := err.(*SyntaxError)
	require.Truef(t, ok, "want *SyntaxError, got %T: %v", err, err)
	require.Equal(t, file, se.File)
	msg := err.Error()
	require.Truef(t, strings.HasPrefix(msg, file+":"), "error %q does not start with the file name", msg)
	for _, frag := range fragments {
		require.Contains(t, msg, frag)
	}
	return se
}

const (
	summaryL1R0 = "imagenet-2rank-level1/rank0_ascend_pt/"
	summaryL1R1 = "imagenet-2rank-level1/rank1_ascend_pt/"
	summaryL0R0 = "imagenet-2rank-level0/rank0_ascend_pt/"
	summaryL0R1 = "imagenet-2rank-level0/rank1_ascend_pt/"
	summaryAPO  = "ASCEND_PROFILER_OUTPUT/"
)
