package vfs_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcclprof/hcclprof/internal/vfs"
)

// keepJSONAndDBs keeps the JSON members, and the databases to be read at random, as
// a profile reader would.
func keepJSONAndDBs(member string) (keep, seekable bool) {
	db := path.Ext(member) == ".db"
	return db || path.Ext(member) == ".json", db
}

// FuzzArchive feeds arbitrary bytes to the archive reader as each archive kind: it
// must never panic, errors name the archive, and whatever it accepts can be walked and
// read within the limits.
func FuzzArchive(f *testing.F) {
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("rank0_ascend_pt/profiler_info_0.json")
	_, _ = w.Write([]byte(`{"rank_id": 0}`))
	_ = zw.Close()
	f.Add(zb.Bytes(), uint8(0))
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	_ = tw.WriteHeader(&tar.Header{Name: "a/b.json", Mode: 0o644, Size: 2})
	_, _ = tw.Write([]byte("[]"))
	_ = tw.WriteHeader(&tar.Header{Name: "a/link", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"})
	_ = tw.Close()
	f.Add(tb.Bytes(), uint8(1))
	var gb bytes.Buffer
	gw := gzip.NewWriter(&gb)
	_, _ = gw.Write(tb.Bytes())
	_ = gw.Close()
	f.Add(gb.Bytes(), uint8(2))
	suffixes := []string{".zip", ".tar", ".tar.gz"}
	limits := vfs.ArchiveLimits{MaxBytes: 1 << 20, MaxMembers: 100, MaxRatio: 1000}
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		p := filepath.Join(t.TempDir(), "in"+suffixes[int(kind)%len(suffixes)])
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := vfs.OpenArchive(p, limits, keepJSONAndDBs)
		if err != nil {
			if !strings.Contains(err.Error(), filepath.Base(p)) {
				t.Fatalf("error does not name the archive: %v", err)
			}
			return
		}
		defer a.Close()
		_ = fs.WalkDir(a, ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if strings.HasPrefix(name, "../") || strings.HasPrefix(name, "/") {
				t.Fatalf("a member escapes the archive: %q", name)
			}
			if r, err := a.Open(name); err == nil {
				_, _ = io.Copy(io.Discard, r)
				r.Close()
			}
			return nil
		})
	})
}
