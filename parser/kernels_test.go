package parser

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Real kernel_details.csv headers and rows (docs/formats.md §6.1), shortened after the
// columns the parser reads where that keeps the shape.
const (
	kdHeaderL1  = "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)"
	kdComputeL1 = "50,4294967295,11051,2,trans_TransData_0,TransData,dynamic,AI_VECTOR_CORE,1736408883704643.212\t,53.741,0,32,0,NO,\"\"\"32,3,224,224\"\"\",FLOAT,NCHW,\"\"\"32,1,224,224,8\"\"\",FLOAT,NC1HWC0,N/A,0.0"
	kdHCCLL1    = "50,4294967295,N/A,N/A,hcom_allReduce__586_0_1,hcom_allReduce_,N/A,HCCL,1736408883732241.563\t,79089.52,590.331,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A"
	kdHCCLL1b   = "50,4294967295,N/A,N/A,hcom_allReduce__586_1_1,hcom_allReduce_,N/A,HCCL,1736408883811334.844\t,2281.105,0.0,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A"

	kdHeaderL0 = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim"

	kdHeader2023 = "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,Input Shapes"
)

type kdWant struct {
	name, typ, group string
	step             int
	hasStep          bool
	startNs, endNs   int64
}

func checkKernelOps(t *testing.T, want []kdWant, got []kernelCommOp) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		assert.Equal(t, w.name, g.Name, "op %d name", i)
		assert.Equal(t, w.typ, g.Type, "op %d type", i)
		assert.Equal(t, w.group, g.Group, "op %d group", i)
		assert.Equal(t, w.step, g.Step, "op %d step", i)
		assert.Equal(t, w.hasStep, g.HasStep, "op %d HasStep", i)
		assert.Equal(t, w.startNs, g.StartNs, "op %d start", i)
		assert.Equal(t, w.endNs, g.EndNs, "op %d end", i)
	}
}

