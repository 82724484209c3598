package hardware

import (
	"testing"

	"github.com/hcclprof/hcclprof/profile"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"A2", "A2"}, {"Ascend910B", "A2"}, {"910b", "A2"}, {"a3", "A3"}, {"910_93", "A3"}, {"910A", "910A"}, {"Ascend910", "910A"},
		{"h100", "H100"}, {"H100-SXM", "H100"}, {"NVIDIA H100 80GB HBM3", "H100"}, {"a100-sxm4", "A100"}, {"A100", "A100"},
	} {
		p, err := Lookup(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, p.Name, tc.in)
	}
	_, err := Lookup("MI300X")
	assert.ErrorContains(t, err, "unknown hardware \"MI300X\"")
}

func TestNVIDIAFigures(t *testing.T) {
	h100, _ := Lookup("H100")
	assert.Equal(t, 450.0, h100.PeakGBps["NVLINK"])
	assert.Equal(t, 50.0, h100.PeakGBps["NET"])
	a100, _ := Lookup("A100")
	assert.Equal(t, 300.0, a100.PeakGBps["NVLINK"])
	assert.Equal(t, 25.0, a100.PeakGBps["NET"])
	for _, p := range []Profile{h100, a100} {
		assert.True(t, p.NCCL())
		assert.Equal(t, 8, p.ServerNPUs)
		for k := range p.PeakGBps {
			assert.NotEmpty(t, p.Sources[k], "%s %s has a source", p.Name, k)
		}
	}
	nv, _ := Lookup("NVIDIA")
	assert.True(t, nv.NCCL())
	a2, _ := Lookup("A2")
	assert.False(t, a2.NCCL())
	// No report holds a run against NVLink: a peak for it stays refused.
	assert.Error(t, CheckPeakTransport("NVLink"))
}

func TestFigures(t *testing.T) {
	a2, _ := Lookup("A2")
	peak, ok := a2.Peak("hccs")
	assert.True(t, ok)
	assert.Equal(t, 18.3, peak)
	assert.Equal(t, 20.0, a2.PeakGBps["RDMA"])
	assert.InDelta(t, 0.5, a2.Utilisation("RDMA", 10), 1e-12)
	assert.Equal(t, 0.0, a2.Utilisation("SIO", 10), "A2 has no SIO")
	a3, _ := Lookup("A3")
	assert.Equal(t, 204.0, a3.PeakGBps["SIO"])
	a910, _ := Lookup("910A")
	assert.Equal(t, 10.0, a910.PeakGBps["HCCS"])
	assert.Equal(t, 10.0, a910.PeakGBps["RDMA"])
}

func TestOverrideDoesNotLeak(t *testing.T) {
	a2, _ := Lookup("A2")
	o := a2.WithPeaks(map[string]float64{"rdma": 12.5})
	assert.Equal(t, 12.5, o.PeakGBps["RDMA"])
	assert.Equal(t, "user override", o.Sources["RDMA"])
	again, _ := Lookup("A2")
	assert.Equal(t, 20.0, again.PeakGBps["RDMA"], "built-in profile unchanged")
}

