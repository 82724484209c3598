package parser

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKinetoGzipRatioBound: a compressed Kineto trace is held to the archives' ratio
// (1000:1 from 1 MiB on): a run of spaces inside it (about 1030:1) is refused, naming
// the file, where it crosses the ratio, not read on to its end.
func TestKinetoGzipRatioBound(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"schemaVersion": 1, "traceEvents": [` + strings.Repeat(" ", 64<<20) + `]}`))
	zw.Close()
	path := filepath.Join(t.TempDir(), "bomb.pt.trace.json.gz")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	_, err := openKineto(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "decompresses to more than 1000 times its size")
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Less(t, se.Offset, int64(2<<20), "stopped at %d bytes", se.Offset)
}
