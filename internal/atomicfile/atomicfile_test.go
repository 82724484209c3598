package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// TestConcurrentWritersNeverTear: two writers of one path at once, and a reader
// between them, only ever see one writer's whole file.
func TestConcurrentWritersNeverTear(t *testing.T) {
	path := filepath.Join(t.TempDir(), "same.json")
	a := bytes.Repeat([]byte("a"), 1<<20)
	b := bytes.Repeat([]byte("b"), 1<<19)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var torn error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
				torn = errors.New("a reader saw a torn file")
				return
			}
		}
	}()
	var writers sync.WaitGroup
	for i := range 20 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			data := a
			if i%2 == 1 {
				data = b
			}
			if err := Write(path, func(w io.Writer) error {
				// Write in pieces, as an encoder does.
				for off := 0; off < len(data); off += 4096 {
					if _, err := w.Write(data[off:min(off+4096, len(data))]); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	if torn != nil {
		t.Fatal(torn)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestFailedWriteLeavesOldFile: a write that fails installs nothing and leaves no
// temporary file; the file that was there stays whole.
func TestFailedWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Errorf("file = %q, want the old one", got)
	}
	if err := Write(filepath.Join(dir, "new.json"), func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	// A replaced file keeps its mode.
	if err := WriteFile(path, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
}

// TestSymlinkAndDevice: a link is followed (it stays a link), and a device is written
// in place.
func TestSymlinkAndDevice(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links and /dev/null")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	os.WriteFile(target, []byte("old"), 0o644)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced: %v %v", st, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target = %q", got)
	}
	if err := WriteFile(os.DevNull, []byte("x")); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
}
