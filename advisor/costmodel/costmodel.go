// Package costmodel is HCCL's collectives in the α-β-γ form (docs/costmodel.md
// §3): T = a·α + b·n·β + c·n·γ per algorithm, with HCCL_BUFFSIZE rounds,
// HCCL's two-level compositions, and the legacy A2 level-1 selector, so that the
// advisor can say what an op should cost, which algorithm HCCL picks, and what a
// change would buy.
package costmodel

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/profile"
)

// Coeffs are an algorithm's multipliers: T = A·α + B·n·β + C·n·γ for a message of n
// bytes (the op's n: the vector for AllReduce/Broadcast/Reduce, the total for
// AllGather/ReduceScatter/AlltoAll).
type Coeffs struct{ A, B, C float64 }

// Link is one level's parameters: α per step (µs), the bandwidth behind β (decimal
// GB/s per link) and, for reductions, the bandwidth behind γ (0: reductions are free).
type Link struct {
	AlphaUs     float64
	BWGBps      float64
	GammaBWGBps float64
}

// betaUsPerByte is β in µs per byte.
func (l Link) betaUsPerByte() float64 {
	if l.BWGBps <= 0 {
		return 0
	}
	return 1e-3 / l.BWGBps // 1 / (GB/s · 1e9 B/GB) s/B = 1e-3/GBps µs/B
}

func (l Link) gammaUsPerByte() float64 {
	if l.GammaBWGBps <= 0 {
		return 0
	}
	return 1e-3 / l.GammaBWGBps
}

// Cost is a modelled op.
type Cost struct {
	Op, Algo    string
	Ranks       int
	Bytes       int64
	TimeUs      float64
	LatencyUs   float64 // the α terms (all rounds)
	BandwidthUs float64 // the β terms
	ReduceUs    float64 // the γ terms
	Rounds      int     // HCCL_BUFFSIZE rounds
	AlgBwGBps   float64 // bytes / time
	BusBwGBps   float64 // algbw × the nccl-tests factor
}

func log2Ceil(p int) float64  { return math.Ceil(math.Log2(float64(p))) }
func log2Floor(p int) float64 { return math.Floor(math.Log2(float64(p))) }
func isPow2(p int) bool       { return p > 0 && p&(p-1) == 0 }

