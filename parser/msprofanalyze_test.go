package parser_test

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// genRank is what the msprof-analyze output generator reads of one generated rank.
type genRank struct {
	rank      int
	dir       string
	stepCSV   [][]string
	comm      map[string]map[string]map[string]json.RawMessage // step → p2p/collective → op → info
	matrix    map[string]map[string]map[string]map[string]map[string]any
	groupInfo map[string]struct {
		GroupName   string `json:"group_name"`
		GlobalRanks []int  `json:"global_ranks"`
	}
}

// writeTextCluster generates the demo cluster in the torch_npu text export.
func writeTextCluster(t *testing.T) string {
	t.Helper()
	run := runScenario(t, "demo-2server-8rank", nil)
	dir := t.TempDir()
	_, _, err := render.WriteCluster(run, dir, render.Options{Format: render.FormatText})
	require.NoError(t, err)
	return dir
}

func readGenRanks(t *testing.T, cluster string) []genRank {
	t.Helper()
	infos, err := filepath.Glob(filepath.Join(cluster, "*", "profiler_info_*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, infos)
	var out []genRank
	for _, info := range infos {
		n, ok := parser.RankFromInfoFileName(info)
		require.True(t, ok)
		g := genRank{rank: n, dir: filepath.Dir(info)}
		apo := filepath.Join(g.dir, "ASCEND_PROFILER_OUTPUT")
		f, err := os.Open(filepath.Join(apo, "step_trace_time.csv"))
		require.NoError(t, err)
		g.stepCSV, err = csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err)
		readJSON(t, filepath.Join(apo, "communication.json"), &g.comm)
		readJSON(t, filepath.Join(apo, "communication_matrix.json"), &g.matrix)
		var md struct {
			PGI map[string]struct {
				GroupName   string `json:"group_name"`
				GlobalRanks []int  `json:"global_ranks"`
			} `json:"parallel_group_info"`
		}
		readJSON(t, filepath.Join(g.dir, "profiler_metadata.json"), &md)
		g.groupInfo = md.PGI
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rank < out[j].rank })
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // keep the numbers' text as written
	require.NoError(t, d.Decode(v))
}

