package parser

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// alexnetInfoJSON is the chip part of the real 910A info.json.0 (msprof-mindspore-alexnet).
const alexnetInfoJSON = `{"version": "1.0", "devices": "0", "platform": "", "DeviceInfo": [{"id": 0, "env_type": 3,
 "ai_cpu_core_num": 14, "ai_core_num": 32, "aiv_num": 0, "hwts_frequency": "100", "aic_frequency": "1000"}],
 "platform_version": "1", "rank_id": 0}`

func TestParseDeviceInfoJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		json   string
		device int
		want   *profile.DeviceInfo
	}{
		{"real 910A", alexnetInfoJSON, 0, &profile.DeviceInfo{AICoreNum: 32, AIVNum: 0, PlatformVersion: "1"}},
		{"the entry of the device", `{"DeviceInfo": [{"id": 0, "ai_core_num": 32, "aiv_num": 0}, {"id": 3, "ai_core_num": 24, "aiv_num": 48}]}`, 3,
			&profile.DeviceInfo{AICoreNum: 24, AIVNum: 48, PlatformVersion: ""}},
		{"first entry when none is the device", `{"DeviceInfo": [{"id": 5, "ai_core_num": "20", "aiv_num": "40"}], "platform_version": 5}`, 3,
			&profile.DeviceInfo{AICoreNum: 20, AIVNum: 40, PlatformVersion: "5"}},
		{"platform only", `{"platform_version": "5"}`, 0, &profile.DeviceInfo{AICoreNum: -1, AIVNum: -1, PlatformVersion: "5"}},
		{"no chip facts", `{"rank_id": 0, "DeviceInfo": []}`, 0, nil},
		{"null DeviceInfo", `{"DeviceInfo": null}`, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDeviceInfoJSON(strings.NewReader(tc.json), "info.json.0", tc.device)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, bad := range []string{`{"DeviceInfo": {"id": 0}}`, `{"DeviceInfo": [{"ai_core_num": [32]}]}`, `{"platform_version": {}}`, `[1]`} {
		_, err := parseDeviceInfoJSON(strings.NewReader(bad), "info.json.0", 0)
		assert.ErrorContains(t, err, "info.json.0", bad)
	}
}

// TestMsprofAlexnetIs910A: the real MindSpore AlexNet device is a first-generation
// Ascend 910 (32 AI Cores, no vector cores, platform_version 1, which msprof names
// Ascend910A); its HCCS and PCIe links are held against 910A's peaks.
func TestMsprofAlexnetIs910A(t *testing.T) {
	dir := realdata.Path(t, "msprof-mindspore-alexnet", alexnetProf)
	ranks, err := loadMsprofDir(dir)
	require.NoError(t, err)
	require.Len(t, ranks, 1)
	assert.Equal(t, &profile.DeviceInfo{File: "device_0/info.json.0", AICoreNum: 32, AIVNum: 0, PlatformVersion: "1"}, ranks[0].Info.Device)
	res := analysis.Analyze(&profile.Cluster{Ranks: ranks}, analysis.Options{})
	hw := res.Communication.Hardware
	assert.Equal(t, "910A", hw.Name)
	assert.False(t, hw.Assumed)
	assert.Equal(t, "info.json ai_core_num 32, aiv_num 0, platform_version 1", hw.Source)
	assert.Equal(t, 10.0, hw.PeakGBps["HCCS"])
}

// TestTorchRankRawDeviceInfo: a torch_npu rank directory's raw PROF_*/device_N/info.json.N
// describes the chip when the export does not.
func TestTorchRankRawDeviceInfo(t *testing.T) {
	rank := filepath.Join(t.TempDir(), "host_1_20250109074733000_ascend_pt")
	msprofWriteFiles(t, rank, map[string]string{
		"profiler_info_3.json":                                                `{"rank_id": 3}`,
		"ASCEND_PROFILER_OUTPUT/step_trace_time.csv":                          "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n",
		"PROF_000001_20250109074733000_ABCDEFGHIJKLMNOP/device_3/info.json.3": `{"DeviceInfo": [{"id": 3, "ai_core_num": 32, "aiv_num": 0}], "platform_version": "1"}`,
	})
	chip, problems := rawDeviceInfo(rank)
	assert.Empty(t, problems)
	assert.Equal(t, &profile.DeviceInfo{File: "PROF_000001_20250109074733000_ABCDEFGHIJKLMNOP/device_3/info.json.3",
		AICoreNum: 32, AIVNum: 0, PlatformVersion: "1"}, chip)

	r := LoadRank(RankInput{Rank: 3, Dir: rank, OutputDir: filepath.Join(rank, "ASCEND_PROFILER_OUTPUT"),
		InfoFile: filepath.Join(rank, "profiler_info_3.json")})
	assert.Equal(t, chip, r.Info.Device, "kept past profiler_info's parse")
	assert.Equal(t, 3, r.Info.RankID)
	assert.Contains(t, r.FilesUsed, chip.File)

	// A bad info.json is a problem of the rank, not a failure.
	msprofWriteFiles(t, rank, map[string]string{"PROF_000001_20250109074733000_ABCDEFGHIJKLMNOP/device_3/info.json.3": `{"DeviceInfo": 7}`})
	chip, problems = rawDeviceInfo(rank)
	assert.Nil(t, chip)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "DeviceInfo: expected an array")
}

// TestKinetoIsNVIDIA: a Kineto trace is NCCL on NVIDIA GPUs with or without
// deviceProperties (older traces and some exporters leave it out).
func TestKinetoIsNVIDIA(t *testing.T) {
	const props = `  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912, "computeMajor": 9}],` + "\n"
	require.Contains(t, miniKineto, props)
	for _, tc := range []struct {
		name, trace, source string
	}{
		{"with deviceProperties", miniKineto, "Kineto trace (deviceProperties NVIDIA H100 80GB HBM3)"},
		{"without deviceProperties", strings.Replace(miniKineto, props, "", 1), "Kineto trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseKineto(strings.NewReader(tc.trace), "mini.pt.trace.json")
			require.NoError(t, err)
			r.Traits = formatTraits[r.Format] // as LoadRank gives every rank its format's traits
			hw := analysis.Analyze(&profile.Cluster{Ranks: []*profile.Rank{r}}, analysis.Options{}).Communication.Hardware
			assert.Equal(t, "NVIDIA", hw.Name)
			assert.False(t, hw.Assumed)
			assert.Equal(t, tc.source, hw.Source)
		})
	}
}