// coeffTable holds, per op and algorithm, the coefficients for p ranks, from
// docs/costmodel.md §3.2. Each entry's assumptions are stated beside it.
var coeffTable = map[string]map[string]func(p int) Coeffs{
	"allreduce": {
		// Ring: reduce-scatter then all-gather around one ring, one duplex link per
		// neighbour; bandwidth-optimal for large n.
		"ring": func(p int) Coeffs { f := float64(p); return Coeffs{2 * (f - 1), 2 * (f - 1) / f, (f - 1) / f} },
		// Mesh two-shot (HCCL "Mesh"): RS + AG over a full mesh, p−1 links at once.
		"mesh": func(p int) Coeffs { f := float64(p); return Coeffs{2, 2 / f, (f - 1) / f} },
		// Mesh one-shot: every rank reads all peers' full vectors; best at small n.
		"mesh-oneshot": func(p int) Coeffs { f := float64(p); return Coeffs{1, 1, f - 1} },
		// Recursive halving-doubling (Rabenseifner); other p fold 2(p−p′) ranks first
		// (α + nβ + nγ) and send the result back (α + nβ).
		"rhd": func(p int) Coeffs {
			if isPow2(p) {
				f := float64(p)
				return Coeffs{2 * math.Log2(f), 2 * (f - 1) / f, (f - 1) / f}
			}
			pp := math.Exp2(log2Floor(p))
			return Coeffs{2*log2Floor(p) + 2, 2*(pp-1)/pp + 2, (pp-1)/pp + 1}
		},
		// NHR and NB: logarithmic steps without extra volume for any p.
		"nhr": func(p int) Coeffs { f := float64(p); return Coeffs{2 * log2Ceil(p), 2 * (f - 1) / f, (f - 1) / f} },
		"nb":  func(p int) Coeffs { f := float64(p); return Coeffs{2 * log2Ceil(p), 2 * (f - 1) / f, (f - 1) / f} },
		// Binomial tree reduce then broadcast, unpipelined.
		"tree": func(p int) Coeffs { l := log2Ceil(p); return Coeffs{2 * l, 2 * l, l} },
		// Recursive doubling: the full vector every step (short messages).
		"doubling": func(p int) Coeffs { l := log2Ceil(p); return Coeffs{l, l, l} },
	},
	"reducescatter": {
		"ring": func(p int) Coeffs { f := float64(p); return Coeffs{f - 1, (f - 1) / f, (f - 1) / f} },
		"mesh": func(p int) Coeffs { f := float64(p); return Coeffs{1, 1 / f, (f - 1) / f} },
		// Recursive halving; other p: see reduceScatterRHD.
		"rhd":      reduceScatterRHD,
		"nhr":      func(p int) Coeffs { f := float64(p); return Coeffs{log2Ceil(p), (f - 1) / f, (f - 1) / f} },
		"nb":       func(p int) Coeffs { f := float64(p); return Coeffs{log2Ceil(p), (f - 1) / f, (f - 1) / f} },
		"pairwise": func(p int) Coeffs { f := float64(p); return Coeffs{f - 1, (f - 1) / f, (f - 1) / f} },
	},
	"allgather": {
		"ring": func(p int) Coeffs { f := float64(p); return Coeffs{f - 1, (f - 1) / f, 0} },
		"mesh": func(p int) Coeffs { f := float64(p); return Coeffs{1, 1 / f, 0} },
		// Recursive doubling (power of two); other p as reduce-scatter's RHD without γ.
		"rhd": func(p int) Coeffs {
			c := reduceScatterRHD(p)
			return Coeffs{c.A, c.B, 0}
		},
		"nhr":   func(p int) Coeffs { f := float64(p); return Coeffs{log2Ceil(p), (f - 1) / f, 0} },
		"nb":    func(p int) Coeffs { f := float64(p); return Coeffs{log2Ceil(p), (f - 1) / f, 0} },
		"bruck": func(p int) Coeffs { f := float64(p); return Coeffs{log2Ceil(p), (f - 1) / f, 0} },
	},
	"broadcast": {
		// Ring as a linear, unpipelined chain (HCCL's doc).
		"ring": func(p int) Coeffs { f := float64(p); return Coeffs{f - 1, f - 1, 0} },
		"tree": func(p int) Coeffs { l := log2Ceil(p); return Coeffs{l, l, 0} },
		// HCCL RHD broadcast: ⌈log2 p⌉(α + nβ).
		"rhd": func(p int) Coeffs { l := log2Ceil(p); return Coeffs{l, l, 0} },
		// Scatter + all-gather (van de Geijn; HCCL Mesh, NHR, NB).
		"mesh": func(p int) Coeffs { f := float64(p); return Coeffs{2, 2 / f, 0} },
		"nhr":  func(p int) Coeffs { f := float64(p); return Coeffs{2 * log2Ceil(p), 2 * (f - 1) / f, 0} },
		"nb":   func(p int) Coeffs { f := float64(p); return Coeffs{2 * log2Ceil(p), 2 * (f - 1) / f, 0} },
	},
	"reduce": {
		"ring": func(p int) Coeffs { f := float64(p); return Coeffs{f - 1, f - 1, f - 1} },
		"tree": func(p int) Coeffs { l := log2Ceil(p); return Coeffs{l, l, l} },
		// Reduce-scatter + gather (Rabenseifner / HCCL RHD).
		"rhd": func(p int) Coeffs {
			if isPow2(p) {
				f := float64(p)
				return Coeffs{2 * math.Log2(f), 2 * (f - 1) / f, (f - 1) / f}
			}
			pp := math.Exp2(log2Floor(p))
			return Coeffs{2*log2Floor(p) + 1, 2*(pp-1)/pp + 1, (pp-1)/pp + 1}
		},
		"mesh": func(p int) Coeffs { f := float64(p); return Coeffs{2, 2 / f, (f - 1) / f} },
	},
	"alltoall": {
		// n = the bytes one rank sends in all, μ = n/p per peer. Pairwise: one peer a
		// step, uniform sizes.
		"pairwise": func(p int) Coeffs { f := float64(p); return Coeffs{f - 1, (f - 1) / f, 0} },
		// Full mesh, one shot over p−1 independent links (HCCS mesh).
		"mesh": func(p int) Coeffs { f := float64(p); return Coeffs{1, 1 / f, 0} },
	},
}

