package main

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// digests maps every regular file under dir to its SHA-256.
func digests(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = sha256.Sum256(b)
		return nil
	}))
	return out
}

// TestOutputOverInputRefused runs every command with an output path naming a file the
// run reads (directly, through "..", a symbolic link, a hard link, or a table's file in
// the export directory): each is refused with exit 2 and no input changes.
func TestOutputOverInputRefused(t *testing.T) {
	root := t.TempDir()
	cluster := filepath.Join(root, "cluster")
	require.NoError(t, os.CopyFS(cluster, os.DirFS(sample)))
	rankDir := filepath.Join(cluster, "node0_3000000_20250109074733000_ascend_pt")
	out := filepath.Join(rankDir, "ASCEND_PROFILER_OUTPUT")
	trace := filepath.Join(out, "trace_view.json")
	comm := filepath.Join(out, "communication.json")
	// A symbolic link to a rank directory, a hard link to a trace.
	link := filepath.Join(root, "rank-link")
	require.NoError(t, os.Symlink(rankDir, link))
	hard := filepath.Join(root, "hard.json")
	require.NoError(t, os.Link(trace, hard))
	// Export directories whose table files are links to inputs: writing steps.csv or
	// ops.parquet would truncate the input through the link.
	csvDir := filepath.Join(root, "csv")
	require.NoError(t, os.MkdirAll(csvDir, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(out, "step_trace_time.csv"), filepath.Join(csvDir, "steps.csv")))
	pqDir := filepath.Join(root, "pq")
	require.NoError(t, os.MkdirAll(pqDir, 0o755))
	require.NoError(t, os.Symlink(trace, filepath.Join(pqDir, "ops.parquet")))
	report := filepath.Join(root, "report.txt")

	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"analyze -o the trace given", []string{"analyze", trace, "-o", trace}, "-o " + trace + " is an input of this run"},
		{"analyze -o a trace inside the directory", []string{"analyze", cluster, "-o", trace}, "is an input of this run"},
		{"analyze --junit a file inside the directory", []string{"analyze", cluster, "--junit", comm, "--fail-on", "comm_share>1%"}, "--junit " + comm + " is an input"},
		{"analyze -o through ..", []string{"analyze", cluster, "-o", filepath.Join(out, "..", "ASCEND_PROFILER_OUTPUT", "trace_view.json")}, "is an input of this run"},
		{"analyze -o through a symbolic link", []string{"analyze", cluster, "--format", "html", "-o", filepath.Join(link, "ASCEND_PROFILER_OUTPUT", "communication.json")}, "is an input of this run"},
		{"analyze -o a hard link", []string{"analyze", cluster, "-o", hard}, "is an input of this run"},
		{"analyze -o and --junit the same file", []string{"analyze", cluster, "-o", report, "--junit", report}, "-o and --junit name the same file"},
		{"export trace -o the trace given", []string{"export", trace, "--to", "trace", "-o", trace}, "is an input of this run"},
		{"export trace -o a trace inside the directory", []string{"export", cluster, "--to", "trace", "-o", trace}, "is an input of this run"},
		{"export csv a table over an input", []string{"export", cluster, "--to", "csv", "-o", csvDir}, "-o " + filepath.Join(csvDir, "steps.csv") + " is an input"},
		{"export parquet a table over an input", []string{"export", cluster, "--to", "parquet", "-o", pqDir}, "-o " + filepath.Join(pqDir, "ops.parquet") + " is an input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := digests(t, root)
			stdout, stderr, code := runCLI(t, tc.args...)
			assert.Equal(t, 2, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tc.stderr)
			assert.Empty(t, stdout, "nothing is written before the refusal")
			assert.Equal(t, before, digests(t, root), "no file changed")
			_, err := os.Stat(report)
			assert.True(t, os.IsNotExist(err), "no output created")
		})
	}

	// Outputs beside the inputs, not over them, are written.
	inside := filepath.Join(cluster, "report.txt")
	_, stderr, code := runCLI(t, "analyze", cluster, "-o", inside, "--junit", filepath.Join(out, "gates.xml"))
	require.Equal(t, 0, code, stderr)
	_, stderr, code = runCLI(t, "export", cluster, "--to", "trace", "-o", filepath.Join(cluster, "analysis.json"))
	require.Equal(t, 0, code, stderr)
	_, stderr, code = runCLI(t, "export", cluster, "--to", "csv", "-o", rankDir)
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(rankDir, "ops.csv"))
}
