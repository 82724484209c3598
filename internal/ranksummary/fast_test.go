package ranksummary_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// decodePlain decodes a summary body as the plain reader does.
func decodePlain(data []byte, b *ranksummary.Body) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(b)
}

// TestFastPathReadsWhatWritersWrite: every rank hcclprof can read, written as a
// summary, is read by the fast path (not handed to the plain decoder) into the same
// rank. Without real data, the bundled sample's ranks.
func TestFastPathReadsWhatWritersWrite(t *testing.T) {
	dirs := sampleAndRealDirs(t)
	read := 0
	for _, dir := range dirs {
		in, err := parser.Discover([]string{dir})
		if err != nil {
			continue // a dataset of files hcclprof does not read as ranks
		}
		for k, ri := range in.Ranks {
			if k == 4 {
				break
			}
			r := parser.LoadRank(ri)
			data := summaryBytes(t, r, []string{"a note"})
			fast, ok := ranksummary.ReadFast(data, fastSize(data))
			require.True(t, ok, "%s rank %d: the fast path gave up", dir, r.Rank)
			plain, err := ranksummary.ReadPlain("x", bytes.NewReader(data), ranksummary.MaxInflated(int64(len(data))))
			require.NoError(t, err)
			require.Equal(t, plain, fast, "%s rank %d", dir, r.Rank)
			read++
		}
		in.Release()
	}
	t.Logf("%d ranks of %d datasets", read, len(dirs))
	assert.GreaterOrEqual(t, read, ranksExpected(4), "the sample's first 4 ranks, and with the real data at least 8")
}

// TestFastPathGivesWay: what the fast path does not take (and the plain decoder may
// read differently, or refuse with its own words) goes to the plain decoder.
func TestFastPathGivesWay(t *testing.T) {
	for _, body := range []string{
		`{"dir": "x"}`,                       // a name cased otherwise (encoding/json matches it)
		`{"Dir": "x", "Dir": "y"}`,           // repeated
		`{"Nope": 1}`,                        // unknown
		`{"Steps": [1, 2.0]}`,                // not an integer
		`{"Steps": [01]}`,                    // not JSON
		`{"Steps": [1,]}`,                    // not JSON
		`{"Compute": [9223372036854775808]}`, // out of range
		`{"HasTimeline": "true"}`,            // the wrong kind
		`{"Info": {"RankID": 1e3}}`,          // an exponent for an int
		`{"Dir": "a` + "\x01" + `"}`,         // a control character
		`{"Dir": "x"} {}`,                    // something after
	} {
		var b ranksummary.Body
		if ranksummary.DecodeBody([]byte(body), &b) == nil {
			t.Errorf("%s: taken by the fast path", body)
		}
	}
	// Escapes and non-ASCII strings are decoded as encoding/json decodes them.
	body := `{"Dir": "a\u00e9\"\\ é ` + "\xff" + `", "Problems": ["\t"]}`
	var fast, plain ranksummary.Body
	require.NoError(t, ranksummary.DecodeBody([]byte(body), &fast))
	require.NoError(t, decodePlain([]byte(body), &plain))
	assert.Equal(t, plain, fast)
	assert.Equal(t, "a\u00e9\"\\ é \ufffd", fast.Dir)
}

// TestDecodeIntArray holds the column decoder to encoding/json's []int64.
func TestDecodeIntArray(t *testing.T) {
	for _, in := range []string{`[]`, ` [ 1 , -2,3 ] `, `null`, `[0]`, `[-0]`, `[9223372036854775807, -9223372036854775808]`,
		`[9223372036854775808]`, `[1.5]`, `[1e2]`, `[01]`, `[1,]`, `[,1]`, `[1 2]`, `["1"]`, `{}`, `[1]x`, `[-]`, `[`, ``} {
		checkIntArray(t, []byte(in))
	}
}

func checkIntArray(t *testing.T, in []byte) {
	t.Helper()
	var want []int64
	werr := json.Unmarshal(in, &want)
	got, err := ranksummary.DecodeIntArray(in, []int64(nil), math.MinInt64, math.MaxInt64)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: err %v, encoding/json's %v", in, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %v, encoding/json's %v", in, got, want)
	}
}

