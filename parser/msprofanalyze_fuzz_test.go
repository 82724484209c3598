package parser

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// FuzzMsprofAnalyzeOutputs feeds the same bytes to the readers of msprof-analyze's
// cluster output (cluster_step_trace_time.csv, cluster_communication.json,
// cluster_communication_matrix.json, communication_group.json) and to the assembly of
// ranks from what they kept: no panic, errors name the file, and every rank built
// has a rank number in range and links whose local ranks index its group.
func FuzzMsprofAnalyzeOutputs(f *testing.F) {
	f.Add([]byte("Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n" +
		"40,rank,0,1,2,0,2,1,4,0,2,0\n40,stage,\"(0, 1)\",1,2,0,2,1,4,0,2,0\n,rank,1,1,2,0,2,1,4,0,2,0\n"))
	f.Add([]byte(`{"(0, 1)": {"step40": {"hcom_allReduce__698_0_1@7492": {"0": {"Communication Time Info": {"Start Timestamp(us)": 1736408883029108.2, "Elapse Time(ms)": 13.6},
		"Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 314.5, "Transit Time(ms)": 17.2, "Bandwidth(GB/s)": 18.2, "Large Packet Ratio": 1.0, "Size Distribution": {"52.4288": [6, 17.2]}}}}},
		"Total Op Info@7492": {"0": {"Communication Time Info": {"Elapse Time(ms)": 13.6}}}}}, "p2p": {"step": {"hcom_send__1_0@9": {"1": {"Communication Time Info": {}}}}}}`))
	f.Add([]byte(`{"(0, 1)": {"step40": {"allreduce-top1@7492": {"0-1": {"Transport Type": "HCCS", "Transit Time(ms)": 0.02, "Transit Size(MB)": 16.7, "Op Name": "", "Bandwidth(GB/s)": 681.4}, "1-0": {"Transport Type": "HCCS"}},
		"Total Op Info@7492": {"0-1": {}}}}, "(3,)": {"step": {"send-top1@5": {"3-3": {"Transport Type": "LOCAL"}}}}}`))
	f.Add([]byte(`{"collective": [[0, 1]], "p2p": [], "comm_group_parallel_info": [{"type": "collective", "rank_set": [0, 1], "group_name": "7492", "group_id": "10.0.0.1%enp_60000_0_1", "pg_name": "dp"},
		{"type": "p2p", "rank_set": "(2, 3)", "group_name": "5", "group_id": "", "pg_name": "pp"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p summaryParts
		check := func(name string, err error) {
			if err != nil && !strings.Contains(err.Error(), name) {
				t.Fatalf("error does not name the file %s: %v", name, err)
			}
		}
		steps, err := parseClusterStepTraceCSV(bytes.NewReader(data), "fuzz/"+clusterStepTraceCSV)
		check(clusterStepTraceCSV, err)
		p.steps = steps
		check(clusterCommJSON, parseClusterCommJSON(bytes.NewReader(data), "fuzz/"+clusterCommJSON, &p))
		check(clusterCommMatrixJSON, parseClusterMatrixJSON(bytes.NewReader(data), "fuzz/"+clusterCommMatrixJSON, &p))
		check(clusterCommGroupJSON, parseCommGroupJSON(bytes.NewReader(data), "fuzz/"+clusterCommGroupJSON, &p))
		cs := &clusterSummary{Dir: "fuzz"}
		cs.Ranks = map[int]*profile.Rank{}
		cs.assemble(&p)
		for r, pr := range cs.Ranks {
			if r < 0 || r > maxLocalRank || pr.Rank != r {
				t.Fatalf("rank %d (%d) out of range", r, pr.Rank)
			}
			for _, l := range pr.CommMatrix {
				var members []int
				for _, g := range pr.Metadata.ParallelGroups {
					if g.Key == l.Group {
						members = g.GlobalRanks
					}
				}
				if l.SrcLocal >= len(members) || l.DstLocal >= len(members) || members[l.SrcLocal] != r {
					t.Fatalf("rank %d: link %d-%d of group %s does not index its members %v", r, l.SrcLocal, l.DstLocal, l.Group, members)
				}
			}
		}
	})
}

// TestClusterCommTotalsOnly: a rank whose step of a group has only msprof-analyze's
// per-group total has no op for it (a total is never counted as an op), and a problem
// naming the total; a rank that has its ops keeps only the ops. Rank sets parse as Python writes
// them, and a legacy top-level "p2p" key makes its ops p2p.
func TestClusterCommTotalsOnly(t *testing.T) {
	const file = "cluster_communication.json"
	data := `{"(0, 1)": {"step3": {
		"hcom_allReduce__1_0_1@77": {"0": {"Communication Time Info": {"Start Timestamp(us)": 10.5, "Elapse Time(ms)": 2}}},
		"Total Op Info@77": {"0": {"Communication Time Info": {"Elapse Time(ms)": 2}}, "1": {"Communication Time Info": {"Elapse Time(ms)": 5}}}}},
		"p2p": {"step3": {"hcom_batchSendRecv__2_0@88": {"1": {"Communication Time Info": {"Elapse Time(ms)": 1}}}}}}`
	var p summaryParts
	if err := parseClusterCommJSON(strings.NewReader(data), file, &p); err != nil {
		t.Fatal(err)
	}
	cs := &clusterSummary{Ranks: map[int]*profile.Rank{}}
	cs.assemble(&p)
	r0, r1 := cs.Ranks[0], cs.Ranks[1]
	if len(r0.CommStats) != 1 || r0.CommStats[0].Name != "hcom_allReduce__1_0_1" || r0.CommStats[0].StartNs != 10_500 || len(r0.Problems) != 0 {
		t.Fatalf("rank 0: %+v, problems %v", r0.CommStats, r0.Problems)
	}
	if len(r1.CommStats) != 1 || !r1.CommStats[0].P2P || len(r1.Problems) != 1 || !strings.Contains(r1.Problems[0], "step 3, group …77 (5.000 ms)") {
		t.Fatalf("rank 1: %+v, problems %v", r1.CommStats, r1.Problems)
	}
	if len(r0.Metadata.ParallelGroups) != 1 || r0.Metadata.ParallelGroups[0].Key != "77" || r1.Metadata.ParallelGroups[0].GroupRank != 1 {
		t.Fatalf("groups: %+v %+v", r0.Metadata.ParallelGroups, r1.Metadata.ParallelGroups)
	}
	for in, want := range map[string]string{"(0, 1, 2)": "[0 1 2]", "(5,)": "[5]", "(0,1,2,3)": "[0 1 2 3]", "[3, 1]": "[1 3]", "p2p": "[] false", "(a)": "[] false"} {
		got, ok := parseRankSet(in)
		s := fmt.Sprint(got)
		if !ok {
			s = "[] false"
		}
		if s != want {
			t.Errorf("parseRankSet(%q) = %s, want %s", in, s, want)
		}
	}
}

// TestCommGroupWithoutType: a comm_group_parallel_info entry without "type" (the
// fuzzer's find; it crashed the reader) is read as a group that is not p2p, beside a
// typed one.
func TestCommGroupWithoutType(t *testing.T) {
	var p summaryParts
	doc := `{"comm_group_parallel_info": [{"rank_set": [0, 1], "group_name": "7492", "group_id": "g", "pg_name": "dp"},
		{"type": "p2p", "rank_set": "(2, 3)", "group_name": "5", "group_id": "", "pg_name": "pp"}]}`
	require.NoError(t, parseCommGroupJSON(strings.NewReader(doc), clusterCommGroupJSON, &p))
	require.Len(t, p.groups, 2)
	assert.Equal(t, summaryGroup{Hash: "7492", RawName: "g", PGName: "dp", Ranks: []int{0, 1}, Source: clusterCommGroupJSON}, p.groups["7492"])
	assert.True(t, p.groups["5"].P2P)
	assert.Equal(t, []int{2, 3}, p.groups["5"].Ranks)
}
