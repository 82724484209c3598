package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/internal/testkit"
	"github.com/hcclprof/hcclprof/report"
)

// The corruption corpus: damaged inputs derived at test time from the bundled samples
// (and the real profiler output when present), one case per class of damage, each run
// through every command of the binary. The contract under test: every figure is
// measured from the input, or the rank is flagged incomplete with a reason naming the
// file (exit 3), or the input is refused (exit 2); never a panic, a hang, or a figure
// out of its range with exit 0.

// copyRun copies a sample (or real-data) run into a fresh temp directory, writable.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	}))
	return dir
}

// rankFile is the path of rel inside the first rank directory of run.
func rankFile(t *testing.T, run, rel string) string {
	t.Helper()
	ranks, err := filepath.Glob(filepath.Join(run, "*_ascend_pt"))
	require.NoError(t, err)
	require.NotEmpty(t, ranks, run)
	return filepath.Join(ranks[0], rel)
}

var readFile = testkit.ReadFile

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

// cutInsideLastRow cuts a CSV in the middle of its last data row, after a comma and a
// digit, as a writer killed mid-row leaves it.
func cutInsideLastRow(t *testing.T, p string) {
	t.Helper()
	b := bytes.TrimRight(readFile(t, p), "\r\n")
	start := bytes.LastIndexByte(b, '\n') + 1
	row := b[start:]
	i := bytes.IndexByte(row, ',')
	require.Positive(t, i)
	j := bytes.IndexByte(row[i+1:], ',') // the second field, cut after its first digit
	require.Positive(t, j)
	writeFile(t, p, b[:start+i+1+j+2])
}

// editCSV rewrites one column of the data rows of a CSV (row 0 is the first data row).
func editCSV(t *testing.T, p string, edit func(header []string, rows [][]string) [][]string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(string(readFile(t, p)), "\r\n"), "\n")
	header := strings.Split(strings.TrimRight(lines[0], "\r"), ",")
	var rows [][]string
	for _, l := range lines[1:] {
		rows = append(rows, strings.Split(strings.TrimRight(l, "\r"), ","))
	}
	rows = edit(header, rows)
	var out strings.Builder
	out.WriteString(strings.Join(header, ",") + "\n")
	for _, r := range rows {
		out.WriteString(strings.Join(r, ",") + "\n")
	}
	writeFile(t, p, []byte(out.String()))
}

