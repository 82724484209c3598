package parser

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// parseProfilerInfo reads profiler_info_N.json (profiler_info.json when the run was
// not distributed), torch_npu's record of how the profile was collected
// (docs/formats.md §1.5). Kept: rank_id (an int in 2024 data, a string "0" in torch_npu
// 2.7.1; -1 when absent or null), config.experimental_config._profiler_level
// (Level0/1/2/Level_none), _export_type ("text", "db", or a list such as
// ["text","db"], joined with ","), and torch_npu_version and cann_version when
// present (newer versions). Other keys are ignored. A value of the wrong type is a
// *SyntaxError with file and byte offset.
func parseProfilerInfo(r io.Reader, file string) (profile.Info, error) {
	info, err := readProfilerInfo(r, file)
	if err != nil {
		// A failed parse must not yield a rank (0 would pass for a real one).
		return profile.Info{RankID: -1}, err
	}
	return info, nil
}

func readProfilerInfo(r io.Reader, file string) (profile.Info, error) {
	info := profile.Info{RankID: -1}
	p := jsonx.NewTreeParser() // nothing of the tree is kept: its memory serves the next file
	defer p.Recycle()
	root, err := p.Read(r, file, false)
	if err != nil {
		return info, err
	}
	d := treeReader{jsonx.TreeReader{File: file}}
	if err := d.Object(root, "profiler_info"); err != nil {
		return info, err
	}
	if info.RankID, err = d.IntVal(root.Get("rank_id"), -1, "rank_id"); err != nil {
		return info, err
	}
	if info.TorchNPUVersion, err = d.Text(root.Get("torch_npu_version"), "torch_npu_version"); err != nil {
		return info, err
	}
	if info.CANNVersion, err = d.Text(root.Get("cann_version"), "cann_version"); err != nil {
		return info, err
	}
	// Only a hint beside the name's date (rankClaim): a value that is not a positive
	// integer reads as absent, not as damage.
	if n := root.Get("end_info").Get("collectionTimeEnd"); n != nil && n.Kind == jsonx.Number {
		if v, err := strconv.ParseInt(n.Text, 10, 64); err == nil && v > 0 {
			info.CollectionEndNs = v
		}
	}
	cfg := root.Get("config")
	if cfg.IsNull() {
		return info, nil
	}
	if err := d.Object(cfg, "config"); err != nil {
		return info, err
	}
	exp := cfg.Get("experimental_config")
	if exp.IsNull() {
		return info, nil
	}
	if err := d.Object(exp, "config.experimental_config"); err != nil {
		return info, err
	}
	if info.ProfilerLevel, err = d.Text(exp.Get("_profiler_level"), "_profiler_level"); err != nil {
		return info, err
	}
	et := exp.Get("_export_type")
	if et != nil && et.Kind == jsonx.Array {
		parts := make([]string, 0, len(et.Elems))
		for _, e := range et.Elems {
			s, err := d.Text(e, "_export_type")
			if err != nil {
				return info, err
			}
			parts = append(parts, s)
		}
		info.ExportType = strings.Join(parts, ",")
	} else if info.ExportType, err = d.Text(et, "_export_type"); err != nil {
		return info, err
	}
	return info, nil
}

// parseProfilerMetadata reads profiler_metadata.json (docs/formats.md §1.5): the
// environment variables torch_npu recorded (ENV_VARIABLES, string values; other
// types, seen in some versions, are formatted with fmt, null as ""), the framework's
// communicators (parallel_group_info: raw HCCL group name → {group_name, group_rank,
// global_ranks}; sorted by HCCL name; ranks may be written as ints or strings) and
// distributed_args as written (with the value types encoding/json gives for any). All
// sections are optional: the Level1 sample holds only ENV_VARIABLES.
func parseProfilerMetadata(r io.Reader, file string) (profile.Metadata, error) {
	md, err := readProfilerMetadata(r, file)
	if err != nil {
		return profile.Metadata{}, err
	}
	return md, nil
}

func readProfilerMetadata(r io.Reader, file string) (profile.Metadata, error) {
	var md profile.Metadata
	p := jsonx.NewTreeParser() // nothing of the tree is kept: its memory serves the next file
	defer p.Recycle()
	root, err := p.Read(r, file, true)
	if err != nil {
		return md, err
	}
	d := treeReader{jsonx.TreeReader{File: file}}
	if err := d.Object(root, "profiler_metadata"); err != nil {
		return md, err
	}
	if env := root.Get("ENV_VARIABLES"); !env.IsNull() {
		if err := d.Object(env, "ENV_VARIABLES"); err != nil {
			return md, err
		}
		md.Env = make(map[string]string, len(env.Members))
		for _, m := range env.Members {
			md.Env[m.Key] = envText(m.Val)
		}
	}
	if pgi := root.Get("parallel_group_info"); !pgi.IsNull() {
		if err := d.Object(pgi, "parallel_group_info"); err != nil {
			return md, err
		}
		for _, m := range pgi.Members {
			g, err := d.parallelGroup(m)
			if err != nil {
				return md, err
			}
			md.ParallelGroups = append(md.ParallelGroups, g)
		}
		slices.SortFunc(md.ParallelGroups, func(a, b profile.ParallelGroup) int {
			return cmp.Compare(a.HCCLName, b.HCCLName)
		})
	}
	if da := root.Get("distributed_args"); !da.IsNull() {
		if err := d.Object(da, "distributed_args"); err != nil {
			return md, err
		}
		md.DistributedArgs, _ = jsonx.ToAny(da).(map[string]any)
	}
	return md, nil
}

