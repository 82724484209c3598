package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/profile"
)

// Collective is the statistics of one op type in one communication group, over every
// rank and step.
type Collective struct {
	Op        string // allreduce, allgather, ...
	Group     string // group hash (or the op-name group id when the hash is unknown)
	GroupName string // dp, tp, ... from parallel_group_info, when known
	GroupSize int    // ranks in the group; 0 when unknown
	// GroupSizeSource says how GroupSize was found: parallel_group_info (or
	// msprof-analyze's communication_group.json / cluster_analysis.db when it took the
	// members from it), exact; or a lower bound, ending in "(at least)"
	// (IsLowerBound): "communication_matrix.json (at least)" (the highest group-local
	// rank its links name, plus one: a matrix names only the ranks that exchanged data
	// in the profiled window), taskRowsSource (the same of the HCCL tasks),
	// msprof-analyze's rank sets (the profiled ranks that used the group); or
	// "profiled ranks" (a lower bound too).
	GroupSizeSource string
	Count           int
	Bytes           int64 // Σ over the ops of count × element size; 0 when unknown
	TotalNs         int64
	MeanNs          float64
	P50Ns           float64
	P95Ns           float64
	MaxNs           int64
	AlgBwGBps       float64 // Bytes / TotalNs, decimal GB/s
	BusBwGBps       float64 // AlgBw × the nccl-tests factor for the op and group size
}

type collKey struct{ op, group string }

// collPart is one rank's ops of one (op type, group): what the collectives table
// needs of them, taken when the rank is summarised so that its ops need not be kept
// (a cluster's ops were a fifth of what analyze held at 4096 ranks).
type collPart struct {
	key          collKey
	count        int
	totalNs      int64
	maxNs        int64
	bytes        int64
	unknownBytes bool      // some op's size is unknown
	dursNs       []float64 // each op's duration, in the rank's op order
}

// rankCollectives takes a rank's part of the collectives table, leaving out the
// ops skip says to (ops of skipped steps); skip may be nil. Parts are in the order
// their first op comes.
func rankCollectives(r *profile.Rank, skip func(op int) bool) []collPart {
	var parts []collPart
	at := map[collKey]int{}
	for oi, op := range r.CommOps {
		if skip != nil && skip(oi) {
			continue
		}
		k := collKey{op.Type, op.Group}
		i, ok := at[k]
		if !ok {
			i = len(parts)
			at[k] = i
			parts = append(parts, collPart{key: k})
		}
		p := &parts[i]
		d := op.DurNs()
		p.count++
		p.totalNs += d
		p.maxNs = max(p.maxNs, d)
		if b := op.Bytes(); b > 0 {
			p.bytes += b
		} else {
			p.unknownBytes = true
		}
		p.dursNs = append(p.dursNs, float64(d))
	}
	return parts
}

// GroupKeyText is a group key as the reports print it: the ops of some profiles
// (MindSpore's msprof timelines) name no group, and their key is empty.
func GroupKeyText(key string) string {
	if key == "" {
		return "(unnamed)"
	}
	return key
}

// taskRowsSource is the GroupSizeSource of a size read off the HCCL tasks' group-local
// ranks.
const taskRowsSource = "task rows (at least)"

// matrixSource is the GroupSizeSource of a size read off communication_matrix.json's
// group-local ranks: the ranks that exchanged data in the profiled window, which may
// be fewer than the group's.
const matrixSource = "communication_matrix.json (at least)"

// lowerBoundSuffix ends a GroupSizeSource (or a ParallelGroup's Source) whose size is
// a lower bound.
const lowerBoundSuffix = "(at least)"

// IsLowerBound reports whether a GroupSizeSource gives a lower bound, not the
// group's size: every source but parallel_group_info and its like.
func IsLowerBound(source string) bool {
	return strings.HasSuffix(source, lowerBoundSuffix) || source == profiledRanksSource
}

// profiledRanksSource is the GroupSizeSource of a size taken as the profiled ranks
// that used the group, for want of any other.
const profiledRanksSource = "profiled ranks"

