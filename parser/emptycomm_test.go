package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// TestEmptyCommunicationJSONFlagged: a communication.json of no op ({}, or steps of
// empty collective and p2p maps) beside a rank that ran HCCL ops has lost its
// communication data: the rank is incomplete, naming the file. Its ops were put in a
// group named after the id in their names ("586"), which no other rank shares, and
// the diagnosis moved to it with exit 0.
func TestEmptyCommunicationJSONFlagged(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	for _, body := range []string{`{}`, `{"step50": {"p2p": {}, "collective": {}}}`} {
		root := t.TempDir()
		require.NoError(t, os.CopyFS(root, os.DirFS(src)))
		comm := filepath.Join(root, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "communication.json")
		require.NoError(t, os.WriteFile(comm, []byte(body), 0o644))
		c, err := LoadCluster([]string{root}, LoadOptions{})
		require.NoError(t, err)
		require.Len(t, c.Ranks, 2)
		assert.Contains(t, strings.Join(c.Ranks[0].Problems, "\n"), "communication.json holds no communication op, but the rank ran 4 HCCL op(s)", body)
		assert.Empty(t, c.Ranks[1].Problems, body)
	}
}
