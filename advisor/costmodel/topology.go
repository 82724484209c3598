package costmodel

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
)

// Topology is the gradient group's shape and links as the structural what-ifs (the
// level-1 algorithm, the data-parallel size) price them: p_l NPUs per server on m
// servers, HCCL's two-level AllReduce (docs/costmodel.md §3.6) or its Pipeline.
type Topology struct {
	RanksPerServer, Servers int
	// Level1 is the inter-server algorithm in effect (ring, nhr, rhd, nb, pipeline);
	// Level1Source says how it is known: "profile" (the ops' alg_type) or "HCCL
	// default" (the legacy A2 rule for m servers, docs/costmodel.md §1.3).
	Level1, Level1Source string
	// Level0 is the in-server algorithm: "mesh" (A2) or "ring" (910A's 8P ring), from
	// the ops' alg_type, else HCCL's default for the product (Level0Source says which).
	Level0, Level0Source string
	Intra, Inter         Link
	// IntraSource and InterSource say where each link's figures come from: the
	// run's calibrated transfers or the hardware profile's priors.
	IntraSource, InterSource string
	Product                  string
	// NCCL is set for an NVIDIA run (hardware profile NVIDIA): HCCL's algorithms do
	// not apply to it.
	NCCL bool
}

// Topologies are every group's topologies, keyed by group; the cluster-wide work
// (servers, link calibration) is done once.
func Topologies(res *analysis.Result) map[string]Topology {
	return newClusterShape(res, Calibrate(res.Communication.TransferSamples)).topologies(res)
}

// topologies are every group's topologies on the shape.
func (shape clusterShape) topologies(res *analysis.Result) map[string]Topology {
	// Pointers, not copies: a 4096-rank run's ops copied per group were 40 MB.
	byGroup := map[string][]*analysis.OpStat{}
	for i := range res.Communication.Ops {
		o := &res.Communication.Ops[i]
		byGroup[o.Group] = append(byGroup[o.Group], o)
	}
	out := make(map[string]Topology, len(byGroup))
	for g, ops := range byGroup {
		out[g] = shape.topology(res, g, ops)
	}
	return out
}

// clusterShape is what every group's topology shares: which server each rank is on
// (ranks joined by an on-server link share one; nil when the analysis saw no links)
// and the links calibrated on the run.
type clusterShape struct {
	serverOf map[int]int
	fits     map[string]LinkFit
}

// newClusterShape reads the servers from the run's links; links are the run's
// calibrated links (Calibrate).
func newClusterShape(res *analysis.Result, links []LinkFit) clusterShape {
	c := res.Communication
	var s clusterShape
	if len(c.Links) > 0 {
		parent := map[int]int{}
		var find func(int) int
		find = func(x int) int {
			if p, ok := parent[x]; ok && p != x {
				parent[x] = find(p)
				return parent[x]
			}
			parent[x] = x
			return x
		}
		for _, l := range c.Links {
			if l.Transport != "RDMA" {
				parent[find(l.Src)] = find(l.Dst)
			}
		}
		s.serverOf = map[int]int{}
		for r := range parent {
			s.serverOf[r] = find(r)
		}
	}
	s.fits = map[string]LinkFit{}
	for _, f := range links {
		s.fits[f.Transport] = f
	}
	return s
}

