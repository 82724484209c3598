package ranksummary_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

var (
	firstSize = regexp.MustCompile(`"SizeBytes":\[-?\d+`)
	firstName = regexp.MustCompile(`"Name":\[\d+`)
)

// sampleRank is rank 2 of the bundled sample, as LoadRank reads it.
func sampleRank(t testing.TB) *profile.Rank {
	t.Helper()
	in, err := parser.Discover([]string{"../../fixtures/samples/demo-2server-8rank"})
	require.NoError(t, err)
	defer in.Release()
	require.Greater(t, len(in.Ranks), 2)
	r := parser.LoadRank(in.Ranks[2])
	require.Empty(t, r.Problems)
	return r
}

func summaryBytes(t testing.TB, r *profile.Rank, notes []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, ranksummary.Write(&buf, r, parser.SummaryClaim(r), notes))
	return buf.Bytes()
}

// gzipLines compresses lines as a summary's stream.
func gzipLines(lines ...string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, l := range lines {
		zw.Write([]byte(l + "\n"))
	}
	zw.Close()
	return buf.Bytes()
}

// TestDamagedRankSummaries: whatever is wrong with a summary, reading it is an error
// naming the file and where reading stopped (or the field at fault), never a rank
// half-read.
func TestDamagedRankSummaries(t *testing.T) {
	r := sampleRank(t)
	good := summaryBytes(t, r, nil)
	header := `{"format":"hcclprof-summary","version":1,"rank":2}`
	header2 := `{"format":"hcclprof-summary","version":2,"rank":2}`
	body := func(edit func(s string) string) []byte {
		zr, err := gzip.NewReader(bytes.NewReader(good))
		require.NoError(t, err)
		var plain bytes.Buffer
		_, err = plain.ReadFrom(zr)
		require.NoError(t, err)
		lines := strings.SplitN(plain.String(), "\n", 2)
		return gzipLines(lines[0], strings.TrimSpace(edit(lines[1])))
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip", []byte(`{"format":"hcclprof-summary"}`), "byte 0 of the decompressed summary: not gzip"},
		{"truncated gzip", good[:len(good)/2], "the file is truncated"},
		{"truncated in the header", good[:12], "the file is truncated"},
		{"bad JSON", gzipLines(header, `{"Dir": "x", "Compute": [1, 2,, 3]}`), "byte 82 of the decompressed summary: invalid character ','"},
		{"later version", gzipLines(`{"format":"hcclprof-summary","version":6,"rank":2}`, `{}`), "summary version 6; this hcclprof reads versions 1 to 5"},
		{"a claim in version 3", gzipLines(`{"format":"hcclprof-summary","version":3,"rank":2,"worker":"h_1","at_ns":5}`, `{}`), "a claim of its rank (worker, at_ns) in a version 3 summary"},
		{"later version with fields this one lacks", gzipLines(`{"format":"hcclprof-summary","version":7,"rank":2,"future":true}`, `{}`), "summary version 7; this hcclprof reads versions 1 to 5"},
		{"version 0", gzipLines(`{"format":"hcclprof-summary","version":0,"rank":2}`, `{}`), "summary version 0; this hcclprof reads versions 1 to 5"},
		{"rank steps in version 1", gzipLines(`{"format":"hcclprof-summary","version":1,"rank":2}`,
			`{"Format":"torch_npu-text","Metadata":{"ParallelGroups":[{"Name":"dp","RankSteps":[0,1]}]}}`), "RankSteps in a version 1 summary"},
		{"ranks twice", gzipLines(header2, `{"Format":"torch_npu-text","Metadata":{"ParallelGroups":[{"Name":"dp","GlobalRanks":[0,1],"RankSteps":[0,1]}]}}`),
			"both GlobalRanks and RankSteps"},
		{"foreign JSON", gzipLines(`{"traceEvents": []}`), "not an hcclprof rank summary"},
		{"no header line", gzipLines(strings.Repeat("x", 2<<20)), "no header line in the first"},
		// 64 MiB of one byte deflate about 1030:1, past the archives' 1000:1: refused at
		// the limit, not read whole (in the header, whose own limit is 1 MiB; in a
		// value; between values).
		{"bomb in the header", gzipLines(`{"format":"hcclprof-summary","version":2,"rank":2,"x":"`+strings.Repeat("a", 64<<20)+`"}`, `{}`),
			"no header line in the first 1048576 bytes"},
		{"bomb in a value", gzipLines(header2, `{"Dir": "`+strings.Repeat("a", 64<<20)+`"}`), "decompresses to more than 1000 times its size"},
		{"bomb of spaces", gzipLines(header2, `{"Dir": "x",`+strings.Repeat(" ", 64<<20)+`"Format": "torch_npu-text"}`),
			"decompresses to more than 1000 times its size"},
		{"unknown field", gzipLines(header, `{"Dir": "x", "Format": "torch_npu-text", "Extra": 1}`), `unknown field "Extra"`},
		{"wrong type", gzipLines(header, `{"Dir": 5}`), "byte 60 of the decompressed summary: json: cannot unmarshal number"},
		// A column's damage is placed and named as encoding/json places and names it.
		{"wrong type in a column", gzipLines(header, `{"Dir": "x", "Steps": [1, "x"], "Compute": [1,2]}`),
			"byte 80 of the decompressed summary: json: cannot unmarshal string into Go struct field summaryBody.Steps of type int"},
		{"fraction in a task column", gzipLines(header, `{"Dir": "x", "CommTasks": {"Plane": [1.5]}, "Compute": [1,2]}`),
			"byte 91 of the decompressed summary: json: cannot unmarshal number 1.5 into Go struct field packedTasks.CommTasks.Plane of type int"},
		{"wrong type in rank steps", gzipLines(header2, `{"Dir":"x","Metadata":{"ParallelGroups":[{"Name":"dp","RankSteps":[0,"a"]}]}}`),
			"RankSteps: item 1: json: cannot unmarshal string into an integer"},
		{"data after the body", gzipLines(header, `{"Format": "torch_npu-text"}`, `{}`), "unexpected data after the summary"},
		{"unknown source format", gzipLines(header, `{"Format": "nvprof"}`), `unknown source format "nvprof"`},
		{"negative compute duration", body(func(s string) string { return strings.Replace(s, `"Compute":[`, `"Compute":[5,-3,`, 1) }),
			"Compute[0]: duration -3 ns is impossible"},
		{"odd interval list", body(func(s string) string { return strings.Replace(s, `"Compute":[`, `"Compute":[5,`, 1) }),
			"not start and duration pairs"},
		{"op ending before its start", body(func(s string) string { return strings.Replace(s, `"EndNs":`, `"EndNs":-`, 1) }),
			"CommOps[0] (hcom_allReduce"},
		{"negative transfer", body(func(s string) string { return firstSize.ReplaceAllString(s, `"SizeBytes":[-7`) }),
			"CommTasks[0] (Reduce_Inline): 1736408883029055957 to 1736408883029056557 ns, -7 bytes is impossible"},
		{"task columns of different lengths", body(func(s string) string { return strings.Replace(s, `"SrcRank":[`, `"SrcRank":[0,`, 1) }),
			"CommTasks: columns of 320 and 321 tasks"},
		{"task string out of range", body(func(s string) string { return firstName.ReplaceAllString(s, `"Name":[99`) }),
			"CommTasks[0]: string 99 of 13"},
		{"steps without windows", body(func(s string) string { return strings.Replace(s, `"Steps":[`, `"Steps":[7,`, 1) }),
			"3 step numbers for 2 step windows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ranksummary.Name(2))
			require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			_, err := ranksummary.Read(path, ranksummary.KnownFormat)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+":")
			assert.Contains(t, err.Error(), tc.want)
			// Discovery still counts it, from its name, and loading says what is wrong.
			in, err := parser.Discover([]string{path})
			require.NoError(t, err)
			require.Len(t, in.Ranks, 1)
			assert.Equal(t, 2, in.Ranks[0].Rank)
			lr := parser.LoadRank(in.Ranks[0])
			require.Len(t, lr.Problems, 1)
			assert.Contains(t, lr.Problems[0], tc.want)
		})
	}
}

