package ranksummary_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/parser"
)

// encoderBytes is what json.Encoder writes of v, the reference.
func encoderBytes(t *testing.T, v any) []byte {
	t.Helper()
	var want bytes.Buffer
	require.NoError(t, json.NewEncoder(&want).Encode(v))
	return want.Bytes()
}

// TestEncodeMembersIsEncode: the summaries' bodies and headers, of the bundled sample
// and every real dataset's first ranks, are written byte for byte as json.Encoder
// writes them.
func TestEncodeMembersIsEncode(t *testing.T) {
	n := 0
	for _, dir := range sampleAndRealDirs(t) {
		in, err := parser.Discover([]string{dir})
		if err != nil {
			continue
		}
		for k, ri := range in.Ranks {
			if k == 3 {
				break
			}
			r := parser.LoadRank(ri)
			for _, v := range []any{ranksummary.BodyOf(r), ranksummary.Header{Format: "f", Version: 2, Rank: r.Rank, Notes: []string{"<a> & é"}}, ranksummary.Header{}} {
				var got bytes.Buffer
				require.NoError(t, jsonx.EncodeMembers(&got, v))
				require.Equal(t, string(encoderBytes(t, v)), got.String(), "%s rank %d", dir, r.Rank)
			}
			n++
		}
		in.Release()
	}
	t.Logf("%d ranks", n)
	assert.GreaterOrEqual(t, n, ranksExpected(3), "the sample's first 3 ranks, and with the real data at least 8")
}
