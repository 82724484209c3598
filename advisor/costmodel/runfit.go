package costmodel

import (
	"sync"

	"github.com/hcclprof/hcclprof/analysis"
)

// RunFit is the cost model fitted once per run: the links calibrated on its
// transfers, every group's topology on them, and the gradient synchronisation's
// bucketing. The findings, the recommendations and the what-ifs all read this one
// fit, so they price with the same links.
type RunFit struct {
	// Links are the run's calibrated links (Calibrate), one per transport.
	Links []LinkFit

	res                     *analysis.Result
	accumulation            int
	bufferBytes             int64
	shape                   clusterShape
	topologiesOnce, fitOnce sync.Once
	topologies              map[string]Topology
	bucketing               *Bucketing
	bucketingErr            error
}

// Fit calibrates the run's links; the topologies and the bucketing are fitted on
// them when first asked for. accumulation is the run's micro-batches per optimizer
// step (1 when unknown); bufferBytes its HCCL_BUFFSIZE.
func Fit(res *analysis.Result, accumulation int, bufferBytes int64) *RunFit {
	links := Calibrate(res.Communication.TransferSamples)
	return &RunFit{Links: links, res: res, accumulation: accumulation, bufferBytes: bufferBytes,
		shape: newClusterShape(res, links)}
}

// Topologies are every group's topologies, keyed by group (Topologies).
func (f *RunFit) Topologies() map[string]Topology {
	f.topologiesOnce.Do(func() { f.topologies = f.shape.topologies(f.res) })
	return f.topologies
}

// Bucketing is the gradient synchronisation's fit (FitBucketing), the same value on
// every call: a caller that changes it (HCCLAlgoForced, BackwardShare) changes it
// for the others.
func (f *RunFit) Bucketing() (*Bucketing, error) {
	f.fitOnce.Do(func() {
		f.bucketing, f.bucketingErr = fitBucketing(f.res, f.accumulation, f.bufferBytes, func() clusterShape { return f.shape })
	})
	return f.bucketing, f.bucketingErr
}
