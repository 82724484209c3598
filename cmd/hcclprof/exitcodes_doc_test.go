package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/internal/realdata"
)

// TestExitCodeTable holds docs/exit-codes.md's table to what the commands do: every
// real dataset (when the shared data is present), and every built-in scenario in
// its default format (torch_npu's text export; Kineto for an NVIDIA product) and, for
// the Ascend ones, as msprof-analyze's cluster output written from it (not with
// -short: generating them all takes a minute or two).
func TestExitCodeTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "exit-codes.md"))
	require.NoError(t, err)
	var header []string
	rows := 0
	listed := map[string]bool{}
	root := t.TempDir() // outlives the subtests: each built-in is generated once
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) < 2 || !strings.HasPrefix(line, "|") {
			continue
		}
		if cells[0] == "input" {
			header = cells[1:]
			continue
		}
		kind, name, ok := strings.Cut(cells[0], ":")
		if !ok || header == nil {
			continue
		}
		require.Len(t, cells[1:], len(header), line)
		rows++
		listed[cells[0]] = true
		t.Run(cells[0], func(t *testing.T) {
			var input string
			switch kind {
			case "realdata":
				input = realdata.Path(t, name)
			case "builtin", "cluster-output":
				if testing.Short() {
					t.Skip("generating the built-in scenarios is left out with -short")
				}
				dir := filepath.Join(root, kind, name)
				args := []string{"gen", name, "-o", dir}
				if kind == "cluster-output" {
					args = append(args, "--cluster-output")
				}
				_, stderr, code := runCLI(t, args...)
				require.Equal(t, 0, code, stderr)
				input = dir
				if kind == "cluster-output" {
					input = filepath.Join(dir, "cluster_analysis_output")
				}
			case "msprof-analyze":
				input = msprofAnalyzeOutput(t, name)
			default:
				t.Fatalf("unknown input kind %q", kind)
			}
			for i, command := range header {
				want, err := strconv.Atoi(cells[1+i])
				require.NoError(t, err, line)
				_, stderr, code := runCLI(t, command, input)
				assert.Equal(t, want, code, "%s %s: %s", command, input, stderr)
			}
		})
	}
	require.Greater(t, rows, 20, "rows read from the table")
	for _, name := range scenario.BuiltinNames() {
		assert.True(t, listed["builtin:"+name], "built-in %s has no row in docs/exit-codes.md", name)
		sc, err := scenario.Builtin(name)
		require.NoError(t, err)
		if sc.NVIDIA() {
			// An NVIDIA job is written as Kineto traces only: gen refuses --cluster-output
			// (msprof-analyze's output is Ascend's), so it has no such row.
			assert.False(t, listed["cluster-output:"+name], "NVIDIA built-in %s has a cluster-output row, which gen refuses", name)
			continue
		}
		assert.True(t, listed["cluster-output:"+name], "built-in %s's cluster output has no row in docs/exit-codes.md", name)
	}
}

// msprofAnalyzeOutput runs msprof-analyze on a copy of a real dataset as a row of the
// table names it ("DATASET" for `-m all`, "DATASET -m R1+R2" for recipes run one after
// the other into one output directory, "... --export_type notebook") and returns
// the output directory. It skips when msprof-analyze is not installed: set
// HCCLPROF_MSPROF_ANALYZE to its command (../shared/tools/peer-setup.sh installs it),
// or put it on PATH.
func msprofAnalyzeOutput(t *testing.T, row string) string {
	t.Helper()
	tool := os.Getenv("HCCLPROF_MSPROF_ANALYZE")
	if tool == "" {
		tool, _ = exec.LookPath("msprof-analyze")
	}
	if tool == "" {
		t.Skip("msprof-analyze is not installed (set HCCLPROF_MSPROF_ANALYZE, or see ../shared/tools/peer-setup.sh)")
	}
	fields := strings.Fields(row)
	src := realdata.Path(t, fields[0])
	recipes, extra := []string{"all"}, []string(nil)
	for i := 1; i+1 < len(fields); i += 2 {
		switch fields[i] {
		case "-m":
			recipes = strings.Split(fields[i+1], "+")
		default:
			extra = append(extra, fields[i], fields[i+1])
		}
	}
	in := filepath.Join(t.TempDir(), fields[0])
	require.NoError(t, os.CopyFS(in, os.DirFS(src)))
	out := filepath.Join(t.TempDir(), "out")
	for _, r := range recipes {
		cmd := exec.Command(tool, append([]string{"-m", r, "-d", in, "-o", out}, extra...)...)
		// It prints progress bars by the thousand: only its failure is shown.
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s -m %s: %s", tool, r, lastLines(string(b), 20))
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
