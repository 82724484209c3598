// Package hardware describes the Ascend products hcclprof knows: the effective peak
// bandwidth of each link type and the per-step latency HCCL itself assumes
// (docs/costmodel.md §4). Link utilisation (analysis) and the cost model
// (advisor) both read these figures; a user overrides them by flag or config file.
package hardware

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/profile"
)

// Profile is one product's link figures. Bandwidths are effective per link, decimal
// GB/s, as HCCL's own code uses them (raw rate × its efficiency factor).
type Profile struct {
	Name        string   // canonical name: 910A, A2, A3
	Aliases     []string // other spellings users and profilers write (lower case)
	Description string
	ServerNPUs  int // NPUs per server
	// PeakGBps is the effective peak per transport as the communication analysis
	// names transports: HCCS, SIO, PCIE, SDMA (the intra-server copy engine, whose
	// peak is that of the link it drives) and RDMA (RoCE, per NPU).
	PeakGBps map[string]float64
	// Level0LatencyUs and Level1LatencyUs are per-step latencies (α) priors inside and
	// between servers. On Ascend they are dominated by task scheduling and notify
	// synchronisation, not by the wire; the calibration replaces them.
	Level0LatencyUs, Level1LatencyUs float64
	// Sources says where each figure comes from, by transport or "latency".
	Sources map[string]string
	// Assumed is set when the profile was not named by the user or the data but
	// chosen as the default; reports say so.
	Assumed bool
	// Source says what the product was taken from: the option or file that named it,
	// or the profile's fact ("info.json ai_core_num 32, aiv_num 0", "Kineto trace",
	// "NPU_INFO Ascend910B"); "" for a bare Lookup.
	Source string
}

// Peak returns the transport's effective peak bandwidth in GB/s.
func (p Profile) Peak(transport string) (float64, bool) {
	v, ok := p.PeakGBps[strings.ToUpper(transport)]
	return v, ok && v > 0
}

// Utilisation is bandwidthGBps over the transport's peak, or 0 when the profile has no
// peak for it.
func (p Profile) Utilisation(transport string, bandwidthGBps float64) float64 {
	peak, ok := p.Peak(transport)
	if !ok {
		return 0
	}
	return bandwidthGBps / peak
}

// Transports are the link names the reports hold against a peak: the profiler's
// transports (SDMA is the in-server copies, on HCCS, PCIE or SIO links; RDMA the
// inter-server RoCE links).
var Transports = []string{"HCCS", "PCIE", "RDMA", "SDMA", "SIO"}

// CheckPeakTransport refuses a peak for a transport no report holds against one:
// such a peak would be taken and never used, and the figure it was meant to change
// would stay as it was.
func CheckPeakTransport(name string) error {
	up := strings.ToUpper(strings.TrimSpace(name))
	if slices.Contains(Transports, up) {
		return nil
	}
	hint := ""
	switch up {
	case "ROCE", "IB", "INFINIBAND":
		hint = "; the inter-server links are RDMA"
	case "NVLINK", "NVSWITCH":
		hint = "; an NCCL run has no per-link figures to hold against a peak"
	case "HCCS_SW":
		hint = "; HCCS_SW links count as HCCS"
	}
	return fmt.Errorf("unknown transport %q (known: %s%s)", name, strings.Join(Transports, ", "), hint)
}

// WithPeaks returns a copy of p whose peaks are overridden by peaks (transport →
// GB/s; CheckPeakTransport's names).
func (p Profile) WithPeaks(peaks map[string]float64) Profile {
	out := p
	out.PeakGBps = make(map[string]float64, len(p.PeakGBps)+len(peaks))
	out.Sources = make(map[string]string, len(p.Sources)+len(peaks))
	for k, v := range p.PeakGBps {
		out.PeakGBps[k] = v
	}
	for k, v := range p.Sources {
		out.Sources[k] = v
	}
	for k, v := range peaks {
		k = strings.ToUpper(k)
		out.PeakGBps[k] = v
		out.Sources[k] = "user override"
	}
	return out
}

const (
	srcCapacity = "hcomm src/platform/common/device_capacity.cc"
	srcLatency  = "HCCL legacy level-1 model: 60 µs per step; ARS model 13 µs (docs/costmodel.md §4)"
)