func col(t *testing.T, header []string, name string) int {
	t.Helper()
	for i, h := range header {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q in %v", name, header)
	return -1
}

func setStage(v string) func(t *testing.T, run string) {
	return func(t *testing.T, run string) {
		editCSV(t, rankFile(t, run, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv"), func(h []string, rows [][]string) [][]string {
			rows[0][col(t, h, "Stage")] = v
			return rows
		})
	}
}

// editJSON rewrites a JSON object file.
func editJSON[T any](t *testing.T, p string, edit func(doc T)) {
	t.Helper()
	var doc T
	require.NoError(t, json.Unmarshal(readFile(t, p), &doc))
	edit(doc)
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	writeFile(t, p, b)
}

// editTrace rewrites the events of a rank's trace_view.json.
func editTrace(t *testing.T, p string, edit func(ev map[string]any) bool) {
	t.Helper()
	editJSON(t, p, func(events []map[string]any) {
		n := 0
		for _, ev := range events {
			if edit(ev) {
				n++
			}
		}
		require.Positive(t, n, "no event edited in %s", p)
	})
}

// setLevel1OpTime sets one figure of the first AllReduce of the real Level1 run's
// rank-0 communication.json.
func setLevel1OpTime(key string, v any) func(t *testing.T, run string) {
	return func(t *testing.T, run string) {
		editJSON(t, filepath.Join(run, "rank0_ascend_pt", commRel), func(doc map[string]any) {
			op := doc["step50"].(map[string]any)["collective"].(map[string]any)["hcom_allReduce__586_0_1@17522688603477080586"].(map[string]any)
			op["Communication Time Info"].(map[string]any)[key] = v
		})
	}
}

// hardwarePids are the pids of the "Ascend Hardware" processes of a trace.
func hardwarePids(t *testing.T, p string) map[float64]bool {
	var events []map[string]any
	require.NoError(t, json.Unmarshal(readFile(t, p), &events))
	pids := map[float64]bool{}
	for _, ev := range events {
		if ev["name"] == "process_name" {
			if args, _ := ev["args"].(map[string]any); args != nil && args["name"] == "Ascend Hardware" {
				pids[ev["pid"].(float64)] = true
			}
		}
	}
	require.NotEmpty(t, pids)
	return pids
}

var execDB = testkit.ExecDB

const (
	traceRel = "ASCEND_PROFILER_OUTPUT/trace_view.json"
	stepRel  = "ASCEND_PROFILER_OUTPUT/step_trace_time.csv"
	commRel  = "ASCEND_PROFILER_OUTPUT/communication.json"
	dbRel    = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
)

// The commands a case runs, by name; each gets the run directory and a scratch dir.
var corpusCommands = map[string]func(run, scratch string) []string{
	"analyze":   func(run, _ string) []string { return []string{"analyze", run, "--format", "json"} },
	"advise":    func(run, _ string) []string { return []string{"advise", run, "--format", "json"} },
	"calibrate": func(run, _ string) []string { return []string{"calibrate", run, "--format", "json"} },
	"whatif": func(run, _ string) []string {
		return []string{"whatif", run, "--set", "overlap=0.9", "--format", "json"}
	},
	"export": func(run, scratch string) []string {
		return []string{"export", run, "--to", "csv", "-o", filepath.Join(scratch, "csv")}
	},
	"inspect": func(run, _ string) []string { return []string{"inspect", run, "--format", "json"} },
	"summarize": func(run, scratch string) []string {
		return []string{"summarize", run, "-o", filepath.Join(scratch, "summaries")}
	},
}

var allCommands = []string{"analyze", "advise", "calibrate", "whatif", "export", "inspect", "summarize"}

type corruptCase struct {
	name string
	// base is the run the case damages: a sample path, or a real-data folder ("realdata:...").
	base   string
	mutate func(t *testing.T, run string)
	// target is what the commands are given (default: the run directory).
	target func(run string) string
	extra  []string // flags added to every command
	cmds   []string // default: every command
	code   int      // the exit code expected of every command
	// codes overrides code per command (whatif refuses a run it cannot fit: exit 2).
	codes  map[string]int
	reason string // a substring of stderr when the code is 2 or 3
	check  func(t *testing.T, cmd, stdout string)
}

func corruptCases() []corruptCase {
	text, db := sample, sample+"-db"
	cutHalf := func(rel string) func(t *testing.T, run string) {
		return func(t *testing.T, run string) {
			p := rankFile(t, run, rel)
			b := readFile(t, p)
			writeFile(t, p, b[:len(b)/2])
		}
	}
	empty := func(rel string) func(t *testing.T, run string) {
		return func(t *testing.T, run string) { writeFile(t, rankFile(t, run, rel), nil) }
	}
	return []corruptCase{
		{name: "trace_view.json truncated", base: text, mutate: cutHalf(traceRel), code: 3, reason: "trace_view.json"},
		{name: "step_trace_time.csv cut inside a row", base: text, code: 3, reason: "step_trace_time.csv",
			mutate: func(t *testing.T, run string) { cutInsideLastRow(t, rankFile(t, run, stepRel)) }},
		{name: "Level0 step_trace_time.csv cut inside a row", base: "realdata:imagenet-2rank-level0", code: 3, reason: "step_trace_time.csv",
			codes:  map[string]int{"whatif": 2}, // no AllReduce with a size to fit, and the damage named
			mutate: func(t *testing.T, run string) { cutInsideLastRow(t, filepath.Join(run, "rank0_ascend_pt", stepRel)) }},
		// Level0's kernel_details.csv holds its only ops: cut mid-file, the ops after the
		// cut were lost and the figures read 5 of 8 AllReduces with exit 0.
		{name: "Level0 kernel_details.csv cut inside a row", base: "realdata:imagenet-2rank-level0", code: 3, reason: "cut short",
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				p := filepath.Join(run, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
				b := readFile(t, p)
				cut := len(b) / 2
				require.NotEqual(t, byte('\n'), b[cut-1], "the cut must fall inside a row")
				writeFile(t, p, b[:cut])
			}},
		// A damaged header hid the step column of the real Megatron run's
		// kernel_details.csv: its AllReduces were read without steps, exit 0.
		{name: "kernel_details.csv header damaged", base: "realdata:megatron-pp2dp2-2of4rank", code: 3, reason: "damaged header",
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				p := filepath.Join(run, "rank_0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
				b := readFile(t, p)
				writeFile(t, p, append([]byte{0, 0xff}, b[2:]...))
			}},
		// The real Megatron step_trace_time.csv less its last byte: Preparing read
		// 206.2 µs for 206.25, with exit 0.
		{name: "step_trace_time.csv cut inside its last field", base: "realdata:megatron-pp2dp2-2of4rank", code: 3, reason: "no line break",
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				p := filepath.Join(run, "rank_0_ascend_pt", stepRel)
				b := readFile(t, p)
				require.True(t, bytes.HasSuffix(b, []byte("206.25\n")))
				writeFile(t, p, b[:len(b)-2])
			}},
		// Exit 3 while the JSON report said "incomplete": false: the rank left out of
		// every average was decided after the report was written.
		{name: "a rank with no step beside one with steps", base: "realdata:imagenet-2rank-level0", code: 3, reason: "no step could be measured",
			// summarize writes each rank's summary and exits 3 as analyze does (it
			// exited 0); analysing the summaries says the same.
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				p := filepath.Join(run, "rank0_ascend_pt", stepRel)
				header, _, ok := bytes.Cut(readFile(t, p), []byte("\n"))
				require.True(t, ok)
				writeFile(t, p, append(header, '\n'))
			}},
		// The real trace without the HCCL process's name: its ops came from
		// communication.json instead and the report barely moved, but its tasks, and
		// the checks that count them, were lost with exit 0.
		{name: "HCCL process without its process_name", base: "realdata:imagenet-2rank-level1", code: 3, reason: "process_name",
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				editTrace(t, filepath.Join(run, "rank0_ascend_pt", traceRel), func(ev map[string]any) bool {
					args, _ := ev["args"].(map[string]any)
					if ev["name"] == "process_name" && args["name"] == "HCCL" {
						args["name"], ev["name"] = nil, "process_labels" // no longer a name
						return true
					}
					return false
				})
			}},
		// Found by setting each value of the real JSON files to null, "x" and -5 in
		// turn; each of these was read with exit 0.
		{name: "communication.json Transit Time null", base: "realdata:imagenet-2rank-level1", code: 3, reason: "null where the profiler writes a number",
			codes: map[string]int{"whatif": 2}, mutate: setLevel1OpTime("Transit Time(ms)", nil)},
		{name: "communication.json Idle Time -5", base: "realdata:imagenet-2rank-level1", code: 3, reason: "Idle Time -5 ms is not Elapse",
			codes: map[string]int{"whatif": 2}, mutate: setLevel1OpTime("Idle Time(ms)", -5)},
		{name: "communication.json Bandwidth Info null", base: "realdata:imagenet-2rank-level1", code: 3, reason: `"Communication Bandwidth Info" is null`,
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				editJSON(t, filepath.Join(run, "rank0_ascend_pt", commRel), func(doc map[string]any) {
					op := doc["step50"].(map[string]any)["collective"].(map[string]any)["hcom_allReduce__586_0_1@17522688603477080586"].(map[string]any)
					op["Communication Bandwidth Info"] = nil
				})
			}},
		{name: "parallel_group_info with a negative rank", base: "realdata:megatron-pp2dp2-2of4rank", code: 3, reason: "rank -5 is negative",
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				editJSON(t, filepath.Join(run, "rank_0_ascend_pt", "profiler_metadata.json"), func(doc map[string]any) {
					groups := doc["parallel_group_info"].(map[string]any)
					g := groups[slices.Sorted(maps.Keys(groups))[0]].(map[string]any)
					g["global_ranks"].([]any)[0] = -5
				})
			}},
		// One op's row dropped from the profiler's per-op analysis: that op's split was
		// recomputed from its tasks and the others' read from the file, without a word.
		{name: "communication.json without one op's row", base: "realdata:imagenet-2rank-level1", code: 0, cmds: []string{"analyze"},
			mutate: func(t *testing.T, run string) {
				editJSON(t, filepath.Join(run, "rank0_ascend_pt", commRel), func(doc map[string]any) {
					delete(doc["step50"].(map[string]any)["collective"].(map[string]any), "hcom_allReduce__586_3_1@17522688603477080586")
				})
			},
			check: func(t *testing.T, _, stdout string) {
				assert.Contains(t, stdout, "rank 0: 1 of its 4 timeline ops (the first hcom_allReduce__586_3_1) have no row in the profiler's per-op analysis")
				assert.NotContains(t, stdout, "rank 1: ", "rank 1's file is whole")
			}},
		{name: "communication.json truncated", base: text, mutate: cutHalf(commRel), code: 3, reason: "communication.json"},
		// The second server's ranks wrote their local rank (0-3), as when RANK_ID is set
		// per node: four of the eight were dropped as "older duplicates", exit 0.
		{name: "local rank ids on the second server", base: text, code: 3, reason: "claimed also by",
			mutate: func(t *testing.T, run string) {
				infos, _ := filepath.Glob(filepath.Join(run, "node1_*", "profiler_info_*.json"))
				require.Len(t, infos, 4)
				for _, p := range infos {
					var global int
					_, err := fmt.Sscanf(filepath.Base(p), "profiler_info_%d.json", &global)
					require.NoError(t, err)
					b := readFile(t, p)
					local := []byte(fmt.Sprintf(`"rank_id": %d`, global-4))
					fixed := bytes.Replace(b, []byte(fmt.Sprintf(`"rank_id": %d`, global)), local, 1)
					require.NotEqual(t, b, fixed, p)
					require.NoError(t, os.Remove(p))
					writeFile(t, filepath.Join(filepath.Dir(p), fmt.Sprintf("profiler_info_%d.json", global-4)), fixed)
				}
			}},
		{name: "trace_view.json empty", base: text, mutate: empty(traceRel), code: 3, reason: "trace_view.json"},
		{name: "step_trace_time.csv empty", base: text, mutate: empty(stepRel), code: 3, reason: "step_trace_time.csv"},
		// Without step rows the breakdown is measured from the timeline alone.
		{name: "step_trace_time.csv header only", base: text, code: 0,
			mutate: func(t *testing.T, run string) {
				p := rankFile(t, run, stepRel)
				b := readFile(t, p)
				writeFile(t, p, b[:bytes.IndexByte(b, '\n')+1])
			}},
		{name: "communication.json empty file", base: text, mutate: empty(commRel), code: 3, reason: "communication.json"},
		// {} beside a timeline with HCCL ops: the ops' groups (their hashes) and per-op
		// figures are missing, and the ops would be put in a group named after the id
		// in their names, which no rank shares; the rank is incomplete.
		{name: "communication.json {}", base: text, code: 3, reason: "communication.json holds no communication op",
			mutate: func(t *testing.T, run string) { writeFile(t, rankFile(t, run, commRel), []byte("{}")) }},
		{name: "header-only CSV cluster", base: text, code: 2, reason: "no step",
			mutate: func(t *testing.T, run string) {
				ranks, _ := filepath.Glob(filepath.Join(run, "*_ascend_pt"))
				for _, r := range ranks {
					out := filepath.Join(r, "ASCEND_PROFILER_OUTPUT")
					files, _ := os.ReadDir(out)
					for _, f := range files {
						p := filepath.Join(out, f.Name())
						if strings.HasSuffix(f.Name(), ".csv") {
							b := readFile(t, p)
							writeFile(t, p, b[:bytes.IndexByte(b, '\n')+1])
						} else {
							require.NoError(t, os.Remove(p))
						}
					}
				}
			}},
		{name: "empty Kineto trace", base: "", code: 2, reason: "no step",
			mutate: func(t *testing.T, run string) {
				require.NoError(t, os.MkdirAll(run, 0o755))
				writeFile(t, filepath.Join(run, "host_1234.1700000000000.pt.trace.json"), []byte(`{"schemaVersion": 1, "traceEvents": []}`))
			}},
		{name: "--skip-steps of every step", base: text, extra: []string{"--skip-steps", "40,41"}, code: 2, reason: "skip",
			cmds: []string{"analyze", "advise", "calibrate", "whatif", "export"}},
		{name: "--skip-steps of every step with a gate", base: text, extra: []string{"--skip-steps", "40,41", "--fail-on", "comm_share<0.99"},
			code: 2, reason: "skip", cmds: []string{"analyze"}},
		{name: "Stage negative", base: text, mutate: setStage("-73755.453"), code: 3, reason: "Stage"},
		{name: "Stage 0", base: text, mutate: setStage("0"), code: 3, reason: "Stage"},
		{name: "Stage 1e300", base: text, mutate: setStage("1e300"), code: 3, reason: "Stage"},
		{name: "Communication above Stage", base: text, code: 3, reason: "exceeds the step",
			mutate: func(t *testing.T, run string) {
				editCSV(t, rankFile(t, run, stepRel), func(h []string, rows [][]string) [][]string {
					rows[0][col(t, h, "Communication")] = "99999999"
					return rows
				})
			}},
		{name: "duplicated step row", base: text, code: 3, reason: "appears twice",
			mutate: func(t *testing.T, run string) {
				editCSV(t, rankFile(t, run, stepRel), func(_ []string, rows [][]string) [][]string { return append(rows, rows[0]) })
			}},
		// Without a timeline Preparing is known only from its column: absent, not 0.
		{name: "Preparing column missing", base: "gen:text:trace", code: 0, cmds: []string{"analyze"},
			mutate: func(t *testing.T, run string) {
				ranks, _ := filepath.Glob(filepath.Join(run, "*_ascend_pt"))
				for _, r := range ranks {
					// Preparing is the last column: drop the last field of every line.
					p := filepath.Join(r, stepRel)
					lines := strings.Split(strings.TrimRight(string(readFile(t, p)), "\n"), "\n")
					require.True(t, strings.HasSuffix(strings.TrimRight(lines[0], "\r"), ",Preparing"), lines[0])
					for i, l := range lines {
						l = strings.TrimRight(l, "\r")
						lines[i] = l[:strings.LastIndexByte(l, ',')]
					}
					writeFile(t, p, []byte(strings.Join(lines, "\n")+"\n"))
				}
			},
			check: func(t *testing.T, _, stdout string) {
				var rep struct {
					Ranks []struct{ Steps []map[string]any }
				}
				require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
				require.NotEmpty(t, rep.Ranks)
				for _, r := range rep.Ranks {
					for _, s := range r.Steps {
						v, ok := s["preparing_us"]
						assert.True(t, !ok || v == nil, "preparing_us = %v without a Preparing column", v)
					}
				}
			}},
		{name: "HCCL op rows without dur", base: text, code: 3, reason: "trace_view.json",
			mutate: func(t *testing.T, run string) {
				editTrace(t, rankFile(t, run, traceRel), func(ev map[string]any) bool {
					if name, _ := ev["name"].(string); ev["ph"] == "X" && strings.HasPrefix(name, "hcom_") {
						delete(ev, "dur")
						return true
					}
					return false
				})
			}},
		{name: "Ascend Hardware events without pid", base: text, code: 3, reason: "trace_view.json",
			mutate: func(t *testing.T, run string) {
				p := rankFile(t, run, traceRel)
				pids := hardwarePids(t, p)
				editTrace(t, p, func(ev map[string]any) bool {
					if pid, _ := ev["pid"].(float64); pids[pid] && ev["ph"] == "X" {
						delete(ev, "pid")
						return true
					}
					return false
				})
			}},
		{name: "ASCEND_PROFILER_OUTPUT empty", base: text, code: 3, reason: "ASCEND_PROFILER_OUTPUT",
			mutate: func(t *testing.T, run string) {
				out := rankFile(t, run, "ASCEND_PROFILER_OUTPUT")
				require.NoError(t, os.RemoveAll(out))
				require.NoError(t, os.Mkdir(out, 0o755))
			}},
		{name: "ASCEND_PROFILER_OUTPUT missing", base: text, code: 3, reason: "ASCEND_PROFILER_OUTPUT",
			mutate: func(t *testing.T, run string) {
				require.NoError(t, os.RemoveAll(rankFile(t, run, "ASCEND_PROFILER_OUTPUT")))
			}},
		// The ops are rebuilt from the HCCL tasks of the TASK table: measured.
		{name: "db COMMUNICATION_OP dropped", base: db, code: 0,
			mutate: func(t *testing.T, run string) { execDB(t, rankFile(t, run, dbRel), "DROP TABLE COMMUNICATION_OP") }},
		// An op's CommAnalyzerTime row lost, its bandwidth rows kept: the op read as a
		// time split of 0s, exit 0.
		{name: "analysis.db op without its time row", base: "realdata:imagenet-2rank-db", code: 3, reason: "no CommAnalyzerTime row",
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				execDB(t, filepath.Join(run, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "analysis.db"),
					"DELETE FROM CommAnalyzerTime WHERE rowid = (SELECT max(rowid) FROM CommAnalyzerTime)")
			}},
		// Half of CONNECTION_IDS lost: the launches' host→device flows, which map
		// steps to the device, went with them, exit 0.
		{name: "db CONNECTION_IDS rows lost", base: "realdata:imagenet-2rank-db", code: 3, reason: "no CONNECTION_IDS row",
			codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				execDB(t, filepath.Join(run, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"), "DELETE FROM CONNECTION_IDS WHERE rowid % 2 = 0")
			}},
		{name: "db op with negative duration", base: db, code: 3, reason: "before its start",
			mutate: func(t *testing.T, run string) {
				execDB(t, rankFile(t, run, dbRel), "UPDATE COMMUNICATION_OP SET endNs = startNs - 5000 WHERE rowid = (SELECT max(rowid) FROM COMMUNICATION_OP)")
			}},
		{name: "db file replaced by a directory", base: db, code: 3, reason: "ascend_pytorch_profiler_0.db",
			mutate: func(t *testing.T, run string) {
				p := rankFile(t, run, dbRel)
				require.NoError(t, os.Remove(p))
				require.NoError(t, os.Mkdir(p, 0o755))
			}},
		{name: "trace_view.json replaced by a directory", base: text, code: 3, reason: "trace_view.json",
			mutate: func(t *testing.T, run string) {
				p := rankFile(t, run, traceRel)
				require.NoError(t, os.Remove(p))
				require.NoError(t, os.Mkdir(p, 0o755))
			}},
		{name: "trace_view.json replaced by a FIFO", base: text, code: 3, reason: "trace_view.json",
			cmds: []string{"analyze", "inspect"},
			mutate: func(t *testing.T, run string) {
				p := rankFile(t, run, traceRel)
				require.NoError(t, os.Remove(p))
				mkfifo(t, p)
			}},
		{name: "msprof timelines []", base: "gen:msprof", code: 3, reason: "msprof_", codes: map[string]int{"whatif": 2},
			mutate: func(t *testing.T, run string) {
				files, _ := filepath.Glob(filepath.Join(run, "PROF_*", "mindstudio_profiler_output", "msprof_*.json"))
				require.NotEmpty(t, files)
				for _, f := range files[:1] {
					writeFile(t, f, []byte("[]"))
				}
			}},
	}
}