func FuzzDecodeIntArray(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, `[-9223372036854775808]`, `null`, `[ ]`, `[1.0]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkIntArray(t, in) })
}

// FuzzSummaryFastPath: a body the fast path takes, encoding/json takes too, into the
// same value.
func FuzzSummaryFastPath(f *testing.F) {
	f.Add([]byte(`{"Dir":"x","Steps":[1,2],"Metadata":{"ParallelGroups":[{"Name":"dp","GlobalRanks":[0,1]}],"DistributedArgs":{"a":[1,"b",null]}}}`))
	f.Add([]byte(`{"CommOps":[{"Name":"op","StartNs":1,"EndNs":2,"Step":-1}],"CommStats":[{"Transports":{"HCCS":{"Bytes":1,"SizeDistribution":null}}}]}`))
	f.Add([]byte(`{"CommTasks":{"Strings":["a"],"Name":[0],"Times":[1,2]},"Info":{"RankID":3},"StepTrace":[{"StageUs":1.5e3}]}`))
	text := decompressed(f, summaryBytes(f, sampleRank(f), nil))
	f.Add(text[bytes.IndexByte(text, '\n')+1:])
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast ranksummary.Body
		if ranksummary.DecodeBody(body, &fast) != nil {
			return
		}
		var plain ranksummary.Body
		if perr := decodePlain(body, &plain); perr != nil {
			t.Fatalf("the fast path took what encoding/json refuses (%v): %q", perr, body)
		}
		if !reflect.DeepEqual(fast, plain) {
			t.Fatalf("the fast path read %+v, encoding/json %+v", fast, plain)
		}
	})
}

func decompressed(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zr, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	_, err = buf.ReadFrom(zr)
	require.NoError(t, err)
	return buf.Bytes()
}

// TestSummaryRankListsShared: the world group's rank list, the same in every rank's
// summary, is read once and shared, and reads the same as encoding/json reads it.
func TestSummaryRankListsShared(t *testing.T) {
	world := make([]int, 1000)
	for i := range world {
		world[i] = i
	}
	var got [][]int
	for rank := range 2 {
		r := sampleRank(t)
		r.Rank = rank
		r.Metadata.ParallelGroups = []profile.ParallelGroup{{HCCLName: "w", Name: "default", GroupRank: rank, GlobalRanks: world}}
		data := summaryBytes(t, r, nil)
		fast, ok := ranksummary.ReadFast(data, fastSize(data))
		require.True(t, ok)
		plain, err := ranksummary.ReadPlain("x", bytes.NewReader(data), ranksummary.MaxInflated(int64(len(data))))
		require.NoError(t, err)
		require.Equal(t, plain, fast)
		got = append(got, fast.Metadata.ParallelGroups[0].GlobalRanks)
	}
	assert.Equal(t, world, got[0])
	assert.Same(t, &got[0][0], &got[1][0])
}

// TestSummaryMetadataMirrorsProfile: the summary's metadata types hold every member of
// profile's (a member they lacked would be dropped from every summary).
func TestSummaryMetadataMirrorsProfile(t *testing.T) {
	for _, pair := range [][2]reflect.Type{
		{reflect.TypeFor[ranksummary.Metadata](), reflect.TypeFor[profile.Metadata]()},
		{reflect.TypeFor[ranksummary.ParallelGroup](), reflect.TypeFor[profile.ParallelGroup]()},
	} {
		for i := range pair[1].NumField() {
			name := pair[1].Field(i).Name
			_, ok := pair[0].FieldByName(name)
			assert.True(t, ok, "%v lacks %s", pair[0], name)
		}
	}
}

// worldRank is the sample's rank 2 as a 4096-rank job's: its metadata holds the world
// group's rank list.
func worldRank(t testing.TB) *profile.Rank {
	r := sampleRank(t)
	world := make([]int, 4096)
	for i := range world {
		world[i] = i
	}
	r.Metadata.ParallelGroups = append(slices.Clone(r.Metadata.ParallelGroups),
		profile.ParallelGroup{HCCLName: "world", Name: "default", GroupRank: 2, GlobalRanks: world})
	return r
}

// TestWorldGroupCostsLittle: a 4096-rank world group adds little to a summary (as
// ranks it added 10 KB, two thirds of a generated 4096-rank job's summary, whose
// trace is 1.26 MB: the summary was 80 times smaller, not 100).
func TestWorldGroupCostsLittle(t *testing.T) {
	small := len(summaryBytes(t, sampleRank(t), nil))
	big := len(summaryBytes(t, worldRank(t), nil))
	t.Logf("summary %d bytes, with a 4096-rank group %d", small, big)
	assert.Less(t, big-small, 300)
}

// TestVersion1SummariesRead: a summary of version 1, whose rank lists are ranks, reads
// as it did.
func TestVersion1SummariesRead(t *testing.T) {
	r := worldRank(t)
	text := decompressed(t, summaryBytes(t, r, []string{"a note"}))
	nl := bytes.IndexByte(text, '\n')
	header := strings.Replace(string(text[:nl]), fmt.Sprintf(`"version":%d`, ranksummary.Version), `"version":1`, 1)
	require.NotEqual(t, string(text[:nl]), header)
	header = regexp.MustCompile(`"worker":"[^"]*","at_ns":\d+,`).ReplaceAllString(header, "") // version 4's claim
	require.NotContains(t, header, "worker")
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(text[nl+1:]))
	dec.UseNumber() // int64 ns exactly
	require.NoError(t, dec.Decode(&body))
	delete(body["Info"].(map[string]any), "CollectionEndNs") // version 4's
	delete(body, "ComputeDTypeNs")                           // version 5's
	groups := body["Metadata"].(map[string]any)["ParallelGroups"].([]any)
	for k, g := range groups {
		group := g.(map[string]any)
		group["GlobalRanks"] = r.Metadata.ParallelGroups[k].GlobalRanks
		delete(group, "RankSteps")
	}
	v1Body, err := json.Marshal(body)
	require.NoError(t, err)
	data := gzipLines(header, string(v1Body))
	fast, ok := ranksummary.ReadFast(data, fastSize(data))
	require.True(t, ok)
	plain, err := ranksummary.ReadPlain("x", bytes.NewReader(data), ranksummary.MaxInflated(int64(len(data))))
	require.NoError(t, err)
	r.Info.CollectionEndNs = 0 // version 1 did not carry it
	r.ComputeDTypeNs = nil
	r.Traits = profile.Traits{} // the format's, given by parser.LoadRank, not written
	assert.Equal(t, r, plain)
	assert.Equal(t, r, fast)
}