// profiles are the built-in products. SDMA on A2/A3 drives HCCS links, so its peak is
// the HCCS figure; msprof-analyze's bandwidth-contention baseline is 18 GB/s.
var profiles = []Profile{
	{
		Name: "910A", Aliases: []string{"910", "ascend910", "ascend910a", "atlas800-9000"},
		Description:     "Ascend 910 (910A): two 4-NPU HCCS meshes joined over PCIe, 8 × 100GE RoCE",
		ServerNPUs:      8,
		PeakGBps:        map[string]float64{"HCCS": 10, "SDMA": 10, "PCIE": 27.2, "RDMA": 10},
		Level0LatencyUs: 13, Level1LatencyUs: 60,
		Sources: map[string]string{
			"HCCS": srcCapacity + " BANDWIDTH_HCCS_910A = 10 GB/s", "SDMA": "the HCCS figure (SDMA drives HCCS)",
			"PCIE": "PCIe Gen4 × 0.85 (docs/costmodel.md §4)", "RDMA": srcCapacity + " 12.5 GB/s × 0.8",
			"latency": srcLatency,
		},
	},
	{
		Name: "A2", Aliases: []string{"910b", "ascend910b", "atlas-a2", "atlas800t-a2", "910b1", "910b2", "910b3", "910b4"},
		Description:     "Atlas A2 (Ascend 910B): 8-NPU HCCS full mesh, 8 × 200GE RoCE",
		ServerNPUs:      8,
		PeakGBps:        map[string]float64{"HCCS": 18.3, "SDMA": 18.3, "PCIE": 54.4, "RDMA": 20},
		Level0LatencyUs: 13, Level1LatencyUs: 60,
		Sources: map[string]string{
			"HCCS": srcCapacity + " BANDWIDTH_HCCS_910B = 18.3 GB/s per link", "SDMA": "the HCCS figure (SDMA drives HCCS)",
			"PCIE": "PCIe Gen5 × 0.85 (docs/costmodel.md §4)", "RDMA": srcCapacity + " 25 GB/s × 0.8",
			"latency": srcLatency,
		},
	},
	{
		Name: "A3", Aliases: []string{"910c", "910_93", "ascend910c", "ascend910_93", "atlas-a3", "ascend910_9391", "ascend910_9392"},
		Description:     "Atlas A3 (Ascend 910C, 910_93): two dies per package joined by SIO, packages by HCCS",
		ServerNPUs:      16,
		PeakGBps:        map[string]float64{"HCCS": 47.6, "SDMA": 47.6, "SIO": 204, "PCIE": 54.4, "RDMA": 20},
		Level0LatencyUs: 13, Level1LatencyUs: 60,
		Sources: map[string]string{
			"HCCS": "HCCL ops cost_model.cc crossChipBw 56 GB/s × 0.85 (the legacy code has no A3 HCCS constant)",
			"SDMA": "the HCCS figure (SDMA drives HCCS)", "SIO": srcCapacity + " 240 GB/s × 0.85",
			"PCIE": "PCIe Gen5 × 0.85 (docs/costmodel.md §4)", "RDMA": srcCapacity + " 25 GB/s × 0.8",
			"latency": srcLatency,
		},
	},
	{
		// Kineto traces of NCCL runs. hcclprof has no built-in NVLink or InfiniBand
		// figures: without --peak nothing is held against a peak and the cost model
		// prices only what the run calibrates.
		Name: "NVIDIA", Aliases: []string{"nvidia", "gpu", "cuda"},
		Description: "NVIDIA GPUs (NCCL): no built-in link figures; give them with --peak",
		ServerNPUs:  8,
		PeakGBps:    map[string]float64{},
		Sources:     map[string]string{},
	},
	{
		// The NVIDIA products the cost model prices with NCCL's own tuning model
		// (model --product H100). NVLINK is the per-GPU NVLink bandwidth, one
		// direction; NET the GPU's own NIC (one per GPU). No report names these
		// transports, so nothing in a run is held against them.
		Name: "H100", Aliases: []string{"h100", "h100-sxm", "h100-sxm5", "h100-80gb", "nvidia-h100", "nvidia h100 80gb hbm3", "dgx-h100", "hgx-h100"},
		Description: "NVIDIA H100 SXM5 (NCCL): 8 GPUs per node on NVLink4/NVSwitch, one 400 Gb/s NDR NIC per GPU",
		ServerNPUs:  8,
		PeakGBps:    map[string]float64{"NVLINK": 450, "NET": 50},
		Sources: map[string]string{
			"NVLINK":  "NVIDIA H100 SXM5 datasheet: NVLink4 900 GB/s bidirectional = 18 links × 25 GB/s per direction; NCCL counts 20.6 GB/s per link (src/graph/topo.h SM90_NVLINK_BW)",
			"NET":     "DGX H100: one ConnectX-7 NDR InfiniBand 400 Gb/s (50 GB/s) per GPU (NVIDIA DGX H100 datasheet)",
			"latency": srcNCCLLatency,
		},
	},
	{
		Name: "A100", Aliases: []string{"a100", "a100-sxm", "a100-sxm4", "a100-sxm4-80gb", "a100-sxm4-40gb", "nvidia-a100", "dgx-a100", "hgx-a100"},
		Description: "NVIDIA A100 SXM4 (NCCL): 8 GPUs per node on NVLink3/NVSwitch, one 200 Gb/s HDR NIC per GPU",
		ServerNPUs:  8,
		PeakGBps:    map[string]float64{"NVLINK": 300, "NET": 25},
		Sources: map[string]string{
			"NVLINK":  "NVIDIA A100 SXM4 datasheet: NVLink3 600 GB/s bidirectional = 12 links × 25 GB/s per direction; NCCL counts 20 GB/s per link (src/graph/topo.h SM80_NVLINK_BW)",
			"NET":     "DGX A100: one ConnectX-6 HDR InfiniBand 200 Gb/s (25 GB/s) per GPU (NVIDIA DGX A100 datasheet)",
			"latency": srcNCCLLatency,
		},
	},
}

