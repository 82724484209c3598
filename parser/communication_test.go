package parser

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// cjOp0 is op 0 of the real imagenet-2rank-level1 rank 0 communication.json
// (docs/formats.md §3.2), verbatim.
const cjOp0 = `"hcom_allReduce__586_0_1@17522688603477080586": {
  "Communication Time Info": {"Start Timestamp(us)": 1736408883732241.5, "Elapse Time(ms)": 79.08952021875,
    "Transit Time(ms)": 0.23918478124999998, "Wait Time(ms)": 5.64663284375, "Synchronization Time(ms)": 5.61569221875,
    "Idle Time(ms)": 73.20370259375, "Wait Time Ratio": 0.9594, "Synchronization Time Ratio": 0.9591},
  "Communication Bandwidth Info": {
    "RDMA": {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0, "Large Packet Ratio": 0, "Size Distribution": {}},
    "HCCS": {"Transit Size(MB)": 28.647232000000002, "Transit Time(ms)": 1.8168363437500001, "Bandwidth(GB/s)": 15.7676,
             "Large Packet Ratio": 0.0, "Size Distribution": {"2.064384": [12, 1.578891625], "1.937312": [2, 0.23794471875]}},
    "SDMA": {"Transit Size(MB)": 28.647232000000002, "Transit Time(ms)": 1.8168363437500001, "Bandwidth(GB/s)": 15.7676,
             "Large Packet Ratio": 0, "Size Distribution": {}}}}`

// cjTotal is the shape of a per-rank "Total Op Info" entry.
const cjTotal = `"Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 105.991878, "Wait Time Ratio": 0.6173},
  "Communication Bandwidth Info": {"HCCS": {"Transit Time(ms)": 27.3157, "Transit Size(MB)": 427.596, "Size Distribution": {"2.064384": [12, 1.5]}}}}`

// cjSend is a p2p op with a transport key outside the known set, exponent-form
// packet sizes and a key holding an '@' in the op name.
const cjSend = `"hcom_send__210_0_1@x@17148521525495523210": {
  "Communication Time Info": {"Start Timestamp(us)": 1736408883000000.25, "Elapse Time(ms)": 0.5, "Transit Time(ms)": 0.0,
    "Wait Time(ms)": 0, "Synchronization Time(ms)": 0, "Idle Time(ms)": 0.5},
  "Communication Bandwidth Info": {"HCCS_SW": {"Transit Size(MB)": 2e-05, "Transit Time(ms)": 1e-3, "Bandwidth(GB/s)": 0.02,
    "Large Packet Ratio": 1, "Size Distribution": {"2e-05": [1, 0.001], "4.194304": [0, 0.0]}}}}`

