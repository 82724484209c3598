package driver

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The table of outputs gives each command its formats, default, flag and help, and
// refuses any other format with exit 2 before anything is read.
func TestOutputsTable(t *testing.T) {
	assert.Equal(t, []string{"text", "json", "markdown", "html"}, Formats("analyze"))
	assert.Equal(t, []string{"text", "json", "markdown"}, Formats("diff"))
	assert.Equal(t, []string{"parquet", "csv", "trace"}, Formats("export"))
	for _, c := range []string{"advise", "calibrate", "inspect", "model", "whatif"} {
		assert.Equal(t, []string{"text", "json"}, Formats(c), c)
		assert.Equal(t, "text", DefaultFormat(c), c)
		assert.Equal(t, "format", FormatFlag(c), c)
	}
	assert.Nil(t, Formats("gen"), "gen's formats are the generator's")
	assert.Equal(t, "", DefaultFormat("export"), "--to must be given")
	assert.Equal(t, "to", FormatFlag("export"))
	assert.Equal(t, "text, json, markdown or html (html: one self-contained file: -o report.html)", FormatHelp("analyze"))
	assert.Equal(t, "parquet, csv or trace", FormatHelp("export"))

	o, err := outputOf("analyze", "")
	require.NoError(t, err)
	assert.Equal(t, "text", o.name, "no format is the default")
	for _, tc := range []struct{ command, format, msg string }{
		{"analyze", "yaml", `unknown --format "yaml": want text, json, markdown or html`},
		{"inspect", "markdown", `unknown --format "markdown": want text or json`},
		{"export", "", `unknown --to "": want parquet, csv or trace`},
		{"export", "text", `unknown --to "text": want parquet, csv or trace`},
	} {
		var stderr bytes.Buffer
		assert.Equal(t, ExitUsage, ExitCode(CheckFormat(tc.command, tc.format), &stderr), tc.command+" "+tc.format)
		assert.Equal(t, "hcclprof: "+tc.msg+"\n", stderr.String())
	}
}

// Every command writes every format its row names (none falls back on another), and
// refuses one it does not before reading its input.
func TestEveryOutputIsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the bundled sample once per command and format")
	}
	scratch := t.TempDir()
	run := map[string]func(env Env, format string) error{
		"analyze": func(env Env, f string) error { return Analyze(env, []string{sample}, AnalyzeFlags{Format: f}) },
		"diff":    func(env Env, f string) error { return Diff(env, []string{sample, sample}, DiffFlags{Format: f}) },
		"advise":  func(env Env, f string) error { return Advise(env, []string{sample}, AdviseFlags{Format: f}) },
		"calibrate": func(env Env, f string) error {
			return Calibrate(env, []string{sample}, CalibrateFlags{Format: f})
		},
		"inspect": func(env Env, f string) error { return Inspect(env, []string{sample}, InspectFlags{Format: f}) },
		"model": func(env Env, f string) error {
			return Model(env, ModelFlags{Format: f, Op: "allreduce", Product: "a2", Servers: 2, Size: "64MiB"})
		},
		"whatif": func(env Env, f string) error {
			return WhatIf(env, []string{sample}, WhatIfFlags{Format: f, Sets: []string{"overlap=0.9"}, BackwardShare: 2.0 / 3})
		},
		"export": func(env Env, f string) error {
			return Export(env, []string{sample}, ExportFlags{To: f, Output: filepath.Join(scratch, f)})
		},
	}
	for command, write := range run {
		formats := Formats(command)
		require.NotEmpty(t, formats, command)
		for _, f := range formats {
			var out, errOut bytes.Buffer
			err := write(Env{Stdout: &out, Stderr: &errOut}, f)
			require.NoError(t, err, "%s --format %s: %s", command, f, errOut.String())
			if command != "export" {
				assert.NotEmpty(t, out.String(), "%s --format %s", command, f)
			}
		}
		var out, errOut bytes.Buffer
		err := write(Env{Stdout: &out, Stderr: &errOut}, "yaml")
		assert.Equal(t, ExitUsage, ExitCode(err, &errOut), command)
		assert.Empty(t, out.String(), command)
	}
}