// srcNCCLLatency is where the NVIDIA profiles' latencies come from: NCCL's tuning
// model has one per algorithm, protocol and link level, not one α per level.
const srcNCCLLatency = "NCCL 2.26.2 src/graph/tuning.cc baseLat and hwLat (per algorithm, protocol and NVLink/NET level)"

// NCCL says the profile is an NVIDIA product, whose collectives NCCL runs: HCCL's
// algorithms do not apply to it.
func (p Profile) NCCL() bool { return p.Name == "NVIDIA" || p.Name == "H100" || p.Name == "A100" }

// Default is the profile used when neither the user nor the data names one: A2 is
// the product of the real data the project is tested on.
const Default = "A2"

// Names lists the built-in profiles' canonical names.
func Names() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.Name
	}
	return out
}

// Lookup finds a built-in profile by name or alias, case- and punctuation-insensitive
// ("Ascend910B", "910b", "a2" all give A2).
func Lookup(name string) (Profile, error) {
	key := normalise(name)
	for _, p := range profiles {
		if normalise(p.Name) == key {
			return p.WithPeaks(nil), nil
		}
		for _, a := range p.Aliases {
			if normalise(a) == key {
				return p.WithPeaks(nil), nil
			}
		}
	}
	names := Names()
	sort.Strings(names)
	return Profile{}, fmt.Errorf("unknown hardware %q: want one of %s", name, strings.Join(names, ", "))
}

// Evidence is what one rank's profile says of its hardware.
type Evidence struct {
	// NCCL is set for a rank of NCCL on NVIDIA GPUs (profile.Traits.NCCL: a PyTorch
	// profiler trace), whatever its deviceProperties say.
	NCCL bool
	// ChipName is the chip as the profile names it: the db's NPU_INFO ("Ascend910B",
	// "Ascend910A", as msprof names platform_version 5 and 1) or Kineto's
	// deviceProperties GPU name; ChipFrom says which.
	ChipName, ChipFrom string
	// Device is CANN's info.json.N chip description; nil when none was read.
	Device *profile.DeviceInfo
}

// EvidenceOf collects what a rank says of its hardware.
func EvidenceOf(r *profile.Rank) Evidence {
	ev := Evidence{NCCL: r.NCCL, ChipName: r.Info.ChipName, Device: r.Info.Device}
	switch {
	case ev.ChipName == "":
	case ev.NCCL:
		ev.ChipFrom = "deviceProperties"
	default:
		ev.ChipFrom = "NPU_INFO"
	}
	return ev
}

