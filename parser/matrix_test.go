package parser

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// cmTop1 is the start of the real allreduce-top1 entry of imagenet-2rank-level1
// rank 0 (docs/formats.md §4.1).
const cmTop1 = `"allreduce-top1@17522688603477080586": {
  "0-0": {"Transport Type": "LOCAL", "Transit Size(MB)": 4.128775999999999, "Transit Time(ms)": 0.008220156250000001,
          "Bandwidth(GB/s)": 502.2746, "Op Name": "hcom_allReduce__586_0_1"},
  "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 37.781504, "Transit Time(ms)": 2.153383,
          "Bandwidth(GB/s)": 17.5452, "Op Name": "hcom_allReduce__586_2_1"},
  "0-7": {"Transport Type": "HCCS", "Transit Size(MB)": 37.552128, "Transit Time(ms)": 2.1364026875,
          "Bandwidth(GB/s)": 17.5773, "Op Name": "hcom_allReduce__586_2_1"}}`

// cmP2PTotal is the shape of a p2p "-total" entry (no Op Name).
const cmP2PTotal = `"batchsendrecv-total@99": {"1-1": {"Transport Type": "LOCAL", "Transit Size(MB)": 1.5,
  "Transit Time(ms)": 0.01, "Bandwidth(GB/s)": 150.0}, "1-3": {"Transport Type": "HCCS", "Transit Size(MB)": 3,
  "Transit Time(ms)": 0.2, "Bandwidth(GB/s)": 15}}`

func TestParseCommMatrixJSONLayouts(t *testing.T) {
	t.Run("aggregated torch_npu layout", func(t *testing.T) {
		in := `{"step50": {"p2p": {` + cmP2PTotal + `}, "collective": {` + cmTop1 + `}}}`
		links, err := parseCommMatrixJSON(strings.NewReader(in), "communication_matrix.json")
		require.NoError(t, err)
		require.Len(t, links, 5)
		// Sorted: collective before p2p, then by link.
		assert.Equal(t, profile.MatrixLink{
			Step: 50, OpKey: "allreduce-top1", Group: "17522688603477080586", SrcLocal: 0, DstLocal: 0,
			Transport: "LOCAL", Bytes: 4128776, TimeNs: 8220, BandwidthGBps: 502.2746, OpName: "hcom_allReduce__586_0_1",
		}, links[0])
		assert.Equal(t, profile.MatrixLink{
			Step: 50, OpKey: "allreduce-top1", Group: "17522688603477080586", SrcLocal: 0, DstLocal: 1,
			Transport: "HCCS", Bytes: 37781504, TimeNs: 2153383, BandwidthGBps: 17.5452, OpName: "hcom_allReduce__586_2_1",
		}, links[1])
		assert.Equal(t, 7, links[2].DstLocal)
		assert.Equal(t, profile.MatrixLink{
			Step: 50, P2P: true, OpKey: "batchsendrecv-total", Group: "99", SrcLocal: 1, DstLocal: 3,
			Transport: "HCCS", Bytes: 3000000, TimeNs: 200000, BandwidthGBps: 15,
		}, links[4])
		assert.Equal(t, map[string]int{"17522688603477080586": 8, "99": 4}, profile.GroupSizeFromMatrix(links))
	})

	t.Run("legacy layout: raw op names and Total Op Info", func(t *testing.T) {
		in := `{"step": {"collective": {
		  "hcom_broadcast__445_0@1234567890445": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 0.5, "Transit Time(ms)": 0.05, "Bandwidth(GB/s)": 10}},
		  "Total Op Info": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 0.5, "Transit Time(ms)": 0.05, "Bandwidth(GB/s)": 10}}}}}`
		links, err := parseCommMatrixJSON(strings.NewReader(in), "communication_matrix.json")
		require.NoError(t, err)
		require.Len(t, links, 1)
		assert.Equal(t, profile.MatrixLink{
			Step: -1, OpKey: "hcom_broadcast__445_0", Group: "1234567890445", SrcLocal: 0, DstLocal: 1,
			Transport: "HCCS", Bytes: 500000, TimeNs: 50000, BandwidthGBps: 10,
		}, links[0])
	})

	t.Run("flat msprof layout", func(t *testing.T) {
		in := `{"hcom_send__1_0_1@5": {"0-1": {"Transport Type": "RDMA", "Transit Size(MB)": 1, "Transit Time(ms)": 0.1, "Bandwidth(GB/s)": 10.0}},
		        "hcom_allGather__1_1_1@5": {"0-0": {"Transport Type": "LOCAL", "Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0},
		                                    "0-2": {"Transport Type": "PCIE", "Transit Size(MB)": 2.0, "Transit Time(ms)": 1.0, "Bandwidth(GB/s)": 2.0}},
		        "total": {"0-1": {"Transport Type": "RDMA"}}}`
		links, err := parseCommMatrixJSON(strings.NewReader(in), "analyze/communication_matrix.json")
		require.NoError(t, err)
		require.Len(t, links, 3)
		assert.Equal(t, "hcom_allGather__1_1_1", links[0].OpKey)
		assert.False(t, links[0].P2P)
		assert.Equal(t, -1, links[0].Step)
		assert.Equal(t, "PCIE", links[1].Transport)
		assert.Equal(t, int64(2000000), links[1].Bytes)
		assert.Equal(t, "hcom_send__1_0_1", links[2].OpKey)
		assert.True(t, links[2].P2P, "p2p from the op name")
		assert.Equal(t, map[string]int{"5": 3}, profile.GroupSizeFromMatrix(links))
	})

	t.Run("empty", func(t *testing.T) {
		links, err := parseCommMatrixJSON(strings.NewReader(`{"step1": {"p2p": {}, "collective": {}}}`), "m.json")
		require.NoError(t, err)
		assert.Empty(t, links)
		assert.Empty(t, profile.GroupSizeFromMatrix(links))
	})
}

