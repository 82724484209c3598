package testkit

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/sim"
)

// The helpers the packages' tests had each written for themselves.

// ReadFile is a file's bytes; the test fails if it cannot be read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// ExecDB runs SQL statements on a SQLite file, in order (to damage or change a
// generated profile).
func ExecDB(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.ExecContext(context.Background(), s)
		require.NoError(t, err, s)
	}
}

// FindingsByID is the advice's findings of an id, in order.
func FindingsByID(a advisor.Advice, id string) []advisor.Finding {
	var out []advisor.Finding
	for _, f := range a.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

// RecommendationByID is the advice's recommendation of an id, nil without one.
func RecommendationByID(a advisor.Advice, id string) *advisor.Recommendation {
	for i := range a.Recommendations {
		if a.Recommendations[i].ID == id {
			return &a.Recommendations[i]
		}
	}
	return nil
}

// AssertMatchesTruth checks an analysis against the generator's ground truth: no
// warning, the ranks and steps of the truth, each step's fields within 0.1% (or
// 1 ns) and its shares within 0.001, the summary's shares within 0.001 and its step
// time within 0.1%.
func AssertMatchesTruth(t testing.TB, res *analysis.Result, truth *sim.Truth) {
	t.Helper()
	require.Empty(t, res.Warnings, "the analysis of a generated cluster raises no warning")
	require.Len(t, res.Ranks, len(truth.Ranks))
	near := func(what string, gotNs int64, wantUs float64) {
		t.Helper()
		assert.InDelta(t, wantUs, us(gotNs), max(math.Abs(wantUs)*0.001, 0.001), what)
	}
	for i, rr := range res.Ranks {
		tr := truth.Ranks[i]
		require.Equal(t, tr.Rank, rr.Rank)
		require.Len(t, rr.Steps, len(tr.Steps), "rank %d", rr.Rank)
		for j, got := range rr.Steps {
			want := tr.Steps[j]
			at := fmt.Sprintf("rank %d step %d", rr.Rank, want.Step)
			require.Equal(t, want.Step, got.Step, at)
			near(at+" stage", got.StageNs, want.StageUs)
			near(at+" computing", got.ComputingNs, want.ComputingUs)
			near(at+" communication", got.CommunicationNs, want.CommunicationUs)
			near(at+" not overlapped", got.CommNotOverlappedNs, want.CommunicationNotOverlappedUs)
			near(at+" overlapped", got.OverlappedNs, want.OverlappedUs)
			near(at+" free", got.FreeNs, want.FreeUs)
			near(at+" bubble", got.BubbleNs, want.BubbleUs)
			near(at+" preparing", got.PreparingNs, *want.PreparingUs)
			assert.InDelta(t, want.CommShare, got.CommShare(), 0.001, at)
			arShare, ok := got.AllReduceShare()
			require.True(t, ok, at)
			assert.InDelta(t, *want.AllReduceShare, arShare, 0.001, at)
		}
	}
	s := res.Summary
	assert.Equal(t, truth.Summary.Ranks, s.Ranks)
	assert.Equal(t, truth.Summary.Steps, s.Steps)
	assert.InDelta(t, truth.Summary.CommShare, s.CommShare, 0.001)
	assert.InDelta(t, truth.Summary.CommTotalShare, s.CommTotalShare, 0.001)
	require.NotNil(t, s.AllReduceShare)
	assert.InDelta(t, truth.Summary.AllReduceShare, *s.AllReduceShare, 0.001)
	require.NotNil(t, s.OverlapRatio)
	assert.InDelta(t, truth.Summary.OverlapRatio, *s.OverlapRatio, 0.001)
	assert.InDelta(t, truth.Summary.StepTimeUs, us(s.StepTimeNs), truth.Summary.StepTimeUs*0.001)
}

func us(ns int64) float64 { return float64(ns) / 1000 }