// finding is what one piece of evidence tells: a product, or family910B for a chip
// that is A2 or A3 (msprof names both Ascend910B, platform_version 5), and the fact.
type finding struct {
	name, source string
}

const family910B = "910B"

// fromChipName reads a chip name. Chip names carry a suffix: Ascend910B3,
// Ascend910_9392; Kineto's deviceProperties name GPUs "NVIDIA A100-PG509-200".
func fromChipName(name string) (string, bool) {
	low := normalise(name)
	switch {
	case low == "":
		return "", false
	case strings.HasPrefix(low, "nvidia"):
		return "NVIDIA", true
	case strings.Contains(low, "91093") || strings.Contains(low, "910c"):
		return "A3", true
	case low == "a2" || low == "a3" || low == "910a":
		return strings.ToUpper(low), true
	case strings.Contains(low, "910b"):
		return family910B, true
	case strings.Contains(low, "910"):
		return "910A", true
	}
	return "", false
}

// fromDevice reads CANN's info.json chip description: the first-generation Ascend 910
// has AI Cores and no separate vector cores (aiv_num 0, as the real 910A file says:
// ai_core_num 32, aiv_num 0); 910B and A3 chips have two vector cores per AI Core.
// platform_version is msprof's chip id: 1 Ascend910A, 5 Ascend910B (msprof's own
// table; A3 chips are not told apart from 910B by it).
func fromDevice(d *profile.DeviceInfo) (finding, bool) {
	if d == nil {
		return finding{}, false
	}
	var facts []string
	if d.AICoreNum >= 0 {
		facts = append(facts, fmt.Sprintf("ai_core_num %d", d.AICoreNum))
	}
	if d.AIVNum >= 0 {
		facts = append(facts, fmt.Sprintf("aiv_num %d", d.AIVNum))
	}
	if d.PlatformVersion != "" {
		facts = append(facts, "platform_version "+d.PlatformVersion)
	}
	source := "info.json " + strings.Join(facts, ", ")
	switch {
	case d.AICoreNum > 0 && d.AIVNum == 0:
		return finding{"910A", source}, true
	case d.AICoreNum > 0 && d.AIVNum > 0:
		return finding{family910B, source}, true
	case d.PlatformVersion == "1":
		return finding{"910A", source}, true
	case d.PlatformVersion == "5":
		return finding{family910B, source}, true
	}
	return finding{}, false
}

// Detect picks the profile from what the ranks say, the first rank that says
// something deciding: an NCCL rank (a Kineto trace) is NVIDIA; else a chip name (NPU_INFO), else
// CANN's info.json (core counts, platform_version). A 910B-family chip is A3 when
// SIO links were seen (only A3 has them), else A2; with no chip fact at all, SIO alone
// gives A3. With no evidence it returns Default with Assumed set. Source says what
// the product was taken from.
func Detect(evidence []Evidence, transports []string) Profile {
	sio := slices.ContainsFunc(transports, func(t string) bool { return strings.EqualFold(t, "SIO") })
	pick := func(f finding) Profile {
		if f.name == family910B {
			f.name = "A2"
			if sio {
				f.name, f.source = "A3", f.source+", SIO links"
			}
		}
		p, _ := Lookup(f.name)
		p.Source = f.source
		return p
	}
	for _, ev := range evidence {
		if ev.NCCL {
			src := "Kineto trace"
			if ev.ChipName != "" {
				src += " (" + ev.ChipFrom + " " + ev.ChipName + ")"
			}
			return pick(finding{"NVIDIA", src})
		}
		if name, ok := fromChipName(ev.ChipName); ok {
			return pick(finding{name, strings.TrimSpace(ev.ChipFrom + " " + ev.ChipName)})
		}
		if f, ok := fromDevice(ev.Device); ok {
			return pick(f)
		}
	}
	if sio {
		p, _ := Lookup("A3")
		p.Source = "SIO links (only A3 has them)"
		return p
	}
	p, _ := Lookup(Default)
	p.Assumed = true
	p.Source = "assumed: the profile names no chip"
	return p
}

func normalise(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