func TestGroupSizeFromMatrix(t *testing.T) {
	links := []profile.MatrixLink{
		{Group: "a", SrcLocal: 3, DstLocal: 3},
		{Group: "a", SrcLocal: 3, DstLocal: 4},
		{Group: "b", SrcLocal: 0, DstLocal: 15},
		{Group: "", SrcLocal: 0, DstLocal: 99},
	}
	assert.Equal(t, map[string]int{"a": 5, "b": 16}, profile.GroupSizeFromMatrix(links))
	assert.Empty(t, profile.GroupSizeFromMatrix(nil))
}

func TestParseCommMatrixJSONErrors(t *testing.T) {
	const file = "rank0/communication_matrix.json"
	link := `{"Transport Type": "HCCS", "Transit Size(MB)": 1}`
	tests := []struct {
		name      string
		in        string
		offset    int64
		fragments []string
	}{
		{"link key not s-d", `{"step1": {"collective": {"x@1": {"0to1": ` + link + `}}}}`, 34, []string{`"0to1"`, `"x@1"`}},
		{"negative rank", `{"step1": {"collective": {"x@1": {"-1-2": ` + link + `}}}}`, 34, []string{`"-1-2"`}},
		{"rank too large", `{"step1": {"collective": {"x@1": {"0-99999999": ` + link + `}}}}`, 34, []string{`"0-99999999"`}},
		{"flat layout bad key", `{"x@1": {"0-1": ` + link + `, "a-b": ` + link + `}}`, 67, []string{`"a-b"`}},
		{"link not an object", `{"step1": {"collective": {"x@1": {"0-1": 7}}}}`, 41, []string{"expected an object"}},
		{"transport not a string", `{"step1": {"collective": {"x@1": {"0-1": {"Transport Type": [1]}}}}}`, 60, []string{"Transport Type"}},
		{"bad size", `{"step1": {"collective": {"x@1": {"0-1": {"Transit Size(MB)": "lots"}}}}}`, 62, []string{"Transit Size(MB)"}},
		{"bad step key", `{"stepX": {}}`, 1, []string{`"stepX"`}},
		{"truncated", `{"step1": {"collective": {"x@1": {"0-1": {"Transport Type": "HC`, 63, []string{"truncated", "starts at byte 60"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCommMatrixJSON(strings.NewReader(tc.in), file)
			se := requireSyntaxError(t, err, file, tc.fragments...)
			assert.Equal(t, tc.offset, se.Offset, "offset")
		})
	}
}

