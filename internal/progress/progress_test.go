package progress

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrinter(t *testing.T) {
	var b bytes.Buffer
	p := ForWriter(&b)
	p.Count("parsing ranks", 1, 3)
	p.Count("parsing ranks", 2, 3) // within 100 ms: skipped
	p.Count("parsing ranks", 3, 3) // the last always shows
	p.Phase("analysing")
	assert.Equal(t, "\rparsing ranks 1/3\rparsing ranks 3/3\nanalysing…\n", b.String())
	assert.NotContains(t, b.String(), "\x1b[", "no colour")
}

func TestSilentWhenNotATerminal(t *testing.T) {
	var b bytes.Buffer
	assert.Nil(t, New(&b, false), "a buffer is not a terminal")
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err == nil {
		assert.Nil(t, New(f, false), "a file is not a terminal")
		f.Close()
	}
	var nilP *Printer
	nilP.Count("x", 1, 1) // no panic, nothing written
	nilP.Phase("x")
	assert.Nil(t, New(os.Stderr, true), "quiet")
}
