package parser

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMsprofOpSummaryWithoutTimeline: a PROF export without its msprof_*.json timeline
// still gives the ops, from op_summary's HCCL rows, with their steps and times equal to
// the timeline's ops.
func TestMsprofOpSummaryWithoutTimeline(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	prof := msprofProfDirs(t, dir)[0]
	full, err := loadMsprofDir(prof)
	require.NoError(t, err)
	require.NotEmpty(t, full[0].CommOps)

	require.NoError(t, os.Remove(msprofExportTimeline(t, prof)))
	ranks, err := loadMsprofDir(prof)
	require.NoError(t, err)
	r := ranks[0]
	assert.False(t, r.HasTimeline)
	require.Len(t, r.KernelCommOps, len(full[0].CommOps))
	for i, op := range r.KernelCommOps {
		want := full[0].CommOps[i]
		assert.Equal(t, want.Name, op.Name)
		assert.Equal(t, want.StartNs, op.StartNs, op.Name)
		assert.InDelta(t, want.DurNs(), op.DurNs(), 1, "µs with 3 decimals: %s", op.Name)
		assert.Equal(t, "allreduce", op.Type)
	}
	found := false
	for _, f := range r.FilesUsed {
		found = found || strings.HasPrefix(filepath.Base(f), "op_summary_")
	}
	assert.True(t, found, "%v", r.FilesUsed)
}

func TestParseOpSummaryComm(t *testing.T) {
	const header = "Step Id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim\n"
	doc := header +
		"3,4294967295,11,2,MatMul_1,MatMul,AI_CORE,1699529622793000.5,10,0,8\n" +
		"3,4294967295,12,2,hcom_broadcast__445_0_1,hcom_broadcast_,HCCL,1699529622793969.5,308926.68,2746.77,0\n"
	ops, err := parseOpSummaryComm(strings.NewReader(doc), "op_summary_20230818142704.csv")
	require.NoError(t, err)
	require.Len(t, ops, 1)
	assert.Equal(t, "hcom_broadcast__445_0_1", ops[0].Name)
	assert.Equal(t, "broadcast", ops[0].Type)
	assert.Equal(t, int64(1699529622793969500), ops[0].StartNs)
	assert.Equal(t, int64(308926680), ops[0].DurNs())
	assert.True(t, ops[0].HasStep)
	assert.Equal(t, 3, ops[0].Step)
	// The CANN 8 header spells the start column "Task Start Time(us)".
	cann8 := "Device_id,Model Name,Model ID,Task ID,Stream ID,Infer ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us)\n" +
		"0,m,1,2,3,0,hcom_allReduce__586_0_1,hcom_allReduce_,N/A,HCCL,1736408883704643.212\t,2.5,0\n"
	ops, err = parseOpSummaryComm(strings.NewReader(cann8), "x.csv")
	require.NoError(t, err)
	require.Len(t, ops, 1)
	assert.False(t, ops[0].HasStep)
	_, err = parseOpSummaryComm(strings.NewReader("Op Name,Task Type\nx,HCCL\n"), "bad.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.csv")
	assert.Contains(t, err.Error(), "Task Start Time(us)")
	assert.Contains(t, err.Error(), "Task Duration(us)")
}

func FuzzOpSummaryCSV(f *testing.F) {
	f.Add([]byte("Step Id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Start Time(us),Task Duration(us)\n3,1,2,3,hcom_broadcast__445_0_1,hcom_broadcast_,HCCL,1699529622793969.5,308926.68\n"))
	f.Add([]byte("Device_id,Op Name,Task Type,Task Start Time(us),Task Duration(us)\n0,hcom_x,N/A,\"1.5e3\t\",1\n"))
	const file = "fuzz/op_summary_20250101000000.csv"
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := parseOpSummaryComm(bytes.NewReader(data), file)
		if err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// FuzzMsprofIterationMarkers fuzzes the reader of the older layout's step_trace and
// timeline iteration markers (msprof_{dev}_{model}_{iter}.json).
func FuzzMsprofIterationMarkers(f *testing.F) {
	f.Add([]byte(msprofOldIteration(1000)))
	f.Add([]byte(`[{"name":"Iteration 1","ph":"X","ts":"12.5","dur":3,"pid":1,"tid":1,"args":{"Iteration ID":1}}]`))
	addRealSeeds(f, "msprof-mindspore-alexnet/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/step_trace_0_2_1.json")
	const file = "fuzz/step_trace_0_2_1.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := parseIterationMarkers(bytes.NewReader(data), file)
		if err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func BenchmarkOpSummary(b *testing.B) {
	data, _ := synthKernelDetails(20 << 20)
	// The same rows under op_summary's names.
	text := strings.Replace(string(data), "Name,", "Op Name,", 1)
	text = strings.Replace(text, "Accelerator Core", "Task Type", 1)
	text = strings.Replace(text, "Duration(us)", "Task Duration(us)", 1)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := parseOpSummaryComm(strings.NewReader(text), "bench.csv"); err != nil {
			b.Fatal(err)
		}
	}
}
