package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

func mkRank(t *testing.T, root, name string, rank int) string {
	t.Helper()
	dir := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ascendOutput), 0o755))
	if rank >= 0 {
		info := `{"config": {"experimental_config": {"_profiler_level": "Level0"}}, "rank_id": ` + strconv.Itoa(rank) + `}`
		require.NoError(t, os.WriteFile(filepath.Join(dir, "profiler_info_"+strconv.Itoa(rank)+".json"), []byte(info), 0o644))
	}
	csv := "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n1,1,2,0,2,1,4,0,2,0\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, ascendOutput, "step_trace_time.csv"), []byte(csv), 0o644))
	return dir
}

func TestDiscoverClusterRoot(t *testing.T) {
	root := t.TempDir()
	mkRank(t, filepath.Join(root, "nodeB"), "host_2_20250101000000001_ascend_pt", 2)
	mkRank(t, filepath.Join(root, "nodeA"), "host_1_20250101000000001_ascend_pt", 0)
	old := mkRank(t, root, "host_1_20240101000000001_ascend_pt", 1)
	newer := mkRank(t, root, "host_1_20250101000000009_ascend_pt", 1)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "empty_ascend_pt"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(newer, ascendOutput, "memory_record.csv"), []byte("x"), 0o644))

	in, err := Discover([]string{root})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 3)
	for i, r := range in.Ranks {
		assert.Equal(t, i, r.Rank)
	}
	assert.Equal(t, newer, in.Ranks[1].Dir, "the latest directory of a duplicated rank wins")
	assert.Contains(t, in.Notes, "skipped "+old+": duplicate of rank 1 ("+newer+"), older, by the timestamp in its name")
	assert.Contains(t, in.Notes, "skipped "+filepath.Join(root, "empty_ascend_pt")+": no ASCEND_PROFILER_OUTPUT/ and no profiler db inside")

	r := LoadRank(in.Ranks[1])
	assert.Equal(t, []string{filepath.Join(ascendOutput, "memory_record.csv")}, r.FilesIgnored)
	assert.Equal(t, "Level0", r.Info.ProfilerLevel)
	require.Len(t, r.StepTrace, 1)
	assert.Equal(t, int64(4000), r.StepTrace[0].StageNs)

	c, err := LoadCluster([]string{root}, LoadOptions{Workers: 2})
	require.NoError(t, err)
	assert.Len(t, c.Ranks, 3)
	assert.Contains(t, c.Notes, "ignored files hcclprof does not read: memory_record.csv (1)")
}

// A path given that is a symbolic link to the run (`analyze ./latest`) or to one rank
// is read through the link, its ranks named under the path the user gave; a link to a
// rank inside a cluster directory is read as before.
func TestDiscoverThroughSymlinkedRoot(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir()) // as the notes name it
	require.NoError(t, err)
	mkRank(t, real, "host_1_20250101000000001_ascend_pt", 0)
	mkRank(t, real, "host_2_20250101000000001_ascend_pt", 1)
	links := t.TempDir()
	latest := filepath.Join(links, "latest")
	require.NoError(t, os.Symlink(real, latest))
	one := filepath.Join(links, "rank1")
	require.NoError(t, os.Symlink(filepath.Join(real, "host_2_20250101000000001_ascend_pt"), one))
	inside := filepath.Join(links, "cluster")
	require.NoError(t, os.MkdirAll(inside, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(real, "host_1_20250101000000001_ascend_pt"), filepath.Join(inside, "r0")))

	in, err := Discover([]string{latest})
	require.NoError(t, err, "a link to the run")
	require.Len(t, in.Ranks, 2)
	assert.Equal(t, filepath.Join(latest, "host_1_20250101000000001_ascend_pt"), in.Ranks[0].Dir)
	assert.Equal(t, filepath.Join(latest, "host_2_20250101000000001_ascend_pt"), in.Ranks[1].Dir)

	in, err = Discover([]string{one + string(os.PathSeparator)})
	require.NoError(t, err, "a link to a rank, with a trailing separator")
	require.Len(t, in.Ranks, 1)
	in, err = Discover([]string{one})
	require.NoError(t, err, "a link to a rank")
	require.Len(t, in.Ranks, 1)
	assert.Equal(t, one, in.Ranks[0].Dir)
	assert.Equal(t, 1, in.Ranks[0].Rank)

	in, err = Discover([]string{inside})
	require.NoError(t, err, "a link to a rank inside a cluster directory")
	require.Len(t, in.Ranks, 1)
	assert.Equal(t, filepath.Join(inside, "r0"), in.Ranks[0].Dir)

	// Links back up the tree, or into a part of it read already, are not followed:
	// no loop, no rank twice. Relative paths resolve from the working directory.
	require.NoError(t, os.Symlink(real, filepath.Join(real, "host_1_20250101000000001_ascend_pt", "up")))
	require.NoError(t, os.Symlink(filepath.Join(real, "host_2_20250101000000001_ascend_pt"), filepath.Join(real, "again")))
	t.Chdir(links)
	in, err = Discover([]string{"latest"})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 2)
	assert.Equal(t, filepath.Join("latest", "host_1_20250101000000001_ascend_pt"), in.Ranks[0].Dir)
	assert.Contains(t, in.Notes, "skipped "+filepath.Join("latest", "again")+": a link to "+filepath.Join(real, "host_2_20250101000000001_ascend_pt")+", which overlaps "+real+", read already")
}