// realdataRun is the real-data folder of a "realdata:NAME" base, or skips.
func baseRun(t *testing.T, base string) string {
	t.Helper()
	switch {
	case base == "":
		return filepath.Join(t.TempDir(), "run")
	case strings.HasPrefix(base, "realdata:"):
		return copyRun(t, realdata.Path(t, strings.TrimPrefix(base, "realdata:")))
	case strings.HasPrefix(base, "gen:"): // gen:FORMAT[:OMIT]
		dir := filepath.Join(t.TempDir(), "run")
		format, omit, _ := strings.Cut(strings.TrimPrefix(base, "gen:"), ":")
		args := []string{"gen", "demo-2server-8rank", "-o", dir, "--format", format}
		if omit != "" {
			args = append(args, "--omit", omit)
		}
		_, errOut, code := runCLI(t, args...)
		require.Equal(t, 0, code, errOut)
		return dir
	}
	return copyRun(t, base)
}

func TestCorruptionCorpus(t *testing.T) {
	for i, tc := range corruptCases() {
		t.Run(tc.name, func(t *testing.T) {
			run := baseRun(t, tc.base)
			if tc.mutate != nil {
				tc.mutate(t, run)
			}
			target := run
			if tc.target != nil {
				target = tc.target(run)
			}
			cmds := tc.cmds
			if cmds == nil {
				cmds = allCommands
			}
			// -short: every damage through analyze, and the first through every command.
			if testing.Short() && i > 0 {
				cmds = cmds[:1]
			}
			for _, name := range cmds {
				args := append(corpusCommands[name](target, t.TempDir()), tc.extra...)
				stdout, stderr, code := runCLI(t, args...)
				t.Logf("CODE %s | %s | %d | %.160s", tc.name, name, code, strings.TrimSpace(stderr))
				assertNoPanic(t, args, stderr)
				want := tc.code
				if c, ok := tc.codes[name]; ok {
					want = c
				}
				if !assert.Equal(t, want, code, "%v\nstderr: %s", args, stderr) {
					continue
				}
				if code >= 2 {
					assert.Contains(t, stderr, tc.reason, "%v: the reason names the damage", args)
				}
				if code == 3 && name == "analyze" { // the report says what the exit code says
					var rep struct {
						Summary struct {
							Incomplete bool `json:"incomplete"`
						} `json:"summary"`
					}
					require.NoError(t, json.Unmarshal([]byte(stdout), &rep), args)
					assert.True(t, rep.Summary.Incomplete, "%v: exit 3, and the JSON report must say incomplete", args)
				}
				if code <= 1 && strings.Contains(strings.Join(args, " "), "--format json") {
					assertFiguresInRange(t, args, stdout)
				}
				if tc.check != nil && code <= 1 {
					tc.check(t, name, stdout)
				}
			}
		})
	}
}

