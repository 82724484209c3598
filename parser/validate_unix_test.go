//go:build unix

package parser

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// A FIFO, a directory or a device in a file's place is refused at once, never opened
// for reading (a FIFO would block the open until a writer came).
func TestOnlyRegularFilesAreOpened(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt")
	for _, name := range []string{"trace_view.json", "step_trace_time.csv"} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "rank0_ascend_pt")
			require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
			out := filepath.Join(dst, "ASCEND_PROFILER_OUTPUT")
			require.NoError(t, os.Chmod(out, 0o755))
			p := filepath.Join(out, name)
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			done := make(chan *profile.Cluster)
			go func() {
				c, _ := LoadCluster([]string{dst}, LoadOptions{})
				done <- c
			}()
			select {
			case c := <-done:
				require.NotNil(t, c)
				require.Len(t, c.Ranks, 1)
				assert.True(t, c.Ranks[0].Incomplete())
				assert.Contains(t, strings.Join(c.Ranks[0].Problems, "; "), name+": not a regular file (a FIFO)")
			case <-time.After(20 * time.Second):
				t.Fatal("a FIFO in place of " + name + " blocked the load")
			}
		})
	}
	_, err := vfs.Open(t.TempDir())
	assert.ErrorContains(t, err, "not a regular file (a directory)")
}
