package parser

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// infoLevel1 is the real profiler_info_0.json of imagenet-2rank-level1, abridged.
const infoLevel1 = `{
    "config": {
        "common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
            "schedule": {"wait": 0, "active": 1, "warmup": 10, "repeat": 1, "skip_first": 40}, "record_shapes": true},
        "experimental_config": {
            "_profiler_level": "Level1", "_aic_metrics": "ACL_AICORE_PIPE_UTILIZATION", "_l2_cache": true,
            "_export_type": "text", "_op_attr": false, "_gc_detect_threshold": null}
    },
    "start_info": {"syscnt_enable": true, "freq": 100, "start_cnt": 17238197612056, "start_monotonic": 172163581670080},
    "end_info": {"collectionTimeEnd": 1736408884023552840, "MonotonicTimeEnd": 172164265133640},
    "rank_id": 0
}`

// info271 has the torch_npu 2.7.1 shape: string rank_id, list export type, versions.
const info271 = `{"config": {"experimental_config": {"_profiler_level": "Level0", "_export_type": ["text", "db"]}},
  "rank_id": "5", "torch_npu_version": "2.7.1", "cann_version": "8.3.RC1"}`

func TestParseProfilerInfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want profile.Info
	}{
		{"level1 2025-01", infoLevel1, profile.Info{ProfilerLevel: "Level1", ExportType: "text", RankID: 0, CollectionEndNs: 1736408884023552840}},
		{"torch_npu 2.7.1", info271, profile.Info{ProfilerLevel: "Level0", ExportType: "text,db", TorchNPUVersion: "2.7.1", CANNVersion: "8.3.RC1", RankID: 5}},
		{"no rank_id, single-element list", `{"config": {"experimental_config": {"_export_type": ["db"]}}}`, profile.Info{ExportType: "db", RankID: -1}},
		{"null rank_id, no config", `{"rank_id": null}`, profile.Info{RankID: -1}},
		{"rank_id -1 as written by msprof", `{"rank_id": -1, "config": null}`, profile.Info{RankID: -1}},
		{"rank_id 3.0, numeric version", `{"rank_id": 3.0, "cann_version": 8}`, profile.Info{RankID: 3, CANNVersion: "8"}},
		// The end of collection is a hint beside the directory name's date: anything but a
		// positive integer reads as absent.
		{"collection end", `{"end_info": {"collectionTimeEnd": 1736408884023552840}}`, profile.Info{RankID: -1, CollectionEndNs: 1736408884023552840}},
		{"collection end as a string", `{"end_info": {"collectionTimeEnd": "1736408884023552840"}}`, profile.Info{RankID: -1}},
		{"collection end negative", `{"end_info": {"collectionTimeEnd": -5}}`, profile.Info{RankID: -1}},
		{"collection end fractional", `{"end_info": {"collectionTimeEnd": 1.7e18}}`, profile.Info{RankID: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProfilerInfo(strings.NewReader(tc.in), "profiler_info_0.json")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseProfilerInfoErrors(t *testing.T) {
	const file = "r/profiler_info_1.json"
	tests := []struct {
		name      string
		in        string
		offset    int64
		fragments []string
	}{
		{"rank_id not a number", `{"rank_id": "zero"}`, 12, []string{"rank_id", `"zero"`}},
		{"rank_id fractional", `{"rank_id": 1.5}`, 12, []string{"rank_id"}},
		{"rank_id object", `{"rank_id": {}}`, 12, []string{"rank_id", "an object"}},
		{"config not an object", `{"config": "x"}`, 11, []string{"config"}},
		{"export type object", `{"config": {"experimental_config": {"_export_type": {"a": 1}}}}`, 52, []string{"_export_type"}},
		{"export type nested list", `{"config": {"experimental_config": {"_export_type": [["text"]]}}}`, 53, []string{"_export_type"}},
		{"not an object", `"text"`, 0, []string{"expected an object"}},
		{"syntax", `{"rank_id": 0,}`, 14, []string{"member name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := parseProfilerInfo(strings.NewReader(tc.in), file)
			se := requireSyntaxError(t, err, file, tc.fragments...)
			assert.Equal(t, tc.offset, se.Offset)
			assert.Equal(t, -1, info.RankID, "a failed parse does not invent a rank")
		})
	}
}

func TestParseProfilerInfoRealData(t *testing.T) {
	tests := []struct {
		rel  string
		want profile.Info
	}{
		{summaryL1R0 + "profiler_info_0.json", profile.Info{ProfilerLevel: "Level1", ExportType: "text", RankID: 0, CollectionEndNs: 1736408884023552840}},
		{summaryL1R1 + "profiler_info_1.json", profile.Info{ProfilerLevel: "Level1", ExportType: "text", RankID: 1, CollectionEndNs: 1736408884003926530}},
		{summaryL0R1 + "profiler_info_1.json", profile.Info{ProfilerLevel: "Level0", ExportType: "text", RankID: 1, CollectionEndNs: 1736405444136515360}},
		{"imagenet-2rank-db/rank0_ascend_pt/profiler_info_0.json", profile.Info{ProfilerLevel: "Level1", ExportType: "db", RankID: 0, CollectionEndNs: 1736410576713429440}},
	}
	// end_info.collectionTimeEnd as grep reads it from the files: the two Level1 ranks
	// of one job ended their collection 19.6 ms apart.
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			f := openSummaryReal(t, tc.rel)
			got, err := parseProfilerInfo(f, f.Name())
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			rank, ok := rankFromInfoFileName(f.Name())
			assert.True(t, ok)
			assert.Equal(t, got.RankID, rank, "file name and rank_id agree")
		})
	}
}

