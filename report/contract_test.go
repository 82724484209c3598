package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis/compare"
	"github.com/hcclprof/hcclprof/report"
	"github.com/hcclprof/hcclprof/report/contract"
)

// schema compiles testdata/report.schema.json at a pointer into it ("" for the
// report, "#/$defs/Advice" for advise's JSON).
func schema(t *testing.T, pointer string) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.NewCompiler().Compile(filepath.Join("testdata", "report.schema.json") + pointer)
	require.NoError(t, err)
	return s
}

func validate(s *jsonschema.Schema, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestJSONReportSchema validates the JSON report of the sample, with and without
// advice, and advise's JSON against the checked-in schema, and shows the schema
// refuses a report that breaks the contract.
func TestJSONReportSchema(t *testing.T) {
	rep, adv := schema(t, ""), schema(t, "#/$defs/Advice")
	var b bytes.Buffer
	require.NoError(t, sampleDoc(t).Write(&b, report.JSON))
	require.NoError(t, validate(rep, b.Bytes()))

	bare := sampleDoc(t)
	bare.Advice = nil
	b.Reset()
	require.NoError(t, bare.Write(&b, report.JSON))
	require.NoError(t, validate(rep, b.Bytes()), "a report without advice: diagnosis null, no finding")

	b.Reset()
	require.NoError(t, (*report.AdviceDoc)(sampleDoc(t)).Write(&b, report.JSON))
	require.NoError(t, validate(adv, b.Bytes()))
	// A diagnosis that leaves causes open writes them, in both documents.
	open := sampleDoc(t)
	open.Advice.Diagnosis = advisor.Diagnosis{Cause: advisor.CauseUnknown, Share: 0.3, Title: "t", Evidence: "e",
		Candidates: []string{advisor.CauseTransfer, advisor.CauseTPCriticalPath}}
	for _, doc := range []struct {
		schema *jsonschema.Schema
		write  func(*bytes.Buffer) error
	}{
		{rep, func(b *bytes.Buffer) error { return open.Write(b, report.JSON) }},
		{adv, func(b *bytes.Buffer) error { return (*report.AdviceDoc)(open).Write(b, report.JSON) }},
	} {
		b.Reset()
		require.NoError(t, doc.write(&b))
		require.NoError(t, validate(doc.schema, b.Bytes()))
		assert.True(t, regexp.MustCompile(`"candidates": \[\s*"transfer",\s*"tp_critical_path"\s*\]`).Match(b.Bytes()), "the candidates written")
	}
	b.Reset()
	require.NoError(t, (*report.AdviceDoc)(open).Write(&b, report.Text))
	assert.Contains(t, b.String(), "Diagnosis (unknown: transfer or tp_critical_path): t.")
	golden, err := os.ReadFile(filepath.Join("testdata", "imagenet-2rank-level1.advice.json"))
	require.NoError(t, err)
	require.NoError(t, validate(adv, golden))

	// The schema is strict: a field dropped, a field added, a null where a figure is
	// required, and a status outside its enumeration are each refused.
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, "sample.json"), &m))
	for name, breakIt := range map[string]func(map[string]any){
		"no summary":       func(m map[string]any) { delete(m, "summary") },
		"unknown field":    func(m map[string]any) { m["extra"] = 1 },
		"null comm_share":  func(m map[string]any) { m["summary"].(map[string]any)["comm_share"] = nil },
		"a string as rank": func(m map[string]any) { m["ranks"].([]any)[0].(map[string]any)["rank"] = "0" },
		"unknown status": func(m map[string]any) {
			m["communication"].(map[string]any)["checks"].([]any)[0].(map[string]any)["status"] = "maybe"
		},
	} {
		var c map[string]any
		require.NoError(t, json.Unmarshal(mustRead(t, "sample.json"), &c))
		breakIt(c)
		doc, err := json.Marshal(c)
		require.NoError(t, err)
		assert.Error(t, validate(rep, doc), name)
	}
}

