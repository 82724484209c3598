package parser

import (
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// Values a profile cannot hold are dropped with a problem that names the file, the
// item, the field and the value; the values it can hold pass untouched.
func TestValidateStepRows(t *testing.T) {
	good := profile.StepTraceRow{Step: 7, HasStep: true, ComputingNs: 60_000, CommNotOverlappedNs: 30_000, OverlappedNs: 10_000,
		CommunicationNs: 40_000, FreeNs: 10_000, StageNs: 100_000}
	cases := []struct {
		name string
		edit func(*profile.StepTraceRow)
		want string // "" when the row is kept
	}{
		{"good", func(*profile.StepTraceRow) {}, ""},
		{"negative Stage", func(r *profile.StepTraceRow) { r.StageNs = -5000 }, "Stage = -5 us is out of range"},
		{"zero Stage", func(r *profile.StepTraceRow) { r.StageNs = 0 }, "Stage = 0 us: a step has a length"},
		// A figure int64 ns cannot hold saturates at the parse (usFigureToNs).
		{"Stage 1e300", func(r *profile.StepTraceRow) { r.StageNs = usFigureToNs(1e300) }, "Stage = 9.223372036854776e+15 us is out of range"},
		{"NaN", func(r *profile.StepTraceRow) { r.FreeNs = usFigureToNs(math.NaN()) }, "Free = -9.223372036854776e+15 us is out of range"},
		{"communication above the step", func(r *profile.StepTraceRow) { r.CommunicationNs, r.CommNotOverlappedNs = 491_000, 491_000 },
			"Communication = 491 us exceeds the step (Stage 100 + Bubble 0 us)"},
		{"not overlapped above communication", func(r *profile.StepTraceRow) { r.CommNotOverlappedNs = 45_000 },
			"Communication(Not Overlapped) = 45 us exceeds Communication = 40 us"},
		{"a pipeline's receive is outside Stage", func(r *profile.StepTraceRow) {
			r.BubbleNs, r.CommunicationNs, r.CommNotOverlappedNs = 50_000, 120_000, 110_000
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := good
			c.edit(&row)
			r := &profile.Rank{FilesUsed: []string{"ASCEND_PROFILER_OUTPUT/step_trace_time.csv"}, Reported: profile.Reported{StepTrace: []profile.StepTraceRow{row}}}
			validate(r)
			if c.want == "" {
				assert.Empty(t, r.Problems)
				assert.Len(t, r.StepTrace, 1)
				return
			}
			assert.Empty(t, r.StepTrace)
			require.Len(t, r.Problems, 1)
			assert.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv: step 7: "+c.want+": row dropped", r.Problems[0])
		})
	}
	r := &profile.Rank{Reported: profile.Reported{StepTrace: []profile.StepTraceRow{good, good}}}
	validate(r)
	assert.Len(t, r.StepTrace, 1)
	assert.Equal(t, []string{"step_trace_time.csv: step 7 appears twice: the second row dropped"}, r.Problems)
}

func TestValidateOps(t *testing.T) {
	ms := int64(1e6)
	stats := func(edit func(*profile.CommOpStats)) profile.CommOpStats {
		s := profile.CommOpStats{Step: 50, Name: "hcom_allReduce__586_0_1", Group: "17522688603477080586", StartNs: 1e18,
			ElapseNs: 79 * ms, TransitNs: ms / 4, WaitNs: 5 * ms, SyncNs: 5 * ms}
		edit(&s)
		return s
	}
	cases := []struct {
		name string
		s    profile.CommOpStats
		want string
	}{
		{"good", stats(func(*profile.CommOpStats) {}), ""},
		{"wait -5 ms", stats(func(s *profile.CommOpStats) { s.WaitNs = -5 * ms }), "a negative time (Transit 0.25, Wait -5, Synchronization 5 ms)"},
		{"wait 100 s in a 79 ms op", stats(func(s *profile.CommOpStats) { s.WaitNs = 100_000 * ms }), "Transit 0.25 ms + Wait 100000 ms exceed the Elapse Time 79 ms"},
		{"sync above wait", stats(func(s *profile.CommOpStats) { s.SyncNs = 6 * ms }), "Synchronization 6 ms exceeds Wait 5 ms"},
		{"negative elapse", stats(func(s *profile.CommOpStats) { s.ElapseNs = -ms; s.TransitNs, s.WaitNs, s.SyncNs = 0, 0, 0 }), "Elapse Time -1 ms is out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &profile.Rank{FilesUsed: []string{"ASCEND_PROFILER_OUTPUT/communication.json"}, Reported: profile.Reported{CommStats: []profile.CommOpStats{c.s}}}
			validate(r)
			if c.want == "" {
				assert.Empty(t, r.Problems)
				return
			}
			assert.Empty(t, r.CommStats)
			require.Len(t, r.Problems, 1)
			assert.Equal(t, "ASCEND_PROFILER_OUTPUT/communication.json: op hcom_allReduce__586_0_1@17522688603477080586 step 50: "+c.want+": dropped", r.Problems[0])
		})
	}
	r := &profile.Rank{
		Timeline: profile.Timeline{
			CommOps: []profile.CommOp{{Name: "hcom_allReduce__1_0_1", Interval: profile.Interval{StartNs: 100, EndNs: 50}}},
			Compute: []profile.Interval{{StartNs: 10, EndNs: 5}, {StartNs: 20, EndNs: 30}, {StartNs: 40, EndNs: 35}},
		},
	}
	validate(r)
	assert.Empty(t, r.CommOps)
	assert.Equal(t, []profile.Interval{{StartNs: 20, EndNs: 30}}, r.Compute)
	assert.Len(t, r.Problems, 2, "one problem for the op, one for the compute tasks: %v", r.Problems)
}

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
	dbs, err := filepath.Glob(filepath.Join("..", "fixtures", "samples", "demo-2node-8rank-db", "*", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_*.db"))
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

// A FIFO, a directory or a device in a file's place is refused at once, never opened
// for reading (a FIFO would block the open until a writer came).
func TestOnlyRegularFilesAreOpened(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt")
	for _, name := range []string{"trace_view.json", "step_trace_time.csv"} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "rank0_ascend_pt")
			require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
			out := filepath.Join(dst, "ASCEND_PROFILER_OUTPUT")
			require.NoError(t, os.Chmod(out, 0o755))
			p := filepath.Join(out, name)
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			done := make(chan *profile.Cluster)
			go func() {
				c, _ := LoadCluster([]string{dst}, LoadOptions{})
				done <- c
			}()
			select {
			case c := <-done:
				require.NotNil(t, c)
				require.Len(t, c.Ranks, 1)
				assert.True(t, c.Ranks[0].Incomplete())
				assert.Contains(t, strings.Join(c.Ranks[0].Problems, "; "), name+": not a regular file (a FIFO)")
			case <-time.After(20 * time.Second):
				t.Fatal("a FIFO in place of " + name + " blocked the load")
			}
		})
	}
	_, err := openPath(t.TempDir())
	assert.ErrorContains(t, err, "not a regular file (a directory)")
}
