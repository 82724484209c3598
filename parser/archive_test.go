package parser_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/internal/testkit"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// archiveMember is one entry of an archive built by a test.
type archiveMember struct {
	name     string
	data     []byte
	dir      bool
	symlink  string // target, for a symbolic link
	hardlink string // target, for a hard link
}

// dirMembers lists the files and directories under root as archive members named
// relative to root (prefix/... when prefix is set), in walk order.
func dirMembers(t testing.TB, root, prefix string) []archiveMember {
	t.Helper()
	var out []archiveMember
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(filepath.Join(prefix, rel))
		if d.IsDir() {
			out = append(out, archiveMember{name: name + "/", dir: true})
			return nil
		}
		data, err := os.ReadFile(p)
		out = append(out, archiveMember{name: name, data: data})
		return err
	}))
	return out
}

// writeArchive writes members to path as a zip, a tar, or a gzip-compressed tar,
// by path's suffix.
func writeArchive(t testing.TB, path string, members []archiveMember) {
	t.Helper()
	var buf bytes.Buffer
	switch {
	case strings.HasSuffix(path, ".zip"):
		zw := zip.NewWriter(&buf)
		for _, m := range members {
			if m.hardlink != "" {
				continue // zip has none
			}
			h := &zip.FileHeader{Name: m.name, Method: zip.Deflate}
			data := m.data
			switch {
			case m.dir:
				h.Method = zip.Store
			case m.symlink != "":
				h.SetMode(fs.ModeSymlink | 0o777)
				data = []byte(m.symlink)
			}
			w, err := zw.CreateHeader(h)
			require.NoError(t, err)
			_, err = w.Write(data)
			require.NoError(t, err)
		}
		require.NoError(t, zw.Close())
	default:
		var w io.Writer = &buf
		var zw *gzip.Writer
		if !strings.HasSuffix(path, ".tar") {
			zw = gzip.NewWriter(&buf)
			w = zw
		}
		tw := tar.NewWriter(w)
		for _, m := range members {
			h := &tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data)), Typeflag: tar.TypeReg}
			switch {
			case m.dir:
				h.Typeflag, h.Mode = tar.TypeDir, 0o755
			case m.symlink != "":
				h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, m.symlink, 0
			case m.hardlink != "":
				h.Typeflag, h.Linkname, h.Size = tar.TypeLink, m.hardlink, 0
			}
			require.NoError(t, tw.WriteHeader(h))
			if h.Size > 0 {
				_, err := tw.Write(m.data)
				require.NoError(t, err)
			}
		}
		require.NoError(t, tw.Close())
		if zw != nil {
			require.NoError(t, zw.Close())
		}
	}
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// fromArchive rewrites the paths of a cluster read from an archive (ARCHIVE!/...)
// as those of the directory it was packed from, so the two compare equal.
func fromArchive(c *profile.Cluster, archiveRoot, dir string) {
	fix := func(s string) string { return strings.ReplaceAll(s, archiveRoot, dir) }
	for i := range c.Notes {
		c.Notes[i] = fix(c.Notes[i])
	}
	for _, r := range c.Ranks {
		r.Dir = fix(r.Dir)
		for i := range r.Problems {
			r.Problems[i] = fix(r.Problems[i])
		}
	}
}

// Archives equal their unpacked form: a generated cluster, in each export format,
// packed as .zip, .tar.gz and .tgz, loads and analyses exactly as its directory
// does (same ranks, files, timelines and step breakdowns to the ns).
func TestArchivesEqualTheirUnpackedForm(t *testing.T) {
	for _, format := range []render.Format{render.FormatText, render.FormatDB, render.FormatMsprof} {
		t.Run(string(format), func(t *testing.T) {
			dir := testkit.GenerateBuiltin(t, "demo-2server-8rank", format).Dir
			want, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
			require.NoError(t, err)
			wantRes := analysis.Analyze(want, analysis.Options{})
			require.Len(t, want.Ranks, 8)
			members := dirMembers(t, dir, "")

			for _, ext := range []string{".zip", ".tar.gz", ".tgz"} {
				t.Run(ext, func(t *testing.T) {
					arc := filepath.Join(t.TempDir(), "cluster"+ext)
					writeArchive(t, arc, members)
					got, err := parser.LoadCluster([]string{arc}, parser.LoadOptions{})
					require.NoError(t, err)
					require.Len(t, got.Ranks, len(want.Ranks))
					for _, r := range got.Ranks {
						assert.True(t, strings.HasPrefix(r.Dir, arc+"!/"), "rank %d dir %s", r.Rank, r.Dir)
						assert.Empty(t, r.Problems, "rank %d", r.Rank)
					}
					gotRes := analysis.Analyze(got, analysis.Options{})
					fromArchive(got, arc+"!", dir)
					for i := range gotRes.Ranks {
						gotRes.Ranks[i].Dir = strings.ReplaceAll(gotRes.Ranks[i].Dir, arc+"!", dir)
					}
					for i, r := range got.Ranks {
						assert.Equal(t, want.Ranks[i], r, "rank %d", r.Rank)
					}
					assert.Equal(t, want.Notes, got.Notes)
					assert.Equal(t, wantRes, gotRes)
				})
			}
		})
	}
}