func TestDiscoverUnrankedAndFiles(t *testing.T) {
	root := t.TempDir()
	a := mkRank(t, root, "a_ascend_pt", -1)
	ranked := mkRank(t, root, "b_ascend_pt", 3)
	stray := filepath.Join(root, "notes.txt")
	require.NoError(t, os.WriteFile(stray, []byte("hi"), 0o644))

	in, err := Discover([]string{a, ranked, stray})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 2)
	assert.Equal(t, 3, in.Ranks[0].Rank)
	assert.Equal(t, 4, in.Ranks[1].Rank, "a rank without profiler_info is numbered after the known ones")
	assert.Contains(t, in.Notes, "ignored "+stray+": not a profiler file hcclprof reads")

	_, err = Discover([]string{t.TempDir()})
	assert.ErrorIs(t, err, ErrNothingFound)
}

// TestDiscoverEveryFormat finds, under one root, a torch_npu text rank, an msprof
// PROF directory and a Kineto trace, each read in its own format.
func TestDiscoverEveryFormat(t *testing.T) {
	kineto := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	prof := realdata.Path(t, "msprof-mindspore-alexnet")
	level1 := realdata.Path(t, "imagenet-2rank-level1", "rank1_ascend_pt")
	root := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(root, "npu", "rank1_ascend_pt"), os.DirFS(level1)))
	require.NoError(t, os.CopyFS(filepath.Join(root, "msprof"), os.DirFS(prof)))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "gpu"), 0o755))
	b, err := os.ReadFile(kineto)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "gpu", "worker0.1700000000000.pt.trace.json.gz"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "gpu", "notes.json"), []byte(`{"a": 1}`), 0o644))

	c, err := LoadCluster([]string{root}, LoadOptions{})
	require.NoError(t, err)
	got := map[profile.Format]int{}
	for _, r := range c.Ranks {
		got[r.Format]++
		assert.Empty(t, r.Problems, "rank %d (%s)", r.Rank, r.Format)
	}
	// The torch_npu rank is 1; the msprof device's rank_id is 0 and the Kineto trace
	// says rank 0 too: one of the two rank-0 inputs is kept, the other named in a note.
	require.Len(t, c.Ranks, 2)
	assert.Equal(t, 1, got[profile.FormatTorchNPUText])
	assert.Equal(t, 1, got[profile.FormatMsprof]+got[profile.FormatKineto])
	joined := strings.Join(c.Notes, "\n")
	assert.Regexp(t, `skipped .*(PROF_|pt\.trace\.json\.gz).*: duplicate of rank 0 \(.*(PROF_|pt\.trace\.json\.gz).*\)`, joined)
	assert.Contains(t, joined, "mixed cluster")
}

func TestDiscoverSingleKinetoFile(t *testing.T) {
	kineto := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	in, err := Discover([]string{kineto})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	assert.Equal(t, kineto, in.Ranks[0].Dir)
	assert.Same(t, kinetoFormat, formatOf(in.Ranks[0]))
	assert.Equal(t, 0, in.Ranks[0].Rank, "the rank comes from distributedInfo")
}

