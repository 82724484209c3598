// Package testkit gives the tests their generated clusters: a scenario simulated,
// written in one profiler format, loaded and analysed once per test process, and
// shared by every test that asks for the same scenario and format. Tests that edit a
// scenario get their own cluster (the key is the edited scenario itself), and the
// generator being deterministic, a shared cluster is the one the test would have made.
//
// What it hands out is shared: tests read it and never change it (copy a directory
// before writing into it). A package using the kit runs its tests through Main, which
// removes the clusters at the end of the process. The analyses stay for the whole
// process; only the last few loaded clusters stay in memory (a 256-rank one holds
// about a hundred MB), the others are read again when asked for.
//
// The clusters and the tests' temporary directories are written to a memory file
// system (/dev/shm) where there is one: on a disk, writing the generated profiles was
// a third of the tests' time in the kernel and its write-back throttled them. Memory
// being scarcer than disk, a cluster's directory is kept while a test holds it (from
// the Generate or Analyse that handed it out to the end of that test) and, after, only
// while the directories held by none stay under filesBudget bytes; one removed is
// written again, the same files, when a test asks for it.
package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/testenv"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// Generated is a scenario written in a format: the cluster directory and the
// generator's ground truth. Dir is there until the end of the test that was handed it.
type Generated struct {
	Dir   string
	Truth *sim.Truth
	e     *entry
}

// Analysed is a generated cluster loaded and analysed with the default options. The
// Result is the same for every test asking; the Cluster may be a fresh read of the
// same directory. Its Dir may have been removed (the cluster was in memory): Load or
// Generate it to read the files.
type Analysed struct {
	*Generated
	Cluster *profile.Cluster
	Result  *analysis.Result
}

// Analysis is what a test of the diagnosis or the advice reads of a generated
// cluster: the analysis, the environment its ranks recorded (advisor.EnvOf) and the
// generator's truth. Unlike Analyse's Cluster, it stays for the whole process: asked
// again, no file is written or read.
type Analysis struct {
	Result *analysis.Result
	Env    advisor.Env
	Truth  *sim.Truth
}

// Main runs a package's tests (call it from TestMain) and removes the generated
// clusters after.
func Main(m *testing.M) {
	done := testenv.Setup()
	cache.mu.Lock()
	cache.inMain = true
	cache.mu.Unlock()
	code := m.Run()
	cache.mu.Lock()
	if cache.root != "" {
		if err := os.RemoveAll(cache.root); err != nil {
			fmt.Fprintln(os.Stderr, "testkit:", err)
		}
	}
	cache.mu.Unlock()
	done()
	os.Exit(code)
}

// Builtin returns a fresh copy of a built-in scenario, for the test to edit.
func Builtin(tb testing.TB, name string) *scenario.Scenario {
	tb.Helper()
	sc, err := scenario.Builtin(name)
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}

// Generate simulates a scenario and writes it in a format, once per process for the
// same scenario and format.
func Generate(tb testing.TB, sc *scenario.Scenario, format render.Format) *Generated {
	tb.Helper()
	e := entryOf(tb, sc, format)
	hold(tb, e) // first: a directory held is not removed once written
	e.genOnce.Do(func() {
		e.gen, e.genErr = generate(sc, format, e.dir)
		if e.genErr == nil {
			e.gen.e = e
			cache.mu.Lock()
			e.genDone = e.gen
			cache.mu.Unlock()
			written(e)
		}
	})
	if e.genErr != nil {
		tb.Fatalf("generating %s as %s: %v", sc.Name, format, e.genErr)
	}
	return e.gen
}

// Truth is the generator's ground truth of a scenario in a format, without writing
// the cluster (render.Truth): for a test that compares against the generator's own
// figures and reads no profile. Once per process, the truth of Generate when it ran.
func Truth(tb testing.TB, sc *scenario.Scenario, format render.Format) *sim.Truth {
	tb.Helper()
	e := entryOf(tb, sc, format)
	e.truthOnce.Do(func() {
		if g := generated(e); g != nil {
			e.truth = g.Truth
			return
		}
		run, err := sim.Simulate(sc)
		if err != nil {
			e.truthErr = err
			return
		}
		e.truth, e.truthErr = render.Truth(run, format)
	})
	if e.truthErr != nil {
		tb.Fatalf("the truth of %s as %s: %v", sc.Name, format, e.truthErr)
	}
	return e.truth
}

// generated is the entry's generated cluster if Generate has made it.
func generated(e *entry) *Generated {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	return e.genDone
}

// GenerateBuiltin is Generate of a built-in scenario as it is.
func GenerateBuiltin(tb testing.TB, name string, format render.Format) *Generated {
	tb.Helper()
	return Generate(tb, Builtin(tb, name), format)
}

// Analyse is Generate, then the cluster loaded and analysed with the default options,
// once per process for the same scenario and format.
func Analyse(tb testing.TB, sc *scenario.Scenario, format render.Format) *Analysed {
	tb.Helper()
	e := entryOf(tb, sc, format)
	if c := recentCluster(e); c != nil { // analysed, and in memory: no file is read
		keepCluster(e, c)
		return &Analysed{Generated: e.gen, Cluster: c, Result: e.res}
	}
	g := Generate(tb, sc, format)
	e.anOnce.Do(func() {
		c, err := parser.LoadCluster([]string{g.Dir}, parser.LoadOptions{})
		if err != nil {
			e.anErr = err
			return
		}
		e.res = analysis.Analyze(c, analysis.Options{})
		cache.mu.Lock()
		e.analysis = &Analysis{Result: e.res, Env: advisor.EnvOf(c), Truth: g.Truth}
		cache.mu.Unlock()
		keepCluster(e, c) // before the Once returns: the tests waiting on it find it
	})
	if e.anErr != nil {
		tb.Fatalf("loading %s as %s: %v", sc.Name, format, e.anErr)
	}
	c := recentCluster(e)
	if c == nil {
		c = Load(tb, g, parser.LoadOptions{})
	}
	keepCluster(e, c)
	return &Analysed{Generated: g, Cluster: c, Result: e.res}
}