func TestParseCommMatrixJSONRealData(t *testing.T) {
	for _, rel := range []string{summaryL1R0, summaryL1R1} {
		t.Run(rel, func(t *testing.T) {
			f := openSummaryReal(t, rel+summaryAPO+"communication_matrix.json")
			links, err := parseCommMatrixJSON(f, f.Name())
			require.NoError(t, err)
			// 6 statistics (top1, middle, bottom1, total, bottom2, bottom3) × 8 links.
			require.Len(t, links, 48)
			assert.Equal(t, map[string]int{"17522688603477080586": 8}, profile.GroupSizeFromMatrix(links))
			self := 0
			if rel == summaryL1R1 {
				self = 1
			}
			keys := map[string]int{}
			for _, l := range links {
				keys[l.OpKey]++
				assert.Equal(t, 50, l.Step)
				assert.False(t, l.P2P)
				assert.Equal(t, self, l.SrcLocal, "each rank's links start at its local rank")
				if l.DstLocal == self {
					assert.Equal(t, "LOCAL", l.Transport)
				} else {
					assert.Equal(t, "HCCS", l.Transport)
				}
				if l.OpKey == "allreduce-total" {
					assert.Empty(t, l.OpName)
				} else {
					assert.True(t, strings.HasPrefix(l.OpName, "hcom_allReduce__586_"), l.OpName)
				}
			}
			assert.Equal(t, map[string]int{
				"allreduce-top1": 8, "allreduce-middle": 8, "allreduce-bottom1": 8,
				"allreduce-bottom2": 8, "allreduce-bottom3": 8, "allreduce-total": 8,
			}, keys)
			if rel == summaryL1R0 {
				var found bool
				for _, l := range links {
					if l.OpKey == "allreduce-top1" && l.SrcLocal == 0 && l.DstLocal == 1 {
						found = true
						assert.Equal(t, "HCCS", l.Transport)
						assert.Equal(t, int64(37781504), l.Bytes)
						assert.Equal(t, int64(2153383), l.TimeNs)
						assert.InDelta(t, 17.5452, l.BandwidthGBps, 1e-9)
						assert.Equal(t, "hcom_allReduce__586_2_1", l.OpName)
					}
				}
				assert.True(t, found, "link 0-1 of allreduce-top1")
			}
		})
	}
}

func FuzzCommMatrixJSON(f *testing.F) {
	f.Add([]byte(`{"step50": {"p2p": {` + cmP2PTotal + `}, "collective": {` + cmTop1 + `}}}`))
	f.Add([]byte(`{"step": {"collective": {"hcom_broadcast__445_0@1": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 0.5}}, "Total Op Info": {}}}}`))
	f.Add([]byte(`{"hcom_send__1_0_1@5": {"0-1": {"Transport Type": "RDMA", "Transit Size(MB)": 1, "Transit Time(ms)": 0.1, "Bandwidth(GB/s)": 10.0}}}`))
	addRealSeeds(f,
		summaryL1R0+summaryAPO+"communication_matrix.json",
		summaryL1R1+summaryAPO+"communication_matrix.json",
	)
	const file = "fuzz/communication_matrix.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		links, err := parseCommMatrixJSON(bytes.NewReader(data), file)
		if err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("error does not name the file: %v", err)
		}
		profile.GroupSizeFromMatrix(links)
	})
}