// topology finds the group's servers from the cluster's links, else from the
// hardware profile's NPUs per server; its level-1 algorithm from the ops'
// alg_type, else HCCL's default; and its links from the calibration, else the
// priors.
func (s clusterShape) topology(res *analysis.Result, group string, ops []*analysis.OpStat) Topology {
	hw := res.Communication.Hardware
	t := Topology{Product: hw.Name, NCCL: hw.NCCL()}
	var members []int
	for _, g := range res.Communication.Groups {
		if g.Key == group {
			members = g.Ranks
		}
	}
	if len(members) == 0 { // no group description: the ranks seen with its ops
		seen := map[int]bool{}
		for _, o := range ops {
			if !seen[o.Rank] {
				seen[o.Rank] = true
				members = append(members, o.Rank)
			}
		}
		sort.Ints(members)
	}
	p := max(len(members), 1)
	if s.serverOf != nil {
		servers := map[int]bool{}
		for _, r := range members {
			if srv, ok := s.serverOf[r]; ok {
				servers[srv] = true
			} else {
				servers[-1-r] = true // a rank no link reached is a server of its own
			}
		}
		t.Servers = len(servers)
		t.RanksPerServer = p / max(t.Servers, 1)
	} else {
		per := max(hw.ServerNPUs, 1)
		rdma := false
		for _, o := range ops {
			if o.Transports.Of("RDMA").Bytes > 0 {
				rdma = true
			}
		}
		if !rdma {
			per = p // no inter-server traffic: one server
		}
		t.RanksPerServer = min(per, p)
		t.Servers = max((p+t.RanksPerServer-1)/t.RanksPerServer, 1)
	}
	// The level-1 algorithm: the profile's alg_type ("MESH-RING": level0-level1;
	// NCCL's "RING_LL" names no HCCL level).
	for _, o := range ops {
		if t.NCCL {
			break
		}
		if l0, l1, ok := strings.Cut(o.AlgType, "-"); ok && l1 != "" {
			t.Level1, t.Level1Source = NormaliseAlgo(l1), "profile"
			switch strings.ToLower(l0) {
			case "mesh", "fullmesh":
				t.Level0, t.Level0Source = "mesh", "profile"
			case "ring", "double_ring", "doublering":
				t.Level0, t.Level0Source = "ring", "profile"
			}
			break
		}
	}
	if t.Level0 == "" {
		t.Level0, t.Level0Source = defaultLevel0(t.Product, t.RanksPerServer), "HCCL default"
	}
	if t.Level1 == "" {
		t.Level1, t.Level1Source = defaultLevel1(t.Product, t.Servers), "HCCL default"
	}
	// Links: calibrated where the run moved data over them, else the priors.
	t.Intra, t.IntraSource = linkOf(s.fits, hw.Level0LatencyUs, hw.PeakGBps, "HCCS", "SIO", "PCIE")
	t.Inter, t.InterSource = linkOf(s.fits, hw.Level1LatencyUs, hw.PeakGBps, "RDMA")
	// The level names are HCCL's transports; an NCCL run's links are not named by
	// its trace (no task rows) and the NVIDIA profile has no figures.
	const ncclNoFigure = " link: an NCCL run, whose trace gives no transfers, and no built-in NVIDIA figures"
	if t.NCCL && t.Intra.BWGBps <= 0 {
		t.IntraSource = "no figure for the in-server" + ncclNoFigure
	}
	if t.NCCL && t.Inter.BWGBps <= 0 {
		t.InterSource = "no figure for the inter-server" + ncclNoFigure
	}
	return t
}

// linkOf is the first calibrated transport among names (one with a fitted slope),
// else the hardware prior of the first name (a zero bandwidth when the profile has
// none: the model then cannot price that level).
func linkOf(fits map[string]LinkFit, priorAlphaUs float64, peaks map[string]float64, names ...string) (Link, string) {
	for _, n := range names {
		if f, ok := fits[n]; ok && f.Confidence != "none" && f.BWGBps > 0 {
			return f.Link(), "calibrated " + n
		}
	}
	if peaks[names[0]] <= 0 {
		return Link{}, "no figure for " + names[0]
	}
	return Link{AlphaUs: priorAlphaUs, BWGBps: peaks[names[0]]}, "hardware prior " + names[0]
}

// defaultLevel1 is HCCL's level-1 choice for AllReduce by server count alone
// (docs/costmodel.md §1.3): on A2 the α-β model outside the pipeline rule, Ring for two
// servers, NHR from three; on 910A and A3 GetDefaultAlgoLevel1V1.
func defaultLevel1(product string, servers int) string {
	switch strings.ToUpper(product) {
	case "910A", "A3":
		if c, err := SelectLevel1(product, "allreduce", 1, servers, 0, 0, false, true); err == nil && c.Algo != "none" {
			return c.Algo
		}
	}
	if servers <= 2 {
		return "ring"
	}
	return "nhr"
}