func assertNoPanic(t *testing.T, args []string, stderr string) {
	t.Helper()
	assert.NotContains(t, stderr, "panic:", args)
	assert.NotContains(t, stderr, "goroutine ", args)
}

// assertFiguresInRange walks a JSON output: every share or ratio lies in [0, 1], and
// every duration (a field in µs, ns or ms) is ≥ 0, except changes and residues.
func assertFiguresInRange(t *testing.T, args []string, stdout string) {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "%v", args)
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(k, e)
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case float64:
			signed := strings.Contains(key, "delta") || strings.Contains(key, "residue") || strings.Contains(key, "error") ||
				strings.Contains(key, "change") || strings.Contains(key, "saving") || strings.Contains(key, "gain")
			switch {
			case signed:
			case strings.Contains(key, "share") || strings.HasSuffix(key, "ratio") || strings.HasSuffix(key, "fraction"):
				assert.True(t, x >= 0 && x <= 1, "%v: %s = %g is outside [0, 1]", args, key, x)
			case strings.HasSuffix(key, "_us") || strings.HasSuffix(key, "_ns") || strings.HasSuffix(key, "_ms"):
				assert.GreaterOrEqual(t, x, 0.0, "%v: %s = %g is negative", args, key, x)
			}
		}
	}
	walk("", doc)
}

