package advisor

import (
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// Detections are the advisor's verdicts on the run's ranks, links, servers and
// communication checks, decided once per run (Detect) from the analysis'
// measurements; the findings, the diagnosis and the report read them.
type Detections struct {
	SlowRanks   []SlowRank
	SlowLinks   []SlowLink
	SlowServers []SlowServer
	// SlowGroups are slow groups whose slow link could not be named (SlowGroup).
	SlowGroups []SlowGroup
	// Checks are msprof-analyze's communication checks and the HCCL_BUFFSIZE one.
	Checks []Check
	// LatencyBound are the links whose transfers are too small to judge their
	// bandwidth (latencyBoundLinks): their low bandwidth is latency, not a fault.
	LatencyBound map[analysis.LinkID]bool
}

// DetectThresholds are the detectors' thresholds: the configuration file's
// slow_rank, slow_link and checks sections (internal/config reads them).
type DetectThresholds struct {
	SlowRank SlowRankThresholds
	SlowLink SlowLinkThresholds
	Checks   CheckThresholds
}

// DefaultDetectThresholds are the detectors' defaults (hcclprof.example.yaml lists
// them).
var DefaultDetectThresholds = DetectThresholds{SlowRank: defaultSlowRankThresholds, SlowLink: defaultSlowLinkThresholds,
	Checks: defaultCheckThresholds}

// Detect decides the slow links and servers from the links' peer ratios, then the slow
// ranks (a slow link of its own is a rank's cause), then which checks fire.
func Detect(res *analysis.Result, th DetectThresholds) Detections {
	return detect(res, th, func() []costmodel.LinkFit { return costmodel.Calibrate(res.Communication.TransferSamples) })
}

// detect is Detect with the run's link calibration given (Advise has made it once).
func detect(res *analysis.Result, th DetectThresholds, links func() []costmodel.LinkFit) Detections {
	c := &res.Communication
	var d Detections
	slow := slowLinks(c.Links, c.PeerRatios, c.ServerOf, th.SlowLink)
	var explained map[analysis.LinkID]bool
	d.SlowServers, explained = slowServers(c.Links, slow, c.PeerRatios, c.ServerOf, c.Hosts, th.SlowLink)
	// A server's slow NIC is one finding, not one per link it slows.
	for _, l := range slow {
		if !explained[linkID(l.Src, l.Dst, l.Transport)] {
			d.SlowLinks = append(d.SlowLinks, l)
		}
	}
	// NCCL kernels have no per-link transfers: their groups are held against their
	// peer groups instead.
	gl, gs, gg := slowGroupPlaces(slowGroups(c.Ops, c.Groups, th.SlowLink), c.ServerOf, c.Hosts)
	d.SlowLinks, d.SlowServers, d.SlowGroups = append(d.SlowLinks, gl...), append(d.SlowServers, gs...), gg
	if len(d.SlowServers) == 0 && len(d.SlowLinks) == 0 && len(d.SlowGroups) == 0 {
		d.SlowServers = fabricBelowPeak(*c, links, th.SlowLink)
	}
	d.SlowRanks = slowRanks(c.Ops, res.Ranks, c.Groups, d.SlowLinks, d.SlowServers, len(d.SlowGroups) > 0, th.SlowRank)
	d.Checks = evaluateChecks(c.CheckSamples, c.Retransmissions, c.Limits, th.Checks)
	d.LatencyBound = latencyBoundLinks(c.Links, links)
	return d
}

// faulty reports whether a rank, link or server is slow or a transfer was
// retransmitted: then no setting is tuned, the fault is fixed first.
func (d Detections) faulty(c analysis.Communication) bool {
	return len(d.SlowRanks)+len(d.SlowLinks)+len(d.SlowServers)+len(d.SlowGroups)+len(c.Retransmissions) > 0
}

func linkID(src, dst int, transport string) analysis.LinkID {
	return analysis.LinkID{Src: src, Dst: dst, Transport: transport}
}