// allReduceCost is the structural cost of one AllReduce of n bytes on the topology
// with the given level-1 algorithm and CCL buffer.
func (t Topology) allReduceCost(n int64, level1 string, bufferBytes int64) (Cost, error) {
	if level1 == "pipeline" {
		if ok, why := pipelineAvailable(t.Product, t.level0(), "allreduce", t.RanksPerServer, t.Servers, false); !ok {
			return Cost{}, fmt.Errorf("no pipeline: %s", why)
		}
		rounds := t.AllReduceRounds(n, level1, bufferBytes)
		c, err := pipelineAllReduce(t.RanksPerServer, t.Servers, n/int64(rounds), t.Intra, t.Inter)
		if err != nil {
			return Cost{}, err
		}
		c.LatencyUs *= float64(rounds)
		c.BandwidthUs *= float64(rounds)
		c.Rounds, c.Bytes = rounds, n
		c.finish()
		return c, nil
	}
	return hierarchicalAllReduceOn(t.level0(), t.RanksPerServer, t.Servers, n, t.Intra, t.Inter, level1, bufferBytes)
}

// level0 is the in-server algorithm, HCCL's default for the product when unset.
func (t Topology) level0() string {
	if t.Level0 != "" {
		return t.Level0
	}
	return defaultLevel0(t.Product, t.RanksPerServer)
}

// Level1Options are the level-1 algorithms HCCL_ALGO may name for AllReduce on this
// shape: the product's (level1Choices), with the pipeline only where HCCL has it
// (pipelineAvailable).
func (t Topology) Level1Options(deterministic bool) []string {
	var out []string
	for _, a := range level1Choices(t.Product) {
		if a == "pipeline" {
			if ok, _ := pipelineAvailable(t.Product, t.level0(), "allreduce", t.RanksPerServer, t.Servers, deterministic); !ok {
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// HCCLChoice is HCCL's own level-1 choice for one op of size bytes (the op's total
// for AllReduce, Broadcast and Reduce; the per-rank piece for AllGather and
// ReduceScatter) on this shape with HCCL_ALGO unset (SelectLevel1, with RDMA-lite
// assumed present). A 910A or A3 choice does not depend on the size; a level 0 that
// is not a mesh has no pipeline.
func (t Topology) HCCLChoice(op string, size, bufferBytes int64, deterministic bool) (Choice, error) {
	if t.NCCL {
		return Choice{}, fmt.Errorf("an NVIDIA (NCCL) run: NCCL chooses its algorithm itself")
	}
	return selectLevel1(t.Product, op, t.RanksPerServer, t.Servers, size, bufferBytes, deterministic, true, t.level0() == "mesh")
}

// level1Choices are the level-1 algorithms HCCL_ALGO may name for AllReduce on the
// product (docs/costmodel.md §1.2): A3 replaces H-D_R by NHR and has no A2 pipeline; 910
// has no pipeline.
func level1Choices(product string) []string {
	switch strings.ToUpper(product) {
	case "A3":
		return []string{"ring", "nhr", "nb"}
	case "910A":
		return []string{"ring", "rhd", "nhr", "nb"}
	}
	return []string{"ring", "rhd", "nhr", "nb", "pipeline"}
}

// HCCLAlgoName is the spelling HCCL_ALGO uses for an algorithm.
func HCCLAlgoName(algo string) string {
	switch NormaliseAlgo(algo) {
	case "rhd":
		return "H-D_R"
	case "nhr":
		return "NHR"
	case "nb":
		return "NB"
	}
	return NormaliseAlgo(algo)
}

// AllReduceRounds is the number of HCCL_BUFFSIZE rounds an AllReduce of n bytes takes
// on the topology with the level-1 algorithm: one per buffer, except that HCCL's
// pipeline executor loops over (B − 16 KiB)·p bytes per round (§3.7), p the group's
// ranks. A buffer of 0 is no limit.
func (t Topology) AllReduceRounds(n int64, level1 string, bufferBytes int64) int {
	if bufferBytes <= 0 {
		return 1
	}
	round, _ := analysis.BufferRoundBytes("allreduce", pipelineAlgType(level1), bufferBytes, t.RanksPerServer*t.Servers)
	return Rounds(n, round)
}

// pipelineAlgType is the alg_type HCCL records for a level-1 algorithm, as far as
// the round rule cares.
func pipelineAlgType(level1 string) string {
	if level1 == "pipeline" {
		return "MESH-PIPELINE"
	}
	return level1
}
