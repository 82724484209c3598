package parser

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// msprofDeviceOf returns the device number N of a generated PROF directory's device_N.
func msprofDeviceOf(tb testing.TB, prof string) int {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(prof, "device_*"))
	require.NoError(tb, err)
	require.Len(tb, m, 1)
	n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m[0]), "device_"))
	require.NoError(tb, err)
	return n
}

// bareExports copies the mindstudio_profiler_output/ of the given generated PROF
// directories, alone, into root/<name>/mindstudio_profiler_output.
func bareExports(tb testing.TB, root string, profs map[string]string) {
	tb.Helper()
	for name, prof := range profs {
		msprofCopyTree(tb, filepath.Join(prof, msprofExportDir), filepath.Join(root, name, msprofExportDir))
	}
}

// TestDiscoverMsprofExportOnly: a mindstudio_profiler_output/ copied without its PROF
// directory is one msprof rank, whether it or its parent is named, read as the PROF
// directory's export is: the same compute and ops, no analyze/ files, the device from
// op_summary's Device_id and the rank numbered (no info.json.N says it).
func TestDiscoverMsprofExportOnly(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	profs := msprofProfDirs(t, dir)
	src := profs[0]
	device := msprofDeviceOf(t, src)
	full, err := loadMsprofDir(src)
	require.NoError(t, err)
	require.Len(t, full, 1)
	require.True(t, full[0].HasTimeline)

	root := t.TempDir()
	bareExports(t, root, map[string]string{"copy": src})
	parent := filepath.Join(root, "copy")
	export := filepath.Join(parent, msprofExportDir)
	for _, arg := range []string{export, parent, root} {
		t.Run(filepath.Base(arg), func(t *testing.T) {
			in, err := Discover([]string{arg})
			require.NoError(t, err, "before: no profiler output found")
			defer in.Release()
			require.Len(t, in.Ranks, 1)
			ri := in.Ranks[0]
			require.NotNil(t, ri.msprofDev())
			assert.True(t, ri.msprofDev().ExportOnly)
			assert.Equal(t, export, ri.Dir)
			assert.Equal(t, 0, ri.Rank, "numbered, as msprof-analyze numbers devices without a rank_id")
			assert.Equal(t, device, ri.msprofDev().Device, "op_summary's Device_id")
			assert.Equal(t, -1, ri.msprofDev().RankID)
			notes := strings.Join(in.Notes, "\n")
			assert.Contains(t, notes, export+": an msprof export without its PROF_* directory")
			assert.Contains(t, notes, "device "+strconv.Itoa(device)+" from op_summary_")
			assert.Contains(t, notes, "numbered in (hostUid, device) order")

			r := LoadRank(ri)
			assert.Empty(t, r.Problems)
			assert.Equal(t, profile.FormatMsprof, r.Format)
			assert.Equal(t, 0, r.Rank)
			assert.Equal(t, -1, r.Info.RankID)
			assert.Nil(t, r.Info.Device, "no info.json.N: no chip")
			assert.True(t, r.HasTimeline)
			assert.Empty(t, r.Steps)
			require.Len(t, r.FilesUsed, 1)
			assert.Regexp(t, `^msprof_\d{14}\.json$`, r.FilesUsed[0])
			assert.Contains(t, r.FilesIgnored, filepath.Base(vfs.NewestMatch(export, opSummaryRe)))
			assert.Equal(t, full[0].Compute, r.Compute)
			assert.Equal(t, full[0].Overlap, r.Overlap)
			require.Len(t, r.CommOps, len(full[0].CommOps))
			for i := range r.CommOps {
				assert.Equal(t, full[0].CommOps[i].Interval, r.CommOps[i].Interval)
				assert.Equal(t, full[0].CommOps[i].Name, r.CommOps[i].Name)
			}
			assert.Empty(t, r.CommStats, "communication.json is in analyze/, which the copy lacks")
		})
	}

	// A PROF directory's export named directly stands for its PROF directory.
	in, err := Discover([]string{filepath.Join(src, msprofExportDir)})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	require.NotNil(t, in.Ranks[0].msprofDev())
	assert.False(t, in.Ranks[0].msprofDev().ExportOnly)
	assert.Equal(t, src, in.Ranks[0].Dir)
	assert.Equal(t, full[0].Rank, in.Ranks[0].Rank, "rank_id from info.json.N")
}