func TestParseCommunicationJSONLayouts(t *testing.T) {
	t.Run("torch_npu layout", func(t *testing.T) {
		in := `{"step50": {"p2p": {` + cjSend + `, ` + cjTotal + `}, "collective": {` + cjOp0 + `, ` + cjTotal + `}}}`
		ops, err := parseCommunicationJSON(strings.NewReader(in), "communication.json")
		require.NoError(t, err)
		require.Len(t, ops, 2)

		send := ops[0] // earlier start
		assert.Equal(t, 50, send.Step)
		assert.True(t, send.P2P)
		assert.Equal(t, "hcom_send__210_0_1@x", send.Name, "split at the last '@'")
		assert.Equal(t, "17148521525495523210", send.Group)
		assert.Equal(t, int64(1736408883000000250), send.StartNs)
		assert.Equal(t, int64(500000), send.ElapseNs)
		assert.Equal(t, int64(500000), send.IdleNs)
		require.Contains(t, send.Transports, "HCCS_SW")
		sw := send.Transports["HCCS_SW"]
		assert.Equal(t, int64(20), sw.Bytes)
		assert.Equal(t, int64(1000), sw.TimeNs)
		assert.InDelta(t, 0.02, sw.BandwidthGBps, 1e-12)
		assert.InDelta(t, 1.0, sw.LargePacketRatio, 1e-12)
		assert.Equal(t, []profile.PacketBin{{SizeBytes: 20, Count: 1, TimeNs: 1000}, {SizeBytes: 4194304, Count: 0, TimeNs: 0}}, sw.SizeDistribution)

		op := ops[1]
		assert.Equal(t, 50, op.Step)
		assert.False(t, op.P2P)
		assert.Equal(t, "hcom_allReduce__586_0_1", op.Name)
		assert.Equal(t, "17522688603477080586", op.Group)
		assert.Equal(t, int64(1736408883732241500), op.StartNs, "decimal text to ns, no float64 rounding")
		assert.Equal(t, int64(79089520), op.ElapseNs)
		assert.Equal(t, int64(239185), op.TransitNs)
		assert.Equal(t, int64(5646633), op.WaitNs)
		assert.Equal(t, int64(5615692), op.SyncNs)
		assert.Equal(t, int64(73203703), op.IdleNs)
		assert.Len(t, op.Transports, 3)
		hccs := op.Transports["HCCS"]
		assert.Equal(t, int64(28647232), hccs.Bytes)
		assert.Equal(t, int64(1816836), hccs.TimeNs)
		assert.InDelta(t, 15.7676, hccs.BandwidthGBps, 1e-12)
		assert.Equal(t, []profile.PacketBin{
			{SizeBytes: 1937312, Count: 2, TimeNs: 237945},
			{SizeBytes: 2064384, Count: 12, TimeNs: 1578892},
		}, hccs.SizeDistribution)
		assert.Equal(t, hccs.Bytes, op.Transports["SDMA"].Bytes)
		assert.Empty(t, op.Transports["SDMA"].SizeDistribution)
		assert.Equal(t, profile.TransportStats{}, op.Transports["RDMA"])
	})

	t.Run("step key without a number", func(t *testing.T) {
		in := `{"step": {"p2p": {}, "collective": {` + cjOp0 + `}}}`
		ops, err := parseCommunicationJSON(strings.NewReader(in), "communication.json")
		require.NoError(t, err)
		require.Len(t, ops, 1)
		assert.Equal(t, -1, ops[0].Step)
	})

	t.Run("several steps, sorted by step then start", func(t *testing.T) {
		op := func(name string, start string) string {
			return `"` + name + `@1": {"Communication Time Info": {"Start Timestamp(us)": ` + start + `, "Elapse Time(ms)": 1}}`
		}
		in := `{"step12": {"collective": {` + op("b", "30") + `, ` + op("a", "30") + `}},
		        "step3": {"collective": {` + op("c", "50") + `}, "p2p": {` + op("hcom_receive__1_0_1", "40") + `}}}`
		ops, err := parseCommunicationJSON(strings.NewReader(in), "communication.json")
		require.NoError(t, err)
		var got []string
		for _, o := range ops {
			got = append(got, o.Name)
		}
		assert.Equal(t, []string{"hcom_receive__1_0_1", "c", "a", "b"}, got)
		assert.Equal(t, []int{3, 3, 12, 12}, []int{ops[0].Step, ops[1].Step, ops[2].Step, ops[3].Step})
		assert.True(t, ops[0].P2P)
		assert.Equal(t, int64(1e6), ops[2].ElapseNs)
		assert.Nil(t, ops[2].Transports, "no bandwidth info")
	})

	t.Run("flat msprof layout", func(t *testing.T) {
		in := "\ufeff{" + cjOp0 + `, ` + cjSend + `, ` + cjTotal + `}`
		ops, err := parseCommunicationJSON(strings.NewReader(in), "analyze/communication.json")
		require.NoError(t, err)
		require.Len(t, ops, 2)
		for _, o := range ops {
			assert.Equal(t, -1, o.Step)
		}
		assert.Equal(t, "hcom_send__210_0_1@x", ops[0].Name)
		assert.True(t, ops[0].P2P, "p2p from the op name")
		assert.False(t, ops[1].P2P)
		assert.Equal(t, int64(79089520), ops[1].ElapseNs)
	})

	t.Run("Idle Time absent: Elapse − Transit − Wait, as the profiler writes it", func(t *testing.T) {
		in := `{"step1": {"collective": {"op@1": {"Communication Time Info": {"Elapse Time(ms)": 2.0, "Transit Time(ms)": 0.5, "Wait Time(ms)": 0.25}}}}}`
		ops, err := parseCommunicationJSON(strings.NewReader(in), "c.json")
		require.NoError(t, err)
		require.Len(t, ops, 1)
		assert.Equal(t, int64(1250000), ops[0].IdleNs, "not 0")
	})

	t.Run("empty and NaN", func(t *testing.T) {
		ops, err := parseCommunicationJSON(strings.NewReader(`{}`), "c.json")
		require.NoError(t, err)
		assert.Empty(t, ops)
		in := `{"step1": {"collective": {"op@1": {"Communication Time Info": {"Elapse Time(ms)": 2.0},
		  "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": NaN}}}}}}`
		ops, err = parseCommunicationJSON(strings.NewReader(in), "c.json")
		require.NoError(t, err)
		require.Len(t, ops, 1)
		assert.Equal(t, 0.0, ops[0].Transports["HCCS"].BandwidthGBps, "Python's NaN reads as 0")
	})
}

