package parser

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// realCopy copies a realdata dataset into a temporary directory, for a test to damage.
func realCopy(t *testing.T, dataset string) string {
	t.Helper()
	src := realdata.Path(t, dataset)
	dst := filepath.Join(t.TempDir(), dataset)
	msprofCopyTree(t, src, dst)
	return dst
}

// editFile rewrites a file of a test's copy.
func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := edit(string(b))
	require.NotEqual(t, string(b), out, "the edit changed nothing in %s", path)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
}

func rankNumbered(t *testing.T, c *profile.Cluster, n int) *profile.Rank {
	t.Helper()
	for _, r := range c.Ranks {
		if r.Rank == n {
			return r
		}
	}
	require.Failf(t, "no such rank", "rank %d not read", n)
	return nil
}

// TestStepTraceDuplicateColumn: a second Stage column placed before the real one was
// taken as the stage (a share of 0.41 for the profiler's 0.70). A column the header
// holds twice is refused, naming the file, the header line and both columns: the
// rank is incomplete.
func TestStepTraceDuplicateColumn(t *testing.T) {
	dir := realCopy(t, "imagenet-2rank-level0")
	st := filepath.Join(dir, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")
	editFile(t, st, func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		lines[0] = "Stage," + lines[0]
		lines[1] = "200000," + lines[1]
		return strings.Join(lines, "")
	})
	c, err := LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	r0, r1 := rankNumbered(t, c, 0), rankNumbered(t, c, 1)
	assert.Empty(t, r1.Problems)
	require.NotEmpty(t, r0.Problems)
	assert.Contains(t, strings.Join(r0.Problems, "\n"), st+":1: column \"Stage\" appears twice in the header (columns 1 and 8)")
	for _, row := range r0.StepTrace {
		assert.NotEqual(t, int64(200_000_000), row.StageNs, "the first Stage column was taken")
	}

	// The same for the table read alone.
	_, err = parseStepTraceCSV(strings.NewReader("Stage,"+stHeader2024+"\n1,"+stRow2024+"\n"), "st.csv")
	requireSyntaxError(t, err, "st.csv", "appears twice")
}

// kinetoRealText is the real Kineto sample, decompressed.
func kinetoRealText(t *testing.T) string {
	t.Helper()
	p := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}

// kinetoStepEvent is the whole event of ProfilerStep#n in the sample's text.
func kinetoStepEvent(t *testing.T, text string, n int) string {
	t.Helper()
	i := strings.Index(text, fmt.Sprintf(`"name": "ProfilerStep#%d"`, n))
	require.Positive(t, i)
	start := strings.LastIndex(text[:i], "{")
	end := strings.Index(text[i:], "\n  }") + i + len("\n  }")
	return text[start:end]
}

// loadKinetoText writes a (damaged) Kineto trace and reads it as hcclprof does.
func loadKinetoText(t *testing.T, text string) (*profile.Rank, *analysis.Result) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rank0.pt.trace.json")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	c, err := LoadCluster([]string{p}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	return c.Ranks[0], analysis.Analyze(c, analysis.Options{})
}

// TestKinetoDamagedStepMarkers: a ProfilerStep of zero length was kept as a step
// (comm_share 6.49% for 5.93%), one reaching into the next step's, or three times as
// long (Stage 659 ms for 220), were read with exit 0, and a marker written twice was
// dropped without a word although the README makes it exit 3. Each is now a problem
// of the rank naming the trace file and the step.
func TestKinetoDamagedStepMarkers(t *testing.T) {
	text := kinetoRealText(t)
	_, whole := loadKinetoText(t, text)
	require.Len(t, whole.Ranks[0].Steps, 3)
	require.False(t, whole.Summary.Incomplete)
	step4, step5 := kinetoStepEvent(t, text, 4), kinetoStepEvent(t, text, 5)

	check := func(t *testing.T, r *profile.Rank, res *analysis.Result, fragments ...string) {
		t.Helper()
		assert.True(t, res.Summary.Incomplete)
		msg := strings.Join(r.Problems, "\n")
		assert.Contains(t, msg, "rank0.pt.trace.json: ")
		for _, f := range fragments {
			assert.Contains(t, msg, f)
		}
		for _, s := range res.Ranks[0].Steps {
			assert.Positive(t, s.StageNs, "step %d", s.Step)
			assert.Less(t, s.StageNs, int64(230e6), "step %d", s.Step)
		}
	}
	t.Run("zero length", func(t *testing.T) {
		r, res := loadKinetoText(t, strings.Replace(text, step5, strings.Replace(step5, `"dur": 219726.905`, `"dur": 0`, 1), 1))
		check(t, r, res, "ProfilerStep#5 at 4458676639291351 ns lasts 0 ns")
		assert.Len(t, res.Ranks[0].Steps, 2)
	})
	t.Run("overlapping the next", func(t *testing.T) {
		r, res := loadKinetoText(t, strings.Replace(text, step4, strings.Replace(step4, `"dur": 222442.191`, `"dur": 250000`, 1), 1))
		check(t, r, res, "ProfilerStep#4 (", "overlaps ProfilerStep#5")
		require.Len(t, res.Ranks[0].Steps, 3)
		assert.InDelta(t, 222.5e6, float64(res.Ranks[0].Steps[0].StageNs), 0.1e6, "cut at the next step's start")
	})
	t.Run("three times as long", func(t *testing.T) {
		r, res := loadKinetoText(t, strings.Replace(text, step4, strings.Replace(step4, `"dur": 222442.191`, `"dur": 667326.573`, 1), 1))
		check(t, r, res, "overlaps ProfilerStep#5")
		require.Len(t, res.Ranks[0].Steps, 3)
	})
	t.Run("written twice", func(t *testing.T) {
		r, res := loadKinetoText(t, strings.Replace(text, step5, step5+",\n  "+step5, 1))
		check(t, r, res, "ProfilerStep#5 appears twice")
		assert.Len(t, res.Ranks[0].Steps, 3)
	})
	t.Run("written three times", func(t *testing.T) {
		r, res := loadKinetoText(t, strings.Replace(text, step5, step5+",\n  "+step5+",\n  "+step5, 1))
		check(t, r, res, "ProfilerStep#5 appears twice")
		assert.Len(t, res.Ranks[0].Steps, 3)
	})
}