// TestDiffCorrupt: diff reads JSON reports saved by analyze as well as runs. A damaged
// or newer report is refused with its own reason (not read as a profile and refused
// for having no rank), and a side that is incomplete, read now or saved so, is exit 3.
func TestDiffCorrupt(t *testing.T) {
	dir := t.TempDir()
	good, _, code := runCLI(t, "analyze", sample, "--format", "json")
	require.Equal(t, 0, code)
	cut := copyRun(t, sample)
	p := rankFile(t, cut, traceRel)
	b := readFile(t, p)
	writeFile(t, p, b[:len(b)/2])
	partialReport, _, code := runCLI(t, "analyze", cut, "--format", "json", "--allow-partial")
	require.Equal(t, 0, code)

	save := func(name, text string) string {
		f := filepath.Join(dir, name)
		writeFile(t, f, []byte(text))
		return f
	}
	truncated := save("truncated.json", good[:len(good)/2])
	version := fmt.Sprintf(`"schema_version": %d`, report.SchemaVersion)
	require.Contains(t, good, version)
	future := save("future.json", strings.Replace(good, version, `"schema_version": 99`, 1))
	empty := save("empty.json", "")
	incomplete := save("incomplete.json", partialReport)
	base := save("base.json", good)

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		reason string
	}{
		{"report truncated", []string{truncated, sample}, 2, "not an hcclprof JSON report"},
		{"report of a future schema", []string{future, sample}, 2, "schema_version 99"},
		{"report empty", []string{empty, sample}, 2, "not an hcclprof JSON report"},
		{"against an incomplete run", []string{base, cut}, 3, "input incomplete"},
		{"an incomplete run as base", []string{cut, sample}, 3, "input incomplete"},
		{"a report of an incomplete run", []string{incomplete, base}, 3, "input incomplete"},
		{"an incomplete run allowed", []string{base, cut, "--allow-partial"}, 0, ""},
		{"every step skipped", []string{base, sample, "--skip-steps", "40,41"}, 2, "skip"},
		{"whole reports", []string{base, base}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"diff"}, tc.args...)
			args = append(args, "--format", "json")
			stdout, stderr, code := runCLI(t, args...)
			assertNoPanic(t, args, stderr)
			require.Equal(t, tc.code, code, "%v\nstderr: %s", args, stderr)
			assert.Contains(t, stderr, tc.reason)
			if code <= 1 {
				var doc map[string]any
				require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
			}
		})
	}
}
