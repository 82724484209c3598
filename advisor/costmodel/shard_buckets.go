package costmodel

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/analysis/hardware"
)

// ShardedOps is one family of a data-parallel group's sharded-gradient collectives
// (a distributed optimizer's or ZeRO's ReduceScatter, or its AllGather), per rank and
// step: how many, each op's bytes and its measured mean elapse.
type ShardedOps struct {
	Op       string // reducescatter, allgather
	PerStep  float64
	Bytes    int64
	Measured float64 // µs
}

// ShardBuckets is a data-parallel group's sharded-gradient traffic and its place on
// the product: Servers servers of PerServer ranks.
type ShardBuckets struct {
	StepUs float64
	// ExposedUs is the data-parallel groups' exposed time per step.
	ExposedUs          float64
	CommShare          float64
	Ops                []ShardedOps
	Servers, PerServer int
	// NewBytes is the bucket size priced.
	NewBytes int64
	// Links are the run's calibrated transports; a fitted one replaces the
	// product's prior for its level (HCCS or SDMA inside a server, RDMA between).
	Links []LinkFit
}

// calibrated is hw with the run's fitted links in place of its priors.
func calibrated(hw hardware.Profile, links []LinkFit) (hardware.Profile, []string) {
	fits := map[string]LinkFit{}
	for _, l := range links {
		fits[l.Transport] = l
	}
	peaks := map[string]float64{}
	for k, v := range hw.PeakGBps {
		peaks[k] = v
	}
	hw.PeakGBps = peaks
	var used []string
	for _, level := range []struct {
		names []string
		alpha *float64
	}{{[]string{"HCCS", "SDMA"}, &hw.Level0LatencyUs}, {[]string{"RDMA"}, &hw.Level1LatencyUs}} {
		for _, n := range level.names {
			if f, ok := fits[n]; ok && f.Confidence != "none" && f.BWGBps > 0 {
				*level.alpha = f.AlphaUs
				peaks[level.names[0]] = f.BWGBps
				used = append(used, n)
				break
			}
		}
	}
	return hw, used
}

// ShardBucketSize prices larger buckets for a distributed optimizer's (or ZeRO's)
// ReduceScatter and AllGather: the same bytes in fewer ops, each paying the
// collective's fixed latency once. Each family's measured time per step is scaled by
// the product model's price of the new ops over the old ones, on the run's
// calibrated links where it has them (the model's bias cancels in the ratio). The
// exposed data-parallel time is taken as the AllGather first (Megatron gathers the
// updated parameters after the optimizer step, on the critical path unless
// --overlap-param-gather), which shrinks by its family's ratio, and the rest as the
// ReduceScatter queue's overhang past the backward pass: at the point and at worst
// it stays (the last bucket, now larger, and the ranks' wait), at best it shrinks
// with the queue down to one new bucket. The profile has one bucket size, which
// cannot separate latency from bandwidth: the interval prices the ratios again with
// the latency four times and a quarter of the calibrated one, and at worst adds one
// new bucket's ReduceScatter and AllGather after the backward pass.
func ShardBucketSize(hw hardware.Profile, c ShardBuckets) (Prediction, error) {
	if c.StepUs <= 0 || c.ExposedUs <= 0 {
		return Prediction{}, fmt.Errorf("no exposed data-parallel ReduceScatter/AllGather")
	}
	hw, used := calibrated(hw, c.Links)
	// family is one op family's time per step today and in the new buckets, and one
	// new op's time.
	type family struct{ today, after, perOp float64 }
	price := func(alphaScale float64) (map[string]family, error) {
		h := hw
		h.Level0LatencyUs *= alphaScale
		h.Level1LatencyUs *= alphaScale
		out := map[string]family{}
		for _, o := range c.Ops {
			if o.PerStep <= 0 || o.Bytes <= 0 || o.Measured <= 0 {
				continue
			}
			q := ProductQuery{Op: o.Op, Bytes: o.Bytes, Servers: c.Servers, NPUsPerServer: c.PerServer}
			old, err := PriceOnProduct(h, q)
			if err != nil {
				return nil, err
			}
			q.Bytes = max(c.NewBytes, o.Bytes)
			nw, err := PriceOnProduct(h, q)
			if err != nil {
				return nil, err
			}
			if old.Cost.TimeUs <= 0 {
				return nil, fmt.Errorf("%s of %d bytes priced at 0", o.Op, o.Bytes)
			}
			n := math.Ceil(o.PerStep * float64(o.Bytes) / float64(q.Bytes))
			perOp := o.Measured * nw.Cost.TimeUs / old.Cost.TimeUs
			out[NormaliseOp(o.Op)] = family{today: o.PerStep * o.Measured, after: n * perOp, perOp: perOp}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no sharded-gradient ops measured")
		}
		return out, nil
	}
	// saving is the exposed time removed; queue says whether the ReduceScatter's
	// overhang shrinks with its queue.
	saving := func(f map[string]family, queue bool) float64 {
		ag, rs := f["allgather"], f["reducescatter"]
		exposedAG := math.Min(c.ExposedUs, ag.today)
		s := exposedAG * (1 - math.Min(ag.after/math.Max(ag.today, 1e-9), 1))
		if queue {
			overhang := c.ExposedUs - exposedAG
			s += math.Max(overhang-math.Max(overhang-(rs.today-rs.after), rs.perOp), 0)
		}
		return s
	}
	mid, err := price(1)
	if err != nil {
		return Prediction{}, err
	}
	fast, err := price(4) // more latency saved per op removed
	if err != nil {
		return Prediction{}, err
	}
	slow, err := price(0.25)
	if err != nil {
		return Prediction{}, err
	}
	point := saving(mid, false)
	if point <= 0 {
		return Prediction{}, fmt.Errorf("buckets of %d bytes are priced no faster", c.NewBytes)
	}
	tail := slow["reducescatter"].perOp + slow["allgather"].perOp
	p := Prediction{Knob: "bucket", Value: fmt.Sprintf("%d bytes", c.NewBytes), StepTimeUs: c.StepUs - point,
		Low: c.StepUs - saving(fast, true), High: c.StepUs - saving(slow, false) + tail, Confidence: "medium"}
	p.ExposedUs = math.Max(c.CommShare*c.StepUs-point, 0)
	p.CommShare = p.ExposedUs / p.StepTimeUs
	source := "the product's link priors"
	if len(used) > 0 {
		source = "the run's calibrated " + strings.Join(used, " and ") + " links"
	}
	var today, after float64
	for _, f := range mid {
		today, after = today+f.today, after+f.after
	}
	p.Assumptions = []string{fmt.Sprintf("the data-parallel ReduceScatter/AllGather re-timed in buckets of %.0f MB: the product model on %s prices the same bytes in fewer ops at %.0f%% of today's %.3f ms per step; of the %.3f ms exposed, the AllGather's part (after the optimizer step) shrinks by its ratio and the ReduceScatter's overhang stays (at best it shrinks with the queue); the latency taken 4× and ¼ of the calibrated one for the interval, and at worst one new bucket's ReduceScatter and AllGather (%.3f ms) after the backward pass",
		float64(c.NewBytes)/1e6, source, 100*after/today, today/1e3, c.ExposedUs/1e3, tail/1e3)}
	return p, nil
}
