package driver

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 36: error lines on stderr name files and ops from the profiles and were
// printed raw: a U+202E in a name reversed the rest of the line on a terminal.
func TestExitMessagesAreSafe(t *testing.T) {
	var b bytes.Buffer
	code := ExitCode(&exitError{code: ExitIncomplete, err: errors.New("input incomplete (rank 0: hcom_allReduce\u202e_1: bad\x1b[31m)")}, &b)
	assert.Equal(t, ExitIncomplete, code)
	assert.NotContains(t, b.String(), "\u202e")
	assert.NotContains(t, b.String(), "\x1b")
	assert.Contains(t, b.String(), "hcom_allReduce\uFFFD_1")
	b.Reset()
	ExitCode(errors.New("bad --fail-on \"a\u202eb\""), &b)
	assert.NotContains(t, b.String(), "\u202e")
}
