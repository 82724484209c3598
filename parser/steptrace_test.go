package parser

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

const (
	stHeader2023 = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive)"
	stHeader2024 = stHeader2023 + ",Preparing"
	stRow2024    = "50,8873.756000000001,101963.203,4028.6750000000175,105991.87800000001,25744.050000000003,136581.0,0,101963.203,17902.5"
)

// stRank0 is the real row of imagenet-2rank-level1 rank 0.
var stRank0 = profile.StepTraceRow{
	Step: 50, HasStep: true,
	ComputingNs: 8_873_756, CommNotOverlappedNs: 101_963_203, OverlappedNs: 4_028_675,
	CommunicationNs: 105_991_878, FreeNs: 25_744_050, StageNs: 136_581_000, BubbleNs: 0,
	CommNotOverlappedExclRecvNs: 101_963_203, PreparingNs: 17_902_500, HasPreparing: true,
}

// assertStepRow compares rows exactly: the files hold float reprs such as
// 8873.756000000001, which convert to the ns the profiler measured.
func assertStepRow(t *testing.T, want, got profile.StepTraceRow) {
	t.Helper()
	assert.Equal(t, want, got)
}

func TestParseStepTraceCSVVariants(t *testing.T) {
	noPrep := stRank0
	noPrep.PreparingNs, noPrep.HasPreparing = 0, false

	tests := []struct {
		name string
		in   string
		want []profile.StepTraceRow
	}{
		{
			name: "2024 header with Preparing, CRLF as written",
			in:   stHeader2024 + "\r\n" + stRow2024 + "\r\n",
			want: []profile.StepTraceRow{stRank0},
		},
		{
			name: "2023 header without Preparing",
			in:   stHeader2023 + "\n50,8873.756,101963.203,4028.675,105991.878,25744.05,136581.0,0,101963.203\n",
			want: []profile.StepTraceRow{noPrep},
		},
		{
			name: "torch_npu 2.7.1: leading Device_id",
			in:   "Device_id," + stHeader2024 + "\n3," + stRow2024 + "\n",
			want: []profile.StepTraceRow{stRank0},
		},
		{
			name: "UTF-8 BOM, quoted fields, trailing TAB and spaces",
			in: "\ufeff" + stHeader2024 + "\n" +
				"\"50\",\"8873.756\t\", 101963.203 ,4028.675,105991.878\t,25744.05,136581.0,0,101963.203,\"17902.5\"\n",
			want: []profile.StepTraceRow{stRank0},
		},
		{
			name: "columns in another order",
			in: "Free,Stage,Step,Communication,Communication(Not Overlapped),Computing,Preparing,Bubble,Overlapped,Communication(Not Overlapped and Exclude Receive)\n" +
				"25744.05,136581.0,50,105991.878,101963.203,8873.756,17902.5,0,4028.675,101963.203\n",
			want: []profile.StepTraceRow{stRank0},
		},
		{
			name: "only the required columns: Overlapped and Exclude Receive derived, Bubble 0",
			in: "Step,Computing,Communication(Not Overlapped),Communication,Free,Stage\n" +
				"50,8873.756,101963.203,105991.878,25744.05,136581.0\n",
			want: []profile.StepTraceRow{noPrep},
		},
		{
			name: "no Exclude Receive column: derived from Bubble",
			in: "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n" +
				"7,10,30,5,35,2,100,8\n",
			want: []profile.StepTraceRow{{
				Step: 7, HasStep: true, ComputingNs: 10_000, CommNotOverlappedNs: 30_000, OverlappedNs: 5000,
				CommunicationNs: 35_000, FreeNs: 2000, StageNs: 100_000, BubbleNs: 8000, CommNotOverlappedExclRecvNs: 22_000,
			}},
		},
		{
			name: "empty Step and an absolute-timestamp Preparing (no step markers)",
			in:   stHeader2024 + "\n,10,30,5,35,2,100,0,30,1726054679554437.8\n",
			want: []profile.StepTraceRow{{
				Step: -1, HasStep: false, ComputingNs: 10_000, CommNotOverlappedNs: 30_000, OverlappedNs: 5000,
				CommunicationNs: 35_000, FreeNs: 2000, StageNs: 100_000, CommNotOverlappedExclRecvNs: 30_000,
			}},
		},
		{
			name: "N/A and empty optional fields",
			in:   stHeader2024 + "\n1,10,30,N/A,35,2,100,,,N/A\n",
			want: []profile.StepTraceRow{{
				Step: 1, HasStep: true, ComputingNs: 10_000, CommNotOverlappedNs: 30_000, OverlappedNs: 5000,
				CommunicationNs: 35_000, FreeNs: 2000, StageNs: 100_000, CommNotOverlappedExclRecvNs: 30_000,
			}},
		},
		{
			name: "several steps, blank lines skipped",
			in:   stHeader2024 + "\n1,1,2,0,2,3,6,0,2,0.5\n\n,,,,,,,,,\n2,1.5,2,0,2,3,6.5,0,2,0.25\n",
			want: []profile.StepTraceRow{
				{Step: 1, HasStep: true, ComputingNs: 1000, CommNotOverlappedNs: 2000, CommunicationNs: 2000, FreeNs: 3000, StageNs: 6000, CommNotOverlappedExclRecvNs: 2000, PreparingNs: 500, HasPreparing: true},
				{Step: 2, HasStep: true, ComputingNs: 1500, CommNotOverlappedNs: 2000, CommunicationNs: 2000, FreeNs: 3000, StageNs: 6500, CommNotOverlappedExclRecvNs: 2000, PreparingNs: 250, HasPreparing: true},
			},
		},
		{
			name: "header only",
			in:   stHeader2024 + "\r\n",
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStepTraceCSV(strings.NewReader(tc.in), "step_trace_time.csv")
			require.NoError(t, err)
			require.Len(t, got, len(tc.want))
			for i := range tc.want {
				assertStepRow(t, tc.want[i], got[i])
			}
		})
	}
}

