package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// TestClusterStepRowBadCell: one bad cell in msprof-analyze's cluster step table (the
// CSV or cluster_analysis.db) stopped the read there: every later rank's rows were
// dropped, and the problem went to every rank. Now only the row's rank is incomplete,
// named with the line (or db row); the other ranks read whole.
func TestClusterStepRowBadCell(t *testing.T) {
	const row = "50,rank,%s,8873.756,%s,4028.675,105991.878,25744.05,136581.0,0,101963.203,17902.5"
	check := func(t *testing.T, c *profile.Cluster, want string) {
		t.Helper()
		require.Len(t, c.Ranks, 4)
		for _, r := range c.Ranks {
			if r.Rank == 1 {
				require.Len(t, r.Problems, 1)
				assert.Contains(t, r.Problems[0], want)
				assert.Contains(t, r.Problems[0], "rank 1's row, not read")
				assert.Empty(t, r.StepTrace)
				continue
			}
			assert.Empty(t, r.Problems, "rank %d", r.Rank)
			require.Len(t, r.StepTrace, 1, "rank %d", r.Rank)
			assert.Equal(t, int64(136_581_000), r.StepTrace[0].StageNs)
		}
	}
	t.Run("CSV", func(t *testing.T) {
		csv := "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n"
		for r := 0; r < 4; r++ {
			cno := "101963.203"
			if r == 1 {
				cno = "1O1963.203" // a letter O for a zero
			}
			csv += fmt.Sprintf(row, fmt.Sprint(r), cno) + "\n"
		}
		p := filepath.Join(t.TempDir(), "cluster_step_trace_time.csv")
		require.NoError(t, os.WriteFile(p, []byte(csv), 0o644))
		c, err := LoadCluster([]string{p}, LoadOptions{})
		require.NoError(t, err)
		check(t, c, p+":3: ")
	})
	t.Run("cluster_analysis.db", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "cluster_analysis_output")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		db := filepath.Join(dir, "cluster_analysis.db")
		sqlExec(t, db, `CREATE TABLE ClusterStepTraceTime (step TEXT, type TEXT, "index" TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC, dp_index INTEGER, pp_index INTEGER, tp_index INTEGER)`)
		for r := 0; r < 4; r++ {
			cno := "101963.203"
			if r == 1 {
				cno = "'1O1963.203'"
			}
			sqlExec(t, db, fmt.Sprintf(`INSERT INTO ClusterStepTraceTime VALUES ('50','rank','%d',8873.756,%s,4028.675,105991.878,25744.05,136581.0,0,101963.203,17902.5,0,0,0)`, r, cno))
		}
		c, err := LoadCluster([]string{dir}, LoadOptions{})
		require.NoError(t, err)
		check(t, c, "ClusterStepTraceTime row 2")
	})
}
