package progress

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 38: /dev/null, a character device, was taken for a terminal. Neither it, a
// file nor a buffer is one.
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, IsTerminal(null), "/dev/null")
	f, err := os.Create(t.TempDir() + "/x")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f))
	assert.False(t, IsTerminal(&bytes.Buffer{}))
	assert.Nil(t, New(null, false), "no progress lines into /dev/null")
}