// TestRepeatedOpRecords: HCCL op records written twice (trace_view.json events, the
// db's COMMUNICATION_OP rows, kernel_details.csv lines) were counted twice: 8 ops
// read as 12, their totals +50-100%, without a word. An exact copy is read once, and
// a note (a warning) names the file and how many copies were dropped; the figures
// equal the undamaged profile's.
func TestRepeatedOpRecords(t *testing.T) {
	analyse := func(t *testing.T, dir string) (*profile.Cluster, *analysis.Result) {
		t.Helper()
		c, err := LoadCluster([]string{dir}, LoadOptions{})
		require.NoError(t, err)
		return c, analysis.Analyze(c, analysis.Options{})
	}
	same := func(t *testing.T, want, got *analysis.Result, c *profile.Cluster, file string, copies int) {
		t.Helper()
		assert.False(t, got.Summary.Incomplete)
		assert.Equal(t, want.Summary, got.Summary)
		assert.Equal(t, want.Collectives, got.Collectives)
		var notes []string
		for _, r := range c.Ranks {
			notes = append(notes, r.Notes...)
		}
		assert.Contains(t, strings.Join(notes, "\n"), fmt.Sprintf("%s: %d HCCL op record(s) repeat another exactly", file, copies))
	}
	t.Run("trace_view.json events", func(t *testing.T) {
		dir := realCopy(t, "imagenet-2rank-level1")
		_, want := analyse(t, dir)
		tv := filepath.Join(dir, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
		editFile(t, tv, func(s string) string {
			for _, name := range []string{"hcom_allReduce__586_0_1", "hcom_allReduce__586_2_1"} {
				i := strings.Index(s, `{"name": "`+name+`"`)
				require.Positive(t, i)
				j := strings.Index(s[i:], `"ph": "X"}`) + i + len(`"ph": "X"}`)
				s = s[:j] + ", " + s[i:j] + s[j:]
			}
			return s
		})
		c, got := analyse(t, dir)
		same(t, want, got, c, "ASCEND_PROFILER_OUTPUT/trace_view.json", 2)
	})
	t.Run("kernel_details.csv lines", func(t *testing.T) {
		dir := realCopy(t, "imagenet-2rank-level0")
		_, want := analyse(t, dir)
		kd := filepath.Join(dir, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
		editFile(t, kd, func(s string) string {
			var out []string
			for _, l := range strings.SplitAfter(s, "\n") {
				out = append(out, l)
				if strings.Contains(l, "hcom_") {
					out = append(out, l)
				}
			}
			return strings.Join(out, "")
		})
		c, got := analyse(t, dir)
		same(t, want, got, c, "ASCEND_PROFILER_OUTPUT/kernel_details.csv", 4)
	})
	t.Run("COMMUNICATION_OP rows", func(t *testing.T) {
		dir := realCopy(t, "imagenet-2rank-db")
		_, want := analyse(t, dir)
		db := filepath.Join(dir, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db")
		sqlExec(t, db, `INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, groupName, opId, relay, retry, dataType, algType, count, opType, waitNs)
			SELECT opName, startNs, endNs, connectionId, groupName, opId + 100000, relay, retry, dataType, algType, count, opType, waitNs FROM COMMUNICATION_OP ORDER BY startNs LIMIT 3`)
		c, got := analyse(t, dir)
		same(t, want, got, c, "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db", 3)
	})
}

// sqlExec runs a statement on a test's own copy of a db.
func sqlExec(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(context.Background(), stmt)
	require.NoError(t, err, stmt)
}

// TestArchiveSpecialMember: a character device (or FIFO) where a tar archive holds a
// file hcclprof reads was silently absent, while on disk the same is exit 3. It is
// now refused as on disk: the rank is incomplete, naming the member.
func TestArchiveSpecialMember(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level0")
	for _, tc := range []struct {
		name string
		flag byte
		kind string
	}{
		{"character device", tar.TypeChar, "a device"},
		{"block device", tar.TypeBlock, "a device"},
		{"FIFO", tar.TypeFifo, "a FIFO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const special = "run/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"
			arc := filepath.Join(t.TempDir(), "run.tar")
			f, err := os.Create(arc)
			require.NoError(t, err)
			tw := tar.NewWriter(f)
			require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
				require.NoError(t, err)
				rel, _ := filepath.Rel(src, p)
				name := filepath.ToSlash(filepath.Join("run", rel))
				switch {
				case d.IsDir():
					return tw.WriteHeader(&tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755})
				case name == special:
					return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tc.flag, Mode: 0o644, Devmajor: 1, Devminor: 3})
				}
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}))
				_, err = tw.Write(b)
				return err
			}))
			require.NoError(t, tw.Close())
			require.NoError(t, f.Close())

			c, err := LoadCluster([]string{arc}, LoadOptions{})
			require.NoError(t, err)
			r0, r1 := rankNumbered(t, c, 0), rankNumbered(t, c, 1)
			assert.Empty(t, r1.Problems)
			assert.Contains(t, strings.Join(r0.Problems, "\n"), arc+"!/"+special+": not a regular file ("+tc.kind+")")
			assert.True(t, analysis.Analyze(c, analysis.Options{}).Summary.Incomplete)
		})
	}
}

