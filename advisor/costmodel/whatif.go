package costmodel

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
)

// Bucketing is the run's data-parallel gradient synchronisation as the what-if sees
// it (costmodel.md §6.1): per step, k AllReduce buckets of the gradient of G bytes on
// one stream, each taking t(b) = rounds(b)·α + b·β, ready evenly over an overlap
// window T at the end of the backward pass. α and β are fitted on the run's own
// AllReduces (the fastest rank's elapse: the op's time without the wait for others);
// T is solved from the measured exposed communication.
type Bucketing struct {
	Group                 string
	Buckets               []int64 // the sizes of one step, in launch order
	GradientBytes         int64
	AlphaUs, BetaUsPerB   float64
	AlphaSEUs, BetaSEUsPB float64
	BufferBytes           int64
	WindowUs              float64 // T
	WindowBound           bool    // T is only a lower bound (the run is compute-bound)
	StepUs, ExposedUs     float64 // measured: mean Stage and Comm not overlapped
	Accumulation          int
	Confidence            string
	Notes                 []string
}

// Prediction is a what-if's outcome.
type Prediction struct {
	Knob, Value string
	StepTimeUs  float64
	CommShare   float64
	Low, High   float64 // the step time's interval from the fit's uncertainty
	ExposedUs   float64
	Assumptions []string
	Confidence  string
}

// FitBucketing reads the run's DP AllReduces: the group with the most AllReduce
// bytes per step is taken as the gradient synchronisation. accumulation is the
// run's micro-batches per step (1 when unknown); bufferBytes its HCCL_BUFFSIZE.
func FitBucketing(res *analysis.Result, accumulation int, bufferBytes int64) (*Bucketing, error) {
	type key struct {
		group string
		step  int
	}
	bytesBy := map[string]int64{}
	steps := map[key][]analysis.OpStat{}
	for _, o := range res.Communication.Ops {
		if o.Type != "allreduce" || o.Bytes <= 0 || o.Step < 0 {
			continue
		}
		bytesBy[o.Group] += o.Bytes
		steps[key{o.Group, o.Step}] = append(steps[key{o.Group, o.Step}], o)
	}
	group := ""
	for g, b := range bytesBy {
		if group == "" || b > bytesBy[group] || (b == bytesBy[group] && g < group) {
			group = g
		}
	}
	if group == "" {
		return nil, fmt.Errorf("no AllReduce with a known size in marked steps: nothing to model")
	}
	bk := &Bucketing{Group: group, Accumulation: max(accumulation, 1), BufferBytes: bufferBytes}
	// One rank's buckets of one step, in launch order (every rank has the same).
	var firstKey key
	for k := range steps {
		if k.group == group && (firstKey.group == "" || k.step < firstKey.step) {
			firstKey = k
		}
	}
	rank0 := steps[firstKey][0].Rank
	for _, o := range steps[firstKey] {
		if o.Rank == rank0 {
			bk.Buckets = append(bk.Buckets, o.Bytes)
			bk.GradientBytes += o.Bytes
		}
	}
	// The fit: per op instance, the fastest rank's elapse against its bytes.
	var xs, ys []float64
	for k, ops := range steps {
		if k.group != group {
			continue
		}
		for _, o := range ops {
			if o.CrossWaitNs == 0 {
				rounds := float64(Rounds(o.Bytes, bufferBytes))
				xs = append(xs, float64(o.Bytes)/rounds) // per round
				ys = append(ys, float64(o.ElapseNs)/1e3/rounds)
			}
		}
	}
	a, b, sa, sb, n := fitLine(xs, ys)
	switch {
	case n < 2:
		return nil, fmt.Errorf("the AllReduces have one size: latency and bandwidth cannot be separated")
	case b <= 0:
		return nil, fmt.Errorf("the AllReduces' time does not grow with their size (they mostly wait, not move data): the model cannot price them")
	}
	bk.AlphaUs, bk.BetaUsPerB, bk.AlphaSEUs, bk.BetaSEUsPB = a, b, sa, sb
	// The measured step: means over ranks and steps.
	var stage, exposed, cnt float64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			stage += float64(st.StageNs) / 1e3
			exposed += float64(st.CommNotOverlappedNs) / 1e3
			cnt++
		}
	}
	if cnt == 0 {
		return nil, fmt.Errorf("no step breakdown")
	}
	bk.StepUs, bk.ExposedUs = stage/cnt, exposed/cnt
	// Solve the window from the exposure: E = max(t_last, T/k + Σt − T).
	times := bk.bucketTimes(bk.Buckets, a, b)
	k := float64(len(times))
	sum := sumOf(times)
	last := times[len(times)-1]
	switch {
	case k < 2:
		bk.WindowUs, bk.WindowBound = 0, true
		bk.Notes = append(bk.Notes, "one bucket: no overlap window to solve")
	case bk.ExposedUs > last*1.05:
		bk.WindowUs = (sum - bk.ExposedUs) / (1 - 1/k)
	default:
		bk.WindowUs, bk.WindowBound = (sum-last)/(1-1/k), true
		bk.Notes = append(bk.Notes, "the run is compute-bound: only the last bucket is exposed, the overlap window is a lower bound")
	}
	bk.WindowUs = math.Max(bk.WindowUs, 0)
	bk.Confidence = "medium"
	if n < 4 || len(uniq(xs)) < 2 {
		bk.Confidence = "low"
	}
	return bk, nil
}