func TestParseStepTraceCSVErrors(t *testing.T) {
	const file = "rank3/step_trace_time.csv"
	tests := []struct {
		name      string
		in        string
		line      int
		fragments []string
	}{
		{
			name:      "missing Stage",
			in:        "Step,Computing,Communication(Not Overlapped),Communication,Free\n1,1,1,1,1\n",
			line:      1,
			fragments: []string{`missing column "Stage"`},
		},
		{
			// The real Megatron row with its last byte cut: Preparing 206.2 for 206.25.
			name:      "cut inside the last field",
			in:        "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n0,13,231290.09999999995,420174.2600000001,0.0,420174.2600000001,158558.00000000032,810022.25,0,420174.2600000001,206.2",
			line:      2,
			fragments: []string{"no line break after the last row", "cut short"},
		},
		{
			name:      "missing several columns",
			in:        "Device_id,Computing,Communication\n0,1,1\n",
			line:      1,
			fragments: []string{`"Step"`, `"Communication(Not Overlapped)"`, `"Free"`, `"Stage"`},
		},
		{
			name:      "non-numeric Computing on line 3",
			in:        stHeader2024 + "\n1,1,2,0,2,3,6,0,2,0.5\n2,abc,2,0,2,3,6,0,2,0.5\n",
			line:      3,
			fragments: []string{file + ":3:", `"Computing"`, `"abc"`},
		},
		{
			name:      "empty required field",
			in:        stHeader2024 + "\n1,1,2,0,2,,6,0,2,0.5\n",
			line:      2,
			fragments: []string{file + ":2:", `"Free"`},
		},
		{
			name:      "NaN is not a measurement",
			in:        stHeader2024 + "\n1,1,2,0,2,NaN,6,0,2,0.5\n",
			line:      2,
			fragments: []string{file + ":2:", `"Free"`},
		},
		{
			name:      "bad optional number",
			in:        stHeader2024 + "\r\n1,1,2,0,2,3,6,x,2,0.5\r\n",
			line:      2,
			fragments: []string{file + ":2:", `"Bubble"`},
		},
		{
			name:      "bad step",
			in:        stHeader2024 + "\n\n\nstep1,1,2,0,2,3,6,0,2,0.5\n",
			line:      4,
			fragments: []string{file + ":4:", "step number"},
		},
		{
			name:      "empty file",
			in:        "",
			line:      1,
			fragments: []string{"empty file"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseStepTraceCSV(strings.NewReader(tc.in), file)
			se := requireSyntaxError(t, err, file, tc.fragments...)
			assert.Equal(t, tc.line, se.Line)
		})
	}
}