// TestContractRoundTrip decodes each golden JSON file into the contract's types,
// refusing unknown fields, and encodes it again: the bytes must be the file's, so the
// types hold every field the writers write, in their order.
func TestContractRoundTrip(t *testing.T) {
	for name, v := range map[string]any{
		"sample.json":                       &contract.Report{},
		"imagenet-2rank-level1.advice.json": &contract.Advice{},
	} {
		want := mustRead(t, name)
		dec := json.NewDecoder(bytes.NewReader(want))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(v), name)
		var got bytes.Buffer
		enc := json.NewEncoder(&got)
		enc.SetIndent("", "  ")
		require.NoError(t, enc.Encode(v), name)
		assert.Equal(t, string(want), got.String(), name)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// TestDiffJSONSchema validates diff's JSON against $defs/Diff: the sample against
// itself with a passing and an unmeasured gate, and against a run that lacks its
// collectives (their base side null); the schema refuses the gate shape diff wrote
// before (Go's field names), a zero interval's place taken by a string, and a
// missing collectives list.
func TestDiffJSONSchema(t *testing.T) {
	s := schema(t, "#/$defs/Diff")
	write := func(d report.DiffDoc) []byte {
		var b bytes.Buffer
		require.NoError(t, d.Write(&b, report.JSON))
		return b.Bytes()
	}
	same := write(sampleDiff(t, "comm_share.delta>0.05", "bubble_us.delta_pct>5"))
	require.NoError(t, validate(s, same))
	var m map[string]any
	require.NoError(t, json.Unmarshal(same, &m))
	gates := m["gates"].([]any)
	require.Len(t, gates, 2)
	assert.Nil(t, gates[1].(map[string]any)["value"], "the unmeasured gate's value is null")
	require.NotEmpty(t, m["collectives"])

	res := sampleDoc(t).Result
	base := compare.FromResult("before", res)
	base.Collectives, base.Ops = nil, nil
	lacking := write(report.DiffDoc{Diff: compare.Compare(base, compare.FromResult("after", res), compare.Options{Seed: 1})})
	require.NoError(t, validate(s, lacking))
	require.NoError(t, json.Unmarshal(lacking, &m))
	for _, c := range m["collectives"].([]any) {
		c := c.(map[string]any)
		assert.Equal(t, false, c["in_base"])
		mean := c["mean_us"].(map[string]any)
		assert.Nil(t, mean["base"], "a run without the collective has no figure, not 0")
		assert.Nil(t, mean["delta"])
		assert.Nil(t, mean["ci"])
		assert.NotNil(t, mean["new"])
	}

	for name, breakIt := range map[string]func(map[string]any){
		"Go field names in a gate": func(m map[string]any) {
			m["gates"] = []any{map[string]any{"Expr": "comm_share.delta>0.05", "Metric": "comm_share.delta", "Value": 0, "Passed": true}}
		},
		"a string as ci":     func(m map[string]any) { m["metrics"].([]any)[0].(map[string]any)["ci"] = "none" },
		"no collectives":     func(m map[string]any) { delete(m, "collectives") },
		"a metric unnamed":   func(m map[string]any) { delete(m["metrics"].([]any)[0].(map[string]any), "name") },
		"an unknown field":   func(m map[string]any) { m["extra"] = true },
		"p outside [0, 1]":   func(m map[string]any) { m["metrics"].([]any)[0].(map[string]any)["p"] = 1.5 },
		"a negative n":       func(m map[string]any) { m["metrics"].([]any)[0].(map[string]any)["n"] = []any{-1, 2} },
		"an unknown unit":    func(m map[string]any) { m["metrics"].([]any)[0].(map[string]any)["unit"] = "ms" },
		"three bounds of ci": func(m map[string]any) { m["metrics"].([]any)[0].(map[string]any)["ci"] = []any{1, 2, 3} },
	} {
		var c map[string]any
		require.NoError(t, json.Unmarshal(same, &c))
		breakIt(c)
		doc, err := json.Marshal(c)
		require.NoError(t, err)
		assert.Error(t, validate(s, doc), name)
	}
}
