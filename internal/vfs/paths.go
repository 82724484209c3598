package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Files are named by path. A path of the form ARCHIVE!/MEMBER names a member of an
// archive opened with OpenShared (registered below); every other path is the
// operating system's. The helpers here (Stat, ReadDir, Open, WalkDir, and IsDir and
// IsFile over Stat) are what the readers use in place of os.Stat, os.ReadDir, os.Open
// and filepath.WalkDir, so that the same code reads a directory and an archive.

// sep follows an archive's path to name its root ("cluster.tar.gz!"); its
// members follow after a slash ("cluster.tar.gz!/rank0_ascend_pt/...").
const sep = "!"

// archives are the archives open for reading, by cleaned path: OpenShared registers
// them, Release drops them after their last use.
var archives = struct {
	sync.Mutex
	m map[string]*archiveEntry
}{m: map[string]*archiveEntry{}}

type archiveEntry struct {
	a    *Archive
	refs int
}

// OpenShared opens an archive and registers it, so that its ARCHIVE!/MEMBER paths
// resolve, or shares the one already open when it is the same file read with the
// same limits (then with the first opener's keep).
func OpenShared(p string, limits ArchiveLimits, keep KeepFunc) (*Archive, error) {
	p = filepath.Clean(p)
	limits = limits.orDefaults()
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	archives.Lock()
	defer archives.Unlock()
	if e, ok := archives.m[p]; ok && e.a.limits == limits && e.a.size == st.Size() && e.a.modTime.Equal(st.ModTime()) {
		e.refs++
		return e.a, nil
	}
	a, err := OpenArchive(p, limits, keep)
	if err != nil {
		return nil, err
	}
	archives.m[p] = &archiveEntry{a: a, refs: 1}
	return a, nil
}

// Release drops one use of a registered archive, closing it after the last.
func Release(a *Archive) {
	archives.Lock()
	defer archives.Unlock()
	e, ok := archives.m[a.path]
	if !ok || e.a != a {
		return
	}
	if e.refs--; e.refs <= 0 {
		delete(archives.m, a.path)
		a.Close()
	}
}

// Resolve splits an ARCHIVE!/MEMBER path into the registered archive and the
// member's slash path ("." for the root); ok is false for an ordinary path.
func Resolve(p string) (a *Archive, member string, ok bool) {
	for i := 0; i < len(p); i++ {
		j := strings.Index(p[i:], sep)
		if j < 0 {
			return nil, "", false
		}
		i += j
		if i+1 < len(p) && p[i+1] != '/' && p[i+1] != filepath.Separator {
			continue
		}
		if !IsArchiveName(p[:i]) {
			continue
		}
		archives.Lock()
		e, found := archives.m[filepath.Clean(p[:i])]
		archives.Unlock()
		if !found {
			continue
		}
		member = strings.Trim(filepath.ToSlash(p[i+1:]), "/")
		if member == "" {
			member = "."
		}
		return e.a, member, true
	}
	return nil, "", false
}

// InArchive reports whether a path names a member of an open archive.
func InArchive(p string) bool {
	_, _, ok := Resolve(p)
	return ok
}

// Stat is os.Stat of a path, or of an archive's member.
func Stat(p string) (fs.FileInfo, error) {
	if a, m, ok := Resolve(p); ok {
		return a.Stat(m)
	}
	return os.Stat(p)
}

// IsDir reports whether p is a directory, or an archive's.
func IsDir(p string) bool {
	st, err := Stat(p)
	return err == nil && st.IsDir()
}

// IsFile reports whether p is there and not a directory (an archive's member too).
func IsFile(p string) bool {
	st, err := Stat(p)
	return err == nil && !st.IsDir()
}

// ReadDir is os.ReadDir of a path, or of an archive's directory.
func ReadDir(p string) ([]fs.DirEntry, error) {
	if a, m, ok := Resolve(p); ok {
		return a.ReadDir(m)
	}
	return os.ReadDir(p)
}

// Open opens a path's regular file (OpenRegular), or an archive's member.
func Open(p string) (fs.File, error) {
	if a, m, ok := Resolve(p); ok {
		return a.Open(m)
	}
	return OpenRegular(p)
}

// OpenRegular opens a regular file and refuses anything else: a FIFO would block the
// open until a writer came, a device could be read forever, and a directory in a
// file's place is a damaged export. The file is checked again once open, so a swap
// between the two looks is caught too.
func OpenRegular(p string) (*os.File, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", p, fileKind(st.Mode()))
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: not a regular file (%s)", p, fileKind(st.Mode()))
		}
		return nil, err
	}
	return f, nil
}

// fileKind names the kind of a file that is not a regular one ("a FIFO").
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// WalkDir is filepath.WalkDir over a directory or an archive's directory; the
// paths given to fn are of the same kind as root.
func WalkDir(root string, fn fs.WalkDirFunc) error {
	if a, m, ok := Resolve(root); ok {
		return fs.WalkDir(a, m, func(name string, d fs.DirEntry, err error) error {
			return fn(a.display(name), d, err)
		})
	}
	return filepath.WalkDir(root, fn)
}
