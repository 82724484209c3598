//go:build !unix

package main

import "testing"

// mkfifo skips: there are no FIFOs to make here.
func mkfifo(t *testing.T, _ string) {
	t.Skip("no FIFOs on this system")
}