// TestRankListsRoundTrip: every shape of group rank list reads back as written,
// absent and empty apart, on both readers.
func TestRankListsRoundTrip(t *testing.T) {
	r := sampleRank(t)
	r.Metadata.ParallelGroups = nil
	for k, ranks := range [][]int{nil, {}, {5}, {3, 1, 2}, {0, 8, 16, 24}, {math.MaxInt, math.MinInt}} {
		r.Metadata.ParallelGroups = append(r.Metadata.ParallelGroups, profile.ParallelGroup{Name: strconv.Itoa(k), GlobalRanks: ranks})
	}
	data := summaryBytes(t, r, nil)
	fast, ok := ranksummary.ReadFast(data, fastSize(data))
	require.True(t, ok)
	plain, err := ranksummary.ReadPlain("x", bytes.NewReader(data), ranksummary.MaxInflated(int64(len(data))))
	require.NoError(t, err)
	assert.Equal(t, r.Metadata, plain.Metadata)
	assert.Equal(t, r.Metadata, fast.Metadata)
}

// sampleAndRealDirs is the bundled sample's directory and every real dataset's.
// ranksExpected is how many ranks a test over sampleAndRealDirs reads at least:
// fromSample of the bundled sample alone (a clean clone, without ../shared), 8 with
// the real datasets.
func ranksExpected(fromSample int) int {
	if realdata.Root() == "" {
		return fromSample
	}
	return max(fromSample, 8)
}

func sampleAndRealDirs(t *testing.T) []string {
	t.Helper()
	dirs := []string{"../../fixtures/samples/demo-2server-8rank"}
	if root := realdata.Root(); root != "" {
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(root, e.Name()))
			}
		}
	}
	return dirs
}