// envText formats an ENV_VARIABLES value: strings as they are, numbers as written,
// null as "", anything else with fmt.
func envText(n *jsonx.Node) string {
	switch n.Kind {
	case jsonx.Null:
		return ""
	case jsonx.String, jsonx.Number:
		return n.Text
	}
	return fmt.Sprint(jsonx.ToAny(n))
}

func (d treeReader) parallelGroup(m jsonx.Member) (profile.ParallelGroup, error) {
	g := profile.ParallelGroup{HCCLName: m.Key, GroupRank: -1}
	what := "parallel_group_info " + strconv.Quote(m.Key)
	if err := d.Object(m.Val, what); err != nil {
		return g, err
	}
	var err error
	if g.Name, err = d.Text(m.Val.Get("group_name"), what+": group_name"); err != nil {
		return g, err
	}
	if g.GroupRank, err = d.IntVal(m.Val.Get("group_rank"), -1, what+": group_rank"); err != nil {
		return g, err
	}
	gr := m.Val.Get("global_ranks")
	if gr.IsNull() {
		return g, nil
	}
	if gr.Kind != jsonx.Array {
		return g, d.ErrAt(gr, "%s: global_ranks: expected an array, found %s", what, gr.Kind)
	}
	if gr.Ints != nil {
		var problem string
		g.GlobalRanks, problem = sharedRankLists.of(gr.Ints)
		if problem != "" {
			return g, d.ErrAt(gr, "%s: global_ranks: %s", what, problem)
		}
		return g, nil
	}
	g.GlobalRanks = make([]int, 0, len(gr.Elems))
	for _, e := range gr.Elems {
		if e.IsNull() {
			return g, d.ErrAt(e, "%s: global_ranks: null rank", what)
		}
		v, err := d.IntVal(e, -1, what+": global_ranks")
		if err != nil {
			return g, err
		}
		g.GlobalRanks = append(g.GlobalRanks, v)
	}
	if problem := rankListProblem(g.GlobalRanks); problem != "" {
		return g, d.ErrAt(gr, "%s: global_ranks: %s", what, problem)
	}
	return g, nil
}

// rankListProblem says what a job cannot have in a group's members, "" when nothing:
// a negative rank, or one listed twice. (A member -5 was taken as a rank: the group's
// size and its unprofiled ranks came out wrong, with exit 0.)
func rankListProblem(ranks []int) string {
	seen := make(map[int]bool, len(ranks))
	for _, r := range ranks {
		switch {
		case r < 0:
			return fmt.Sprintf("rank %d is negative", r)
		case seen[r]:
			return fmt.Sprintf("rank %d is listed twice", r)
		}
		seen[r] = true
	}
	return ""
}

// sharedRankLists converts each shared int array (sharedIntArrays) to a rank list
// once: every rank of a cluster repeats its world and data-parallel groups, and
// converting them per rank allocated ranks × group size integers (120 MB on 4096
// ranks). The lists are shared and never written, as profile.RankListInterner's are.
var sharedRankLists = rankListCache{m: map[*int64]checkedRanks{}}

type rankListCache struct {
	mu sync.Mutex
	m  map[*int64]checkedRanks // by the shared array's first element
}

// checkedRanks is a converted rank list and what rankListProblem found in it, checked
// once per shared array rather than once per rank of the cluster.
type checkedRanks struct {
	ranks   []int
	problem string
}

