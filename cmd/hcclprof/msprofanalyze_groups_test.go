package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/fixtures/render"
)

// TestMsprofAnalyzeGroupSizes: msprof-analyze's output of 4 ranks of an 8-rank job.
// communication_group.json records the group's members when the ranks' metadata
// named them (parallel_group_info): the group has 8 ranks, 4 not profiled, as the
// raw ranks say. Without it, or with a record of the ranks that used the group only
// (no group_id), the rank sets name only the profiled ranks: the size is "at least
// 4", said in group_size_source and a warning, and the job's size is not claimed
// (it read as exactly the 4 profiled ranks, the verdict flipping without a word).
func TestMsprofAnalyzeGroupSizes(t *testing.T) {
	cluster := filepath.Join(t.TempDir(), "c")
	_, stderr, code := runCLI(t, "gen", "demo-2server-8rank", "-o", cluster)
	require.Equal(t, 0, code, stderr)
	for r := 4; r < 8; r++ {
		dirs, err := filepath.Glob(filepath.Join(cluster, "*", "profiler_info_"+string(rune('0'+r))+".json"))
		require.NoError(t, err)
		require.Len(t, dirs, 1)
		require.NoError(t, os.RemoveAll(filepath.Dir(dirs[0])))
	}
	type report struct {
		Summary struct {
			RanksExpected *int   `json:"ranks_expected"`
			Verdict       string `json:"verdict"`
		} `json:"summary"`
		Collectives []struct {
			Group      string `json:"group"`
			Size       int    `json:"group_size"`
			SizeSource string `json:"group_size_source"`
		} `json:"collectives"`
		Warnings []string `json:"warnings"`
	}
	analyze := func(t *testing.T, dir string, args ...string) report {
		out, stderr, code := runCLI(t, append([]string{"analyze", dir, "--format", "json"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var rep report
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.NotEmpty(t, rep.Collectives)
		return rep
	}
	raw := analyze(t, cluster)
	require.NotNil(t, raw.Summary.RanksExpected)
	assert.Equal(t, 8, *raw.Summary.RanksExpected)
	assert.Equal(t, 8, raw.Collectives[0].Size)

	for _, tc := range []struct {
		name  string
		edit  func(t *testing.T, out string)
		exact bool
	}{
		{"communication_group.json with the members", nil, true},
		{"no communication_group.json", func(t *testing.T, out string) {
			require.NoError(t, os.Remove(filepath.Join(out, "communication_group.json")))
		}, false},
		{"communication_group.json without parallel group info", func(t *testing.T, out string) {
			path := filepath.Join(out, "communication_group.json")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			var cg map[string]any
			require.NoError(t, json.Unmarshal(b, &cg))
			for _, e := range cg["comm_group_parallel_info"].([]any) {
				rec := e.(map[string]any)
				rec["rank_set"], rec["group_id"], rec["pg_name"] = []int{0, 1, 2, 3}, "", ""
			}
			b, err = json.Marshal(cg)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b, 0o644))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cluster_analysis_output")
			require.NoError(t, render.WriteMsprofAnalyzeOutput(cluster, out))
			if tc.edit != nil {
				tc.edit(t, out)
			}
			// Links to the unprofiled ranks cannot be named without the members:
			// not what this test is about.
			rep := analyze(t, out, "--allow-partial")
			for _, c := range rep.Collectives {
				if tc.exact {
					assert.Equal(t, 8, c.Size, c.Group)
					assert.Equal(t, "communication_group.json", c.SizeSource, c.Group)
					continue
				}
				assert.Equal(t, 4, c.Size, c.Group)
				assert.True(t, strings.HasSuffix(c.SizeSource, "(at least)"), "%s: %s", c.Group, c.SizeSource)
			}
			if tc.exact {
				require.NotNil(t, rep.Summary.RanksExpected)
				assert.Equal(t, 8, *rep.Summary.RanksExpected)
				assert.Equal(t, raw.Summary.Verdict, rep.Summary.Verdict)
				return
			}
			assert.Nil(t, rep.Summary.RanksExpected, "the job's size is in no file")
			assert.Contains(t, strings.Join(rep.Warnings, "\n"), "group sizes not in the files")
		})
	}
}
