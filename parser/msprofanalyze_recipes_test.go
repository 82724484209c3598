package parser_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/parser"
)

// recipeDB writes a cluster_analysis.db as msprof-analyze's recipes do (their tables'
// columns as pandas' to_sql creates them), with a ClusterTimeSummary row per
// (rank, step, figures...) and the statements extra.
func recipeDB(t *testing.T, rows [][]any, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cluster_analysis_output")
	path := filepath.Join(dir, "cluster_analysis.db")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	stmts := []string{
		`CREATE TABLE "CommunicationGroupMapping" ("type" TEXT, "rank_set" TEXT, "group_name" TEXT, "group_id" TEXT, "pg_name" TEXT)`,
		`CREATE TABLE "ClusterTimeSummary" ("rank" INTEGER, "step" INTEGER, "stepTime" REAL, "computation" REAL,
		  "communicationNotOverlapComputation" REAL, "communicationOverlapComputation" REAL, "communication" REAL,
		  "free" REAL, "communicationWaitStageTime" INTEGER, "communicationTransmitStageTime" INTEGER,
		  "memory" REAL, "memoryNotOverlapComputationCommunication" REAL)`,
	}
	for _, r := range rows {
		vals := make([]string, len(r))
		for i, v := range r {
			vals[i] = fmt.Sprint(v)
		}
		stmts = append(stmts, `INSERT INTO ClusterTimeSummary VALUES (`+strings.Join(vals, ", ")+`)`)
	}
	execDB(t, path, append(stmts, extra...)...)
	return path
}

// The imagenet db run's figures (../shared/realdata/imagenet-2rank-db's README): the
// recipe's row, and the profiler's StepTraceTime it came from.
var imagenetTimeSummaryRow = []any{0, 50, 151888.75, 8903.431, 98071.947, 4036.153, 102108.1, 24416.526, 0, 0, 866.699, 841.618}

// ClusterTimeSummary gives back the profiler's step table exactly: Free is the
// recipe's free plus the memory copies it took out of it, Stage their sum with
// Computing and Communication(Not Overlapped); the recipe's stepTime (the host step
// marker's span) is not Stage. It was refused, as a table without Stage.
func TestClusterTimeSummaryIsTheStepTable(t *testing.T) {
	path := recipeDB(t, [][]any{imagenetTimeSummaryRow},
		`INSERT INTO CommunicationGroupMapping VALUES ('collective', '(0)', '17148521525495523210', '', '')`)
	cs := parser.ReadClusterSummary(filepath.Dir(path), []string{path})
	require.Empty(t, cs.Problems)
	require.Contains(t, cs.Ranks, 0)
	r := cs.Ranks[0]
	assert.Empty(t, r.Problems)
	require.Len(t, r.StepTrace, 1)
	row := r.StepTrace[0]
	assert.Equal(t, 50, row.Step)
	assert.True(t, row.HasStep)
	assert.Equal(t, int64(8903431), row.ComputingNs)
	assert.Equal(t, int64(98071947), row.CommNotOverlappedNs)
	assert.Equal(t, int64(4036153), row.OverlappedNs)
	assert.Equal(t, int64(102108100), row.CommunicationNs)
	assert.Equal(t, int64(25258144), row.FreeNs, "the profiler's Free: free + memoryNotOverlap")
	assert.Equal(t, int64(132233522), row.StageNs, "the profiler's Stage, not stepTime 151888.75")
	assert.False(t, row.HasPreparing, "Preparing is not in the recipe")
	assert.Equal(t, "cluster_analysis.db ClusterTimeSummary", r.StepTraceFrom)
}

// What the recipe cannot give is said, per rank: a row msprof-analyze filled with
// zeros (the rank's StepTraceTime lacked the step), a pipelined job's Bubble.
func TestClusterTimeSummaryGaps(t *testing.T) {
	t.Run("zero-filled row", func(t *testing.T) {
		path := recipeDB(t, [][]any{imagenetTimeSummaryRow, {1, 50, 150000.0, 0, 0, 0, 0, 0, 0, 0, 0, 0}})
		cs := parser.ReadClusterSummary(filepath.Dir(path), []string{path})
		assert.Empty(t, cs.Ranks[0].Problems)
		require.Contains(t, cs.Ranks, 1)
		assert.Empty(t, cs.Ranks[1].StepTrace)
		require.Len(t, cs.Ranks[1].Problems, 1)
		assert.Contains(t, cs.Ranks[1].Problems[0], "rank 1 step 50 has no step breakdown")
		assert.Contains(t, cs.Ranks[1].Problems[0], "ClusterTimeSummary row 2")
	})
	t.Run("pipeline groups", func(t *testing.T) {
		path := recipeDB(t, [][]any{imagenetTimeSummaryRow, {1, 50, 151000.0, 9000.0, 90000.0, 4000.0, 94000.0, 20000.0, 0, 0, 0, 0}},
			`INSERT INTO CommunicationGroupMapping VALUES ('p2p', '(0,1)', '111', '', 'pp')`)
		cs := parser.ReadClusterSummary(filepath.Dir(path), []string{path})
		for _, r := range []int{0, 1} {
			require.NotEmpty(t, cs.Ranks[r].Problems, "rank %d", r)
			assert.Contains(t, cs.Ranks[r].Problems[0], "no Bubble column")
		}
	})
	t.Run("negative figure", func(t *testing.T) {
		path := recipeDB(t, [][]any{{0, 50, 151888.75, 8903.431, 98071.947, 4036.153, 102108.1, -24416.526, 0, 0, 0, 0}})
		cs := parser.ReadClusterSummary(filepath.Dir(path), []string{path})
		require.NotEmpty(t, cs.Ranks[0].Problems)
		assert.Contains(t, cs.Ranks[0].Problems[0], "free: -24416.526 µs is negative")
	})
}

