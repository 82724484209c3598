package parser

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// Every format a rank can carry is read by one registered format, and exactly one
// format is the default that loads the inputs no other reads.
func TestInputFormatsCoverEveryFormat(t *testing.T) {
	readers := map[profile.Format]string{}
	defaults := 0
	for _, f := range inputFormats {
		for _, g := range f.formats {
			assert.Empty(t, readers[g], "%s is read by %s and %s", g, readers[g], f.name)
			readers[g] = f.name
		}
		if f.isDefault {
			assert.NotNil(t, f.load, "%s reads the inputs no other format reads", f.name)
			defaults++
		}
		assert.True(t, f.file != nil || f.dir != nil, "%s is never detected", f.name)
	}
	assert.Equal(t, 1, defaults)
	for _, g := range []profile.Format{profile.FormatTorchNPUText, profile.FormatMsprof, profile.FormatMsprofDB,
		profile.FormatTorchNPUDB, profile.FormatKineto, profile.FormatMindSporeText, profile.FormatMindSporeDB,
		profile.FormatMsprofAnalyze} {
		assert.NotEmpty(t, readers[g], "no registered format reads %s", g)
		assert.True(t, knownFormat(g), g)
	}
	assert.False(t, knownFormat(profile.FormatSummary), "a summary names the format it was summarised from")
	assert.False(t, knownFormat("parquet"))
}

// A format is one registration: once in inputFormats, discovery finds its files in a
// walked directory, LoadCluster reads them with its load, and the result is
// normalised like any other (here, an op that ends before it starts is dropped).
func TestRegisteredFormatIsFoundAndLoaded(t *testing.T) {
	const suffix = ".testformat"
	testFormat := &inputFormat{
		name: "test format",
		dir: func(d *discovery, path string) bool {
			entries, _ := vfs.ReadDir(path)
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), suffix) {
					d.add(RankInput{Rank: 5, Dir: filepath.Join(path, e.Name()), Files: []string{filepath.Join(path, e.Name())}})
				}
			}
			return false
		},
		load: func(ri RankInput) *profile.Rank {
			return &profile.Rank{Rank: ri.Rank, Dir: ri.Dir, Format: "test", HasTimeline: true, FilesUsed: []string{filepath.Base(ri.Dir)},
				Timeline: profile.Timeline{CommOps: []profile.CommOp{
					{Name: "hcom_allReduce__1_0_1", Interval: profile.Interval{StartNs: 10, EndNs: 20}},
					{Name: "hcom_allReduce__1_1_1", Interval: profile.Interval{StartNs: 30, EndNs: 25}},
				}}}
		},
	}
	saved := inputFormats
	inputFormats = append([]*inputFormat{testFormat}, inputFormats...)
	t.Cleanup(func() { inputFormats = saved })

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rank5"+suffix), []byte("x"), 0o644))
	c, err := LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	assert.Equal(t, 5, r.Rank)
	assert.Equal(t, profile.Format("test"), r.Format)
	require.Len(t, r.CommOps, 1)
	assert.Equal(t, opsFromTimeline, r.CommOpsSource)
	require.Len(t, r.Problems, 1)
	assert.Contains(t, r.Problems[0], "op hcom_allReduce__1_1_1 at 30 ns: end 25 ns before its start")
}

// Each format that reads ranks names its fuzz targets, and each is a Fuzz function of
// this package's tests or of the package it names (make fuzz runs whatever go test
// -list finds).
func TestInputFormatsNameTheirFuzzTargets(t *testing.T) {
	fuzzersIn := map[string]map[string]bool{}
	fuzzers := func(dir string) map[string]bool {
		if m, ok := fuzzersIn[dir]; ok {
			return m
		}
		m := map[string]bool{}
		fset := token.NewFileSet()
		pkgs, err := goparser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		require.NoError(t, err)
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, d := range f.Decls {
					if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
						m[fn.Name.Name] = true
					}
				}
			}
		}
		fuzzersIn[dir] = m
		return m
	}
	for _, f := range inputFormats {
		if f.load == nil {
			continue // its ranks are another format's
		}
		assert.NotEmpty(t, f.fuzz, "%s names no fuzz target", f.name)
		for _, name := range f.fuzz {
			dir := "."
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				dir, name = filepath.Join("..", name[:i]), name[i+1:]
			}
			assert.True(t, fuzzers(dir)[name], "%s names %s, which is not a fuzz target in %s", f.name, name, dir)
		}
	}
}
