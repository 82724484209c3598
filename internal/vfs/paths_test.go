package vfs_test

import (
	"archive/zip"
	"os"
	"path/filepath"
	"testing"

	"github.com/hcclprof/hcclprof/internal/vfs"
)

// IsDir and IsFile answer alike for a directory and for an archive opened with
// OpenShared, whose members are named ARCHIVE!/MEMBER.
func TestIsDirIsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "rank0", "ASCEND_PROFILER_OUTPUT"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rank0", "profiler_info_0.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(dir, "cluster.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, _ := zw.Create("rank0/profiler_info_0.json")
	_, _ = w.Write([]byte(`{"rank_id": 0}`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	a, err := vfs.OpenShared(zipPath, vfs.ArchiveLimits{}, keepJSONAndDBs)
	if err != nil {
		t.Fatal(err)
	}
	defer vfs.Release(a)

	for _, tc := range []struct {
		path          string
		isDir, isFile bool
	}{
		{filepath.Join(dir, "rank0"), true, false},
		{filepath.Join(dir, "rank0", "ASCEND_PROFILER_OUTPUT"), true, false},
		{filepath.Join(dir, "rank0", "profiler_info_0.json"), false, true},
		{filepath.Join(dir, "rank0", "missing.json"), false, false},
		{filepath.Join(dir, "rank0", "profiler_info_0.json", "below"), false, false},
		{a.Root() + "/rank0", true, false},
		{a.Root() + "/rank0/profiler_info_0.json", false, true},
		{a.Root() + "/rank0/missing.json", false, false},
	} {
		if got := vfs.IsDir(tc.path); got != tc.isDir {
			t.Errorf("IsDir(%s) = %v, want %v", tc.path, got, tc.isDir)
		}
		if got := vfs.IsFile(tc.path); got != tc.isFile {
			t.Errorf("IsFile(%s) = %v, want %v", tc.path, got, tc.isFile)
		}
	}
}
