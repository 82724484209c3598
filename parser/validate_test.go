package parser

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// A real communication.json with one op's wait made impossible: the rank is flagged
// with the op named, the op does not reach the analysis, and nothing else changes.
func TestValidateRealCommunicationJSON(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt")
	dst := filepath.Join(t.TempDir(), "rank0_ascend_pt")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	p := filepath.Join(dst, "ASCEND_PROFILER_OUTPUT", "communication.json")
	require.NoError(t, os.Chmod(filepath.Dir(p), 0o755))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	const wait = `"Wait Time(ms)": 5.64663284375`
	require.Equal(t, 1, strings.Count(string(b), wait))
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), wait, `"Wait Time(ms)": 100000`, 1)), 0o644))
	c, err := LoadCluster([]string{dst}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	require.Len(t, r.Problems, 1)
	assert.Contains(t, r.Problems[0], "ASCEND_PROFILER_OUTPUT/communication.json: op hcom_allReduce__586_0_1@17522688603477080586 step 50: Transit 0.239185 ms + Wait 100000 ms exceed the Elapse Time 79.08952 ms: dropped")
	assert.Len(t, r.CommStats, 3)
	assert.Len(t, r.CommOps, 4, "the timeline's ops stay")
}

// A db op that ends before it starts (it made the analysis slice out of range) is
// dropped with a problem, in a db built from the bundled sample's db export.
func TestValidateDBOpEndBeforeStart(t *testing.T) {
	dbs, err := filepath.Glob(filepath.Join("..", "fixtures", "samples", "demo-2server-8rank-db", "*", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_*.db"))
	require.NoError(t, err)
	require.NotEmpty(t, dbs)
	srcDir := filepath.Dir(filepath.Dir(dbs[0]))
	dst := filepath.Join(t.TempDir(), filepath.Base(srcDir))
	require.NoError(t, os.CopyFS(dst, os.DirFS(srcDir)))
	db := filepath.Join(dst, "ASCEND_PROFILER_OUTPUT", filepath.Base(dbs[0]))
	require.NoError(t, os.Chmod(db, 0o644))
	conn, err := sql.Open("sqlite", db)
	require.NoError(t, err)
	res, err := conn.Exec(`UPDATE COMMUNICATION_OP SET endNs = startNs - 1000 WHERE rowid = (SELECT min(rowid) FROM COMMUNICATION_OP)`)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.NoError(t, conn.Close())

	c, err := LoadCluster([]string{dst}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	require.NotEmpty(t, r.Problems)
	assert.Contains(t, r.Problems[0], "end")
	assert.Contains(t, r.Problems[0], "before its start")
	for _, op := range r.CommOps {
		assert.GreaterOrEqual(t, op.EndNs, op.StartNs)
	}
}

// A step_trace_time.csv figure too large for int64 ns is not a parse error: it
// saturates, and Normalize drops its row with a problem naming the file, the field and
// the figure as written (it gave the saturated 9.223372036854776e+15 us).
func TestStepTraceFigureBeyondInt64IsDropped(t *testing.T) {
	dir := t.TempDir()
	csv := stHeader2024 + "\n1,10,30,5,35,2,100,0,30,1\n2,10,30,5,35,2,1e300,0,30,1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "step_trace_time.csv"), []byte(csv), 0o644))
	c, err := LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	require.Len(t, r.StepTrace, 1)
	assert.Equal(t, int64(100_000), r.StepTrace[0].StageNs)
	assert.Equal(t, []string{"step_trace_time.csv: step 2: Stage = 1e300 us is out of range: row dropped"}, r.Problems)
}
