// Package progress shows long work on stderr when it is a terminal: one line per
// phase, rewritten in place ("parsing ranks 37/64"). It prints nothing when stderr is
// not a terminal (CI logs, pipes) or when quiet, and uses no colour (so NO_COLOR holds).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Printer writes progress lines; the zero value and nil print nothing.
type Printer struct {
	mu      sync.Mutex
	w       io.Writer
	last    time.Time
	pending bool
	// now is the clock (time.Now; a test's own, so no test depends on the wall clock).
	now func() time.Time
}

// New returns a printer on w, or nil (silent) when quiet or w is not a terminal.
func New(w io.Writer, quiet bool) *Printer {
	if quiet || !IsTerminal(w) {
		return nil
	}
	return &Printer{w: w, now: time.Now}
}

// forWriter returns a printer on w whatever w is (for tests).
func forWriter(w io.Writer) *Printer { return &Printer{w: w, now: time.Now} }

// IsTerminal reports whether w is a terminal. A character device is not enough:
// /dev/null is one, and progress lines written there cost time for nothing.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Count shows "phase done/total", at most ten times a second, and always the last.
func (p *Printer) Count(phase string, done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	clock := p.now
	if clock == nil {
		clock = time.Now
	}
	now := clock()
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r%s %d/%d", phase, done, total)
	p.pending = true
	if done >= total {
		fmt.Fprint(p.w, "\n")
		p.pending = false
	}
}

// Phase shows the start of a phase without a count.
func (p *Printer) Phase(phase string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending {
		fmt.Fprint(p.w, "\n")
	}
	fmt.Fprintf(p.w, "%s…\n", phase)
	p.pending = false
}
