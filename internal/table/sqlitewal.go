package table

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hcclprof/hcclprof/internal/vfs"
)

// A database in WAL mode (torch_npu writes its db so) keeps its latest committed
// transactions in NAME-wal beside it until a checkpoint copies them into the file; a
// profiler killed before it closes the db leaves them there. Opened immutable, as
// inputs are (sqliteURI), SQLite ignores the -wal and those rows are silently absent.
// Opened normally, it would create NAME-shm and may checkpoint into the input. So a
// db with a -wal is copied, with its -wal, into a private temporary directory, and the
// copy is opened normally: SQLite reads the committed frames as it would beside the
// original, and nothing is written beside the input.

// walCopy copies the database at path and its -wal into a new temporary directory
// when the -wal holds anything, and returns the copy's path and the directory (to
// remove when done); "" for both when there is no -wal to read.
func walCopy(path string) (copyPath, dir string, err error) {
	wal := path + "-wal"
	st, err := os.Stat(wal)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return "", "", nil
	}
	dir, err = os.MkdirTemp("", "hcclprof-db-")
	if err != nil {
		return "", "", err
	}
	copyPath = filepath.Join(dir, "profile.db")
	for _, c := range [][2]string{{path, copyPath}, {wal, copyPath + "-wal"}} {
		if err := copyRegular(c[0], c[1]); err != nil {
			os.RemoveAll(dir)
			return "", "", fmt.Errorf("copying %s to read its write-ahead log: %w", filepath.Base(c[0]), err)
		}
	}
	return copyPath, dir, nil
}

// copyRegular copies the regular file src to a new file dst.
func copyRegular(src, dst string) error {
	in, err := vfs.OpenRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// sqliteCopyURI is the URI that opens a private copy (walCopy's) read-write, so that
// SQLite reads its -wal.
func sqliteCopyURI(path string) string {
	return sqliteFileURI(filepath.ToSlash(path), "?mode=rw")
}