func TestDetect(t *testing.T) {
	dev := func(aic, aiv int, platform string) *profile.DeviceInfo {
		return &profile.DeviceInfo{AICoreNum: aic, AIVNum: aiv, PlatformVersion: platform}
	}
	npuInfo := func(name string) Evidence { return Evidence{ChipName: name, ChipFrom: "NPU_INFO"} }
	for _, tc := range []struct {
		name       string
		evidence   []Evidence
		transports []string
		want       string
		source     string
		assumed    bool
	}{
		{"NPU_INFO 910B", []Evidence{npuInfo("Ascend910B")}, []string{"HCCS"}, "A2", "NPU_INFO Ascend910B", false},
		{"NPU_INFO 910B3", []Evidence{npuInfo("Ascend910B3")}, nil, "A2", "NPU_INFO Ascend910B3", false},
		{"NPU_INFO 910B with SIO links is A3", []Evidence{npuInfo("Ascend910B")}, []string{"HCCS", "SIO"}, "A3", "NPU_INFO Ascend910B, SIO links", false},
		{"NPU_INFO 910_93", []Evidence{npuInfo("Ascend910_9392")}, nil, "A3", "NPU_INFO Ascend910_9392", false},
		{"NPU_INFO 910A", []Evidence{npuInfo("Ascend910A")}, []string{"HCCS", "PCIE"}, "910A", "NPU_INFO Ascend910A", false},
		{"NPU_INFO old 910ProB", []Evidence{npuInfo("Ascend910ProB")}, nil, "910A", "NPU_INFO Ascend910ProB", false},
		{"info.json of the real 910A", []Evidence{{Device: dev(32, 0, "1")}}, []string{"HCCS", "PCIE"}, "910A",
			"info.json ai_core_num 32, aiv_num 0, platform_version 1", false},
		{"info.json 910A cores without platform", []Evidence{{Device: dev(32, 0, "")}}, nil, "910A", "info.json ai_core_num 32, aiv_num 0", false},
		{"info.json 910B cores", []Evidence{{Device: dev(24, 48, "5")}}, nil, "A2", "info.json ai_core_num 24, aiv_num 48, platform_version 5", false},
		{"info.json 910B cores and SIO", []Evidence{{Device: dev(24, 48, "5")}}, []string{"SIO"}, "A3",
			"info.json ai_core_num 24, aiv_num 48, platform_version 5, SIO links", false},
		{"info.json platform only", []Evidence{{Device: dev(-1, -1, "1")}}, nil, "910A", "info.json platform_version 1", false},
		{"info.json saying nothing known", []Evidence{{Device: dev(-1, -1, "9")}}, nil, "A2", "assumed: the profile names no chip", true},
		{"NPU_INFO wins over info.json", []Evidence{{ChipName: "Ascend910A", ChipFrom: "NPU_INFO", Device: dev(24, 48, "5")}}, nil, "910A", "NPU_INFO Ascend910A", false},
		{"first rank with a fact decides", []Evidence{{}, {Device: dev(32, 0, "1")}}, nil, "910A", "info.json ai_core_num 32, aiv_num 0, platform_version 1", false},
		{"Kineto with deviceProperties", []Evidence{{NCCL: true, ChipName: "NVIDIA A100-PG509-200", ChipFrom: "deviceProperties"}}, nil, "NVIDIA",
			"Kineto trace (deviceProperties NVIDIA A100-PG509-200)", false},
		{"Kineto without deviceProperties", []Evidence{{NCCL: true}}, nil, "NVIDIA", "Kineto trace", false},
		{"Kineto whatever deviceProperties says", []Evidence{{NCCL: true, ChipName: "Ascend910B", ChipFrom: "deviceProperties"}}, nil, "NVIDIA",
			"Kineto trace (deviceProperties Ascend910B)", false},
		{"SIO alone", []Evidence{{}}, []string{"HCCS", "SIO"}, "A3", "SIO links (only A3 has them)", false},
		{"nothing", []Evidence{{}}, []string{"HCCS"}, "A2", "assumed: the profile names no chip", true},
		{"no ranks", nil, nil, "A2", "assumed: the profile names no chip", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Detect(tc.evidence, tc.transports)
			assert.Equal(t, tc.want, p.Name)
			assert.Equal(t, tc.source, p.Source)
			assert.Equal(t, tc.assumed, p.Assumed)
		})
	}
	nv := Detect([]Evidence{{NCCL: true}}, nil)
	assert.Empty(t, nv.PeakGBps, "no built-in NVIDIA link figures")
}

func TestEvidenceOf(t *testing.T) {
	d := &profile.DeviceInfo{AICoreNum: 32, AIVNum: 0, PlatformVersion: "1"}
	ev := EvidenceOf(&profile.Rank{Info: profile.Info{Device: d}})
	assert.Equal(t, Evidence{Device: d}, ev)
	ev = EvidenceOf(&profile.Rank{Info: profile.Info{ChipName: "Ascend910B"}})
	assert.Equal(t, Evidence{ChipName: "Ascend910B", ChipFrom: "NPU_INFO"}, ev)
	nccl := profile.Traits{NCCL: true}
	ev = EvidenceOf(&profile.Rank{Traits: nccl})
	assert.Equal(t, Evidence{NCCL: true}, ev)
	ev = EvidenceOf(&profile.Rank{Traits: nccl, Info: profile.Info{ChipName: "NVIDIA A100"}})
	assert.Equal(t, Evidence{NCCL: true, ChipName: "NVIDIA A100", ChipFrom: "deviceProperties"}, ev)
}
