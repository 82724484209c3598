package progress

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPrinter(t *testing.T) {
	var b bytes.Buffer
	p := forWriter(&b)
	clock := time.Unix(1000, 0)
	p.now = func() time.Time { return clock }
	p.Count("parsing ranks", 1, 4)
	clock = clock.Add(99 * time.Millisecond)
	p.Count("parsing ranks", 2, 4) // within 100 ms: skipped
	clock = clock.Add(1 * time.Millisecond)
	p.Count("parsing ranks", 3, 4) // 100 ms on: shown
	p.Count("parsing ranks", 4, 4) // the last always shows
	p.Phase("analysing")
	assert.Equal(t, "\rparsing ranks 1/4\rparsing ranks 3/4\rparsing ranks 4/4\nanalysing…\n", b.String())
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
