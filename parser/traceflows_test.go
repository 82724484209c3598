package parser

import (
	"cmp"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/benchtrace"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// TestFlowIDsMatchAsText: a flow's ends meet when their ids are the same text
// (quoted or not), integer ids as integers and others as strings; the last start of
// an id wins.
func TestFlowIDsMatchAsText(t *testing.T) {
	trace := `[
{"ph": "s", "cat": "async_npu", "id": 7, "pid": 1, "tid": 1, "ts": "1.000"},
{"ph": "f", "cat": "async_npu", "id": "7", "pid": 2, "tid": 1, "ts": "10.000"},
{"ph": "s", "cat": "async_npu", "id": "007", "pid": 1, "tid": 1, "ts": "2.000"},
{"ph": "f", "cat": "async_npu", "id": 8, "pid": 2, "tid": 1, "ts": "11.000"},
{"ph": "f", "cat": "async_npu", "id": "007", "pid": 2, "tid": 1, "ts": "12.000"},
{"ph": "s", "cat": "async_npu", "id": "a\"b", "pid": 1, "tid": 1, "ts": "3.000"},
{"ph": "s", "cat": "async_npu", "id": "a\"b", "pid": 1, "tid": 1, "ts": "4.000"},
{"ph": "f", "cat": "async_npu", "id": "a\"b", "pid": 2, "tid": 1, "ts": "13.000"},
{"ph": "s", "cat": "async_\u006epu", "id": 9, "pid": 1, "tid": 1, "ts": "5.000"},
{"ph": "f", "cat": "async_npu", "id": 9, "pid": 2, "tid": 1, "ts": "14.000"},
{"ph": "s", "cat": "fwdbwd", "id": 10, "pid": 1, "tid": 1, "ts": "6.000"},
{"ph": "f", "cat": "async_npu", "id": 10, "pid": 2, "tid": 1, "ts": "15.000"}
]`
	tl, err := parseTraceView(strings.NewReader(trace), "flows.json")
	require.NoError(t, err)
	assert.Equal(t, []profile.DeviceFlow{
		{DeviceNs: 10_000, HostNs: 1_000},
		{DeviceNs: 12_000, HostNs: 2_000},
		{DeviceNs: 13_000, HostNs: 4_000},
		{DeviceNs: 14_000, HostNs: 5_000},
	}, tl.Flows)
}

// TestRepeatedTraceIsTheTraceRepeated: a real trace repeated n times over (each copy
// shifted past the previous one) reads as the trace's timeline n times over, shifted,
// through the chunked candidate lists (n copies fill many chunks), the parts read in
// parallel and joined.
func TestRepeatedTraceIsTheTraceRepeated(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	splitSmall(t)

	const n = 12
	one := parseTraceFile(t, src)
	p, err := benchtrace.Repeat(src, t.TempDir(), n)
	require.NoError(t, err)
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	_, parallel := parseTraceParallel(f, p)
	require.True(t, parallel, "the parts were not used")
	all := parseTraceFile(t, p)

	require.Len(t, one.Steps, 1)
	require.Len(t, all.Steps, n)
	shiftNs := all.Steps[1].StartNs - all.Steps[0].StartNs
	require.Positive(t, shiftNs)
	shift := func(iv profile.Interval, k int) profile.Interval {
		return profile.Interval{StartNs: iv.StartNs + int64(k)*shiftNs, EndNs: iv.EndNs + int64(k)*shiftNs}
	}
	want := &traceTimeline{Events: n*one.Events - (n-1)*metaEvents(t, src)}
	for k := range n {
		for _, s := range one.Steps {
			want.Steps = append(want.Steps, profile.StepMarker{Step: s.Step + k, Interval: shift(s.Interval, k)})
		}
		for _, iv := range one.Compute {
			want.Compute = append(want.Compute, shift(iv, k))
		}
		for _, iv := range one.BackwardCompute {
			want.BackwardCompute = append(want.BackwardCompute, shift(iv, k))
		}
		for _, op := range one.CommOps {
			op.Interval = shift(op.Interval, k)
			want.CommOps = append(want.CommOps, op)
		}
		for _, task := range one.CommTasks {
			task.Interval = shift(task.Interval, k)
			want.CommTasks = append(want.CommTasks, task)
		}
		for _, fl := range one.Flows {
			want.Flows = append(want.Flows, profile.DeviceFlow{DeviceNs: fl.DeviceNs + int64(k)*shiftNs, HostNs: fl.HostNs + int64(k)*shiftNs})
		}
		for i, ivs := range [][]profile.Interval{one.Overlap.Computing, one.Overlap.Communication, one.Overlap.CommNotOverlapped, one.Overlap.Free} {
			dst := []*[]profile.Interval{&want.Overlap.Computing, &want.Overlap.Communication, &want.Overlap.CommNotOverlapped, &want.Overlap.Free}[i]
			for _, iv := range ivs {
				*dst = append(*dst, shift(iv, k))
			}
		}
	}
	// Lists sorted by an unstable sort may order equal starts either way.
	for _, tl := range []*traceTimeline{want, all} {
		for _, ivs := range [][]profile.Interval{tl.Compute, tl.BackwardCompute, tl.Overlap.Computing, tl.Overlap.Communication, tl.Overlap.CommNotOverlapped, tl.Overlap.Free} {
			slices.SortFunc(ivs, func(a, b profile.Interval) int {
				return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.EndNs, b.EndNs))
			})
		}
		slices.SortFunc(tl.Flows, func(a, b profile.DeviceFlow) int {
			return cmp.Or(cmp.Compare(a.DeviceNs, b.DeviceNs), cmp.Compare(a.HostNs, b.HostNs))
		})
	}
	assert.NotEmpty(t, one.CommTasks)
	assert.NotEmpty(t, one.Flows)
	assert.NotEmpty(t, one.Overlap.Free)
	require.Equal(t, want, all)
}

func parseTraceFile(t *testing.T, p string) *traceTimeline {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	tl, err := parseTraceView(f, p)
	require.NoError(t, err)
	return tl
}

// metaEvents counts a trace's "M" events, which a repeated trace has once.
func metaEvents(t *testing.T, p string) int {
	t.Helper()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	var events []struct {
		Ph string `json:"ph"`
	}
	require.NoError(t, json.Unmarshal(data, &events))
	m := 0
	for _, e := range events {
		if e.Ph == "M" {
			m++
		}
	}
	return m
}
