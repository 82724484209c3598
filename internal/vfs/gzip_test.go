package vfs_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/vfs"
)

func gzipped(t *testing.T, parts ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, p := range parts { // one gzip member each
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// readMaybeGzip writes data to a file, reads it through OpenMaybeGzip as a trace
// reader does (what it holds, then GzipRest when compressed) and returns what was read,
// whether it was compressed, and the error of the open, the read or the rest.
func readMaybeGzip(t *testing.T, data []byte, head int) (string, bool, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rank0.pt.trace.json.gz")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rd, closeFn, gz, err := vfs.OpenMaybeGzip(p)
	if err != nil {
		return "", false, err
	}
	defer closeFn()
	b, err := io.ReadAll(io.LimitReader(rd, int64(head)))
	if err == nil && gz {
		err = vfs.GzipRest(rd, p)
	}
	return string(b), gz, err
}

func TestOpenMaybeGzip(t *testing.T) {
	const doc = `{"traceEvents": []}`
	got, gz, err := readMaybeGzip(t, []byte(doc), len(doc))
	if err != nil || gz || got != doc {
		t.Errorf("plain file: %q, gz %v, %v", got, gz, err)
	}
	// Whitespace after the JSON is not data after it.
	got, gz, err = readMaybeGzip(t, gzipped(t, doc+"\n \t"), len(doc))
	if err != nil || !gz || got != doc {
		t.Errorf("gzip file: %q, gz %v, %v", got, gz, err)
	}
	damaged := gzipped(t, doc+strings.Repeat(" ", 4096))
	damaged = damaged[:len(damaged)-4] // the trailer's length cut off
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"a second member", gzipped(t, doc, "[1, 2]"), "rank0.pt.trace.json.gz: gzip: 5 bytes of data after the trace's JSON"},
		{"a bad header", []byte{0x1f, 0x8b, 1, 2, 3}, "rank0.pt.trace.json.gz: byte 0: gzip: unexpected EOF"},
		{"a damaged end", damaged, "rank0.pt.trace.json.gz: gzip: unexpected EOF: the file is damaged, so what was read of it may be wrong"},
	} {
		_, _, err := readMaybeGzip(t, tc.data, len(doc))
		var se *jsonx.SyntaxError
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) || !errors.As(err, &se) {
			t.Errorf("%s: %v, want a *jsonx.SyntaxError ending %q", tc.name, err, tc.want)
		}
	}
	// A run of one byte (about 1030:1) is refused once it passes the archives' ratio,
	// not read on to its end.
	_, _, err = readMaybeGzip(t, gzipped(t, strings.Repeat(" ", 64<<20)), 64<<20)
	if err == nil || !strings.HasPrefix(err.Error(), "gzip: decompresses to more than 1000 times its size") {
		t.Errorf("bomb: %v", err)
	}
}
