package driver

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"analyze", "analyze"},
		{"--format=json", "--format=json"},
		{"./runs/rank_0/trace_view.json", "./runs/rank_0/trace_view.json"},
		{"a@b:c,d%e+f", "a@b:c,d%e+f"},
		{"", "''"},
		{"two words", "'two words'"},
		{"comm_share>30%", "'comm_share>30%'"},
		{"it's", `'it'\''s'`},
		{"'", `''\'''`},
		{"$HOME", "'$HOME'"},
		{"a;rm -rf x", "'a;rm -rf x'"},
		{"`id`", "'`id`'"},
		{`back\slash`, `'back\slash'`},
		{`"dq"`, `'"dq"'`},
		{"line\nbreak", "'line\nbreak'"},
		{"*.json", "'*.json'"},
		{"~", "'~'"},
		{"#c", "'#c'"},
		{"naïve", "'naïve'"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, shellQuote(tt.in), "%q", tt.in)
	}
	assert.Equal(t, `hcclprof analyze 'my runs/x' --fail-on 'comm_share>30%'`,
		commandLine("hcclprof", []string{"analyze", "my runs/x", "--fail-on", "comm_share>30%"}))
}

// shellWords has a POSIX shell split and expand quoted words, and returns what it got.
func shellWords(t *testing.T, quoted string) []string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, err := exec.Command(sh, "-c", `printf '%s\0' `+quoted).Output()
	require.NoError(t, err, quoted)
	words := strings.Split(string(out), "\x00")
	return words[:len(words)-1]
}

// TestShellQuoteRoundTrip: sh reads each quoted argument back as the same bytes.
func TestShellQuoteRoundTrip(t *testing.T) {
	args := []string{"plain", "", "two words", "it's", "''", `"dq" and 'sq'`, "$HOME $(id) ${x}",
		"a;b && c | d > e", "`id`", "line\nbreak\n", "tab\there", `back\slash\`, "*?[a]", "~user", "#not a comment",
		"naïve ∑", "!bang", "%25 =x", "-"}
	for _, a := range args {
		assert.Equal(t, []string{a}, shellWords(t, shellQuote(a)), "%q quoted as %s", a, shellQuote(a))
	}
	got := commandLine("hcclprof", args)
	assert.Equal(t, append([]string{"hcclprof"}, args...), shellWords(t, got))
}

const sample = "../../fixtures/samples/demo-2server-8rank"

// TestRecordedCommandQuoted: the command a JSON report records, pasted into a shell,
// gives the binary the arguments it was run with (a path with a space, a quote, '$'
// and ';', and a gate with '>' and '%').
func TestRecordedCommandQuoted(t *testing.T) {
	in := filepath.Join(t.TempDir(), "it's $HOME; a run")
	require.NoError(t, os.CopyFS(in, os.DirFS(sample)))
	args := []string{"analyze", in, "--format", "json", "--fail-on", "comm_share>99%"}
	var out, md bytes.Buffer
	env := Env{Stdout: &out, Stderr: io.Discard, Args: args}
	require.NoError(t, Analyze(env, []string{in}, AnalyzeFlags{Format: "json", FailOn: []string{"comm_share>99%"}}))
	var doc struct {
		Tool struct{ Command string } `json:"tool"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	assert.Contains(t, doc.Tool.Command, `'comm_share>99%'`)
	assert.Equal(t, append([]string{"hcclprof"}, args...), shellWords(t, doc.Tool.Command))

	env = Env{Stdout: &md, Stderr: io.Discard, Args: []string{"analyze", in, "--format", "markdown"}}
	require.NoError(t, Analyze(env, []string{in}, AnalyzeFlags{Format: "markdown"}))
	assert.Contains(t, md.String(), "<sub>`hcclprof analyze '"+strings.ReplaceAll(in, "'", `'\''`)+"' --format markdown`")
}