// mergeCollectives adds up the ranks' parts (parts[i] is c.Ranks[i]'s) into the
// collectives table. taskSizes is each group's least size by its tasks' group-local
// ranks (taskGroupSizes), used where no file states the size.
func mergeCollectives(c *profile.Cluster, parts [][]collPart, taskSizes map[string]int) ([]Collective, []string) {
	sums := sumCollParts(c, parts)
	sz := collSizer{sizes: groupSizes(c), taskSizes: taskSizes, warnedGroup: map[string]bool{},
		bounds: map[string]map[string]string{}}
	names := groupNames(c)
	out := make([]Collective, 0, len(sums.acc))
	// In key order, so that the warnings come in the same order every run.
	keys := make([]collKey, 0, len(sums.acc))
	for k := range sums.acc {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].group != keys[j].group {
			return keys[i].group < keys[j].group
		}
		return keys[i].op < keys[j].op
	})
	for _, k := range keys {
		a := sums.acc[k]
		d := sums.durs[k]
		sort.Float64s(d)
		a.MeanNs = float64(a.TotalNs) / float64(a.Count)
		a.P50Ns = stats.QuantileSorted(d, 0.5)
		a.P95Ns = stats.QuantileSorted(d, 0.95)
		a.GroupName = names[k.group]
		sz.setSize(a, k.group, len(sums.groupRanks[k.group]))
		if sums.unknownBytes[k] {
			a.Bytes = 0 // a partial byte count would understate bandwidth: report none
		}
		if a.Bytes > 0 && a.TotalNs > 0 {
			a.AlgBwGBps = float64(a.Bytes) / float64(a.TotalNs) // bytes/ns = GB/s
			a.BusBwGBps = a.AlgBwGBps * profile.BusBandwidthFactor(a.Op, a.GroupSize)
		}
		out = append(out, *a)
	}
	sz.warnLowerBounds()
	sort.Slice(out, func(i, j int) bool {
		if out[i].TotalNs != out[j].TotalNs {
			return out[i].TotalNs > out[j].TotalNs
		}
		if out[i].Op != out[j].Op {
			return out[i].Op < out[j].Op
		}
		return out[i].Group < out[j].Group
	})
	return out, sz.warnings
}

// collSums are the ranks' parts added up per collective: its row, its durations,
// whether some part's bytes are unknown, and the ranks seen in each group.
type collSums struct {
	acc          map[collKey]*Collective
	durs         map[collKey][]float64
	unknownBytes map[collKey]bool
	groupRanks   map[string]map[int]bool
}

// sumCollParts adds up the ranks' parts (parts[i] is c.Ranks[i]'s).
func sumCollParts(c *profile.Cluster, parts [][]collPart) collSums {
	s := collSums{acc: map[collKey]*Collective{}, durs: map[collKey][]float64{}, unknownBytes: map[collKey]bool{},
		groupRanks: map[string]map[int]bool{}}
	for ri, r := range c.Ranks {
		for _, p := range parts[ri] {
			k := p.key
			a := s.acc[k]
			if a == nil {
				a = &Collective{Op: k.op, Group: k.group}
				s.acc[k] = a
			}
			a.Count += p.count
			a.TotalNs += p.totalNs
			a.MaxNs = max(a.MaxNs, p.maxNs)
			a.Bytes += p.bytes
			if p.unknownBytes {
				s.unknownBytes[k] = true
			}
			s.durs[k] = append(s.durs[k], p.dursNs...)
			if s.groupRanks[k.group] == nil {
				s.groupRanks[k.group] = map[int]bool{}
			}
			s.groupRanks[k.group][r.Rank] = true
		}
	}
	return s
}

// collSizer gives each collective its group's size: the size a file states, else a
// lower bound (the matrix's or msprof-analyze's rank sets, the ranks the tasks
// name, the profiled ranks), with the warnings that say so, each group once.
type collSizer struct {
	sizes       map[string]groupSize
	taskSizes   map[string]int // each group's least size by its tasks' group-local ranks
	warnings    []string
	warnedGroup map[string]bool
	bounds      map[string]map[string]string // source → group → its lower bound, said once
}