func TestParseProfilerMetadata(t *testing.T) {
	in := `{
	  "distributed_args": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 2, "sequence_parallel": true,
	                       "rank": 5, "world_size": 8, "note": null},
	  "parallel_group_info": {
	    "group_name_3": {"group_name": "tp", "group_rank": 1, "global_ranks": [4, 5]},
	    "100%enp189s0f1_55000_0_1738895521183247": {"group_name": "default_group", "group_rank": "5", "global_ranks": ["0", 1, 2, 3, 4, 5, 6, 7]},
	    "group_name_1": {"group_name": "pp", "group_rank": 0, "global_ranks": [5, 7]}
	  },
	  "ENV_VARIABLES": {"HCCL_RDMA_TC": "", "HCCL_BUFFSIZE": "200", "ASCEND_LAUNCH_BLOCKING": 0, "FLAG": true,
	                    "NONE": null, "LIST": [1, "a"]}
	}`
	md, err := parseProfilerMetadata(strings.NewReader(in), "profiler_metadata.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"HCCL_RDMA_TC": "", "HCCL_BUFFSIZE": "200", "ASCEND_LAUNCH_BLOCKING": "0", "FLAG": "true",
		"NONE": "", "LIST": "[1 a]",
	}, md.Env)
	assert.Equal(t, []profile.ParallelGroup{
		{HCCLName: "100%enp189s0f1_55000_0_1738895521183247", Name: "default_group", GroupRank: 5, GlobalRanks: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{HCCLName: "group_name_1", Name: "pp", GroupRank: 0, GlobalRanks: []int{5, 7}},
		{HCCLName: "group_name_3", Name: "tp", GroupRank: 1, GlobalRanks: []int{4, 5}},
	}, md.ParallelGroups)
	assert.Equal(t, map[string]any{
		"tensor_model_parallel_size": 2.0, "pipeline_model_parallel_size": 2.0, "sequence_parallel": true,
		"rank": 5.0, "world_size": 8.0, "note": nil,
	}, md.DistributedArgs)

	md, err = parseProfilerMetadata(strings.NewReader(`{}`), "profiler_metadata.json")
	require.NoError(t, err)
	assert.Equal(t, profile.Metadata{}, md)
}

func TestParseProfilerMetadataErrors(t *testing.T) {
	const file = "r/profiler_metadata.json"
	tests := []struct {
		name      string
		in        string
		offset    int64
		fragments []string
	}{
		{"env not an object", `{"ENV_VARIABLES": []}`, 18, []string{"ENV_VARIABLES"}},
		{"group not an object", `{"parallel_group_info": {"g": 1}}`, 30, []string{`"g"`}},
		{"global_ranks not a list", `{"parallel_group_info": {"g": {"global_ranks": 3}}}`, 47, []string{"global_ranks"}},
		{"bad global rank", `{"parallel_group_info": {"g": {"global_ranks": [1, "x"]}}}`, 51, []string{"global_ranks", `"x"`}},
		{"null global rank", `{"parallel_group_info": {"g": {"global_ranks": [null]}}}`, 48, []string{"null rank"}},
		// Taken as members until now: the group's size and its unprofiled ranks were wrong.
		{"negative global rank", `{"parallel_group_info": {"g": {"global_ranks": [-5, 1]}}}`, 47, []string{"global_ranks", "rank -5 is negative"}},
		{"global rank twice", `{"parallel_group_info": {"g": {"global_ranks": [0, "1", 1]}}}`, 47, []string{"rank 1 is listed twice"}},
		{"negative rank in a shared list", `{"parallel_group_info": {"g": {"global_ranks": [` + sharedRanksWithNegative() + `]}}}`, 47,
			[]string{"rank -1 is negative"}},
		{"bad group name", `{"parallel_group_info": {"g": {"group_name": {}}}}`, 45, []string{"group_name"}},
		{"distributed_args not an object", `{"distributed_args": 1}`, 21, []string{"distributed_args"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseProfilerMetadata(strings.NewReader(tc.in), file)
			se := requireSyntaxError(t, err, file, tc.fragments...)
			assert.Equal(t, tc.offset, se.Offset)
		})
	}
}