func TestParseStepTraceCSVRealData(t *testing.T) {
	tests := []struct {
		rel  string
		want profile.StepTraceRow
	}{
		{summaryL1R0, stRank0},
		{summaryL1R1, profile.StepTraceRow{
			Step: 50, HasStep: true, ComputingNs: 8_878_295, CommNotOverlappedNs: 96_359_047, OverlappedNs: 4_016_239,
			CommunicationNs: 100_375_286, FreeNs: 26_675_274, StageNs: 131_912_500, CommNotOverlappedExclRecvNs: 96_359_047,
			PreparingNs: 20_433_250, HasPreparing: true,
		}},
		// README gives Stage and Comm(Not Overlapped) for Level0; the rest is the file's.
		{summaryL0R0, profile.StepTraceRow{
			Step: 50, HasStep: true, ComputingNs: 8_827_473, CommNotOverlappedNs: 81_515_607, OverlappedNs: 4_001_282,
			CommunicationNs: 85_516_889, FreeNs: 25_908_102, StageNs: 116_251_250, CommNotOverlappedExclRecvNs: 81_515_607,
			PreparingNs: 19_358_000, HasPreparing: true,
		}},
		{summaryL0R1, profile.StepTraceRow{
			Step: 50, HasStep: true, ComputingNs: 8_813_173, CommNotOverlappedNs: 64_616_114, OverlappedNs: 3_989_596,
			CommunicationNs: 68_605_710, FreeNs: 27_172_943, StageNs: 100_602_250, CommNotOverlappedExclRecvNs: 64_616_114,
			PreparingNs: 18_920_000, HasPreparing: true,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			f := openSummaryReal(t, tc.rel+summaryAPO+"step_trace_time.csv")
			rows, err := parseStepTraceCSV(f, f.Name())
			require.NoError(t, err)
			require.Len(t, rows, 1)
			assertStepRow(t, tc.want, rows[0])
			// The profiler's identity: Overlapped = Communication − Comm(Not Overlapped).
			assert.Equal(t, rows[0].CommunicationNs-rows[0].CommNotOverlappedNs, rows[0].OverlappedNs)
		})
	}
}

func FuzzStepTraceCSV(f *testing.F) {
	f.Add([]byte(stHeader2024 + "\r\n" + stRow2024 + "\r\n"))
	f.Add([]byte(stHeader2023 + "\n50,8873.756,101963.203,4028.675,105991.878,25744.05,136581.0,0,101963.203\n"))
	f.Add([]byte("Device_id," + stHeader2024 + "\n3," + stRow2024 + "\n"))
	f.Add([]byte("\ufeff" + stHeader2024 + "\n,\"1\t\",2,,2,3,6,N/A,2,1726054679554437.8\n"))
	f.Add([]byte("Step,Computing,Communication(Not Overlapped),Communication,Free,Stage\n1,2,3,4,5,6\n"))
	addRealSeeds(f,
		summaryL1R0+summaryAPO+"step_trace_time.csv",
		summaryL1R1+summaryAPO+"step_trace_time.csv",
		summaryL0R0+summaryAPO+"step_trace_time.csv",
	)
	const file = "fuzz/step_trace_time.csv"
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := parseStepTraceCSV(strings.NewReader(string(data)), file)
		if err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
