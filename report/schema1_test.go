package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/report"
	"github.com/hcclprof/hcclprof/report/contract"
)

// withSlowServer is the sample report as schema 2 wrote it (sample.v2.json, kept as
// it was), with one slow server added under the key schema 2 gives it.
func withSlowServer(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, "sample.v2.json"), &m))
	comm := m["communication"].(map[string]any)
	require.NotEmpty(t, comm["slow_links"], "the sample has a slow link, with its server")
	comm["slow_servers"] = []any{map[string]any{"server": 1, "host": "node1", "transport": "RDMA", "fraction": 0.4, "evidence": "e"}}
	return m
}

// asSchema1 writes a schema-2 report as schema 1 wrote it: a server was a node.
func asSchema1(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	old := strings.NewReplacer(`"slow_servers":`, `"slow_nodes":`, `"server":`, `"node":`, `"schema_version":2`, `"schema_version":1`).Replace(string(b))
	require.Contains(t, old, `"slow_nodes":[{`)
	require.Contains(t, old, `"schema_version":1`)
	return []byte(old)
}

// TestDecodeSchema1: a report written by schema 1 (slow_nodes, node) decodes to the
// same values as its schema-2 form.
func TestDecodeSchema1(t *testing.T) {
	m := withSlowServer(t)
	now, err := json.Marshal(m)
	require.NoError(t, err)
	want, err := contract.Decode(bytes.NewReader(now))
	require.NoError(t, err)
	require.Len(t, want.Communication.SlowServers, 1)
	got, err := contract.Decode(bytes.NewReader(asSchema1(t, m)))
	require.NoError(t, err)
	assert.Equal(t, 1, got.SchemaVersion)
	got.SchemaVersion = want.SchemaVersion
	assert.Equal(t, want, got)
	assert.Equal(t, contract.SlowServer{Server: 1, Host: "node1", Transport: "RDMA", Fraction: 0.4, Evidence: "e"}, got.Communication.SlowServers[0])
	assert.Equal(t, want.Communication.SlowLinks[0].Server, got.Communication.SlowLinks[0].Server)
}

// TestDiffReadsSchema1: diff reads a saved report of schema 1 as the same run as its
// schema-2 form, and refuses a version it does not know.
func TestDiffReadsSchema1(t *testing.T) {
	m := withSlowServer(t)
	now, err := json.Marshal(m)
	require.NoError(t, err)
	want, err := report.ReadReportRun(bytes.NewReader(now), "r")
	require.NoError(t, err)
	got, err := report.ReadReportRun(bytes.NewReader(asSchema1(t, m)), "r")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.NotEmpty(t, got.Samples)
	for _, v := range []string{"0", "4"} {
		doc := strings.Replace(string(now), `"schema_version":2`, `"schema_version":`+v, 1)
		_, err := report.ReadReportRun(strings.NewReader(doc), "r")
		assert.EqualError(t, err, "r: schema_version "+v+", this hcclprof reads 1 to 3")
	}
}

// TestDecodeSchema2: the sample as schema 2 wrote it decodes to the sample as schema 3
// writes it, and diff reads both as the same run; where schema 2 wrote 0 for a size,
// bandwidth, utilisation, peak or group size it did not know, Decode gives null, as
// schema 3 writes.
func TestDecodeSchema2(t *testing.T) {
	v2, err := contract.Decode(bytes.NewReader(mustRead(t, "sample.v2.json")))
	require.NoError(t, err)
	v3, err := contract.Decode(bytes.NewReader(mustRead(t, "sample.json")))
	require.NoError(t, err)
	require.Equal(t, [2]int{2, 3}, [2]int{v2.SchemaVersion, v3.SchemaVersion})
	v2.SchemaVersion = v3.SchemaVersion
	// Fields added within schema 3 after schema 2 (an op's moving time and its
	// source) are not in a schema-2 document.
	for i := range v3.Communication.Ops {
		v3.Communication.Ops[i].MovingUs, v3.Communication.Ops[i].MovingSource = nil, nil
	}
	// Nor the parallel dimensions (issue 37).
	v3.Summary.ParallelKinds, v3.CollectiveKinds = nil, nil
	for i := range v3.Collectives {
		v3.Collectives[i].ParallelKind = ""
	}
	for i := range v3.Communication.Groups {
		v3.Communication.Groups[i].ParallelKind, v3.Communication.Groups[i].ParallelKindSource = "", ""
	}
	// A finding's prose is today's wording, not the schema's: the same findings, in
	// the same order, are what decoding must keep.
	require.Len(t, v2.Findings, len(v3.Findings))
	for i := range v3.Findings {
		require.Equal(t, v3.Findings[i].ID, v2.Findings[i].ID)
		v2.Findings[i].Title, v2.Findings[i].Evidence = v3.Findings[i].Title, v3.Findings[i].Evidence
	}
	// Quantiles follow one convention since (numpy's linear): the v2 sample's p95 is
	// the nearest rank's.
	require.Len(t, v2.Collectives, len(v3.Collectives))
	for i := range v3.Collectives {
		v2.Collectives[i].P50Us, v2.Collectives[i].P95Us = v3.Collectives[i].P50Us, v3.Collectives[i].P95Us
	}
	assert.Equal(t, v3, v2)
	r2, err := report.ReadReportRun(bytes.NewReader(mustRead(t, "sample.v2.json")), "r")
	require.NoError(t, err)
	r3, err := report.ReadReportRun(bytes.NewReader(mustRead(t, "sample.json")), "r")
	require.NoError(t, err)
	assert.Equal(t, r3, r2)

	var m map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, "sample.v2.json"), &m))
	col := m["collectives"].([]any)[0].(map[string]any)
	col["group_size"], col["bytes"], col["algbw_gbps"], col["busbw_gbps"] = 0, 0, 0, 0
	comm := m["communication"].(map[string]any)
	op := comm["ops"].([]any)[0].(map[string]any)
	op["bytes"], op["busbw_gbps"], op["utilisation"] = 0, 0, 0
	op["source"], op["transit_us"], op["wait_us"], op["sync_us"], op["idle_us"], op["wait_ratio"], op["sync_ratio"] = "none", 0, 0, 0, 0, 0, 0
	link := comm["links"].([]any)[0].(map[string]any)
	link["peak_gbps"], link["utilisation"] = 0, 0
	b, err := json.Marshal(m)
	require.NoError(t, err)
	got, err := contract.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	c, o, l := got.Collectives[0], got.Communication.Ops[0], got.Communication.Links[0]
	assert.Nil(t, c.GroupSize)
	assert.Nil(t, c.Bytes)
	assert.Nil(t, c.AlgBwGBps)
	assert.Nil(t, c.BusBwGBps)
	assert.Nil(t, o.Bytes)
	assert.Nil(t, o.BusBwGBps)
	assert.Nil(t, o.Util)
	assert.Nil(t, o.TransitUs, "an op without a time split (source none)")
	assert.Nil(t, o.WaitUs)
	assert.Nil(t, o.SyncUs)
	assert.Nil(t, o.IdleUs)
	assert.Nil(t, o.WaitRatio)
	assert.Nil(t, o.SyncRatio)
	require.NotNil(t, got.Communication.Ops[1].WaitUs, "an op with its split keeps it")
	assert.Nil(t, l.PeakGBps)
	assert.Nil(t, l.Utilisation)
	require.NotNil(t, got.Communication.Ops[1].Bytes, "what was known stays")
	assert.Positive(t, *got.Communication.Ops[1].Bytes)
}