// hccl_sum's per-rank sums check the step table beside them: equal, nothing said; a
// difference, a note with both figures (the step table is reported).
func TestHcclSumChecksCommunication(t *testing.T) {
	stats := `CREATE TABLE "HcclPerRankStats" ("OpType" TEXT, "Count" INTEGER, "MeanNs" REAL, "StdNs" REAL, "MinNs" REAL,
	  "Q1Ns" REAL, "MedianNs" REAL, "Q3Ns" REAL, "MaxNs" REAL, "SumNs" REAL, "Rank" INTEGER)`
	for _, tc := range []struct {
		sumNs string
		note  string
	}{
		{"102108100.0", ""},
		{"92108100.0", "sums this rank's communication to 92.108 ms, its step table to 102.108 ms"},
	} {
		path := recipeDB(t, [][]any{imagenetTimeSummaryRow}, stats,
			`INSERT INTO HcclPerRankStats VALUES ('hcom_allReduce_', 4, 0, 0, 0, 0, 0, 0, 0, `+tc.sumNs+`, 0)`)
		cs := parser.ReadClusterSummary(filepath.Dir(path), []string{path})
		r := cs.Ranks[0]
		assert.Empty(t, r.Problems)
		if tc.note == "" {
			assert.Empty(t, r.Notes)
		} else {
			require.Len(t, r.Notes, 1)
			assert.Contains(t, r.Notes[0], tc.note)
		}
	}
}

// hccl_sum alone holds no step: nothing to analyse, and the message says what the db
// holds and which recipe gives a step breakdown.
func TestHcclSumAloneSaysWhatIsMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cluster_analysis_output")
	path := filepath.Join(dir, "cluster_analysis.db")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	execDB(t, path, `CREATE TABLE "HcclPerRankStats" ("OpType" TEXT, "Count" INTEGER, "SumNs" REAL, "Rank" INTEGER)`,
		`INSERT INTO HcclPerRankStats VALUES ('hcom_allReduce_', 4, 102108100.0, 0)`)
	cs := parser.ReadClusterSummary(dir, []string{path})
	require.NotEmpty(t, cs.Problems)
	assert.Contains(t, cs.Problems[0], "hccl_sum recipe's")
	assert.Contains(t, cs.Problems[0], "-m cluster_time_summary")
}

// hccl_sum's notebook export (HcclSum/*.csv) is named for what it is, not only
// listed as files hcclprof does not know.
func TestHcclSumNotebookOutputNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "cluster_analysis_output", "HcclSum")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, f := range []string{"all_stats.csv", "rank_stats.csv", "top_op_stats.csv", "group_name_map.csv"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(",OpType,Count\n0,hcom_allReduce_,4\n"), 0o644))
	}
	_, err := parser.LoadCluster([]string{filepath.Dir(filepath.Dir(dir))}, parser.LoadOptions{Workers: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HcclSum is msprof-analyze's hccl_sum recipe output (--export_type notebook)")
	assert.Contains(t, err.Error(), "-m cluster_time_summary")
}

// An older ClusterTimeSummary without the memory columns: free is the profiler's.
func TestClusterTimeSummaryWithoutMemoryColumns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cluster_analysis_output")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "cluster_analysis.db")
	execDB(t, path, `CREATE TABLE ClusterTimeSummary (rank INTEGER, step INTEGER, stepTime REAL, computation REAL, communicationNotOverlapComputation REAL, communicationOverlapComputation REAL, communication REAL, free REAL)`,
		`INSERT INTO ClusterTimeSummary VALUES (0, 50, 151888.75, 8903.431, 98071.947, 4036.153, 102108.1, 25258.144)`)
	cs := parser.ReadClusterSummary(dir, []string{path})
	require.Empty(t, cs.Problems)
	require.Len(t, cs.Ranks[0].StepTrace, 1)
	assert.Equal(t, int64(132233522), cs.Ranks[0].StepTrace[0].StageNs)
	assert.Equal(t, int64(25258144), cs.Ranks[0].StepTrace[0].FreeNs)
}
