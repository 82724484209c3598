package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/testkit"
)

// Most tests run the command line in-process (runCLI: run with the test's arguments,
// stdout and stderr); a few run it as a process (runBin) for what only a process
// shows: its real exit status, processes writing into one directory at once. That
// process is this test binary, started again with cliEnv set: its TestMain then
// runs the program's main and nothing else, so no second binary is built (building
// and linking it was a third of the package's time).

// cliEnv, set to 1, makes the test binary the program.
const cliEnv = "HCCLPROF_TEST_BINARY_IS_THE_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		main()
		return
	}
	// The processes the tests start (binary) inherit it.
	os.Setenv(cliEnv, "1")
	testkit.Main(m) // the temporary directories in memory, as every package's with clusters
}

// binary is the program for the subprocess tests: this test binary, which runs
// main when started with cliEnv (set for every process the tests start).
func binary(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	require.NoError(t, err)
	return p
}

// runBin runs the built binary.
func runBin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runBinEnv(t, nil, args...)
}

// runBinEnv runs the binary with the test's environment plus env ("NAME=value").
// GITHUB_STEP_SUMMARY is dropped unless env sets it, so that tests run inside
// GitHub Actions do not append their reports to the real job summary, and COLUMNS,
// so that the text output is the full layout whatever the test's terminal.
func runBinEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITHUB_STEP_SUMMARY=") && !strings.HasPrefix(kv, "COLUMNS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return o.String(), e.String(), 0
}

// runCLI runs the command line in-process, as the binary would.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// cliTimeout bounds one in-process run: a FIFO or a damaged file must not hang a
// command.
const cliTimeout = 60 * time.Second

// runCLIEnv is runCLI with the environment variables of env ("NAME=value") set for
// the run; GITHUB_STEP_SUMMARY and COLUMNS are empty unless env sets them (see
// runBinEnv). A run that does not return within cliTimeout fails the test, and a
// panic is reported on stderr as the binary would print it.
func runCLIEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("COLUMNS", "")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var o, e bytes.Buffer
	done := make(chan int, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(&e, "panic: %v\n\n%s", p, debug.Stack())
				done <- 2
			}
		}()
		done <- run(args, &o, &e)
	}()
	select {
	case code = <-done:
	case <-time.After(cliTimeout):
		t.Fatalf("%v: no answer in %s (hung)", args, cliTimeout)
	}
	return o.String(), e.String(), code
}