func TestParseCommunicationJSONErrors(t *testing.T) {
	const file = "rank0/communication.json"
	tests := []struct {
		name      string
		in        string
		offset    int64
		fragments []string
	}{
		{"truncated", `{"step50": {"p2p": {}`, 21, []string{"truncated"}},
		{"syntax", `{"step50": {"p2p": {}, }}`, 23, []string{"member name"}},
		{"not an object", `[1, 2]`, 0, []string{"expected an object"}},
		{"bad step key", `{"iteration1": {}}`, 1, []string{`"iteration1"`}},
		{"step value not an object", `{"step1": 3}`, 10, []string{`"step1"`, "expected an object"}},
		{"op without time info", `{"step1": {"collective": {"op@1": {}}}}`, 34, []string{`"op@1"`, "Communication Time Info"}},
		{"string elapse", `{"step1": {"collective": {"op@1": {"Communication Time Info": {"Elapse Time(ms)": "x"}}}}}`, 82, []string{"Elapse Time(ms)", `"x"`}},
		{"elapse out of range", `{"op@1": {"Communication Time Info": {"Elapse Time(ms)": 1e300}}}`, 57, []string{"out of range"}},
		{"bad start", `{"op@1": {"Communication Time Info": {"Start Timestamp(us)": true}}}`, 61, []string{"Start Timestamp(us)"}},
		{"bad packet size key", `{"op@1": {"Communication Time Info": {}, "Communication Bandwidth Info": {"HCCS": {"Size Distribution": {"big": [1, 2]}}}}}`, 105, []string{`"big"`}},
		{"short packet bin", `{"op@1": {"Communication Time Info": {}, "Communication Bandwidth Info": {"HCCS": {"Size Distribution": {"1.0": [1]}}}}}`, 112, []string{"[count, time in ms]"}},
		{"fractional count", `{"op@1": {"Communication Time Info": {}, "Communication Bandwidth Info": {"HCCS": {"Size Distribution": {"1.0": [1.5, 2]}}}}}`, 113, []string{"packet count"}},
		// A null figure read as 0: a "measured" Transit Time of 0, bytes of 0.
		{"null transit", `{"op@1": {"Communication Time Info": {"Transit Time(ms)": null}}}`, 58, []string{"Transit Time(ms)", "null where the profiler writes a number"}},
		{"null transport bytes", `{"op@1": {"Communication Time Info": {}, "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": null}}}}`, 103,
			[]string{"Transit Size(MB)", "null"}},
		{"trailing data", `{} {}`, 3, []string{"after the top-level value"}},
		{"empty", ``, 0, []string{"empty file"}},
		{"deep nesting", strings.Repeat("[", 200), 65, []string{"nesting"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCommunicationJSON(strings.NewReader(tc.in), file)
			se := requireSyntaxError(t, err, file, tc.fragments...)
			assert.Equal(t, tc.offset, se.Offset, "offset")
			assert.Equal(t, 0, se.Line)
		})
	}
}