// TestDiscoverSaysWhatItSkips: a directory is a candidate rank whatever its name when
// it holds ASCEND_PROFILER_OUTPUT or a profiler_info file; every candidate not read
// is named in a note with the reason, and a rank that cannot be read is a rank with a
// problem, not a silent gap.
func TestDiscoverSaysWhatItSkips(t *testing.T) {
	root := t.TempDir()
	plain := mkRank(t, root, "rank3", 3) // no *_ascend_pt name
	newer := mkRank(t, root, "host_20250101000000001_ascend_pt", 3)
	mkRank(t, root, "worker4", 4)
	infoOnly := filepath.Join(root, "worker7")
	require.NoError(t, os.MkdirAll(infoOnly, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(infoOnly, "profiler_info_7.json"), []byte(`{"rank_id": 7}`), 0o644))
	rawOnly := filepath.Join(root, "host_20250101000000002_ascend_pt")
	require.NoError(t, os.MkdirAll(filepath.Join(rawOnly, "PROF_000001_20250101000000002_ABC"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(rawOnly, "profiler_info_8.json"), []byte(`{"rank_id": 8}`), 0o644))
	empty := filepath.Join(root, "rank5")
	require.NoError(t, os.MkdirAll(filepath.Join(empty, ascendOutput), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(empty, "profiler_info_5.json"), []byte(`{"rank_id": 5}`), 0o644))
	deep := root
	for i := 0; i < maxWalkDepth; i++ {
		deep = filepath.Join(deep, "d")
	}
	tooDeep := mkRank(t, deep, "rank9", 9)
	unrelated := filepath.Join(root, "logs")
	require.NoError(t, os.MkdirAll(unrelated, 0o755))

	c, err := LoadCluster([]string{root}, LoadOptions{Workers: 1})
	require.NoError(t, err)
	got := map[int]*profile.Rank{}
	for _, r := range c.Ranks {
		got[r.Rank] = r
	}
	require.Len(t, got, 5, "ranks 3, 4 and 5, and 7 and 8 without data")
	assert.Equal(t, []string{infoOnly + " has profiler_info_7.json but no ASCEND_PROFILER_OUTPUT/ and no profiler db inside"}, got[7].Problems)
	assert.Equal(t, []string{rawOnly + " has profiler_info_8.json but no ASCEND_PROFILER_OUTPUT/ and no profiler db inside (only the raw PROF_000001_20250101000000002_ABC/: the profile was not exported; torch_npu's offline analyse exports it)"}, got[8].Problems)
	assert.Equal(t, newer, got[3].Dir)
	assert.Empty(t, got[4].Problems, "a rank directory named worker4 is read as any other")
	require.Len(t, got[4].StepTrace, 1)
	assert.Equal(t, []string{"ASCEND_PROFILER_OUTPUT holds none of the files hcclprof reads (trace_view.json, step_trace_time.csv, communication.json, communication_matrix.json, kernel_details.csv, or a profiler db)"},
		got[5].Problems)
	for _, want := range []string{
		"skipped " + plain + ": duplicate of rank 3 (" + newer + "), older, by the timestamp in its name",
		"skipped " + tooDeep + ": more than 10 levels below " + root + " (msprof-analyze's limit too)",
	} {
		assert.Contains(t, c.Notes, want)
	}
	for _, n := range c.Notes {
		assert.NotContains(t, n, unrelated, "a directory that does not look like a rank is not a skipped candidate")
	}
}

// TestDiscoverUnreadableRank: a rank directory, or its ASCEND_PROFILER_OUTPUT, that
// cannot be listed gives a rank whose problem says so; an unreadable directory that
// does not look like a rank is noted. Permissions do not stop root, so the listing is
// made to fail as a permission error does; the chmod case runs when not root.
func TestDiscoverUnreadableRank(t *testing.T) {
	root := t.TempDir()
	locked := mkRank(t, root, "host_20250101000000001_ascend_pt", -1)
	lockedOut := mkRank(t, root, "rank2", 2)
	other := filepath.Join(root, "private")
	require.NoError(t, os.MkdirAll(other, 0o755))
	mkRank(t, root, "rank0", 0)

	denied := map[string]bool{locked: true, filepath.Join(lockedOut, ascendOutput): true, other: true}
	if os.Geteuid() == 0 {
		orig := listDir
		listDir = func(p string) ([]os.DirEntry, error) {
			if denied[p] {
				return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrPermission}
			}
			return orig(p)
		}
		t.Cleanup(func() { listDir = orig })
	} else {
		for p := range denied {
			require.NoError(t, os.Chmod(p, 0))
			t.Cleanup(func() { _ = os.Chmod(p, 0o755) })
		}
	}

	c, err := LoadCluster([]string{root}, LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 3)
	byDir := map[string]*profile.Rank{}
	for _, r := range c.Ranks {
		byDir[r.Dir] = r
	}
	require.Contains(t, byDir, locked)
	assert.Equal(t, 3, byDir[locked].Rank, "numbered after the known ranks")
	require.Len(t, byDir[locked].Problems, 1)
	assert.Contains(t, byDir[locked].Problems[0], "cannot read the rank directory: open "+locked+": permission denied")
	require.Contains(t, byDir, lockedOut)
	require.Len(t, byDir[lockedOut].Problems, 1)
	assert.Contains(t, byDir[lockedOut].Problems[0], "permission denied")
	assert.Contains(t, c.Notes, "skipped "+other+": cannot read it: open "+other+": permission denied")
	assert.Contains(t, c.Notes, locked+": no profiler_info_<rank>.json; numbered rank 3")
}

