package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report/export"
)

type traceEv struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Pid  *int           `json:"pid"`
	Tid  *int           `json:"tid"`
	Ts   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur"`
	S    string         `json:"s"`
	Args map[string]any `json:"args"`
}

func sampleTrace(t *testing.T) ([]byte, *analysis.Result, *advisor.Advice) {
	t.Helper()
	c, err := parser.LoadCluster([]string{"../../fixtures/samples/demo-2server-8rank"}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	adv := advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	var b bytes.Buffer
	require.NoError(t, export.WriteTrace(&b, res, c, &adv))
	return b.Bytes(), res, &adv
}

// parseTrace reads a trace and puts its events back on the profile's clock: ts is
// written in µs after otherData.time_origin_ns (issue 38: µs since the epoch do not
// fit a float64), and the tests compare the profile's own times. Metadata events keep
// their ts.
func parseTrace(t *testing.T, b []byte) []traceEv {
	t.Helper()
	var doc struct {
		TraceEvents []traceEv `json:"traceEvents"`
		OtherData   struct {
			Origin string `json:"time_origin_ns"`
		} `json:"otherData"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NotEmpty(t, doc.TraceEvents)
	origin, err := strconv.ParseInt(doc.OtherData.Origin, 10, 64)
	require.NoError(t, err, "otherData.time_origin_ns")
	for i, e := range doc.TraceEvents {
		if e.Ph == "M" {
			continue
		}
		doc.TraceEvents[i].Ts = absoluteUs(t, e.Ts, origin)
	}
	return doc.TraceEvents
}

// absoluteUs turns a ts of µs with three decimals after origin (ns) into µs with
// three decimals on the profile's clock, exactly.
func absoluteUs(t *testing.T, ts json.Number, origin int64) json.Number {
	t.Helper()
	whole, frac, ok := strings.Cut(string(ts), ".")
	require.True(t, ok && len(frac) == 3, "ts %q has three decimals", ts)
	neg := strings.HasPrefix(whole, "-")
	us, err := strconv.ParseInt(strings.TrimPrefix(whole, "-"), 10, 64)
	require.NoError(t, err)
	ns, err := strconv.ParseInt(frac, 10, 64)
	require.NoError(t, err)
	rel := us*1000 + ns
	if neg {
		rel = -rel
	}
	abs := origin + rel
	return json.Number(strconv.FormatInt(abs/1000, 10) + "." + fmt.Sprintf("%03d", abs%1000))
}

// TestTraceEventFormat checks the sample's trace against the Trace Event Format's
// rules and what viewers need: every pid and tid present and every pid above 0; each
// process named and given a sort index, each lane named and sorted; ranks named
// "rank N" in rank order; ts and dur in µs with exactly three decimals (the ns); the
// collectives at their exact ns; every finding drawn.
func TestTraceEventFormat(t *testing.T) {
	b, res, adv := sampleTrace(t)
	evs := parseTrace(t, b)
	procName, procSort := map[int]string{}, map[int]float64{}
	threadName, threadSort := map[[2]int]string{}, map[[2]int]bool{}
	used := map[[2]int]bool{}
	for _, e := range evs {
		require.NotNil(t, e.Pid, "pid on %s", e.Name)
		require.NotNil(t, e.Tid, "tid on %s", e.Name)
		assert.Positive(t, *e.Pid, "pid 0 is no process to Perfetto: %s", e.Name)
		key := [2]int{*e.Pid, *e.Tid}
		switch e.Ph {
		case "M":
			switch e.Name {
			case "process_name":
				procName[*e.Pid] = e.Args["name"].(string)
			case "process_sort_index":
				procSort[*e.Pid] = e.Args["sort_index"].(float64)
			case "thread_name":
				threadName[key] = e.Args["name"].(string)
			case "thread_sort_index":
				threadSort[key] = true
			default:
				t.Errorf("unknown metadata %s", e.Name)
			}
		case "X":
			assert.Regexp(t, `^\d+\.\d{3}$`, string(e.Ts), e.Name)
			assert.Regexp(t, `^\d+\.\d{3}$`, string(e.Dur), e.Name)
			used[key] = true
		case "i":
			assert.Regexp(t, `^\d+\.\d{3}$`, string(e.Ts), e.Name)
			assert.Contains(t, []string{"t", "p", "g"}, e.S, "instant scope")
			used[key] = true
		default:
			t.Errorf("phase %q of %s", e.Ph, e.Name)
		}
	}
	for key := range threadName {
		assert.True(t, used[key], "lane %v is named and empty", key)
	}
	for key := range used {
		assert.NotEmpty(t, procName[key[0]], "process_name of pid %d", key[0])
		assert.Contains(t, procSort, key[0], "process_sort_index of pid %d", key[0])
		assert.NotEmpty(t, threadName[key], "thread_name of %v", key)
		assert.True(t, threadSort[key], "thread_sort_index of %v", key)
	}
	for _, r := range res.Ranks {
		assert.Equal(t, fmt.Sprintf("rank %d", r.Rank), procName[r.Rank+1])
		assert.Equal(t, float64(r.Rank), procSort[r.Rank+1])
	}
	assert.Len(t, procName, len(res.Ranks)+1, "the ranks and the findings of no rank")

	// The collectives keep their ns.
	o := res.Communication.Ops[len(res.Communication.Ops)/2]
	found := false
	for _, e := range evs {
		if e.Ph == "X" && e.Name == o.Name && *e.Pid == o.Rank+1 && *e.Tid == 2 {
			found = true
			assert.Equal(t, fmt.Sprintf("%d.%03d", o.StartNs/1000, o.StartNs%1000), string(e.Ts))
			assert.Equal(t, fmt.Sprintf("%d.%03d", o.ElapseNs/1000, o.ElapseNs%1000), string(e.Dur))
		}
	}
	assert.True(t, found, "op %s of rank %d", o.Name, o.Rank)

	// Every finding is drawn; one with a time and rank on that rank's findings lane.
	require.NotEmpty(t, adv.Findings)
	drawn := map[string][]traceEv{}
	for _, e := range evs {
		if id, ok := e.Args["id"].(string); ok && e.Ph != "M" {
			drawn[id] = append(drawn[id], e)
		}
	}
	for _, x := range adv.Findings {
		assert.NotEmpty(t, drawn[x.ID], "finding %s", x.ID)
	}
	// A reference at an op's start (not at a task inside it) gets the op's ns.
	var timed advisor.Ref
	var timedID string
	var opStart int64 = -1
	for _, x := range adv.Findings {
		for _, ref := range x.Refs {
			for _, o := range res.Communication.Ops {
				if o.Rank == ref.Rank && o.Step == ref.Step && o.Name == ref.Op && math.Abs(float64(o.StartNs)-ref.StartUs*1e3) < 1000 && timedID == "" {
					timed, timedID, opStart = ref, x.ID, o.StartNs
				}
			}
		}
	}
	require.NotEmpty(t, timedID, "the sample has a finding at an op")
	require.NotEqual(t, int64(-1), opStart)
	require.NotEmpty(t, drawn[timedID])
	e := drawn[timedID][0]
	assert.Equal(t, timed.Rank+1, *e.Pid)
	assert.Equal(t, 1, *e.Tid, "the findings lane")
	assert.Equal(t, fmt.Sprintf("%d.%03d", opStart/1000, opStart%1000), string(e.Ts), "the op's own ns, not the float µs")
}

// TestTraceDeterministic: the same input gives the same bytes, loaded twice and
// written twice (the lanes were once named from a map, in a new order each run).
func TestTraceDeterministic(t *testing.T) {
	a, res, adv := sampleTrace(t)
	for range 5 {
		b, _, _ := sampleTrace(t)
		require.Equal(t, string(a), string(b))
	}
	var x, y bytes.Buffer
	require.NoError(t, export.WriteTrace(&x, res, nil, adv))
	require.NoError(t, export.WriteTrace(&y, res, nil, adv))
	assert.Equal(t, x.String(), y.String())
}

// TestTraceFindingsPlaced: a finding at a rank and step without a time spans that
// step's collectives on the rank's lane; one at no rank spans the whole trace on the
// findings process, listed first; one with a duration is a slice at its time.
func TestTraceFindingsPlaced(t *testing.T) {
	res := &analysis.Result{Ranks: []analysis.RankResult{{Rank: 0}, {Rank: 3}}}
	res.Communication.Ops = []analysis.OpStat{
		{Rank: 0, Step: 1, Name: "a", StartNs: 1_000_000_001, ElapseNs: 500},
		{Rank: 3, Step: 1, Name: "a", StartNs: 1_000_000_101, ElapseNs: 400},
		{Rank: 3, Step: 2, Name: "b", StartNs: 1_000_002_000, ElapseNs: 1000},
	}
	adv := &advisor.Advice{Findings: []advisor.Finding{
		{ID: "step", Severity: advisor.High, Title: "s", Refs: []advisor.Ref{{Rank: 3, Step: 1}}},
		{ID: "global", Severity: advisor.Medium, Title: "g"},
		{ID: "timed", Severity: advisor.Low, Title: "t", Refs: []advisor.Ref{{Rank: 0, Step: 1, StartUs: 1_000_000.5, DurUs: 0.25}}},
		{ID: "instant", Severity: advisor.Low, Title: "i", Refs: []advisor.Ref{{Rank: 0, Step: -1, StartUs: 1_000_001}}},
	}}
	var b bytes.Buffer
	require.NoError(t, export.WriteTrace(&b, res, nil, adv))
	evs := parseTrace(t, b.Bytes())
	got := map[string]traceEv{}
	sortIndex := map[int]float64{}
	for _, e := range evs {
		if id, ok := e.Args["id"].(string); ok {
			got[id] = e
		}
		if e.Name == "process_sort_index" {
			sortIndex[*e.Pid] = e.Args["sort_index"].(float64)
		}
	}
	assert.Equal(t, traceEv{Name: "high: s", Ph: "X", Ts: "1000000.101", Dur: "0.400"}, strip(got["step"]))
	assert.Equal(t, 4, *got["step"].Pid)
	assert.Equal(t, traceEv{Name: "medium: g", Ph: "X", Ts: "1000000.001", Dur: "2.999"}, strip(got["global"]))
	g := *got["global"].Pid
	assert.Equal(t, -1.0, sortIndex[g], "the findings of no rank come first")
	assert.NotContains(t, []int{0, 1, 4}, g)
	assert.Equal(t, traceEv{Name: "low: t", Ph: "X", Ts: "1000000.500", Dur: "0.250"}, strip(got["timed"]))
	assert.Equal(t, traceEv{Name: "low: i", Ph: "i", Ts: "1000001.000", S: "t"}, strip(got["instant"]))
	assert.Equal(t, 1, *got["instant"].Pid)
	assert.Equal(t, map[int]float64{1: 0, 4: 3, g: -1}, sortIndex)
}

// strip keeps what a test compares by value.
func strip(e traceEv) traceEv {
	return traceEv{Name: e.Name, Ph: e.Ph, Ts: e.Ts, Dur: e.Dur, S: e.S}
}

// Issue 38: a viewer reads ts and dur into float64. With µs since the epoch and three
// decimals the sum rounded to 0.25 µs and back-to-back collectives overlapped: a
// 16-rank run gave 1,760 nesting errors in a trace viewer. Read as a viewer reads it,
// no slice of a lane may end after the next one starts where the profile's ns do not
// overlap.
func TestTraceDoesNotNestInFloat64(t *testing.T) {
	b, _, _ := sampleTrace(t)
	var doc struct {
		TraceEvents []struct {
			Ph   string  `json:"ph"`
			Pid  int     `json:"pid"`
			Tid  int     `json:"tid"`
			Ts   float64 `json:"ts"`
			Dur  float64 `json:"dur"`
			Name string  `json:"name"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	exact := parseTrace(t, b) // the same events, in exact ns
	type slice struct {
		ts, end float64
		lo, hi  int64
	}
	lanes := map[[2]int][]slice{}
	for i, e := range doc.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		lo := nsOf(t, exact[i].Ts)
		hi := lo + nsOf(t, exact[i].Dur)
		k := [2]int{e.Pid, e.Tid}
		lanes[k] = append(lanes[k], slice{e.Ts, e.Ts + e.Dur, lo, hi})
	}
	checked, bad := 0, 0
	for _, ss := range lanes {
		for i := 1; i < len(ss); i++ {
			a, b := ss[i-1], ss[i]
			if a.hi <= b.lo { // apart in ns
				checked++
				if a.end > b.ts {
					bad++
				}
			}
		}
	}
	assert.Positive(t, checked)
	assert.Zero(t, bad, "slices that overlap once read as float64, of %d pairs", checked)
}

func nsOf(t *testing.T, n json.Number) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(string(n), ".")
	us, err := strconv.ParseInt(whole, 10, 64)
	require.NoError(t, err)
	ns, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
	return us*1000 + ns
}