// An archive of one rank directory, named or found in a directory walked, is that rank.
func TestArchiveOfOneRank(t *testing.T) {
	dir := testkit.GenerateBuiltin(t, "demo-2server-8rank", render.FormatText).Dir
	rankDirs, err := filepath.Glob(filepath.Join(dir, "*_ascend_pt"))
	require.NoError(t, err)
	require.NotEmpty(t, rankDirs)
	rankDir := rankDirs[0]
	want, err := parser.LoadCluster([]string{rankDir}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, want.Ranks, 1)

	walked := t.TempDir()
	arc := filepath.Join(walked, "rank.tgz")
	writeArchive(t, arc, dirMembers(t, rankDir, filepath.Base(rankDir)))
	for _, arg := range []string{arc, walked} {
		got, err := parser.LoadCluster([]string{arg}, parser.LoadOptions{})
		require.NoError(t, err, arg)
		require.Len(t, got.Ranks, 1)
		assert.Equal(t, arc+"!/"+filepath.Base(rankDir), got.Ranks[0].Dir)
		fromArchive(got, arc+"!/"+filepath.Base(rankDir), rankDir)
		assert.Equal(t, want.Ranks[0], got.Ranks[0])
	}
}

// Archives that would escape their directory or unpack out of measure are refused
// with an error naming the archive and the member; a truncated one fails cleanly.
func TestArchiveBombsAndEscapes(t *testing.T) {
	trace := []byte(`[{"name":"x","ph":"X","ts":"1","dur":1,"pid":1,"tid":1}]`)
	zeros := make([]byte, 2<<20)
	many := func(n int) []archiveMember {
		var ms []archiveMember
		for i := range n {
			ms = append(ms, archiveMember{name: "r/f" + string(rune('a'+i)) + ".txt", data: []byte("x")})
		}
		return ms
	}
	cases := []struct {
		name    string
		exts    []string
		members []archiveMember
		limits  vfs.ArchiveLimits
		want    []string // in the error
	}{
		{"dotdot", []string{".zip", ".tar.gz", ".tar"},
			[]archiveMember{{name: "r/ASCEND_PROFILER_OUTPUT/trace_view.json", data: trace}, {name: "r/../../x", data: trace}},
			vfs.ArchiveLimits{}, []string{"!/r/../../x", `".." component`}},
		{"absolute", []string{".zip", ".tgz"},
			[]archiveMember{{name: "/etc/x/trace_view.json", data: trace}},
			vfs.ArchiveLimits{}, []string{"!//etc/x/trace_view.json", "absolute member path"}},
		{"symlink out", []string{".zip", ".tar.gz"},
			[]archiveMember{{name: "r/trace_view.json", symlink: "../../etc/passwd"}},
			vfs.ArchiveLimits{}, []string{"!/r/trace_view.json", `link to "../../etc/passwd" points out of the archive`}},
		{"hardlink out", []string{".tar.gz"},
			[]archiveMember{{name: "r/trace_view.json", hardlink: "../secret"}},
			vfs.ArchiveLimits{}, []string{"!/r/trace_view.json", "points out of the archive"}},
		{"ratio", []string{".zip", ".tar.gz"},
			[]archiveMember{{name: "r/ASCEND_PROFILER_OUTPUT/trace_view.json", data: zeros}},
			vfs.ArchiveLimits{MaxRatio: 10}, []string{"!/r/ASCEND_PROFILER_OUTPUT/trace_view.json", "compression ratio", "MaxRatio"}},
		{"ratio of a file not read", []string{".tgz"},
			[]archiveMember{{name: "r/PROF_1/data/raw.bin", data: zeros}},
			vfs.ArchiveLimits{MaxRatio: 10}, []string{"!/r/PROF_1/data/raw.bin", "compression ratio"}},
		{"zeros at the default ratio", []string{".zip", ".tar.gz"},
			[]archiveMember{{name: "r/trace_view.json", data: make([]byte, 16<<20)}},
			vfs.ArchiveLimits{}, []string{"!/r/trace_view.json", "compression ratio"}},
		{"members", []string{".zip", ".tar.gz"}, many(10),
			vfs.ArchiveLimits{MaxMembers: 5}, []string{"more than 5 members", "MaxMembers"}},
		{"bytes", []string{".zip", ".tar.gz"},
			[]archiveMember{{name: "r/ASCEND_PROFILER_OUTPUT/trace_view.json", data: bytes.Repeat(trace, 100)}},
			vfs.ArchiveLimits{MaxBytes: 1000}, []string{"!/r/ASCEND_PROFILER_OUTPUT/trace_view.json", "more than 1000 bytes", "MaxBytes"}},
	}
	for _, tc := range cases {
		for _, ext := range tc.exts {
			t.Run(tc.name+ext, func(t *testing.T) {
				arc := filepath.Join(t.TempDir(), "bomb"+ext)
				writeArchive(t, arc, tc.members)
				_, err := parser.LoadCluster([]string{arc}, parser.LoadOptions{Archive: tc.limits})
				require.Error(t, err)
				var ae *vfs.ArchiveError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, arc, ae.Archive)
				assert.Contains(t, err.Error(), arc)
				for _, w := range tc.want {
					assert.Contains(t, err.Error(), w)
				}
			})
		}
	}

	// Inside a directory walked, a refused archive is skipped with a note.
	walked := t.TempDir()
	writeArchive(t, filepath.Join(walked, "bad.zip"), []archiveMember{{name: "../x", data: trace}})
	_, err := parser.LoadCluster([]string{walked}, parser.LoadOptions{})
	require.ErrorIs(t, err, parser.ErrNothingFound)
	in, _ := parser.Discover([]string{walked})
	require.NotNil(t, in)
	assert.Contains(t, strings.Join(in.Notes, "\n"), "skipped "+filepath.Join(walked, "bad.zip")+"!/../x")
}