// FuzzRankSummary: no input makes the reader panic; every error names the file; a
// summary it accepts holds no negative interval and writes back to one read the same.
func FuzzRankSummary(f *testing.F) {
	r := sampleRank(f)
	good := summaryBytes(f, r, []string{"note"})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(gzipLines(`{"format":"hcclprof-summary","version":1,"rank":0}`, `{"Format":"kineto","Compute":[1,2,3,4],"Steps":[1],"StepWindows":[0,10],"Flows":[1,2]}`))
	f.Add(gzipLines(`{"format":"hcclprof-summary","version":1,"rank":0}`, `{"Format":"msprof","Compute":[9223372036854775807,1,1,1]}`))
	f.Add(gzipLines(`{"traceEvents": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz" + ranksummary.Suffix
		// The fast path takes only what the plain reader reads the same.
		if fast, ok := ranksummary.ReadFast(data, fastSize(data)); ok {
			plain, err := ranksummary.ReadPlain(name, bytes.NewReader(data), ranksummary.MaxInflated(int64(len(data))))
			if err != nil {
				t.Fatalf("the fast path took a summary the plain reader refuses: %v", err)
			}
			assert.Equal(t, plain, fast)
		}
		got, err := ranksummary.ReadFrom(name, bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, ivs := range [][]profile.Interval{got.Compute, got.Overlap.Computing, got.Overlap.Free} {
			for _, iv := range ivs {
				if iv.EndNs < iv.StartNs {
					t.Fatalf("negative interval %v accepted", iv)
				}
			}
		}
		var buf bytes.Buffer
		if err := ranksummary.Write(&buf, got, ranksummary.Claim{}, nil); err != nil {
			t.Fatal(err)
		}
		again, err := ranksummary.ReadFrom(name, &buf)
		if err != nil {
			t.Fatalf("a summary read back fails: %v", err)
		}
		assert.Equal(t, got, again)
	})
}

// TestSummaryInflateLimit: a summary may decompress to 1000 times its size, 1 MiB at
// least and 1 GiB at most.
func TestSummaryInflateLimit(t *testing.T) {
	for _, tc := range []struct{ packed, want int64 }{
		{0, 1 << 20},
		{1, 1 << 20},
		{1 << 10, 1 << 20},
		{10_000, 10_000_000},
		{124 << 10, 1000 * 124 << 10},
		{1 << 20, 1000 << 20},
		{2 << 20, 1 << 30},
		{1 << 40, 1 << 30},
	} {
		assert.Equal(t, tc.want, ranksummary.MaxInflated(tc.packed), "%d bytes packed", tc.packed)
	}
}