func TestParseKernelDetailsCommVariants(t *testing.T) {
	l1op0 := kdWant{"hcom_allReduce__586_0_1", "allreduce", "586", 50, true, 1736408883732241563, 1736408883732241563 + 79089520}
	l1op1 := kdWant{"hcom_allReduce__586_1_1", "allreduce", "586", 50, true, 1736408883811334844, 1736408883811334844 + 2281105}
	tests := []struct {
		name string
		in   string
		want []kdWant
	}{
		{
			name: "Level1 2025-01: CRLF, trailing TAB, quoted shapes, compute rows skipped",
			in:   kdHeaderL1 + "\r\n" + kdComputeL1 + "\r\n" + kdHCCLL1 + "\r\n" + kdComputeL1 + "\r\n" + kdHCCLL1b + "\r\n",
			want: []kdWant{l1op0, l1op1},
		},
		{
			name: "Level0: 8 columns, Type N/A, CRLF",
			in: kdHeaderL0 + "\r\n" +
				"50,trans_TransData_0,N/A,N/A,1736405443881410.320\t,50.621,0,0\r\n" +
				"50,hcom_allReduce__868_0_1,N/A,HCCL,1736405443909176.934\t,72994.438,320.026,0\r\n",
			want: []kdWant{{"hcom_allReduce__868_0_1", "allreduce", "868", 50, true, 1736405443909176934, 1736405443909176934 + 72994438}},
		},
		{
			name: "2023: no OP State, no TAB, 2-part names, integer start",
			in: kdHeader2023 + "\n" +
				"1,4294967295,N/A,N/A,hcom_broadcast__445_0,hcom_broadcast_,HCCL,1699529622793969.5,308926.68,2746.77,0,N/A,N/A\n" +
				"1,4294967295,1259,16,ZerosLike46,ZerosLike,AI_VECTOR_CORE,1699529622790614.8,607.98,0,48,0,\"\"\"544404480\"\"\"\n" +
				"1,4294967295,N/A,N/A,hcom_allReduce__445_4,hcom_allReduce_,HCCL,1699529623137347,2833.82,1508.51,0,N/A,N/A\n",
			want: []kdWant{
				{"hcom_broadcast__445_0", "broadcast", "445", 1, true, 1699529622793969500, 1699529622793969500 + 308926680},
				{"hcom_allReduce__445_4", "allreduce", "445", 1, true, 1699529623137347000, 1699529623137347000 + 2833820},
			},
		},
		{
			name: "torch_npu 2.7.1: Device_id second, COMMUNICATION core, quoted TAB start",
			in: "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\n" +
				"3,6,4294967295,N/A,N/A,hcom_batchSendRecv__123_7_1,hcom_batchSendRecv_,N/A,COMMUNICATION,\"1740000000000000.001\t\",12.3456,1.0\n",
			want: []kdWant{{"hcom_batchSendRecv__123_7_1", "batchsendrecv", "123", 3, true, 1740000000000000001, 1740000000000000001 + 12346}},
		},
		{
			name: "Step ID spelling and an empty step",
			in: "Step ID,Name,Accelerator Core,Start Time(us),Duration(us)\n" +
				",hcom_allGather__001_0_1,HCCL,10.5,1\n" +
				"N/A,hcom_allGather__001_1_1,HCCL,20,1\n",
			want: []kdWant{
				{"hcom_allGather__001_0_1", "allgather", "001", -1, false, 10500, 11500},
				{"hcom_allGather__001_1_1", "allgather", "001", -1, false, 20000, 21000},
			},
		},
		{
			name: "no step column, no Accelerator Core column: the name decides",
			in: "Name,Type,Start Time(us),Duration(us),Wait Time(us),Block Dim\n" +
				"MatMul,MatMul,1,2,0,8\n" +
				"hcom_reduceScatter__328_1,hcom_reduceScatter_,5,2.5,0,0\n" +
				"lccl_allreduce_x,N/A,3,1,0,0\n",
			want: []kdWant{
				{"lccl_allreduce_x", "lccl", "", -1, false, 3000, 4000},
				{"hcom_reduceScatter__328_1", "reducescatter", "328", -1, false, 5000, 7500},
			},
		},
		{
			name: "Accelerator Core N/A falls back to the name; another core excludes hcom names",
			in: kdHeaderL0 + "\n" +
				"2,hcom_send__100_0_1,N/A,N/A,100,1,0,0\n" +
				"2,hcom_fake,N/A,AI_CPU,50,1,0,0\n" +
				"2,Add,N/A,N/A,60,1,0,0\n",
			want: []kdWant{{"hcom_send__100_0_1", "send", "100", 2, true, 100000, 101000}},
		},
		{
			name: "BOM, lower-case core value, short compute rows",
			in:   "\ufeff" + kdHeaderL0 + "\n50,Cast\n50,hcom_allReduce__1_0_1,N/A,hccl,7,0.0005,0,0\n",
			want: []kdWant{{"hcom_allReduce__1_0_1", "allreduce", "1", 50, true, 7000, 7001}},
		},
		{
			name: "no comm rows",
			in:   kdHeaderL1 + "\r\n" + kdComputeL1 + "\r\n",
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseKernelDetailsComm(strings.NewReader(tc.in), "kernel_details.csv")
			require.NoError(t, err)
			checkKernelOps(t, tc.want, got)
		})
	}
}