// TestLoadRankDirectoryInPlaceOfFile: a directory named as a file hcclprof reads is that
// file missing, a problem of the rank, not a silent gap.
func TestLoadRankDirectoryInPlaceOfFile(t *testing.T) {
	root := t.TempDir()
	dir := mkRank(t, root, "host_1_20250101000000001_ascend_pt", 0)
	require.NoError(t, os.Mkdir(filepath.Join(dir, ascendOutput, "trace_view.json"), 0o755))
	c, err := LoadCluster([]string{root}, LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	assert.Equal(t, []string{filepath.Join(ascendOutput, "trace_view.json") + " is a directory, not a file: not read"}, c.Ranks[0].Problems)
	require.Len(t, c.Ranks[0].StepTrace, 1, "the other files are read")
}

// TestDiscoverKinetoCycles: tensorboard_trace_handler writes one trace per profiling
// cycle ({worker}.{time}.pt.trace.json), so a rank's traces of one run differ in the
// time in their names. The latest cycle is read, as the latest torch_npu directory is,
// whatever the names' order: before, the first by name was kept and the note said it
// was "not newer".
func TestDiscoverKinetoCycles(t *testing.T) {
	for _, workers := range [][2]string{{"host_77", "host_77"}, {"node-b_77", "node-a_77"}} {
		dir := t.TempDir()
		early := filepath.Join(dir, workers[0]+".1700000000000.pt.trace.json")
		late := filepath.Join(dir, workers[1]+".1700000090000.pt.trace.json.gz")
		require.NoError(t, os.WriteFile(early, []byte(miniKineto), 0o644))
		writeGzip(t, late, []byte(miniKineto))

		in, err := Discover([]string{dir})
		require.NoError(t, err)
		require.Len(t, in.Ranks, 1)
		assert.Equal(t, late, in.Ranks[0].Dir, "the later cycle (%v)", workers)
		assert.Equal(t, []string{"skipped " + early + ": duplicate of rank 1 (" + late + "), older, by the timestamp in its name"}, in.Notes)
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		want inputName
	}{
		{"host_1.1700000000000.pt.trace.json", inputName{"host_1", "epoch", 1700000000000}},
		{"node.example.com_12.1733000000123456789.pt.trace.json.gz", inputName{"node.example.com_12", "epoch", 1733000000123456789}},
		{"1700000000000.pt.trace.json", inputName{"", "epoch", 1700000000000}},
		{"trace.pt.trace.json", inputName{}},
		{"host_1_20250101000000009_ascend_pt", inputName{"host_1", "date", 20250101000000009}},
		{"worker_3_20250101000000009_ascend_ms", inputName{"worker_3", "date", 20250101000000009}},
		{"a_b_20250101000000009_x_y", inputName{"", "date", 20250101000000009}},
		{"PROF_000001_20230818142704322_COJGGGCANRMICFBC", inputName{"", "date", 20230818142704322}},
		{"rank_0_ascend_pt", inputName{}},
		{"nccl_data.json.gz", inputName{}},
	} {
		assert.Equal(t, tc.want, parseInputName(filepath.Join(dir, tc.name)), tc.name)
	}
}

// Two processes that claim one rank while profiling at the same time cannot both be
// it: each node wrote its local rank (or two jobs are mixed). Both are read and
// incomplete, the second numbered after the known ranks; before, the other was
// dropped as an older duplicate and half such a job was analysed with exit 0. The
// same process's cycles, and a re-run an hour later, are still duplicates.
func TestDiscoverRankClaimedTwiceAtOnce(t *testing.T) {
	root := t.TempDir()
	mkRank(t, root, "node0_100_20250101000000001_ascend_pt", 0)
	a := mkRank(t, root, "node0_101_20250101000000001_ascend_pt", 1)
	b := mkRank(t, root, "node1_100_20250101000004500_ascend_pt", 1) // 4.5 s later
	// Rank 2: a re-run on another node, an hour later by its collection's end (the
	// names' dates alone are a second apart).
	early := mkRank(t, root, "node0_102_20250101000000001_ascend_pt", 2)
	rerun := mkRank(t, root, "node1_300_20250101000001000_ascend_pt", 2)
	for dir, endNs := range map[string]int64{early: 1735689600000000000, rerun: 1735693200000000000} {
		info := fmt.Sprintf(`{"rank_id": 2, "end_info": {"collectionTimeEnd": %d}}`, endNs)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "profiler_info_2.json"), []byte(info), 0o644))
	}

	in, err := Discover([]string{root})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 4)
	assert.Equal(t, []string{a, b}, []string{in.Ranks[1].Dir, in.Ranks[3].Dir})
	assert.Equal(t, rerun, in.Ranks[2].Dir, "the re-run's later collection is kept")
	assert.Equal(t, []string{"skipped " + early + ": duplicate of rank 2 (" + rerun + "), older, by the timestamp in its name"}, in.Notes)

	c, err := LoadCluster([]string{root}, LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 4)
	assert.Empty(t, c.Ranks[0].Problems)
	assert.Empty(t, c.Ranks[2].Problems)
	assert.Equal(t, []string{"rank 1 is claimed also by " + b + ", which another process (node1_100) profiled at the same time (4.499s apart): " +
		"the job's rank ids are not its global ranks (local ranks, or two jobs mixed), so which rank each is is not known"}, c.Ranks[1].Problems)
	require.Len(t, c.Ranks[3].Problems, 1)
	assert.Equal(t, b, c.Ranks[3].Dir)
	assert.Contains(t, c.Ranks[3].Problems[0], "rank 1 is claimed also by "+a+", which another process (node0_101)")
	assert.True(t, strings.HasSuffix(c.Ranks[3].Problems[0], "; read as rank 3"), c.Ranks[3].Problems[0])

	// Summarised where they lie, one node at a time (each alone is no conflict), and
	// gathered: the summaries carry their claims, and analyze reads both.
	gathered := t.TempDir()
	for i, dir := range []string{a, b} {
		one, err := Discover([]string{dir})
		require.NoError(t, err)
		require.Len(t, one.Ranks, 1)
		r := LoadRank(one.Ranks[0])
		require.Empty(t, r.Problems)
		out := filepath.Join(gathered, fmt.Sprintf("node%d", i))
		require.NoError(t, os.MkdirAll(out, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, ranksummary.Name(r.Rank)), summaryBytes(t, r, nil), 0o644))
	}
	sc, err := LoadCluster([]string{gathered}, LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, sc.Ranks, 2, "before, one summary was skipped as a duplicate")
	assert.Contains(t, sc.Ranks[0].Problems[0], "which another process (node1_100) profiled at the same time (4.499s apart)")
	assert.Contains(t, sc.Ranks[1].Problems[0], "which another process (node0_101) profiled at the same time (4.499s apart)")
	assert.True(t, strings.HasSuffix(sc.Ranks[1].Problems[0], "; read as rank 2"), sc.Ranks[1].Problems[0])

	// Kineto: two workers' traces that both say rank 1, written 3 s apart.
	dir := t.TempDir()
	k1 := filepath.Join(dir, "gpu-a_77.1700000000000.pt.trace.json")
	k2 := filepath.Join(dir, "gpu-b_78.1700000003000.pt.trace.json")
	require.NoError(t, os.WriteFile(k1, []byte(miniKineto), 0o644))
	require.NoError(t, os.WriteFile(k2, []byte(miniKineto), 0o644))
	kc, err := LoadCluster([]string{dir}, LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, kc.Ranks, 2)
	assert.Contains(t, kc.Ranks[0].Problems[0], "which another process (gpu-b_78) profiled at the same time (3s apart)")
	assert.Contains(t, kc.Ranks[1].Problems[0], "; read as rank 2")
}

