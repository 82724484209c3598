package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The summary readers' trees share their memory from file to file (jsonx.WithTree): what
// a reader returned must not change when later files are read, from files (sized
// buffers) or from streams, nor when a later file fails.
func TestTreeMemoryReusedSafely(t *testing.T) {
	comm := `{"step50": {"p2p": {` + cjSend + `, ` + cjTotal + `}, "collective": {` + cjOp0 + `, ` + cjTotal + `}}}`
	matrix := `{"step50": {"p2p": {` + cmP2PTotal + `}, "collective": {` + cmTop1 + `}}}`
	dir := t.TempDir()
	commFile := filepath.Join(dir, "communication.json")
	require.NoError(t, os.WriteFile(commFile, []byte(comm), 0o644))

	f, err := os.Open(commFile)
	require.NoError(t, err)
	first, err := parseCommunicationJSON(f, commFile)
	f.Close()
	require.NoError(t, err)
	want, err := parseCommunicationJSON(strings.NewReader(comm), "again.json")
	require.NoError(t, err)
	require.Equal(t, want, first)

	firstLinks, err := parseCommMatrixJSON(strings.NewReader(matrix), "m.json")
	require.NoError(t, err)
	wantLinks, err := parseCommMatrixJSON(strings.NewReader(matrix), "m2.json")
	require.NoError(t, err)
	// Many other files through the same parsers, some of them damaged, some big.
	other := strings.ReplaceAll(strings.ReplaceAll(comm, "586", "999"), "step50", "step51")
	for i := 0; i < 20; i++ {
		_, _ = parseCommunicationJSON(strings.NewReader(other), "other.json")
		_, _ = parseCommMatrixJSON(strings.NewReader(strings.ReplaceAll(matrix, "HCCS", "RDMA")), "other.json")
		_, _ = parseCommunicationJSON(strings.NewReader(other[:len(other)/2]), "cut.json")
		_, _ = parseCommMatrixJSON(strings.NewReader(`{"step1": {"collective": {`+strings.Repeat(`"x@1": {"0-1": {}}, `, 2000)+`"y@1": {}}}}`), "big.json")
	}
	assert.Equal(t, want, first)
	assert.Equal(t, wantLinks, firstLinks)
}