func TestParseKernelDetailsCommErrors(t *testing.T) {
	const file = "rank0/kernel_details.csv"
	tests := []struct {
		name      string
		in        string
		line      int
		fragments []string
	}{
		{"missing Start Time", "Step Id,Name,Accelerator Core,Duration(us)\n1,hcom_x,HCCL,1\n", 1, []string{`missing column "Start Time(us)"`}},
		{"missing Name and Duration", "Step Id,Accelerator Core,Start Time(us)\n", 1, []string{`"Name"`, `"Duration(us)"`}},
		{"bad start time on a comm row", kdHeaderL0 + "\r\n50,Add,N/A,AI_CORE,1,1,0,0\r\n50,hcom_allReduce__1_0_1,N/A,HCCL,17364054439x,1,0,0\r\n", 3, []string{file + ":3:", `"Start Time(us)"`}},
		{"N/A duration on a comm row", kdHeaderL0 + "\n50,hcom_allReduce__1_0_1,N/A,HCCL,1,N/A,0,0\n", 2, []string{file + ":2:", `"Duration(us)"`}},
		{"negative duration", kdHeaderL0 + "\n50,hcom_allReduce__1_0_1,N/A,HCCL,1,-3,0,0\n", 2, []string{file + ":2:", "out of range"}},
		{"bad step on a comm row", kdHeaderL0 + "\n5x,hcom_allReduce__1_0_1,N/A,HCCL,1,3,0,0\n", 2, []string{file + ":2:", "step number"}},
		{"empty file", "", 1, []string{"empty file"}},
		// Read as an op without a type or group, exit 0. (A start before the clock is
		// dropped with the rank's other impossible intervals: profile.Rank.Normalize.)
		{"comm row without a name", kdHeaderL0 + "\n50,,N/A,HCCL,1,3,0,0\n", 2, []string{file + ":2:", "without a name"}},
		// A file cut short loses the rows after the cut, comm ops among them: the cut
		// row (here not a comm op, which is never parsed) is the only trace of it.
		{"cut inside the last row", kdHeaderL0 + "\n50,hcom_allReduce__1_0_1,N/A,HCCL,1,3,0,0\n50,aclnnMuls_MulAiC", 3,
			[]string{file + ":3:", "2 of the header's 8 columns", "cut short"}},
		{"cut inside the last row, CRLF", kdHeaderL0 + "\r\n50,Add,N/A,AI_CORE,1,1,0,0\r\n50,Add,N/A,AI_CO", 3, []string{file + ":3:", "cut short"}},
		// A column read by name cannot be found in a damaged header: without the step
		// column every op would be read as having no step.
		{"damaged header", "\x00\xffep Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n50,hcom_x,N/A,HCCL,1,1\n", 1,
			[]string{file + ":1:", "damaged header", "column 1"}},
		{"header with a control character", "Step Id,Name\x01,Type,Accelerator Core,Start Time(us),Duration(us)\n", 1, []string{"damaged header", "column 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseKernelDetailsComm(strings.NewReader(tc.in), file)
			se := requireSyntaxError(t, err, file, tc.fragments...)
			assert.Equal(t, tc.line, se.Line)
		})
	}
	// A whole last row without a line break after it may still be cut inside its last
	// field (step_trace_time.csv's Preparing "206.2" of "206.25"); the profilers end
	// every row with one.
	_, err := parseKernelDetailsComm(strings.NewReader(kdHeaderL0+"\n50,hcom_allReduce__1_0_1,N/A,HCCL,1,3,0,0"), file)
	se := requireSyntaxError(t, err, file, "no line break after the last row")
	assert.Equal(t, 2, se.Line)
	// Bad numbers on rows that are not comm ops are not read, hence no error.
	ops, err := parseKernelDetailsComm(strings.NewReader(kdHeaderL0+"\nx,Add,N/A,AI_CORE,bad,bad,0,0\n"), file)
	require.NoError(t, err)
	assert.Empty(t, ops)
}

func TestParseKernelDetailsCommRealData(t *testing.T) {
	t.Run("level1 rank0", func(t *testing.T) {
		f := openSummaryReal(t, summaryL1R0+summaryAPO+"kernel_details.csv")
		ops, err := parseKernelDetailsComm(f, f.Name())
		require.NoError(t, err)
		require.Len(t, ops, 4)
		for i, op := range ops {
			assert.Equal(t, fmt.Sprintf("hcom_allReduce__586_%d_1", i), op.Name)
			assert.Equal(t, "allreduce", op.Type)
			assert.Equal(t, "586", op.Group)
			assert.Equal(t, 50, op.Step)
			assert.True(t, op.HasStep)
		}
		assert.Equal(t, int64(1736408883732241563), ops[0].StartNs)
		assert.Equal(t, int64(79089520), ops[0].DurNs())
	})
	t.Run("level0 rank1", func(t *testing.T) {
		f := openSummaryReal(t, summaryL0R1+summaryAPO+"kernel_details.csv")
		ops, err := parseKernelDetailsComm(f, f.Name())
		require.NoError(t, err)
		require.Len(t, ops, 4)
		assert.Equal(t, "hcom_allReduce__868_0_1", ops[0].Name)
		assert.Equal(t, "allreduce", ops[0].Type, "Type comes from the name: the CSV's Type is N/A at Level0")
		assert.Equal(t, int64(1736405443926096249), ops[0].StartNs)
		assert.Equal(t, int64(56083720), ops[0].DurNs())
	})
	t.Run("torchnpu-1rank-kernels (2023)", func(t *testing.T) {
		f := openSummaryReal(t, "torchnpu-1rank-kernels/kernel_details.csv")
		ops, err := parseKernelDetailsComm(f, f.Name())
		require.NoError(t, err)
		// grep -c hcom kernel_details.csv → 19, all with Accelerator Core HCCL.
		require.Len(t, ops, 19)
		types := map[string]int{}
		for _, op := range ops {
			types[op.Type]++
			assert.False(t, op.StartNs > op.EndNs)
		}
		assert.Equal(t, map[string]int{"allreduce": 14, "broadcast": 2, "allgather": 2, "reducescatter": 1}, types)
		assert.Equal(t, "hcom_broadcast__445_0", ops[0].Name)
		assert.Equal(t, "445", ops[0].Group)
		assert.Equal(t, int64(1699529622793969500), ops[0].StartNs)
		assert.Equal(t, int64(308926680), ops[0].DurNs())
		assert.Equal(t, 1, ops[0].Step)
	})
}