// TestDiscoverMsprofExportsNumbered: several bare exports are numbered by device; two
// copies of one device number are two devices (no hostUid tells them apart), not
// duplicates.
func TestDiscoverMsprofExportsNumbered(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	profs := msprofProfDirs(t, dir)
	byDevice := map[int]string{}
	for _, p := range profs {
		byDevice[msprofDeviceOf(t, p)] = p
	}
	require.Contains(t, byDevice, 1)
	require.Contains(t, byDevice, 3)
	root := t.TempDir()
	bareExports(t, root, map[string]string{"a": byDevice[3], "b": byDevice[1], "c": byDevice[1]})
	in, err := Discover([]string{root})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 3)
	var got []string
	for _, ri := range in.Ranks {
		rel, _ := filepath.Rel(root, ri.Dir)
		got = append(got, strconv.Itoa(ri.Rank)+":"+rel+":"+strconv.Itoa(ri.msprofDev().Device))
	}
	assert.Equal(t, []string{"0:b/" + msprofExportDir + ":1", "1:c/" + msprofExportDir + ":1", "2:a/" + msprofExportDir + ":3"}, got)
	for _, n := range in.Notes {
		assert.NotContains(t, n, "ignored")
	}
}

// TestMsprofExportOnlyEdges: which directories are bare exports, where the device
// comes from when no CSV names it, and a bare export without a timeline.
func TestMsprofExportOnlyEdges(t *testing.T) {
	root := t.TempDir()
	opSummary := "Device_id,Op Name,Task Type,Task Start Time(us),Task Duration(us)\n" +
		"2,hcom_allReduce__1_0_1,COMMUNICATION,1000.000\t,5.000\t\n"
	timeline := `[{"name":"process_labels","pid":1,"tid":0,"ph":"M","args":{"labels":"NPU 6"}},` +
		`{"name":"process_name","pid":1,"tid":0,"ph":"M","args":{"name":"Ascend Hardware"}},` +
		`{"name":"k","pid":1,"tid":3,"ts":"10.0","dur":2.5,"ph":"X","args":{"Task Type":"AI_CORE"}}]`
	msprofWriteFiles(t, root, map[string]string{
		"labelled/msprof_20260624165819.json":                               timeline,
		"plain/msprof_20260624165819.json":                                  strings.Replace(timeline, "NPU 6", "NPU", 1),
		"summaryonly/" + msprofExportDir + "/op_summary_20260624165820.csv": opSummary,
		"othername/op_summary_20260624165820.csv":                           opSummary,
	})
	for _, c := range []struct {
		dir      string
		ok       bool
		device   int
		fromPart string
	}{
		{"labelled", true, 6, `process label "NPU 6"`},
		{"plain", true, -1, ""},
		{"summaryonly/" + msprofExportDir, true, 2, "op_summary_20260624165820.csv's Device_id"},
		{"othername", false, 0, ""},
	} {
		dev, from, ok := scanMsprofExport(filepath.Join(root, c.dir))
		require.Equal(t, c.ok, ok, c.dir)
		if !ok {
			continue
		}
		assert.Equal(t, c.device, dev.Device, c.dir)
		assert.Contains(t, from, c.fromPart, c.dir)
		if c.fromPart == "" {
			assert.Empty(t, from, c.dir)
		}
	}

	r := loadMsprofDevice(msprofDevice{ProfDir: filepath.Join(root, "labelled"), Device: 6, RankID: -1, Rank: 0, ExportOnly: true})
	assert.Empty(t, r.Problems)
	require.Equal(t, []profile.Interval{{StartNs: 10_000, EndNs: 12_500}}, r.Compute)

	r = loadMsprofDevice(msprofDevice{ProfDir: filepath.Join(root, "summaryonly", msprofExportDir), Device: 2, RankID: -1, Rank: 0, ExportOnly: true})
	assert.False(t, r.HasTimeline)
	require.Len(t, r.Problems, 1)
	assert.Contains(t, r.Problems[0], "no timeline (msprof_*.json) in this export")
	assert.Len(t, r.KernelCommOps, 1, "op_summary's communication row")
}

