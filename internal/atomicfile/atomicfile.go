// Package atomicfile writes files so that no reader ever sees half of one: a file is
// written under a temporary name in its final directory and renamed into place once
// complete, and a write that fails removes the temporary file, leaving whatever was
// at the path before (or nothing) untouched. Two writers of one path at once each
// install a whole file; the last rename wins.
//
// A path that exists and is not a regular file (a terminal, a pipe, /dev/null,
// /dev/stdout) is written directly, as there is nothing to rename over; a symbolic
// link is followed, so the link stays and its target is replaced.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// File is a file being written. Write to it, then Commit to install it at its path, or
// Abort to drop it; Abort after Commit does nothing, so `defer f.Abort()` is safe.
type File struct {
	*os.File
	path   string // final path; "" when File writes the path directly
	mode   fs.FileMode
	keep   bool // the target existed: give the new file its mode
	closed bool
	done   bool
}

// Create starts writing path. The new file gets the mode that os.Create would give it
// (0666 less the umask), or the mode of the regular file it replaces.
func Create(path string) (*File, error) {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	st, err := os.Stat(target)
	switch {
	case err == nil && !st.Mode().IsRegular():
		if st.IsDir() {
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("is a directory")}
		}
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := createTemp(target)
	if err != nil {
		return nil, err
	}
	af := &File{File: f, path: target}
	if st != nil {
		af.mode, af.keep = st.Mode().Perm(), true
	}
	return af, nil
}

var counter atomic.Uint64

// createTemp makes a new hidden file beside path, with os.Create's permissions (so the
// umask applies) rather than os.CreateTemp's private ones.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var err error
	for range 100 {
		n := counter.Add(1)
		name := filepath.Join(dir, "."+base+"."+strconv.Itoa(os.Getpid())+"-"+
			strconv.FormatUint(uint64(time.Now().UnixNano())+n, 36)+".tmp")
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.Unwrap(err)}
		}
	}
	return nil, err
}

// Commit closes the file and renames it into place.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: commit after commit or abort")
	}
	err := f.close()
	if f.path == "" {
		f.done = true
		return err
	}
	if err == nil && f.keep {
		err = os.Chmod(f.File.Name(), f.mode)
	}
	if err == nil {
		err = os.Rename(f.File.Name(), f.path)
	}
	if err != nil {
		f.Abort()
		return err
	}
	f.done = true
	return nil
}

// Abort closes the file and removes it; the path keeps what it held before.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.close()
	if f.path != "" {
		os.Remove(f.File.Name())
	}
}

func (f *File) close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.File.Close()
}

// Write writes path with what write writes, atomically: on an error from write, or
// from closing or renaming the file, nothing is installed and the error is returned.
func Write(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFile is os.WriteFile, atomically (the mode is as Create's).
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