func FuzzKernelDetails(f *testing.F) {
	f.Add([]byte(kdHeaderL1 + "\r\n" + kdComputeL1 + "\r\n" + kdHCCLL1 + "\r\n"))
	f.Add([]byte(kdHeaderL0 + "\r\n50,hcom_allReduce__868_0_1,N/A,HCCL,1736405443909176.934\t,72994.438,320.026,0\r\n"))
	f.Add([]byte(kdHeader2023 + "\n1,4294967295,N/A,N/A,hcom_broadcast__445_0,hcom_broadcast_,HCCL,1699529622793969.5,308926.68,2746.77,0,N/A,N/A\n"))
	f.Add([]byte("Step ID,Device_id,Name,Accelerator Core,Start Time(us),Duration(us)\n,0,lccl_x,N/A,\"1.5e3\t\",1\n"))
	addRealSeeds(f,
		summaryL1R0+summaryAPO+"kernel_details.csv",
		summaryL0R0+summaryAPO+"kernel_details.csv",
		"torchnpu-1rank-kernels/kernel_details.csv",
	)
	const file = "fuzz/kernel_details.csv"
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := parseKernelDetailsComm(bytes.NewReader(data), file)
		if err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// synthKernelDetails builds a kernel_details.csv of at least size bytes in the
// Level1 format: mostly compute rows with quoted shapes and PMU columns, one HCCL row
// in 40. It returns the bytes and the number of HCCL rows.
func synthKernelDetails(size int) ([]byte, int) {
	var b bytes.Buffer
	b.Grow(size + 4096)
	b.WriteString(kdHeaderL1 + ",aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aiv_time(us),aiv_total_cycles\r\n")
	ts := int64(1736408883704643212)
	comm := 0
	for i := 0; b.Len() < size; i++ {
		us, ns := ts/1000, ts%1000
		if i%40 == 39 {
			fmt.Fprintf(&b, "50,4294967295,N/A,N/A,hcom_allReduce__586_%d_1,hcom_allReduce_,N/A,HCCL,%d.%03d\t,%d.%03d,0.0,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\r\n",
				comm, us, ns, 2000+i%997, i%1000)
			comm++
		} else {
			fmt.Fprintf(&b, "50,4294967295,%d,2,aclnnMul_MulAiCore_Mul_%d,Mul,dynamic,AI_VECTOR_CORE,%d.%03d\t,%d.%03d,0,32,0,NO,\"\"\"32,3,224,224;32,3,224,224\"\"\",FLOAT;FLOAT,NCHW;NCHW,\"\"\"32,3,224,224\"\"\",FLOAT,NCHW,N/A,0.0,0,0.0,0.0,50.522,2910056\r\n",
				11051+i, i, us, ns, 10+i%50, i%1000)
		}
		ts += 60_123
	}
	return b.Bytes(), comm
}

func TestSynthKernelDetails(t *testing.T) {
	data, comm := synthKernelDetails(64 << 10)
	ops, err := parseKernelDetailsComm(bytes.NewReader(data), "synth.csv")
	require.NoError(t, err)
	require.Len(t, ops, comm)
	assert.Equal(t, "hcom_allReduce__586_0_1", ops[0].Name)
}

func BenchmarkKernelDetails(b *testing.B) {
	data, comm := synthKernelDetails(20 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ops, err := parseKernelDetailsComm(bytes.NewReader(data), "synth.csv")
		if err != nil || len(ops) != comm {
			b.Fatalf("got %d ops (want %d), err %v", len(ops), comm, err)
		}
	}
}