// TestKinetoGzipDamage: a Kineto .json.gz whose CRC does not match, or with bytes
// after its compressed data, was read with exit 0 (gzip checks both only at its end,
// which the reader never reached once the JSON was read). Both now make the rank
// incomplete, naming the file.
func TestKinetoGzipDamage(t *testing.T) {
	p := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	gz, err := os.ReadFile(p)
	require.NoError(t, err)
	var extra bytes.Buffer
	zw := gzip.NewWriter(&extra)
	_, _ = zw.Write([]byte(`{"traceEvents": []}`))
	require.NoError(t, zw.Close())
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"CRC mismatch", func(b []byte) []byte { b[len(b)-8] ^= 0xff; return b }, "gzip: gzip: invalid checksum"},
		{"length mismatch", func(b []byte) []byte { b[len(b)-1] ^= 0x01; return b }, "gzip: gzip: invalid checksum"},
		{"garbage after the data", func(b []byte) []byte { return append(b, "garbage!"...) }, "gzip: unexpected EOF: the file is damaged"},
		{"a second member", func(b []byte) []byte { return append(b, extra.Bytes()...) }, "gzip: 18 bytes of data after the trace's JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rank0.pt.trace.json.gz")
			require.NoError(t, os.WriteFile(path, tc.edit(slices.Clone(gz)), 0o644))
			c, err := LoadCluster([]string{path}, LoadOptions{})
			require.NoError(t, err)
			require.Len(t, c.Ranks, 1)
			assert.Contains(t, strings.Join(c.Ranks[0].Problems, "\n"), path+": "+tc.want)
		})
	}
	// The undamaged file reads whole.
	c, err := LoadCluster([]string{p}, LoadOptions{})
	require.NoError(t, err)
	assert.Empty(t, c.Ranks[0].Problems)
}