// setSize sets a's group size and its source; profiled is the group's profiled ranks.
func (sz *collSizer) setSize(a *Collective, group string, profiled int) {
	if gs, ok := sz.sizes[group]; ok && !IsLowerBound(gs.source) {
		a.GroupSize, a.GroupSizeSource = gs.size, gs.source
	} else if ok && gs.size >= max(profiled, sz.taskSizes[group]) {
		// No file states the size: the matrix's or msprof-analyze's rank sets
		// name only the ranks seen.
		a.GroupSize, a.GroupSizeSource = gs.size, gs.source
		src := strings.TrimSpace(strings.TrimSuffix(gs.source, lowerBoundSuffix))
		if sz.bounds[src] == nil {
			sz.bounds[src] = map[string]string{}
		}
		sz.bounds[src][group] = fmt.Sprintf("group %s at least %d (%d profiled)", GroupKeyText(group), gs.size, profiled)
	} else if n := sz.taskSizes[group]; n > profiled {
		// The tasks send to ranks that left no profile: the group is larger
		// than the profiled ranks, at least as large as the ranks they name.
		a.GroupSize, a.GroupSizeSource = n, taskRowsSource
		if !sz.warnedGroup[group] {
			sz.warnedGroup[group] = true
			sz.warnings = append(sz.warnings, fmt.Sprintf("group %s: size unknown (no parallel_group_info or communication_matrix.json); its HCCL tasks name group-local ranks up to %d, so it has at least %d ranks, %d of them profiled: busbw and the wait for unprofiled ranks use %d",
				GroupKeyText(group), n-1, n, profiled, n))
		}
	} else {
		a.GroupSize, a.GroupSizeSource = profiled, profiledRanksSource
		if !sz.warnedGroup[group] && a.GroupSize > 0 {
			sz.warnedGroup[group] = true
			sz.warnings = append(sz.warnings, fmt.Sprintf("group %s: size unknown (no parallel_group_info or communication_matrix.json); assuming the %d profiled ranks, so busbw may be understated", GroupKeyText(group), a.GroupSize))
		}
	}
}

// warnLowerBounds says, per source, which groups' sizes are lower bounds from it
// (the first four, and how many more).
func (sz *collSizer) warnLowerBounds() {
	bounds := sz.bounds
	srcs := make([]string, 0, len(bounds))
	for src := range bounds {
		srcs = append(srcs, src)
	}
	sort.Strings(srcs)
	for _, src := range srcs {
		keys := make([]string, 0, len(bounds[src]))
		for g := range bounds[src] {
			keys = append(keys, g)
		}
		sort.Strings(keys)
		items := make([]string, 0, 4)
		for i, g := range keys {
			if i == 4 {
				items = append(items, fmt.Sprintf("and %d more", len(keys)-4))
				break
			}
			items = append(items, bounds[src][g])
		}
		sz.warnings = append(sz.warnings, fmt.Sprintf("group sizes not in the files (no parallel_group_info, distributed_args, or msprof-analyze's communication_group.json with the members): lower bounds from %s, which names only the ranks seen in the profiled window: %s; busbw and the wait for unprofiled ranks use them",
			src, strings.Join(items, ", ")))
	}
}

type groupSize struct {
	size   int
	source string
}

// groupSizes finds each group's size from parallel_group_info (exact; for Kineto the
// process groups of distributedInfo and of the ops' arguments, keyed by group name) or
// from the local ranks seen in communication_matrix.json links.
func groupSizes(c *profile.Cluster) map[string]groupSize {
	out := map[string]groupSize{}
	for _, r := range c.Ranks {
		for g, n := range r.MatrixGroupSizes() {
			if cur, ok := out[g]; !ok || n > cur.size {
				out[g] = groupSize{n, matrixSource}
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range c.Ranks {
		for _, pg := range r.Metadata.ParallelGroups {
			if pg.Key != "" { // the ops name this group by its key (Kineto)
				src := pg.Source
				if src == "" {
					src = "parallel_group_info"
				}
				if n := pg.GroupSize(); n > 0 {
					// A stated size wins over a lower bound; of two bounds, the larger.
					if cur, ok := out[pg.Key]; !ok || !IsLowerBound(src) || (IsLowerBound(cur.source) && n > cur.size) {
						out[pg.Key] = groupSize{n, src}
					}
				}
				continue
			}
			h := strconv.FormatUint(profile.DoubleHash(pg.HCCLName), 10)
			if seen[h] {
				continue // the first rank's members, as clusterGroups takes them
			}
			seen[h] = true
			gs := groupSize{len(pg.GlobalRanks), "parallel_group_info"}
			out[h] = gs
			out[h[max(0, len(h)-3):]] = gs // ops known only by their 3-digit group id
		}
	}
	return out
}

// groupNames maps group hashes to the framework's group names (dp, tp, ...).
func groupNames(c *profile.Cluster) map[string]string {
	out := map[string]string{}
	for _, r := range c.Ranks {
		for _, pg := range r.Metadata.ParallelGroups {
			if pg.Name == "" {
				continue
			}
			if pg.Key != "" {
				out[pg.Key] = pg.Name
				continue
			}
			h := strconv.FormatUint(profile.DoubleHash(pg.HCCLName), 10)
			out[h] = pg.Name
			out[h[max(0, len(h)-3):]] = pg.Name
		}
	}
	return out
}
