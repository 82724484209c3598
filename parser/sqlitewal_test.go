package parser_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"

	_ "modernc.org/sqlite"
)

// walOnlyCopy makes dir/rank0_ascend_pt a copy of the real db export whose torch_npu
// db is in WAL mode with its STEP_TIME rows committed to the -wal file only: what a
// profiler killed before it closes the db leaves.
func walOnlyCopy(t *testing.T) (rankDir, db string) {
	src := realdata.Path(t, "imagenet-2rank-db", "rank0_ascend_pt")
	work := t.TempDir()
	rankDir = filepath.Join(t.TempDir(), "rank0_ascend_pt")
	out := filepath.Join(rankDir, "ASCEND_PROFILER_OUTPUT")
	require.NoError(t, os.MkdirAll(out, 0o755))
	copyFile(t, filepath.Join(src, "profiler_info_0.json"), filepath.Join(rankDir, "profiler_info_0.json"))
	copyFile(t, filepath.Join(src, "ASCEND_PROFILER_OUTPUT", "analysis.db"), filepath.Join(out, "analysis.db"))
	const name = "ascend_pytorch_profiler_0.db"
	live := filepath.Join(work, name)
	copyFile(t, filepath.Join(src, "ASCEND_PROFILER_OUTPUT", name), live)

	w, err := sql.Open("sqlite", "file:"+live)
	require.NoError(t, err)
	w.SetMaxOpenConns(1)
	defer w.Close()
	exec := func(q string) {
		t.Helper()
		_, err := w.Exec(q)
		require.NoError(t, err, q)
	}
	var rows int
	require.NoError(t, w.QueryRow("SELECT count(*) FROM STEP_TIME").Scan(&rows))
	require.Positive(t, rows)
	exec("PRAGMA journal_mode=WAL")
	exec("PRAGMA wal_autocheckpoint=0")
	exec("CREATE TEMP TABLE saved AS SELECT * FROM STEP_TIME")
	exec("DELETE FROM STEP_TIME")
	exec("PRAGMA wal_checkpoint(TRUNCATE)") // the db file now has no step rows
	exec("INSERT INTO STEP_TIME SELECT * FROM saved")
	// Copy the db and its -wal while the writer still holds them: the rows are
	// committed, in the -wal only.
	db = filepath.Join(out, name)
	copyFile(t, live, db)
	copyFile(t, live+"-wal", db+"-wal")
	return rankDir, db
}

// TestTorchDBReadsCommittedWAL: STEP_TIME rows committed to the db's -wal file are
// read, as SQLite reads them, and nothing is written beside the input.
func TestTorchDBReadsCommittedWAL(t *testing.T) {
	rankDir, db := walOnlyCopy(t)
	out := filepath.Dir(db)
	require.NoError(t, os.Chmod(out, 0o555)) // nothing may be written beside the input
	t.Cleanup(func() { os.Chmod(out, 0o755) })
	before := map[string]int64{}
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	for _, e := range entries {
		fi, _ := e.Info()
		before[e.Name()] = fi.Size()
	}

	c, err := parser.LoadCluster([]string{rankDir}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	assert.Empty(t, r.Problems)
	assert.Equal(t, []profile.StepMarker{{Step: 50, Interval: profile.Interval{StartNs: 1736410576386409710, EndNs: 1736410576538298460}}}, r.Steps)

	after := map[string]int64{}
	entries, err = os.ReadDir(out)
	require.NoError(t, err)
	for _, e := range entries {
		fi, _ := e.Info()
		after[e.Name()] = fi.Size()
	}
	assert.Equal(t, before, after, "the input directory changed")
}

// TestAnalysisDBFigureBeyondInt64Named: a StepTraceTime figure too large for int64 ns
// drops its row with a problem giving the figure as the db holds it, not the
// saturated 9.223372036854776e+15 us.
func TestAnalysisDBFigureBeyondInt64Named(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-db", "rank0_ascend_pt")
	rankDir := filepath.Join(t.TempDir(), "rank0_ascend_pt")
	require.NoError(t, os.CopyFS(rankDir, os.DirFS(src)))
	adb := filepath.Join(rankDir, "ASCEND_PROFILER_OUTPUT", "analysis.db")
	require.NoError(t, os.Chmod(filepath.Dir(adb), 0o755))
	require.NoError(t, os.Chmod(adb, 0o644))
	execDB(t, adb, "UPDATE StepTraceTime SET stage = 1e300")
	c, err := parser.LoadCluster([]string{rankDir}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	joined := strings.Join(c.Ranks[0].Problems, "\n")
	assert.Contains(t, joined, "stage = 1e+300 us is out of range")
	assert.NotContains(t, joined, "9.22")
}