// pyTuple writes a rank set as Python's str(tuple(...)): "(0, 1)", "(0,)".
func pyTuple(ranks []int) string {
	parts := make([]string, len(ranks))
	for i, r := range ranks {
		parts[i] = strconv.Itoa(r)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func groupOf(key string) string { return key[strings.LastIndexByte(key, '@')+1:] }

// clusterGroups maps each group hash to the sorted ranks whose files name it, as
// msprof-analyze builds its rank sets.
func clusterGroups(ranks []genRank) map[string][]int {
	sets := map[string]map[int]bool{}
	for _, g := range ranks {
		for _, kinds := range g.comm {
			for _, ops := range kinds {
				for op := range ops {
					if strings.HasPrefix(op, "Total") {
						continue
					}
					if sets[groupOf(op)] == nil {
						sets[groupOf(op)] = map[int]bool{}
					}
					sets[groupOf(op)][g.rank] = true
				}
			}
		}
	}
	out := map[string][]int{}
	for h, s := range sets {
		for r := range s {
			out[h] = append(out[h], r)
		}
		sort.Ints(out[h])
	}
	return out
}

// writeMsprofAnalyzeText writes what `msprof-analyze -m all` makes of a text cluster
// into out (the generator's rendering of it).
func writeMsprofAnalyzeText(t *testing.T, ranks []genRank, out string) {
	t.Helper()
	require.NoError(t, render.WriteMsprofAnalyzeOutput(filepath.Dir(ranks[0].dir), out))
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// writeMsprofAnalyzeDB writes cluster_analysis.db as msprof-analyze's db path does
// (the current table names; units as in the JSON files), from the same ranks.
func writeMsprofAnalyzeDB(t *testing.T, ranks []genRank, out string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(out, 0o755))
	path := filepath.Join(out, "cluster_analysis.db")
	execDB(t, path,
		`CREATE TABLE ClusterStepTraceTime (step TEXT, type TEXT, "index" TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC, dp_index INTEGER, pp_index INTEGER, tp_index INTEGER)`,
		`CREATE TABLE ClusterCommunicationTime (step TEXT, rank_id INTEGER, hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapsed_time NUMERIC, transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, synchronization_time_ratio NUMERIC, wait_time_ratio NUMERIC)`,
		`CREATE TABLE ClusterCommunicationBandwidth (step TEXT, rank_id INTEGER, hccl_op_name TEXT, group_name TEXT, band_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, large_packet_ratio NUMERIC, package_size NUMERIC, count NUMERIC, total_duration NUMERIC)`,
		`CREATE TABLE ClusterCommunicationMatrix (step TEXT, hccl_op_name TEXT, group_name TEXT, src_rank TEXT, dst_rank TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, transport_type TEXT, op_name TEXT)`,
		`CREATE TABLE CommunicationGroupMapping (type TEXT, rank_set TEXT, group_name TEXT, group_id TEXT, pg_name TEXT)`,
	)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	exec := func(q string, args ...any) {
		_, err := db.Exec(q, args...)
		require.NoError(t, err, q)
	}
	num := func(v any) any {
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			require.NoError(t, err)
			return f
		}
		return v
	}
	groups := clusterGroups(ranks)
	for h, members := range groups {
		exec(`INSERT INTO CommunicationGroupMapping VALUES ('collective', ?, ?, '', 'dp')`, strings.ReplaceAll(pyTuple(members), " ", ""), h)
	}
	for _, g := range ranks {
		for _, rec := range g.stepCSV[1:] {
			args := []any{rec[0], "rank", strconv.Itoa(g.rank)}
			for _, f := range rec[1:] {
				v, err := strconv.ParseFloat(f, 64)
				require.NoError(t, err)
				args = append(args, v)
			}
			exec(`INSERT INTO ClusterStepTraceTime VALUES (?,?,?,?,?,?,?,?,?,?,?,?,0,0,0)`, args...)
		}
		for step, kinds := range g.comm {
			for _, ops := range kinds {
				for op, raw := range ops {
					if strings.HasPrefix(op, "Total") {
						continue
					}
					var info map[string]map[string]any
					d := json.NewDecoder(bytes.NewReader(raw))
					d.UseNumber()
					require.NoError(t, d.Decode(&info))
					name, group := op[:strings.LastIndexByte(op, '@')], groupOf(op)
					ti := info["Communication Time Info"]
					exec(`INSERT INTO ClusterCommunicationTime VALUES (?,?,?,?,?,?,?,?,?,?,0,0)`, step, g.rank, name, group,
						num(ti["Start Timestamp(us)"]), num(ti["Elapse Time(ms)"]), num(ti["Transit Time(ms)"]),
						num(ti["Wait Time(ms)"]), num(ti["Synchronization Time(ms)"]), num(ti["Idle Time(ms)"]))
					for transport, bwAny := range info["Communication Bandwidth Info"] {
						bw := bwAny.(map[string]any)
						row := func(size, count, dur any) {
							exec(`INSERT INTO ClusterCommunicationBandwidth VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, step, g.rank, name, group, transport,
								num(bw["Transit Size(MB)"]), num(bw["Transit Time(ms)"]), num(bw["Bandwidth(GB/s)"]), num(bw["Large Packet Ratio"]), size, count, dur)
						}
						dist, _ := bw["Size Distribution"].(map[string]any)
						if len(dist) == 0 {
							row(0, 0, 0)
						}
						for size, bin := range dist {
							s, err := strconv.ParseFloat(size, 64)
							require.NoError(t, err)
							b := bin.([]any)
							row(s, num(b[0]), num(b[1]))
						}
					}
				}
			}
		}
		for step, kinds := range g.matrix {
			for _, ops := range kinds {
				for op, links := range ops {
					members := groups[groupOf(op)]
					for key, link := range links {
						src, dst, _ := strings.Cut(key, "-")
						s, _ := strconv.Atoi(src)
						d, _ := strconv.Atoi(dst)
						l := link
						exec(`INSERT INTO ClusterCommunicationMatrix VALUES (?,?,?,?,?,?,?,?,?,?)`, step, op[:strings.LastIndexByte(op, '@')], groupOf(op),
							strconv.Itoa(members[s]), strconv.Itoa(members[d]), num(l["Transit Size(MB)"]), num(l["Transit Time(ms)"]),
							num(l["Bandwidth(GB/s)"]), l["Transport Type"], l["Op Name"])
					}
				}
			}
		}
	}
}

// rawRank loads one generated rank from its own files.
func rawRank(t *testing.T, dir string) *profile.Rank {
	t.Helper()
	in, err := parser.Discover([]string{dir})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	return parser.LoadRank(in.Ranks[0])
}

// requireSameSummaries checks that a rank read from msprof-analyze's output carries
// the figures its own files give: step rows, per-op statistics, and the matrix (the
// bandwidth, which msprof-analyze recomputes, to 1e-4 GB/s).
func requireSameSummaries(t *testing.T, want, got *profile.Rank, stepsOnly bool) {
	t.Helper()
	assert.Equal(t, profile.FormatMsprofAnalyze, got.Format)
	assert.False(t, got.HasTimeline)
	assert.Empty(t, got.Problems)
	require.NotEmpty(t, want.StepTrace)
	assert.Equal(t, want.StepTrace, got.StepTrace, "rank %d step trace", want.Rank)
	if stepsOnly {
		return
	}
	require.NotEmpty(t, want.CommStats)
	require.Equal(t, len(want.CommStats), len(got.CommStats), "rank %d ops", want.Rank)
	for i := range want.CommStats {
		assert.Equal(t, want.CommStats[i], got.CommStats[i], "rank %d op %d", want.Rank, i)
	}
	require.NotEmpty(t, want.CommMatrix)
	require.Equal(t, len(want.CommMatrix), len(got.CommMatrix), "rank %d links", want.Rank)
	for i := range want.CommMatrix {
		w, g := want.CommMatrix[i], got.CommMatrix[i]
		assert.InDelta(t, w.BandwidthGBps, g.BandwidthGBps, 1e-4, "rank %d link %d", want.Rank, i)
		w.BandwidthGBps, g.BandwidthGBps = 0, 0
		assert.Equal(t, w, g, "rank %d link %d", want.Rank, i)
	}
}

// TestMsprofAnalyzeOutputEqualsRanks: msprof-analyze's cluster output of a generated
// cluster, in text and in db form, gives back each rank's step rows, per-op
// statistics and matrix links as the rank's own files give them, and the groups.
func TestMsprofAnalyzeOutputEqualsRanks(t *testing.T) {
	cluster := writeTextCluster(t)
	ranks := readGenRanks(t, cluster)
	require.Len(t, ranks, 8)

	for _, form := range []string{"text", "db"} {
		t.Run(form, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cluster_analysis_output")
			if form == "text" {
				writeMsprofAnalyzeText(t, ranks, out)
			} else {
				writeMsprofAnalyzeDB(t, ranks, out)
			}
			c, err := parser.LoadCluster([]string{filepath.Dir(out)}, parser.LoadOptions{Workers: 1})
			require.NoError(t, err)
			require.Len(t, c.Ranks, len(ranks))
			for i, g := range ranks {
				got := c.Ranks[i]
				require.Equal(t, g.rank, got.Rank)
				requireSameSummaries(t, rawRank(t, g.dir), got, false)
				require.Len(t, got.Metadata.ParallelGroups, 1)
				pg := got.Metadata.ParallelGroups[0]
				assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, pg.GlobalRanks)
				assert.Equal(t, g.rank, pg.GroupRank)
				assert.Equal(t, "dp", pg.Name)
				assert.Equal(t, got.CommStats[0].Group, pg.Key, "the group is keyed by the ops' @hash")
				if form == "text" {
					assert.Equal(t, profile.DoubleHash(pg.HCCLName), mustUint(t, pg.Key), "the raw HCCL name hashes to the key")
				}
			}
			joined := strings.Join(c.Notes, "\n")
			assert.Contains(t, joined, "ranks 0-7 read from msprof-analyze's output "+out)
			assert.Contains(t, joined, "not the profiler's raw output")
		})
	}
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err)
	return v
}

// TestMsprofAnalyzeOutputBesideRawRanks: msprof-analyze writes its output inside the
// cluster it analysed. The raw rank directories win over the summaries of the same
// ranks, which are named as ignored; ranks only the summary covers are read from it.
func TestMsprofAnalyzeOutputBesideRawRanks(t *testing.T) {
	cluster := writeTextCluster(t)
	ranks := readGenRanks(t, cluster)
	out := filepath.Join(cluster, "cluster_analysis_output")
	writeMsprofAnalyzeText(t, ranks, out)

	c, err := parser.LoadCluster([]string{cluster}, parser.LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 8)
	for _, r := range c.Ranks {
		assert.Equal(t, profile.FormatTorchNPUText, r.Format)
		assert.True(t, r.HasTimeline)
	}
	assert.Contains(t, c.Notes, "ignored msprof-analyze's output "+out+" (ranks 0-7): every rank it summarises was read from its raw rank directory, which wins over the summary")

	// Ranks 4-7 only in the summary.
	for _, g := range ranks[4:] {
		require.NoError(t, os.RemoveAll(g.dir))
	}
	c, err = parser.LoadCluster([]string{cluster}, parser.LoadOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 8)
	for i, r := range c.Ranks {
		if i < 4 {
			assert.Equal(t, profile.FormatTorchNPUText, r.Format)
			continue
		}
		assert.Equal(t, profile.FormatMsprofAnalyze, r.Format, "rank %d", r.Rank)
		assert.NotEmpty(t, r.StepTrace)
		assert.NotEmpty(t, r.CommStats)
	}
	assert.Contains(t, c.Notes, "ignored msprof-analyze's summaries in "+out+" for ranks 0-3: read from their raw rank directories, which win over the summary")
	assert.Contains(t, strings.Join(c.Notes, "\n"), "ranks 4-7 read from msprof-analyze's output "+out)
	assert.Contains(t, strings.Join(c.Notes, "\n"), "mixed cluster")
}

// TestMsprofAnalyzeSingleFile: a cluster_step_trace_time.csv named alone gives the
// ranks' step rows, and only them.
func TestMsprofAnalyzeSingleFile(t *testing.T) {
	cluster := writeTextCluster(t)
	ranks := readGenRanks(t, cluster)
	out := filepath.Join(t.TempDir(), "kept")
	writeMsprofAnalyzeText(t, ranks, out)
	c, err := parser.LoadCluster([]string{filepath.Join(out, "cluster_step_trace_time.csv")}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 8)
	for i, g := range ranks {
		requireSameSummaries(t, rawRank(t, g.dir), c.Ranks[i], true)
		assert.Empty(t, c.Ranks[i].CommStats)
		assert.Equal(t, []string{"cluster_step_trace_time.csv"}, c.Ranks[i].FilesUsed)
	}
}

// TestMsprofAnalyzeTotalsNotOps: msprof-analyze writes a "Total Op Info" per rank
// set, step and rank beside the ops it sums: keyed "Total Op Info@group" since
// September 2025, a bare "Total Op Info" (group_name ” in cluster_analysis.db)
// before. Neither is an op: the ranks' ops are their own files', without a problem
// or a note. A total that is not its ops' sum is named in a note, and the ops
// counted.
func TestMsprofAnalyzeTotalsNotOps(t *testing.T) {
	cluster := writeTextCluster(t)
	ranks := readGenRanks(t, cluster)
	raw := make([]*profile.Rank, len(ranks))
	for i, g := range ranks {
		raw[i] = rawRank(t, g.dir)
	}
	// rekey renames the totals of cluster_communication.json and scales the first.
	rekey := func(t *testing.T, out string, bare bool, scale float64) {
		path := filepath.Join(out, "cluster_communication.json")
		var comm map[string]map[string]map[string]map[string]map[string]map[string]any
		readJSON(t, path, &comm)
		scaled := false
		for _, steps := range comm {
			for _, ops := range steps {
				for op, byRank := range ops {
					if !strings.HasPrefix(op, "Total Op Info") {
						continue
					}
					if bare {
						delete(ops, op)
						ops["Total Op Info"] = byRank
					}
					if scale != 1 && !scaled {
						for _, info := range byRank {
							ti := info["Communication Time Info"]
							f, err := ti["Elapse Time(ms)"].(json.Number).Float64()
							require.NoError(t, err)
							ti["Elapse Time(ms)"] = f * scale
							scaled = true
							break
						}
					}
				}
			}
		}
		writeJSONFile(t, path, comm)
	}
	// dbTotals adds msprof-analyze's total rows to cluster_analysis.db.
	dbTotals := func(t *testing.T, out string, group string) {
		execDB(t, filepath.Join(out, "cluster_analysis.db"),
			`INSERT INTO ClusterCommunicationTime SELECT step, rank_id, 'Total Op Info', `+group+`, 0, sum(elapsed_time), sum(transit_time), sum(wait_time), sum(synchronization_time), sum(idle_time), 0, 0 FROM ClusterCommunicationTime GROUP BY step, rank_id, group_name`,
			`INSERT INTO ClusterCommunicationBandwidth SELECT step, rank_id, 'Total Op Info', `+group+`, band_type, sum(transit_size), sum(transit_time), 0, 0, package_size, sum(count), sum(total_duration) FROM ClusterCommunicationBandwidth GROUP BY step, rank_id, group_name, band_type, package_size`)
	}
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, out string)
		note  bool
	}{
		{"text, Total Op Info@group", func(t *testing.T, out string) { writeMsprofAnalyzeText(t, ranks, out) }, false},
		{"text, bare Total Op Info", func(t *testing.T, out string) {
			writeMsprofAnalyzeText(t, ranks, out)
			rekey(t, out, true, 1)
		}, false},
		{"db, group_name the group", func(t *testing.T, out string) {
			writeMsprofAnalyzeDB(t, ranks, out)
			dbTotals(t, out, "group_name")
		}, false},
		{"db, group_name empty", func(t *testing.T, out string) {
			writeMsprofAnalyzeDB(t, ranks, out)
			dbTotals(t, out, "''")
		}, false},
		{"text, a total off its ops", func(t *testing.T, out string) {
			writeMsprofAnalyzeText(t, ranks, out)
			rekey(t, out, true, 2)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cluster_analysis_output")
			tc.write(t, out)
			c, err := parser.LoadCluster([]string{filepath.Dir(out)}, parser.LoadOptions{Workers: 1})
			require.NoError(t, err)
			require.Len(t, c.Ranks, len(ranks))
			notes := 0
			for i, got := range c.Ranks {
				for _, op := range got.CommStats {
					assert.NotContains(t, op.Name, "Total", "rank %d", got.Rank)
				}
				requireSameSummaries(t, raw[i], got, false)
				for _, n := range got.Notes {
					if strings.Contains(n, "Total Op Info") {
						notes++
						assert.Contains(t, n, "is not the sum of the rank's ops for step")
					}
				}
			}
			if tc.note {
				assert.Equal(t, 1, notes, "one rank's total is off")
			} else {
				assert.Zero(t, notes)
			}
		})
	}
}

// TestMsprofAnalyzeRecipesWithoutSteps: of msprof-analyze's recipes, hccl_sum
// (Hccl*Stats, per op type) and communication_time_sum (ClusterCommunicationTime, per
// op) hold no step; alone they leave nothing to analyse, and the message names the
// recipe and the msprof-analyze commands that give a step breakdown (it said only "no
// profiler output found", or "no step found"). cluster_time_summary's table is read
// (TestClusterTimeSummaryIsTheStepTable).
func TestMsprofAnalyzeRecipesWithoutSteps(t *testing.T) {
	for _, tc := range []struct {
		recipe string
		tables []string
	}{
		{"hccl_sum", []string{`CREATE TABLE HcclPerRankStats (OpType TEXT, Count INTEGER, MeanNs REAL, SumNs REAL, Rank INTEGER)`,
			`INSERT INTO HcclPerRankStats VALUES ('hcom_allReduce_', 4, 25527025, 102108100, 0)`}},
		{"communication_time_sum", []string{`CREATE TABLE ClusterCommunicationTime (step TEXT, rank_id INTEGER, hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapsed_time NUMERIC, transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC)`,
			`INSERT INTO ClusterCommunicationTime VALUES ('step50', 0, 'hcom_allReduce__210_0_1', '171', 1736410576431645.2, 88.75, 0.23, 3.57, 3.52, 84.95)`}},
	} {
		t.Run(tc.recipe, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cluster_analysis_output")
			require.NoError(t, os.MkdirAll(out, 0o755))
			execDB(t, filepath.Join(out, "cluster_analysis.db"), append([]string{`CREATE TABLE CommunicationGroupMapping (type TEXT, rank_set TEXT, group_name TEXT, group_id TEXT, pg_name TEXT)`}, tc.tables...)...)
			c, err := parser.LoadCluster([]string{out}, parser.LoadOptions{Workers: 1})
			var msg string
			if err != nil {
				msg = err.Error()
			} else {
				for _, r := range c.Ranks {
					assert.Empty(t, r.StepTrace)
					msg += strings.Join(r.Problems, "\n")
				}
			}
			assert.Contains(t, msg, tc.recipe)
			assert.Contains(t, msg, "cluster_analysis.db has no step breakdown")
			assert.Contains(t, msg, "msprof-analyze -m all -d CLUSTER")
			assert.Contains(t, msg, "-m cluster_time_summary")
		})
	}
}
