package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeMaxLines is issue 38's bound: the README says what hcclprof is, how to install it
// and collect a profile, the first commands and the CI recipe; the manual is in docs/.
const readmeMaxLines = 250

// TestReadmeIsShort keeps README.md a README: at most readmeMaxLines lines.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	lines := strings.Count(string(b), "\n")
	if !strings.HasSuffix(string(b), "\n") {
		lines++
	}
	assert.LessOrEqual(t, lines, readmeMaxLines,
		"README.md has %d lines; move the detail into docs/ (usage.md, outputs.md, ...)", lines)
}

// TestReadmeOutputIsTheBinarys holds the output README.md shows to what the commands
// print: the bundled sample's report on a 100-column terminal, inspect's table and
// what the data supports, and the failed gate of the CI section. Each line the README
// shows must be printed, in that order; a README line starting with "  …" stands for
// lines left out. When the output's wording changes, paste the new lines into README.md.
func TestReadmeOutputIsTheBinarys(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	for _, c := range []struct {
		after string   // the README line the output block follows
		args  []string // the command, run on the bundled sample
	}{
		{"./bin/hcclprof analyze fixtures/samples/demo-2server-8rank", []string{"analyze", sample, "--width", "100"}},
		{"./bin/hcclprof inspect fixtures/samples/demo-2server-8rank", []string{"inspect", sample}},
	} {
		shown := readmeBlockAfter(t, readme, c.after)
		out, stderr, code := runCLI(t, c.args...)
		require.Equal(t, 0, code, stderr)
		assertLinesInOrder(t, shown, out, strings.Join(c.args[:1], " "))
	}
	// The CI section's failed gate: its stderr line and exit 1.
	require.Contains(t, readme, "hcclprof: gate failed: comm_share>30%\n    $ echo $?\n    1\n")
	junit := filepath.Join(t.TempDir(), "gates.xml")
	_, stderr, code := runCLI(t, "analyze", sample, "--fail-on", "comm_share>30%", "--junit", junit)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "hcclprof: gate failed: comm_share>30%\n")
}

// readmeBlockAfter returns the lines of the first fenced block after the line that
// contains after.
func readmeBlockAfter(t *testing.T, readme, after string) []string {
	t.Helper()
	i := strings.Index(readme, after)
	require.GreaterOrEqual(t, i, 0, "README.md no longer shows %q", after)
	rest := readme[i:]
	start := strings.Index(rest, "\n```\n")
	require.GreaterOrEqual(t, start, 0, "no output block after %q", after)
	rest = rest[start+len("\n```\n"):]
	end := strings.Index(rest, "\n```")
	require.GreaterOrEqual(t, end, 0, "output block after %q is not closed", after)
	return strings.Split(rest[:end], "\n")
}

// assertLinesInOrder checks that every line shown (but "  …" elisions) is a line of
// out, in the order shown.
func assertLinesInOrder(t *testing.T, shown []string, out, what string) {
	t.Helper()
	outLines := strings.Split(out, "\n")
	j := 0
	for _, line := range shown {
		if strings.HasPrefix(line, "  …") {
			continue
		}
		for j < len(outLines) && outLines[j] != line {
			j++
		}
		if !assert.Less(t, j, len(outLines), "README.md shows a line %s does not print (in this order):\n%s\n\n%s prints:\n%s", what, line, what, out) {
			return
		}
		j++
	}
}

// TestDocLinks fails on a relative link in README.md or docs/*.md to a file that does
// not exist, or to a heading (#anchor) that the target page does not have.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs, "no docs/*.md found")
	files = append(files, docs...)
	problems, links := checkDocLinks(files)
	assert.Empty(t, problems)
	assert.Greater(t, links, 20, "the README and docs link to each other")
}

// TestDocLinkChecker proves the checker sees what it must: a missing file, a missing
// heading in another page and in the same page, while good links, links inside code
// and external links pass.
func TestDocLinkChecker(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	readme := write("README.md", strings.Join([]string{
		"# Top",
		"[good](docs/a.md) [good anchor](docs/a.md#2-gates---fail-on) [self](#top)",
		"[external](https://example.com/x.md) [mail](mailto:a@b.c)",
		"[missing file](docs/nothere.md)",
		"[missing heading](docs/a.md#3-nowhere)",
		"`[in code](docs/nothere2.md)`",
		"```",
		"[in a fence](docs/nothere3.md)",
		"```",
		"",
	}, "\n"))
	a := write("docs/a.md", strings.Join([]string{
		"# Page A",
		"## 1. What's `this`? (a test)",
		"## 2. Gates: `--fail-on`",
		"## 2. Gates: `--fail-on`",
		"[dup](#2-gates---fail-on-1) [punct](#1-whats-this-a-test) [up](../README.md)",
		"[bad self](#page-b)",
		"",
	}, "\n"))
	problems, links := checkDocLinks([]string{readme, a})
	assert.Equal(t, 9, links)
	require.Len(t, problems, 3, "%v", problems)
	assert.Contains(t, problems[0], "docs/nothere.md")
	assert.Contains(t, problems[1], "#3-nowhere")
	assert.Contains(t, problems[2], "#page-b")
}

var (
	mdLink    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan  = regexp.MustCompile("`[^`]*`")
	mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// checkDocLinks returns one line per broken relative link in the Markdown files, and
// the number of relative links checked.
func checkDocLinks(files []string) (problems []string, links int) {
	anchors := map[string]map[string]bool{} // file → its headings' anchors
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, line := range proseLines(string(b)) {
			m := mdHeading.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			s := headingAnchor(m[1])
			if n := seen[s]; n > 0 {
				a[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				a[s] = true
			}
			seen[s]++
		}
		anchors[path] = a
		return a, nil
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, line := range proseLines(string(b)) {
			line = codeSpan.ReplaceAllString(line, "")
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						problems = append(problems, fmt.Sprintf("%s: link to %s: no such file", file, target))
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				a, err := anchorsOf(dest)
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s: link to %s: %v", file, target, err))
					continue
				}
				if !a[anchor] {
					problems = append(problems, fmt.Sprintf("%s: link to %s: %s has no heading #%s", file, target, dest, anchor))
				}
			}
		}
	}
	return problems, links
}

// proseLines returns the lines of a Markdown text outside fenced and indented code blocks.
func proseLines(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if strings.HasPrefix(line, "    ") && !strings.HasPrefix(trimmed, "-") && !strings.HasPrefix(trimmed, "|") {
			continue // an indented code block (list continuations start with text after "- ")
		}
		out = append(out, line)
	}
	return out
}

// headingAnchor is the anchor GitHub gives a heading: lower case, every character
// that is not a letter, digit, space, hyphen or underscore dropped, spaces made hyphens.
func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