func (bk *Bucketing) bucketTimes(buckets []int64, a, b float64) []float64 {
	out := make([]float64, len(buckets))
	for i, n := range buckets {
		r := float64(Rounds(n, bk.BufferBytes))
		out[i] = r*a + float64(n)*b
	}
	return out
}

func (bk *Bucketing) exposure(buckets []int64, a, b float64) float64 {
	times := bk.bucketTimes(buckets, a, b)
	if len(times) == 0 {
		return 0
	}
	k := float64(len(times))
	return math.Max(times[len(times)-1], bk.WindowUs/k+sumOf(times)-bk.WindowUs)
}

// split cuts the gradient into buckets of at most size bytes, DDP's way.
func split(total, size int64) []int64 {
	var out []int64
	for total > 0 {
		n := min(total, size)
		out = append(out, n)
		total -= n
	}
	return out
}

// Setting is one knob's new value: "bucket" (bytes), "accumulation" (micro-batches
// per optimizer step) or "buffsize" (HCCL_BUFFSIZE, bytes).
type Setting struct {
	Knob  string
	Value int64
}

// WhatIf predicts the step time and exposed share when one knob changes.
func (bk *Bucketing) WhatIf(knob string, value int64) (Prediction, error) {
	return bk.WhatIfPlan([]Setting{{knob, value}})
}

// WhatIfPlan predicts the step time and exposed share when the settings change
// together.
func (bk *Bucketing) WhatIfPlan(plan []Setting) (Prediction, error) {
	buckets, buffer, acc := bk.Buckets, bk.BufferBytes, bk.Accumulation
	p := Prediction{Confidence: bk.Confidence, Assumptions: []string{
		"gradient buckets run one after another on one stream and become ready evenly over the backward window solved from the measured exposure",
		"everything but the exposed gradient communication is unchanged",
	}}
	var names, values []string
	for _, s := range plan {
		switch s.Knob {
		case "bucket":
			if s.Value <= 0 {
				return Prediction{}, fmt.Errorf("bucket must be positive")
			}
			buckets = split(bk.GradientBytes, s.Value)
			values = append(values, FormatBytes(s.Value))
		case "buffsize":
			if s.Value <= 0 {
				return Prediction{}, fmt.Errorf("buffsize must be positive")
			}
			buffer = s.Value
			values = append(values, FormatBytes(s.Value))
			p.Assumptions = append(p.Assumptions, "each buffer round pays the fitted latency again")
		case "accumulation":
			if s.Value < 1 {
				return Prediction{}, fmt.Errorf("accumulation must be ≥ 1")
			}
			acc = int(s.Value)
			values = append(values, fmt.Sprint(s.Value))
			p.Assumptions = append(p.Assumptions, "gradients are synchronised once per optimizer step (no_sync on the other micro-batches); a micro-batch costs (Stage − exposed)/A, optimizer included")
		default:
			return Prediction{}, fmt.Errorf("what-if %q is not modelled: bucket, accumulation and buffsize are", s.Knob)
		}
		names = append(names, s.Knob)
	}
	pred := func(a, b float64) (step, exposed float64) {
		saved := bk.BufferBytes
		bk.BufferBytes = buffer
		e := bk.exposure(buckets, a, b)
		bk.BufferBytes = saved
		// The rest of the step is unchanged; more micro-batches repeat the compute
		// of one.
		micro := (bk.StepUs - bk.ExposedUs) / float64(bk.Accumulation)
		return bk.StepUs - bk.ExposedUs + e + float64(acc-bk.Accumulation)*micro, e
	}
	step, e := pred(bk.AlphaUs, bk.BetaUsPerB)
	lo, _ := pred(math.Max(bk.AlphaUs-bk.AlphaSEUs, 0), math.Max(bk.BetaUsPerB-bk.BetaSEUsPB, 0))
	hi, _ := pred(bk.AlphaUs+bk.AlphaSEUs, bk.BetaUsPerB+bk.BetaSEUsPB)
	p.Knob, p.Value = strings.Join(names, "+"), strings.Join(values, "+")
	p.StepTimeUs, p.ExposedUs, p.CommShare = step, e, e/step
	p.Low, p.High = math.Min(lo, hi), math.Max(lo, hi)
	if bk.WindowBound {
		p.Assumptions = append(p.Assumptions, "the overlap window is a lower bound (the run is compute-bound)")
	}
	return p, nil
}

// fitLine is least squares y = a + b·x with standard errors; a is held at 0 if the
// free fit makes it negative.
func fitLine(xs, ys []float64) (a, b, sa, sb float64, n int) {
	n = len(xs)
	if n < 2 || len(uniq(xs)) < 2 {
		return 0, 0, 0, 0, len(uniq(xs))
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	b = sxy / sxx
	a = my - b*mx
	if a < 0 {
		var s2, sxy0 float64
		for i := range xs {
			s2 += xs[i] * xs[i]
			sxy0 += xs[i] * ys[i]
		}
		a, b = 0, sxy0/s2
	}
	var rss float64
	for i := range xs {
		r := ys[i] - a - b*xs[i]
		rss += r * r
	}
	if n > 2 {
		s2 := rss / float64(n-2)
		sb = math.Sqrt(s2 / sxx)
		sa = math.Sqrt(s2 * (1/float64(n) + mx*mx/sxx))
	}
	return a, b, sa, sb, n
}

func uniq(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func sumOf(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}
