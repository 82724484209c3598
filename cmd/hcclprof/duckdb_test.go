package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// duckDBPackage is DuckDB's Node.js client, pinned: its platform binary comes inside
// an npm package, so npm alone installs it.
const duckDBPackage = "@duckdb/node-api@1.5.6-r.1"

// duckDBScript runs each SQL argument and prints its rows as one JSON line.
const duckDBScript = `import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
for (const sql of process.argv.slice(2)) {
  const r = await con.runAndReadAll(sql);
  console.log(JSON.stringify(r.getRowObjectsJson()));
}
`

// duckDB installs DuckDB's Node.js client with npm in a temporary directory and
// returns a function that runs queries with it, each giving its rows (BIGINTs as
// decimal strings). It skips when node or npm is missing or the package cannot be
// fetched (no network).
func duckDB(t *testing.T) func(queries ...string) [][]map[string]any {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no npm install")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node: the DuckDB check is skipped")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm: the DuckDB check is skipped")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--silent",
		"--fetch-retries=1", "--fetch-timeout=60000", duckDBPackage)
	install.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("npm install %s failed (no network?): %v\n%s", duckDBPackage, err, out)
	}
	script := filepath.Join(dir, "query.mjs")
	require.NoError(t, os.WriteFile(script, []byte(duckDBScript), 0o644))
	return func(queries ...string) [][]map[string]any {
		t.Helper()
		cmd := exec.Command(node, append([]string{script}, queries...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		require.NoError(t, err, stderr)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, len(queries))
		res := make([][]map[string]any, len(lines))
		for i, l := range lines {
			require.NoError(t, json.Unmarshal([]byte(l), &res[i]), l)
		}
		return res
	}
}

// TestExportInDuckDB opens the exported tables in DuckDB, as a user would: the
// comm_share query of docs/outputs.md, run as written there, gives analyze's figure;
// timestamps are TIMESTAMP_NS equal
// to the ns of the CSV; group ids are VARCHAR; tasks join ops on op_row; CSV's empty
// fields read as the same NULLs as Parquet's.
func TestExportInDuckDB(t *testing.T) {
	query := duckDB(t)
	dir := t.TempDir()
	pq, csvDir := filepath.Join(dir, "pq"), filepath.Join(dir, "csv")
	_, stderr, code := runCLI(t, "export", sample, "--to", "parquet", "-o", pq)
	require.Equal(t, 0, code, stderr)
	_, stderr, code = runCLI(t, "export", sample, "--to", "csv", "-o", csvDir)
	require.Equal(t, 0, code, stderr)
	out, _, code := runCLI(t, "analyze", sample, "--format", "json")
	require.Equal(t, 0, code)
	var rep struct {
		Summary struct {
			CommShare float64 `json:"comm_share"`
		} `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))

	p := func(name string) string { return "'" + filepath.Join(pq, name+".parquet") + "'" }
	c := func(name string) string { return "'" + filepath.Join(csvDir, name+".csv") + "'" }
	res := query(
		// docs/outputs.md's query, on these files.
		"SELECT share AS comm_share FROM ("+docCommShareQuery(t, p("steps"))+") AS q(share)",
		"SELECT typeof(start_ns) AS ts, typeof(\"group\") AS g, typeof(op_row) AS k FROM "+p("ops")+" LIMIT 1",
		"SELECT typeof(start_ns) AS ts FROM "+p("tasks")+" LIMIT 1",
		"SELECT CAST(epoch_ns(start_ns) AS VARCHAR) AS ns, \"group\" AS g FROM "+p("ops")+" ORDER BY op_row",
		"SELECT count(*) AS tasks, count(t.op_row) AS with_op, count(o.op_row) AS joined, count(*) FILTER (WHERE t.rank <> o.rank OR t.start_ns < o.start_ns) AS wrong FROM "+
			p("tasks")+" t LEFT JOIN "+p("ops")+" o ON t.op_row = o.op_row",
		"SELECT count(*) FILTER (WHERE dst_local IS NULL) AS no_dst, count(*) FILTER (WHERE op_row IS NULL) AS no_op FROM "+p("tasks"),
		"SELECT count(*) FILTER (WHERE dst_local IS NULL) AS no_dst, count(*) FILTER (WHERE op_row IS NULL) AS no_op FROM "+c("tasks"),
		"SELECT typeof(start_ns) AS ts FROM "+c("ops")+" LIMIT 1",
		"SELECT count(*) AS differ FROM "+p("ops")+" a JOIN read_csv("+c("ops")+", types={'group': 'VARCHAR'}) b USING (op_row) WHERE a.\"group\" <> b.\"group\" OR epoch_ns(a.start_ns) <> b.start_ns",
	)
	share, ok := res[0][0]["comm_share"].(float64)
	require.True(t, ok, "%v", res[0])
	assert.InDelta(t, rep.Summary.CommShare, share, 1e-6, "docs/outputs.md's DuckDB query gives analyze's comm_share")
	assert.Equal(t, map[string]any{"ts": "TIMESTAMP_NS", "g": "VARCHAR", "k": "BIGINT"}, res[1][0])
	assert.Equal(t, "TIMESTAMP_NS", res[2][0]["ts"])

	f, err := os.Open(filepath.Join(csvDir, "ops.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	require.Len(t, res[3], len(rows)-1)
	for i, r := range rows[1:] {
		assert.Equal(t, r[6], res[3][i]["ns"], "op_row %d: DuckDB's ns are the CSV's", i)
		assert.Equal(t, r[3], res[3][i]["g"])
	}
	assert.Equal(t, "start_ns", rows[0][6])
	assert.Equal(t, "group", rows[0][3])

	join := res[4][0]
	assert.NotEqual(t, "0", join["with_op"])
	assert.Equal(t, join["with_op"], join["joined"], "every op_row is a row of ops")
	assert.Equal(t, "0", join["wrong"])
	assert.NotEqual(t, "0", res[5][0]["no_dst"])
	assert.Equal(t, res[5], res[6], "the CSV's empty fields are the Parquet's NULLs")
	assert.Equal(t, "BIGINT", res[7][0]["ts"], "CSV timestamps are exact integers")
	assert.Equal(t, "0", res[8][0]["differ"])
}

// docCommShareQuery is the DuckDB query docs/outputs.md gives for comm_share, its
// 'out/steps.parquet' replaced by steps and its closing semicolon dropped.
func docCommShareQuery(t *testing.T, steps string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "outputs.md"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "SELECT sum(least(") && strings.Contains(line, "'out/steps.parquet'") {
			return strings.TrimSuffix(strings.ReplaceAll(line, "'out/steps.parquet'", steps), ";")
		}
	}
	t.Fatal("docs/outputs.md has no comm_share query over 'out/steps.parquet'")
	return ""
}