// A process without a rank (a Kineto trace without distributedInfo, a torch_npu
// directory whose profiler_info has no rank_id) that profiled two cycles left two
// inputs with its worker in their names: they read as two ranks of one job. The
// latest cycle is one rank; another process's input is another.
func TestDiscoverCyclesOfAnUnrankedProcess(t *testing.T) {
	noRank := strings.Replace(miniKineto, `"distributedInfo"`, `"otherInfo"`, 1)
	require.NotEqual(t, miniKineto, noRank)
	dir := t.TempDir()
	first := filepath.Join(dir, "host_1234.1711964646000.pt.trace.json")
	second := filepath.Join(dir, "host_1234.1711964699000.pt.trace.json")
	other := filepath.Join(dir, "host_99.1711964646000.pt.trace.json")
	for _, p := range []string{first, second, other} {
		require.NoError(t, os.WriteFile(p, []byte(noRank), 0o644))
	}
	in, err := Discover([]string{dir})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 2, "before, three ranks")
	assert.Equal(t, []string{other, second}, []string{in.Ranks[0].Dir, in.Ranks[1].Dir}, "host_99 before host_1234")
	assert.Equal(t, []string{
		"skipped " + first + ": an earlier profiling cycle of the process that wrote " + second + " (worker host_1234), by the time in its name",
		other + ": no rank in its distributedInfo; numbered rank 0",
		second + ": no rank in its distributedInfo; numbered rank 1",
	}, in.Notes)
}