// AnalysisOf is Analyse without the cluster: once analysed, the scenario's Analysis is
// handed out without writing or reading its files again.
func AnalysisOf(tb testing.TB, sc *scenario.Scenario, format render.Format) *Analysis {
	tb.Helper()
	e := entryOf(tb, sc, format)
	cache.mu.Lock()
	a := e.analysis
	cache.mu.Unlock()
	if a == nil {
		Analyse(tb, sc, format)
		cache.mu.Lock()
		a = e.analysis // set inside Analyse's Once, which it waited for
		cache.mu.Unlock()
	}
	return a
}

// AnalyseBuiltin is Analyse of a built-in scenario as it is.
func AnalyseBuiltin(tb testing.TB, name string, format render.Format) *Analysed {
	tb.Helper()
	return Analyse(tb, Builtin(tb, name), format)
}

// AnalyseWith analyses the shared cluster with other options (the analysis only
// reads the cluster). The result is the caller's own.
func AnalyseWith(tb testing.TB, sc *scenario.Scenario, format render.Format, opts analysis.Options) (*analysis.Result, *Analysed) {
	tb.Helper()
	a := Analyse(tb, sc, format)
	return analysis.Analyze(a.Cluster, opts), a
}

// Load reads a generated cluster afresh: the caller's own, to change or to read with
// other load options.
func Load(tb testing.TB, g *Generated, opts parser.LoadOptions) *profile.Cluster {
	tb.Helper()
	hold(tb, g.e)
	c, err := parser.LoadCluster([]string{g.Dir}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Short says, under -short, that the test checks part of its cases and why (the full
// run checks all): "-short: why" in the test's log.
func Short(tb testing.TB, why string) bool {
	tb.Helper()
	if testing.Short() {
		tb.Log("-short: " + why)
		return true
	}
	return false
}

func generate(sc *scenario.Scenario, format render.Format, dir string) (*Generated, error) {
	run, err := sim.Simulate(sc)
	if err != nil {
		return nil, err
	}
	truth, _, err := render.WriteCluster(run, dir, render.Options{Format: format})
	if err != nil {
		return nil, err
	}
	return &Generated{Dir: dir, Truth: truth}, nil
}

// entry is one scenario and format: generated once, analysed once. Errors are kept
// rather than reported inside the Once, so that every test asking fails alike.
type entry struct {
	sc      *scenario.Scenario // a copy of the scenario (to write it again), nil if none
	format  render.Format
	dir     string
	filesMu sync.Mutex // taking the directory, writing it again
	files   dirFiles   // under cache.mu
	size    int64      // the bytes of its files once written (under cache.mu)
	genOnce sync.Once
	gen     *Generated
	genErr  error
	genDone *Generated // gen once made (under cache.mu): Truth then reads its truth
	anOnce  sync.Once
	res     *analysis.Result
	anErr   error
	// analysis is res with what the advisor reads of the cluster (under cache.mu)
	analysis *Analysis
	cluster  *profile.Cluster // while among the recent ones (under cache.mu)

	truthOnce sync.Once
	truth     *sim.Truth
	truthErr  error
}

// recentBytes bounds the loaded clusters kept in memory, by the bytes of their files
// (a cluster in memory is a tenth to a quarter of its files): a few of the largest,
// a dozen of the usual 16- to 64-rank ones, so that the tests coming back to a
// cluster seldom read it again. The one last asked for stays whatever its size.
const recentBytes = 3 << 30

func recentCluster(e *entry) *profile.Cluster {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	return e.cluster
}

// keepCluster makes e's cluster the most recent, dropping the oldest beyond
// recentBytes (a test still holding one keeps it alive).
func keepCluster(e *entry, c *profile.Cluster) {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	e.cluster = c
	cache.recent = append(slices.DeleteFunc(cache.recent, func(o *entry) bool { return o == e }), e)
	var total int64
	for _, o := range cache.recent {
		total += o.size
	}
	for len(cache.recent) > 1 && total > recentBytes {
		total -= cache.recent[0].size
		cache.recent[0].cluster = nil
		cache.recent = cache.recent[1:]
	}
}

var cache struct {
	mu      sync.Mutex
	inMain  bool
	root    string
	entries map[string]*entry
	recent  []*entry // entries holding their cluster, oldest first
	written []*entry // entries whose directory holds the cluster
	clock   uint64   // counts the holds, for the least recently used
}

// entryOf finds or makes the entry of a scenario and format. The key is the
// scenario's whole JSON, so an edited scenario is its own entry.
func entryOf(tb testing.TB, sc *scenario.Scenario, format render.Format) *entry {
	tb.Helper()
	key := string(format) + "\n" + string(sc.JSON())
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if !cache.inMain {
		tb.Fatal("testkit: the package's TestMain must call testkit.Main, which removes the generated clusters")
	}
	if e := cache.entries[key]; e != nil {
		return e
	}
	if cache.root == "" {
		root, err := os.MkdirTemp("", "hcclprof-testkit-") // in memory: Main set TMPDIR
		if err != nil {
			tb.Fatal(err)
		}
		cache.root, cache.entries = root, map[string]*entry{}
	}
	e := &entry{sc: copyScenario(sc), format: format, dir: filepath.Join(cache.root, strconv.Itoa(len(cache.entries)))}
	cache.entries[key] = e
	return e
}
