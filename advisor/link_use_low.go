package advisor

import (
	"fmt"
	"sort"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
)

// LinkUseThresholds decide link_use_low: a transport whose links run, byte-weighted,
// below MinUse of their peak.
type LinkUseThresholds struct {
	MinUse float64
}

// defaultLinkUseThresholds are link_use_low's defaults.
var defaultLinkUseThresholds = LinkUseThresholds{MinUse: 0.5}

func (t *LinkUseThresholds) keys() []thresholdKey {
	return []thresholdKey{{"min_use", &t.MinUse, 0, 1}}
}

// minLinkUseBytes is the traffic of a transport below which its links' use is no
// more than a Low finding: too little data to say much of a link (64 MiB, a few
// gradient buckets).
const minLinkUseBytes = 64 << 20

// linkUseFindings flags a transport whose links, weighted by the bytes they carried,
// run below half their peak: when messages are not small, that points at the links
// or the algorithm's use of them, not at the workload.
func linkUseFindings(c analysis.Communication, th LinkUseThresholds) []Finding {
	type acc struct{ bytes, weighted float64 }
	by := map[string]*acc{}
	for _, l := range c.Links {
		if l.PeakGBps <= 0 || l.Bytes <= 0 {
			continue
		}
		a := by[l.Transport]
		if a == nil {
			a = &acc{}
			by[l.Transport] = a
		}
		a.bytes += float64(l.Bytes)
		a.weighted += float64(l.Bytes) * l.Utilisation
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
	for _, n := range names {
		use := by[n].weighted / by[n].bytes
		if use >= th.MinUse {
			continue
		}
		// A finding on negligible traffic is never above Low: 15.5 KB once made a
		// Medium "HCCS at 45% of peak".
		sev := Medium
		if by[n].bytes < minLinkUseBytes {
			sev = Low
		}
		peak, _ := c.Hardware.Peak(n)
		assumed := ""
		if c.Hardware.Assumed {
			assumed = " (the product was assumed: set --hardware if it is not " + c.Hardware.Name + ")"
		}
		out = append(out, Finding{ID: "link_use_low", Severity: sev,
			Title:    fmt.Sprintf("%s links run at %.0f%% of %s's %.1f GB/s peak", n, 100*use, c.Hardware.Name, peak),
			Evidence: fmt.Sprintf("byte-weighted over %s links, %s moved; small messages, contention or a congested fabric lower it%s", n, units.FormatBytes(int64(by[n].bytes)), assumed)})
	}
	return out
}