// reduceScatterRHD is recursive halving: log2 p steps for a power of two; other p
// take a fold step (α + nβ + nγ), k = ⌊log2 p⌋ halving steps moving Σ⌈p/2^i⌉·n/p,
// and a scatter step (α + nβ/p). The halving steps' reductions are taken as
// (p′−1)/p′·n (an assumption: docs/costmodel.md §3.2 gives no γ for them).
func reduceScatterRHD(p int) Coeffs {
	f := float64(p)
	if isPow2(p) {
		return Coeffs{math.Log2(f), (f - 1) / f, (f - 1) / f}
	}
	k := int(log2Floor(p))
	var vol float64
	for i := 1; i <= k; i++ {
		vol += math.Ceil(f / math.Exp2(float64(i)))
	}
	pp := math.Exp2(float64(k))
	return Coeffs{float64(k) + 2, 1 + vol/f + 1/f, 1 + (pp-1)/pp}
}

// Ops lists the modelled ops; Algorithms an op's algorithms.
func Ops() []string { return sortedKeys(coeffTable) }

// Algorithms lists an op's single-level algorithms.
func Algorithms(op string) []string { return sortedKeys(coeffTable[NormaliseOp(op)]) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// opSeparators are dropped from op names; one replacer for all calls, because
// building one per call was most of what pricing a plan allocated.
var opSeparators = strings.NewReplacer("_", "", "-", "", " ", "")

// NormaliseOp accepts HCCL's and NCCL's spellings (all_reduce, AllReduce, hcom_allReduce_).
func NormaliseOp(op string) string {
	s := strings.ToLower(opSeparators.Replace(op))
	s = strings.TrimPrefix(s, "hcom")
	switch s {
	case "allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall":
		return s
	case "alltoallv", "alltoallvc":
		return "alltoall"
	}
	return s
}

// NormaliseAlgo accepts HCCL_ALGO's names (H-D_R, NHR, NB, pipeline, ...).
func NormaliseAlgo(a string) string {
	s := strings.ToLower(a)
	switch s {
	case "h-d_r", "hd", "h-d", "halving-doubling":
		return "rhd"
	case "nhr_v1":
		return "nhr"
	case "fullmesh", "two-shot", "twoshot":
		return "mesh"
	case "oneshot", "one-shot":
		return "mesh-oneshot"
	case "binomial":
		return "tree"
	}
	return s
}

// coefficientsOf returns the coefficients of op under algo for p ranks.
func coefficientsOf(op, algo string, p int) (Coeffs, error) {
	o := NormaliseOp(op)
	algos, ok := coeffTable[o]
	if !ok {
		return Coeffs{}, fmt.Errorf("unknown op %q: want one of %s", op, strings.Join(Ops(), ", "))
	}
	f, ok := algos[NormaliseAlgo(algo)]
	if !ok {
		return Coeffs{}, fmt.Errorf("no %q algorithm for %s: want one of %s", algo, o, strings.Join(Algorithms(o), ", "))
	}
	if p < 2 {
		return Coeffs{}, fmt.Errorf("ranks = %d: a collective needs at least 2", p)
	}
	return f(p), nil
}

// Rounds is the number of HCCL_BUFFSIZE rounds an op of n bytes runs in, with
// bufferBytes of CCL buffer (0: unlimited). docs/costmodel.md §3.7: the base AllReduce,
// AllGather and ReduceScatter executors loop over data in buffer-sized pieces.
func Rounds(n, bufferBytes int64) int {
	if bufferBytes <= 0 || n <= bufferBytes {
		return 1
	}
	return int((n + bufferBytes - 1) / bufferBytes)
}

// Model prices an op of n bytes on p ranks with one link level. Every round pays the
// algorithm's latency again (§3.7); the byte terms are the same in total.
func Model(op, algo string, p int, n int64, l Link, bufferBytes int64) (Cost, error) {
	c, err := coefficientsOf(op, algo, p)
	if err != nil {
		return Cost{}, err
	}
	if n < 0 {
		return Cost{}, fmt.Errorf("size %d: want ≥ 0 bytes", n)
	}
	rounds := Rounds(n, bufferBytes)
	out := Cost{Op: NormaliseOp(op), Algo: NormaliseAlgo(algo), Ranks: p, Bytes: n, Rounds: rounds,
		LatencyUs:   float64(rounds) * c.A * l.AlphaUs,
		BandwidthUs: c.B * float64(n) * l.betaUsPerByte(),
		ReduceUs:    c.C * float64(n) * l.gammaUsPerByte()}
	out.finish()
	return out, nil
}

func (c *Cost) finish() {
	c.TimeUs = c.LatencyUs + c.BandwidthUs + c.ReduceUs
	if c.TimeUs > 0 {
		c.AlgBwGBps = float64(c.Bytes) / (c.TimeUs * 1e3) // bytes/ns = GB/s
		c.BusBwGBps = c.AlgBwGBps * profile.BusBandwidthFactor(c.Op, c.Ranks)
	}
}
