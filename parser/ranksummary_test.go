package parser

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/profile"
)

// sampleRank is rank 2 of the bundled sample, as LoadRank reads it.
func sampleRank(t testing.TB) *profile.Rank {
	t.Helper()
	in, err := Discover([]string{"../fixtures/samples/demo-2server-8rank"})
	require.NoError(t, err)
	defer in.Release()
	require.Greater(t, len(in.Ranks), 2)
	r := LoadRank(in.Ranks[2])
	require.Empty(t, r.Problems)
	return r
}

func summaryBytes(t testing.TB, r *profile.Rank, notes []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, ranksummary.Write(&buf, r, SummaryClaim(r), notes))
	return buf.Bytes()
}

// gzipLines compresses lines as a summary's stream.
func gzipLines(lines ...string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, l := range lines {
		zw.Write([]byte(l + "\n"))
	}
	zw.Close()
	return buf.Bytes()
}

func TestRankSummaryRoundTrip(t *testing.T) {
	r := sampleRank(t)
	dir := t.TempDir()
	path := filepath.Join(dir, ranksummary.Name(r.Rank))
	require.NoError(t, os.WriteFile(path, summaryBytes(t, r, []string{"a note"}), 0o644))
	got, err := ranksummary.Read(path, knownFormat)
	require.NoError(t, err)
	want := *r
	want.Traits = profile.Traits{} // the format's, given by LoadRank, not written
	assert.Equal(t, &want, got, "every field survives, int64 ns exactly")

	// Discovery finds it in a directory, with its rank and its run's notes.
	in, err := Discover([]string{dir})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	claim := claimOfRank(r)
	assert.NotEmpty(t, claim.worker, "the header carries who profiled the rank, and when")
	assert.Positive(t, claim.atNs)
	assert.Equal(t, RankInput{Rank: 2, Dir: path, format: rankSummaryFormat, claim: claim}, in.Ranks[0])
	assert.Equal(t, []string{"a note"}, in.Notes)
	assert.Equal(t, r, LoadRank(in.Ranks[0]))
}
