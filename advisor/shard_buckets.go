package advisor

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// megatronBucketParams is Megatron's default --ddp-bucket-size floor, in parameters
// (max(40 000 000, 1 000 000 × dp)).
const megatronBucketParams = 40_000_000

// shardBucketRecommendation prices larger buckets when a data-parallel group's
// sharded-gradient ReduceScatter/AllGather (Megatron's distributed optimizer, DeepSpeed
// ZeRO-1/2) run in buckets well under the framework's default and their time is
// exposed (issue 37): Megatron --ddp-bucket-size, DeepSpeed reduce_bucket_size and
// allgather_bucket_size. Priced to the default bucket, max(40e6, 1e6 × dp)
// parameters.
func shardBucketRecommendation(res *analysis.Result, facts RunFacts) (*Recommendation, string) {
	var dp *analysis.KindShare
	for i, k := range res.Summary.Kinds {
		if k.Kind == analysis.KindDP {
			dp = &res.Summary.Kinds[i]
		}
	}
	if dp == nil || dp.CommShare < fsdpExposedMin {
		return nil, ""
	}
	keys := map[string][]int{}
	size := 0
	for _, g := range res.Communication.Groups {
		if g.Parallel == analysis.KindDP {
			keys[g.Key] = g.Ranks
			size = max(size, len(g.Ranks))
		}
	}
	fams, steps, elem := shardFamilies(res, keys)
	rs, ag := fams["reducescatter"], fams["allgather"]
	if rs == nil || steps == 0 || (fams["allreduce"] != nil && fams["allreduce"].n > rs.n) {
		return nil, ""
	}
	if elem == 0 {
		elem = 2
	}
	params := int64(max(megatronBucketParams, 1_000_000*size))
	newBytes := params * int64(elem)
	// Only buckets well under the default: a quarter of it or less.
	if rs.bytes/int64(rs.n)*4 > newBytes {
		return nil, ""
	}
	var ops []costmodel.ShardedOps
	for name, f := range map[string]*shardFamily{"reducescatter": rs, "allgather": ag} {
		if f == nil || f.n == 0 {
			continue
		}
		ops = append(ops, costmodel.ShardedOps{Op: name, PerStep: float64(f.n) / float64(steps), Bytes: f.bytes / int64(f.n),
			Measured: float64(f.ns) / float64(f.n) / 1e3})
	}
	servers, perServer := groupPlacement(res, keys, size)
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	c := costmodel.ShardBuckets{StepUs: stepUs, ExposedUs: math.Min(dp.CommShare, res.Summary.CommShare) * stepUs, CommShare: res.Summary.CommShare,
		Ops: ops, Servers: servers, PerServer: perServer, NewBytes: newBytes, Links: costmodel.Calibrate(res.Communication.TransferSamples)}
	p, err := costmodel.ShardBucketSize(res.Communication.Hardware, c)
	if err != nil {
		return nil, "no sharded-gradient bucket priced: " + err.Error()
	}
	gain := stepUs - p.StepTimeUs
	if gain < fsdpGainMin*stepUs {
		return nil, fmt.Sprintf("larger distributed-optimizer buckets not recommended: they would win %.3f ms per step (%s), under %s", gain/1e3, pct(gain/stepUs), pct(fsdpGainMin))
	}
	mb := float64(rs.bytes) / float64(rs.n) / 1e6
	r := Recommendation{ID: "shard_bucket_size", Predicted: p, GainUs: gain, Confidence: p.Confidence, Assumptions: p.Assumptions, SamplesScale: 1, TodayUs: stepUs,
		Settings: []costmodel.Setting{{Knob: "bucket", Value: float64(newBytes)}},
		Risks:    []string{fmt.Sprintf("today's buckets are %.1f MB; a larger bucket starts its ReduceScatter later in the backward pass and holds more memory while it waits", mb)}}
	if facts.Framework == FrameworkDeepSpeed {
		r.Knob, r.Value = "reduce_bucket_size + allgather_bucket_size", fmt.Sprintf("%d elements", params)
		r.Apply = fmt.Sprintf(`"zero_optimization": {"reduce_bucket_size": %d, "allgather_bucket_size": %d}   # elements: %.0f MB of %d-byte gradients each`, params, params, float64(newBytes)/1e6, elem)
	} else {
		r.Knob, r.Value = "--ddp-bucket-size", fmt.Sprintf("%d parameters", params)
		r.Apply = fmt.Sprintf("Megatron-LM: --ddp-bucket-size %d   # parameters: %.0f MB of %d-byte gradients per ReduceScatter/AllGather bucket (the default; DeepSpeed ZeRO: reduce_bucket_size and allgather_bucket_size)", params, float64(newBytes)/1e6, elem)
	}
	if r.GainUs <= math.Max(p.High-p.Low, 0.01*stepUs) {
		r.Hypothesis = true
	}
	return &r, ""
}

// shardFamily sums one family of a group's ops: their count, bytes and time.
type shardFamily struct {
	n     int
	bytes int64
	ns    int64
}

// shardFamilies sums the data-parallel groups' (keys) ops per family, and counts the
// rank steps they ran in; elem is the gradients' element size by the first op with
// a known data type (0: none).
func shardFamilies(res *analysis.Result, keys map[string][]int) (fams map[string]*shardFamily, steps, elem int) {
	fams = map[string]*shardFamily{}
	seen := map[[2]int]bool{}
	for _, o := range res.Communication.Ops {
		if _, ok := keys[o.Group]; !ok {
			continue
		}
		f := family(o.Type, o.Name)
		if fams[f] == nil {
			fams[f] = &shardFamily{}
		}
		fams[f].n++
		fams[f].bytes += o.Bytes
		fams[f].ns += o.ElapseNs
		seen[[2]int{o.Rank, o.Step}] = true
		if elem == 0 {
			switch strings.ToUpper(o.DataType) {
			case "FP32", "FLOAT32", "FLOAT":
				elem = 4
			case "BFP16", "BF16", "FP16", "FLOAT16", "BFLOAT16":
				elem = 2
			}
		}
	}
	return fams, len(seen), elem
}

// groupPlacement is the group's place: the servers its ranks are on and the most on
// one, by the first group (of keys) whose ranks' servers are known; else 1 and size.
func groupPlacement(res *analysis.Result, keys map[string][]int, size int) (servers, perServer int) {
	servers, perServer = 1, size
	for _, ranks := range keys {
		on := map[int]int{}
		for _, r := range ranks {
			if s, ok := res.Communication.ServerOf[r]; ok {
				on[s]++
			}
		}
		if len(on) > 0 {
			most := 0
			for _, n := range on {
				most = max(most, n)
			}
			servers, perServer = len(on), most
			break
		}
	}
	return servers, perServer
}