const cann85Matmul = "msprof-cann85-matmul"

// TestMsprofCann85Matmul reads the real msprof 25.5.0 (CANN 8.5.2) capture of one
// AscendC matmul kernel, kept without its PROF directory. The kernel's task, as
// task_time_*.csv gives it (read here with encoding/csv), is the rank's only compute
// interval; the msprof 25.5 timeline's processes (Ascend Hardware "Stream 47"/"Stream
// 49", CANN, AI Core Freq, Overlap Analysis) and task types (AI_CORE,
// PROFILING_ENABLE/DISABLE, PLACE_HOLDER_SQE) are all read, with no HCCL and no
// step marker.
func TestMsprofCann85Matmul(t *testing.T) {
	parent := realdata.Path(t, cann85Matmul)
	export := filepath.Join(parent, msprofExportDir)

	// The kernel's task from task_time_*.csv: the AI_CORE row.
	taskTime, err := filepath.Glob(filepath.Join(export, "task_time_*.csv"))
	require.NoError(t, err)
	require.Len(t, taskTime, 1)
	f, err := os.Open(taskTime[0])
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	usToNs := func(s string) int64 {
		s = strings.TrimSpace(s)
		whole, frac, _ := strings.Cut(s, ".")
		frac = (frac + "000")[:3]
		n, err := strconv.ParseInt(whole+frac, 10, 64)
		require.NoError(t, err, s)
		return n
	}
	var kernel []profile.Interval
	for _, row := range rows[1:] {
		if row[col["kernel_type"]] == "AI_CORE" {
			assert.Equal(t, "0", row[col["Device_id"]])
			kernel = append(kernel, profile.Interval{StartNs: usToNs(row[col["task_start(us)"]]), EndNs: usToNs(row[col["task_stop(us)"]])})
			assert.Equal(t, int64(7840), usToNs(row[col["task_time(us)"]]))
		}
	}
	require.Len(t, kernel, 1, "one matmul kernel")

	in, err := Discover([]string{parent})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	ri := in.Ranks[0]
	assert.Equal(t, 0, ri.Rank)
	require.NotNil(t, ri.msprofDev())
	assert.Equal(t, 0, ri.msprofDev().Device)
	assert.Contains(t, strings.Join(in.Notes, "\n"), "device 0 from op_summary_20260624165820.csv's Device_id")

	r := LoadRank(ri)
	assert.Empty(t, r.Problems)
	assert.Equal(t, []string{"msprof_20260624165819.json"}, r.FilesUsed)
	assert.True(t, r.HasTimeline)
	assert.Empty(t, r.Steps, "msprof marks no step")
	assert.Equal(t, kernel, r.Compute, "the kernel's task is the only computation; PROFILING_ENABLE/DISABLE and PLACE_HOLDER_SQE are not")
	assert.Empty(t, r.CommOps)
	assert.Empty(t, r.CommTasks)
	assert.Empty(t, r.CommStats)
	// The profiler's own Overlap Analysis rows: Computing is the kernel, Free runs from
	// its end to the last device task (PLACE_HOLDER_SQE at 1782291497410666.870 us).
	assert.Equal(t, kernel, r.Overlap.Computing)
	assert.Equal(t, []profile.Interval{{StartNs: 1782291497409502330, EndNs: 1782291497410666870}}, r.Overlap.Free)
	assert.Empty(t, r.Overlap.Communication)
	assert.Empty(t, r.Overlap.CommNotOverlapped)
}