// TestJSONByteOrderMark: a UTF-8 byte-order mark was accepted before a CSV but made a
// JSON trace unreadable (exit 3) and a Kineto trace unrecognised (exit 2). It is
// skipped in every JSON file too: the rank reads as without it.
func TestJSONByteOrderMark(t *testing.T) {
	bom := func(t *testing.T, path string) {
		t.Helper()
		editFile(t, path, func(s string) string { return "\ufeff" + s })
	}
	t.Run("torch_npu text export", func(t *testing.T) {
		dir := realCopy(t, "imagenet-2rank-level1")
		want, err := LoadCluster([]string{dir}, LoadOptions{})
		require.NoError(t, err)
		r0 := filepath.Join(dir, "rank0_ascend_pt")
		for _, f := range []string{"ASCEND_PROFILER_OUTPUT/trace_view.json", "ASCEND_PROFILER_OUTPUT/communication.json",
			"ASCEND_PROFILER_OUTPUT/communication_matrix.json", "profiler_info_0.json", "profiler_metadata.json"} {
			bom(t, filepath.Join(r0, f))
		}
		got, err := LoadCluster([]string{dir}, LoadOptions{})
		require.NoError(t, err)
		assert.Empty(t, rankNumbered(t, got, 0).Problems)
		assert.Equal(t, analysis.Analyze(want, analysis.Options{}).Summary, analysis.Analyze(got, analysis.Options{}).Summary)
	})
	t.Run("Kineto trace", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "rank0.pt.trace.json")
		require.NoError(t, os.WriteFile(p, []byte("\ufeff"+kinetoRealText(t)), 0o644))
		c, err := LoadCluster([]string{p}, LoadOptions{})
		require.NoError(t, err)
		require.Len(t, c.Ranks, 1)
		assert.Empty(t, c.Ranks[0].Problems)
		assert.Len(t, c.Ranks[0].Steps, 3)
	})
	t.Run("msprof timeline", func(t *testing.T) {
		src := realdata.Path(t, "msprof-mindspore-alexnet")
		dir := filepath.Join(t.TempDir(), "alexnet")
		msprofCopyTree(t, src, dir)
		want, err := LoadCluster([]string{dir}, LoadOptions{})
		require.NoError(t, err)
		tls, err := filepath.Glob(filepath.Join(dir, "PROF_*", "device_0", "timeline", "msprof_0_2_*.json"))
		require.NoError(t, err)
		require.NotEmpty(t, tls)
		for _, tl := range tls {
			bom(t, tl)
		}
		got, err := LoadCluster([]string{dir}, LoadOptions{})
		require.NoError(t, err)
		assert.Equal(t, want.Ranks[0].Problems, got.Ranks[0].Problems)
		assert.Equal(t, analysis.Analyze(want, analysis.Options{}).Summary, analysis.Analyze(got, analysis.Options{}).Summary)
	})
}

// TestNothingFoundSaysWhatWasSeen: "no profiler output found" listed what hcclprof
// looks for but not what it saw, so a wrong directory and an unrecognised profile read
// alike. It now says, per argument, whether it is empty, a file, or what the tree
// holds.
func TestNothingFoundSaysWhatWasSeen(t *testing.T) {
	dir := realCopy(t, "imagenet-2rank-level0")
	for _, r := range []string{"rank0_ascend_pt", "rank1_ascend_pt"} {
		n := r[len("rank")]
		require.NoError(t, os.Remove(filepath.Join(dir, r, "profiler_info_"+string(n)+".json")))
		require.NoError(t, os.Rename(filepath.Join(dir, r, "ASCEND_PROFILER_OUTPUT"), filepath.Join(dir, r, "output")))
	}
	_, err := LoadCluster([]string{dir}, LoadOptions{})
	require.ErrorIs(t, err, ErrNothingFound)
	sep := string(filepath.Separator)
	assert.Contains(t, err.Error(), "; seen: "+dir+" holds 4 files and 4 directories (rank0_ascend_pt"+sep+", rank1_ascend_pt"+sep+", ")
	assert.Contains(t, err.Error(), "rank0_ascend_pt"+sep+"output"+sep+"kernel_details.csv")

	empty := t.TempDir()
	_, err = LoadCluster([]string{empty}, LoadOptions{})
	require.ErrorIs(t, err, ErrNothingFound)
	assert.Contains(t, err.Error(), "; seen: "+empty+" is empty")

	notKineto := filepath.Join(t.TempDir(), "trace.json")
	require.NoError(t, os.WriteFile(notKineto, []byte(`{"traceEvents": []}`), 0o644))
	_, err = LoadCluster([]string{notKineto}, LoadOptions{})
	require.ErrorIs(t, err, ErrNothingFound)
	assert.Contains(t, err.Error(), "; seen: "+notKineto+" is a file of 19 bytes that is not a Kineto trace")
}

// TestTarGzChecksum: a .tar.gz whose gzip CRC does not match was read as whole (the
// tar reader stops before the gzip trailer, where the CRC is checked). It is refused
// as a damaged archive, naming it.
func TestTarGzChecksum(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level0")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(src, p)
		name := filepath.ToSlash(filepath.Join("run", rel))
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}))
		_, err = tw.Write(b)
		return err
	}))
	require.NoError(t, tw.Close())
	_, err := zw.Write(make([]byte, 8192)) // the padding GNU tar writes after the end marker
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tar.gz")
	require.NoError(t, os.WriteFile(good, buf.Bytes(), 0o644))
	c, err := LoadCluster([]string{good}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 2)

	bad := filepath.Join(dir, "bad.tar.gz")
	b := slices.Clone(buf.Bytes())
	b[len(b)-8] ^= 0xff
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	_, err = LoadCluster([]string{bad}, LoadOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad)
	assert.Contains(t, err.Error(), "damaged archive: gzip: gzip: invalid checksum")
}