func TestParseCommunicationJSONRealData(t *testing.T) {
	tests := []struct {
		rel        string
		elapseUs   float64 // the step's Communication column in step_trace_time.csv
		firstStart int64
	}{
		{summaryL1R0, 105991.878, 1736408883732241500},
		{summaryL1R1, 100375.286, 1736408883737849200},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			f := openSummaryReal(t, tc.rel+summaryAPO+"communication.json")
			ops, err := parseCommunicationJSON(f, f.Name())
			require.NoError(t, err)
			require.Len(t, ops, 4)
			var sum int64
			for i, op := range ops {
				assert.Equal(t, 50, op.Step)
				assert.False(t, op.P2P)
				assert.Equal(t, "17522688603477080586", op.Group)
				assert.Equal(t, "hcom_allReduce__586_"+string(rune('0'+i))+"_1", op.Name)
				assert.ElementsMatch(t, []string{"RDMA", "HCCS", "PCIE", "SDMA", "SIO"}, keysOf(op.Transports))
				assert.Equal(t, op.Transports["HCCS"], profile.TransportStats{
					Bytes: op.Transports["SDMA"].Bytes, TimeNs: op.Transports["SDMA"].TimeNs,
					BandwidthGBps: op.Transports["SDMA"].BandwidthGBps, SizeDistribution: op.Transports["HCCS"].SizeDistribution,
				}, "only HCCS carries traffic, so SDMA == HCCS")
				// Idle = Elapse − Transit − Wait, within rounding.
				assert.InDelta(t, op.ElapseNs-op.TransitNs-op.WaitNs, op.IdleNs, 2)
				// Σ count·size = Transit Size.
				var b int64
				for _, bin := range op.Transports["HCCS"].SizeDistribution {
					b += bin.Count * bin.SizeBytes
				}
				assert.InDelta(t, op.Transports["HCCS"].Bytes, b, 2)
				sum += op.ElapseNs
			}
			assert.Equal(t, tc.firstStart, ops[0].StartNs)
			assert.InDelta(t, tc.elapseUs, float64(sum)/1e3, 1.0, "Σ elapse = Communication")
			if tc.rel == summaryL1R0 {
				op := ops[0]
				assert.InDelta(t, 79089520, op.ElapseNs, 1)
				assert.Equal(t, int64(239185), op.TransitNs)
				assert.Equal(t, int64(5646633), op.WaitNs)
				assert.Equal(t, int64(5615692), op.SyncNs)
				assert.Equal(t, int64(28647232), op.Transports["HCCS"].Bytes)
				assert.Equal(t, op.Transports["HCCS"].Bytes, op.Transports["SDMA"].Bytes)
				assert.Equal(t, int64(20), ops[1].SyncNs, `"Synchronization Time(ms)": 2e-05`)
			}
		})
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func FuzzCommunicationJSON(f *testing.F) {
	f.Add([]byte(`{"step50": {"p2p": {}, "collective": {` + cjOp0 + `, ` + cjTotal + `}}}`))
	f.Add([]byte(`{"step": {"p2p": {` + cjSend + `}}}`))
	f.Add([]byte(`{` + cjOp0 + `, ` + cjTotal + `}`))
	f.Add([]byte(`{"step1": {"collective": {"a@1": {"Communication Time Info": {"Start Timestamp(us)": "1.5e3", "Elapse Time(ms)": -Infinity}}}}}`))
	addRealSeeds(f,
		summaryL1R0+summaryAPO+"communication.json",
		summaryL1R1+summaryAPO+"communication.json",
	)
	const file = "fuzz/communication.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := parseCommunicationJSON(bytes.NewReader(data), file)
		if err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// TestAttachGroupHashesCollision: two groups of a rank whose hashes end in the same
// three digits give their ops the same name; each op takes the group of the
// communication.json entry that started nearest to it, and a bare id shared by two
// groups is left unresolved rather than guessed.
func TestAttachGroupHashesCollision(t *testing.T) {
	r := &profile.Rank{
		Timeline: profile.Timeline{
			CommOps: []profile.CommOp{
				{Name: "hcom_allReduce__206_0_1", Group: "206", Interval: profile.Interval{StartNs: 5_000_100, EndNs: 5_100_000}},
				{Name: "hcom_allReduce__206_0_1", Group: "206", Interval: profile.Interval{StartNs: 1_000_050, EndNs: 1_200_000}},
				{Name: "hcom_allReduce__206_1_1", Group: "206", Interval: profile.Interval{StartNs: 7_000_000, EndNs: 7_100_000}},
			},
		}, Reported: profile.Reported{
			CommStats: []profile.CommOpStats{
				{Name: "hcom_allReduce__206_0_1", Group: "111206", StartNs: 1_000_000},
				{Name: "hcom_allReduce__206_0_1", Group: "999206", StartNs: 5_000_000},
			},
		},
	}
	attachGroupHashes(r)
	assert.Equal(t, "999206", r.CommOps[0].Group)
	assert.Equal(t, "111206", r.CommOps[1].Group)
	assert.Equal(t, "206", r.CommOps[2].Group, "the id 206 names two groups: not guessed")
}