// TestDiscoverNamesForeignProfiles: where nothing hcclprof reads is found, the error
// names what was found instead (older MindSpore output, an Nsight Systems report)
// and what to collect, not only what hcclprof expects.
func TestDiscoverNamesForeignProfiles(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "job", "profiler"), 0o755))
	for _, name := range []string{"step_trace_raw_0_detail_time.csv", "hccl_raw_0.csv", "ascend_timeline_display_0.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "job", "profiler", name), []byte("x"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "gpu.nsys-rep"), []byte("x"), 0o644))
	_, err := Discover([]string{root})
	require.ErrorIs(t, err, ErrNothingFound)
	msg := err.Error()
	assert.Contains(t, msg, filepath.Join(root, "job", "profiler", "ascend_timeline_display_0.json")+": older MindSpore profiler output (1.x and 2.0 write it), which hcclprof does not read")
	assert.Contains(t, msg, filepath.Join(root, "gpu.nsys-rep")+": an Nsight Systems report, which hcclprof does not read")
	assert.Equal(t, 1, strings.Count(msg, "older MindSpore"), "one file names its format")
	assert.NotContains(t, msg, "expected rank directories")

	// Through a link to the run, as rank directories are found.
	link := filepath.Join(t.TempDir(), "latest")
	require.NoError(t, os.Symlink(root, link))
	_, err = Discover([]string{link})
	require.ErrorIs(t, err, ErrNothingFound)
	assert.Contains(t, err.Error(), filepath.Join(link, "gpu.nsys-rep")+": an Nsight Systems report")

	// Nothing recognised: what hcclprof reads is listed, as before.
	_, err = Discover([]string{t.TempDir()})
	require.ErrorIs(t, err, ErrNothingFound)
	assert.Contains(t, err.Error(), "expected rank directories")
}

// Inputs without a rank are numbered in the natural order of their names: traces
// named rank2 and rank10 by their workers were numbered 10 before 2.
func TestUnrankedInNaturalOrder(t *testing.T) {
	noRank := strings.Replace(miniKineto, `"distributedInfo"`, `"otherInfo"`, 1)
	dir := t.TempDir()
	var want []string
	for _, r := range []int{0, 1, 2, 9, 10, 11} {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.1711964646000.pt.trace.json", r))
		require.NoError(t, os.WriteFile(p, []byte(noRank), 0o644))
		want = append(want, p)
	}
	in, err := Discover([]string{dir})
	require.NoError(t, err)
	var got []string
	for i, ri := range in.Ranks {
		assert.Equal(t, i, ri.Rank)
		got = append(got, ri.Dir)
	}
	assert.Equal(t, want, got)
}

// A rank directory holding the profiler_info of two ranks (a copy gone wrong) was read
// as the first by name without a word; its rank is not known: a problem (exit 3).
func TestRankDirWithTwoRanksInfo(t *testing.T) {
	root := t.TempDir()
	dir := mkRank(t, root, "host_1_20250101000000001_ascend_pt", 0)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "profiler_info_5.json"), []byte(`{"rank_id": 5}`), 0o644))
	c, err := LoadCluster([]string{root}, LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	assert.Equal(t, 0, c.Ranks[0].Rank)
	assert.Equal(t, []string{dir + ": holds the profiler_info of 2 ranks (profiler_info_0.json, profiler_info_5.json): which rank it is is not known (read as profiler_info_0.json says)"},
		c.Ranks[0].Problems)
}