func TestParseProfilerMetadataRealData(t *testing.T) {
	f := openSummaryReal(t, summaryL1R0+"profiler_metadata.json")
	md, err := parseProfilerMetadata(f, f.Name())
	require.NoError(t, err)
	assert.Len(t, md.Env, 8)
	assert.Contains(t, md.Env, "HCCL_RDMA_TC")
	for k, v := range md.Env {
		assert.Empty(t, v, k)
	}
	assert.Empty(t, md.ParallelGroups)
	assert.Nil(t, md.DistributedArgs)
}

func TestRankFromInfoFileName(t *testing.T) {
	tests := []struct {
		name string
		rank int
		ok   bool
	}{
		{"profiler_info_7.json", 7, true},
		{"profiler_info_0.json", 0, true},
		{"profiler_info_123.json", 123, true},
		{"rank0_ascend_pt/profiler_info_15.json", 15, true},
		{"profiler_info.json", 0, false},
		{"profiler_info_.json", 0, false},
		{"profiler_info_-1.json", 0, false},
		{"profiler_info_x.json", 0, false},
		{"profiler_info_7.json.bak", 0, false},
		{"profiler_info_99999999999999999999.json", 0, false},
		{"profiler_metadata.json", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		rank, ok := rankFromInfoFileName(tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.rank, rank, tc.name)
	}
}

func FuzzProfilerInfo(f *testing.F) {
	f.Add([]byte(infoLevel1))
	f.Add([]byte(info271))
	f.Add([]byte(`{"rank_id": null, "config": {"experimental_config": {"_export_type": []}}}`))
	f.Add([]byte(`{"parallel_group_info": {"g": {"group_name": "dp", "group_rank": "1", "global_ranks": [0, "1"]}},
	  "distributed_args": {"rank": 1}, "ENV_VARIABLES": {"A": 1.5, "B": {"c": [true]}}}`))
	addRealSeeds(f,
		summaryL1R0+"profiler_info_0.json",
		summaryL1R0+"profiler_metadata.json",
		"imagenet-2rank-db/rank0_ascend_pt/profiler_info_0.json",
	)
	const file = "fuzz/profiler_info_0.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := parseProfilerInfo(bytes.NewReader(data), file); err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("parseProfilerInfo error does not name the file: %v", err)
		}
		if _, err := parseProfilerMetadata(bytes.NewReader(data), file); err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("parseProfilerMetadata error does not name the file: %v", err)
		}
	})
}

// TestRankListsShared: a large group's rank list, repeated in every rank's metadata,
// is converted once and shared; a small one is converted each time.
func TestRankListsShared(t *testing.T) {
	metadata := func(n int) string {
		ranks := make([]string, n)
		for i := range ranks {
			ranks[i] = strconv.Itoa(i)
		}
		return `{"parallel_group_info": {"g": {"group_name": "dp", "group_rank": 0, "global_ranks": [` + strings.Join(ranks, ", ") + `]}}}`
	}
	parse := func(doc string) []int {
		md, err := parseProfilerMetadata(strings.NewReader(doc), "profiler_metadata.json")
		require.NoError(t, err)
		require.Len(t, md.ParallelGroups, 1)
		return md.ParallelGroups[0].GlobalRanks
	}
	a, b := parse(metadata(4096)), parse(metadata(4096))
	require.Len(t, a, 4096)
	assert.Equal(t, 4095, a[4095])
	assert.Same(t, &a[0], &b[0], "one list for both ranks")
	small1, small2 := parse(metadata(8)), parse(metadata(8))
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, small1)
	assert.NotSame(t, &small1[0], &small2[0])
}

// sharedRanksWithNegative is a rank list long enough to be read as a shared int array
// (jsonx.MinSharedIntArray), holding a -1.
func sharedRanksWithNegative() string {
	var b strings.Builder
	for i := range 300 {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == 150 {
			b.WriteString("-1")
			continue
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// TestProfilerMetadataIntArrays: rank lists read with integer arrays packed hold the
// ranks, plain or written as floats.
func TestProfilerMetadataIntArrays(t *testing.T) {
	md, err := parseProfilerMetadata(strings.NewReader(`{"parallel_group_info": {"g": {"group_name": "dp", "group_rank": 1, "global_ranks": [0, 8, 16]},
		"h": {"group_name": "tp", "group_rank": 0, "global_ranks": [0, 1.0]}}}`), "m.json")
	require.NoError(t, err)
	require.Len(t, md.ParallelGroups, 2)
	assert.Equal(t, []int{0, 8, 16}, md.ParallelGroups[0].GlobalRanks)
	assert.Equal(t, []int{0, 1}, md.ParallelGroups[1].GlobalRanks)
}