// Links that stay inside the archive read as the file they name.
func TestArchiveLinksInside(t *testing.T) {
	trace := []byte(`[{"name":"x","ph":"X","ts":"1","dur":1,"pid":1,"tid":1,"args":{}}]`)
	members := []archiveMember{
		{name: "shared/tv.json", data: trace},
		{name: "r_ascend_pt/ASCEND_PROFILER_OUTPUT/", dir: true},
		{name: "r_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", symlink: "../../shared/tv.json"},
		{name: "h_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", hardlink: "shared/tv.json"},
	}
	for _, ext := range []string{".tar.gz", ".zip"} {
		arc := filepath.Join(t.TempDir(), "links"+ext)
		writeArchive(t, arc, members)
		c, err := parser.LoadCluster([]string{arc}, parser.LoadOptions{})
		require.NoError(t, err, ext)
		var dirs []string
		for _, r := range c.Ranks {
			dirs = append(dirs, r.Dir)
			assert.Equal(t, []string{"ASCEND_PROFILER_OUTPUT/trace_view.json"}, r.FilesUsed, r.Dir)
			assert.Empty(t, r.Problems, r.Dir)
		}
		want := []string{arc + "!/r_ascend_pt"}
		if ext != ".zip" { // zip has no hard links
			want = []string{arc + "!/h_ascend_pt", arc + "!/r_ascend_pt"}
		}
		assert.ElementsMatch(t, want, dirs, ext)
	}
}

// A truncated or damaged archive gives an error naming it, and no panic.
func TestArchiveTruncated(t *testing.T) {
	dir := testkit.GenerateBuiltin(t, "demo-2server-8rank", render.FormatText).Dir
	members := dirMembers(t, dir, "")
	for _, ext := range []string{".tar.gz", ".zip", ".tar"} {
		full := filepath.Join(t.TempDir(), "full"+ext)
		writeArchive(t, full, members)
		data, err := os.ReadFile(full)
		require.NoError(t, err)
		for _, cut := range []int{len(data) / 2, 10, 0} {
			arc := filepath.Join(t.TempDir(), "cut"+ext)
			require.NoError(t, os.WriteFile(arc, data[:cut], 0o644))
			_, err := parser.LoadCluster([]string{arc}, parser.LoadOptions{})
			require.Error(t, err, "%s cut at %d", ext, cut)
			assert.Contains(t, err.Error(), arc)
		}
	}
}

// BenchmarkArchive loads the 8-rank demo cluster from a .tar.gz and from a .zip.
func BenchmarkArchive(b *testing.B) {
	dir := filepath.Join("..", "fixtures", "samples", "demo-2server-8rank")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("bundled sample absent")
	}
	members := dirMembers(b, dir, "")
	var size int64
	for _, m := range members {
		size += int64(len(m.data))
	}
	for _, ext := range []string{".tar.gz", ".zip"} {
		b.Run(ext, func(b *testing.B) {
			arc := filepath.Join(b.TempDir(), "cluster"+ext)
			writeArchive(b, arc, members)
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c, err := parser.LoadCluster([]string{arc}, parser.LoadOptions{})
				if err != nil || len(c.Ranks) != 8 {
					b.Fatalf("%v, %d ranks", err, len(c.Ranks))
				}
			}
		})
	}
}