func (c *rankListCache) of(ints []int64) ([]int, string) {
	convert := func() checkedRanks {
		out := make([]int, len(ints))
		for i, v := range ints {
			out[i] = int(v)
		}
		return checkedRanks{out, rankListProblem(out)}
	}
	// 128 ints take at least 382 bytes of text, so they came from sharedIntArrays;
	// smaller lists are cheap to convert each time.
	if len(ints) < jsonx.MinSharedIntArray/2 {
		c := convert()
		return c.ranks, c.problem
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if out, ok := c.m[&ints[0]]; ok && len(out.ranks) == len(ints) {
		return out.ranks, out.problem
	}
	if len(c.m) >= 64 { // as sharedIntArrays: a job has a few large groups
		clear(c.m)
	}
	out := convert()
	c.m[&ints[0]] = out
	return out.ranks, out.problem
}

// rankFromInfoFileName returns the rank in a profiler_info_N.json file name
// ("profiler_info_7.json" → 7, true). A directory part is ignored. Names without a
// decimal rank, such as the non-distributed "profiler_info.json", give false:
// msprof-analyze ignores such directories in a cluster.
func rankFromInfoFileName(name string) (int, bool) {
	base := filepath.Base(name)
	mid, ok := strings.CutPrefix(base, "profiler_info_")
	if !ok {
		return 0, false
	}
	mid, ok = strings.CutSuffix(mid, ".json")
	if !ok || len(mid) > 9 || !isDigits(mid) {
		return 0, false
	}
	rank, err := strconv.Atoi(mid)
	if err != nil {
		return 0, false
	}
	return rank, true
}

// deviceInfo reads the chip description of a parsed CANN info.json.N (msprof's
// device_N/info.json.N, also kept by torch_npu in its rank directory's PROF_*):
// DeviceInfo[].ai_core_num and aiv_num of the entry whose id is device (the first
// entry when none is), and platform_version. It returns nil when the file says none of
// them (the real 2023 file holds all three: a 910A with ai_core_num 32, aiv_num 0,
// platform_version "1").
func (d treeReader) deviceInfo(root *jsonx.Node, device int) (*profile.DeviceInfo, error) {
	out := &profile.DeviceInfo{AICoreNum: -1, AIVNum: -1}
	var err error
	if out.PlatformVersion, err = d.Text(root.Get("platform_version"), "platform_version"); err != nil {
		return nil, err
	}
	out.PlatformVersion = strings.TrimSpace(out.PlatformVersion)
	if devs := root.Get("DeviceInfo"); !devs.IsNull() {
		if devs.Kind != jsonx.Array {
			return nil, d.ErrAt(devs, "DeviceInfo: expected an array, found %s", devs.Kind)
		}
		var entry *jsonx.Node
		for _, e := range devs.Elems {
			if err := d.Object(e, "DeviceInfo[]"); err != nil {
				return nil, err
			}
			id, err := d.IntVal(e.Get("id"), -1, "DeviceInfo[].id")
			if err != nil {
				return nil, err
			}
			if entry == nil || id == device {
				entry = e
			}
			if id == device {
				break
			}
		}
		if entry != nil {
			if out.AICoreNum, err = d.IntVal(entry.Get("ai_core_num"), -1, "DeviceInfo[].ai_core_num"); err != nil {
				return nil, err
			}
			if out.AIVNum, err = d.IntVal(entry.Get("aiv_num"), -1, "DeviceInfo[].aiv_num"); err != nil {
				return nil, err
			}
		}
	}
	if out.AICoreNum < 0 && out.AIVNum < 0 && out.PlatformVersion == "" {
		return nil, nil
	}
	return out, nil
}

// parseDeviceInfoJSON reads the chip description of a CANN info.json.N (see
// treeReader.deviceInfo); nil, nil when it has none. file names it in errors; device is
// N, the device the file describes.
func parseDeviceInfoJSON(r io.Reader, file string, device int) (*profile.DeviceInfo, error) {
	p := jsonx.NewTreeParser() // nothing of the tree is kept: its memory serves the next file
	defer p.Recycle()
	root, err := p.Read(r, file, false)
	if err != nil {
		return nil, err
	}
	d := treeReader{jsonx.TreeReader{File: file}}
	if err := d.Object(root, "info.json"); err != nil {
		return nil, err
	}
	return d.deviceInfo(root, device)
}

// rawDeviceInfo reads the chip description torch_npu and MindSpore keep in their rank
// directory: the raw CANN data PROF_*/device_N/info.json.N (msprof's layout) under
// rankDir. The first PROF_* directory (by name) with a device whose info.json.N names
// its chip is used. It returns the description with File relative to rankDir (nil when
// there is none) and the problems met.
func rawDeviceInfo(rankDir string) (*profile.DeviceInfo, []string) {
	entries, err := vfs.ReadDir(rankDir)
	if err != nil {
		return nil, nil
	}
	var problems []string
	for _, e := range entries {
		if !e.IsDir() || !profDirRe.MatchString(e.Name()) {
			continue
		}
		for _, d := range msprofDeviceDirs(filepath.Join(rankDir, e.Name())) {
			if d.info == "" {
				continue
			}
			f, err := vfs.Open(d.info)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			chip, err := parseDeviceInfoJSON(f, d.info, d.n)
			f.Close()
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if chip != nil {
				if rel, err := filepath.Rel(rankDir, d.info); err == nil {
					chip.File = rel
				} else {
					chip.File = d.info
				}
				return chip, problems
			}
		}
	}
	return nil, problems
}
