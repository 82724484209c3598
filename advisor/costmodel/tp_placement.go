package costmodel

import (
	"fmt"
	"math"
)

// TPPlacement is a tensor-parallel job whose TP groups span servers, per step from
// one rank's view: the TP collectives' measured time (in all and exposed) and the
// same ops priced on the product's links, where they run today (across servers)
// and inside one server.
type TPPlacement struct {
	StepUs float64
	// ExposedUs and TotalUs are the TP groups' exposed and whole op time per step.
	ExposedUs, TotalUs float64
	// CommShare is the run's exposed communication over the step (all kinds).
	CommShare float64
	// AcrossUs and InsideUs are the same ops priced per step on today's placement
	// and with each TP group inside one server.
	AcrossUs, InsideUs float64
	TP                 int
}

// TPInsideServer prices packing each tensor-parallel group into one server: the
// same ops, their bytes now over the server's own links instead of the servers'
// network. The measured TP time is scaled by the model's ratio of the two prices
// (the model's bias cancels in the ratio); the part of it exposed today stays the
// same part. At best the saving is the larger of the ratio's and the one the model's
// absolute in-server price gives; at worst half the ratio's (the in-server price is
// a prior from the links' peaks, and one server's links now carry the whole group's
// traffic: the run never measured them doing so).
func TPInsideServer(c TPPlacement) (Prediction, error) {
	if c.StepUs <= 0 || c.ExposedUs <= 0 || c.TotalUs <= 0 {
		return Prediction{}, fmt.Errorf("no exposed tensor-parallel communication to re-time")
	}
	if c.AcrossUs <= 0 || c.InsideUs <= 0 {
		return Prediction{}, fmt.Errorf("the TP collectives could not be priced on this product")
	}
	if c.InsideUs >= c.AcrossUs {
		return Prediction{}, fmt.Errorf("inside one server the TP collectives are priced no faster (%.3f against %.3f ms per step)", c.InsideUs/1e3, c.AcrossUs/1e3)
	}
	exposedPart := math.Min(c.ExposedUs/c.TotalUs, 1)
	byRatio := c.ExposedUs * (1 - c.InsideUs/c.AcrossUs)
	byPrice := math.Max(c.TotalUs-c.InsideUs, 0) * exposedPart
	lo, hi := 0.5*byRatio, math.Min(math.Max(byRatio, byPrice), c.ExposedUs)
	p := Prediction{Knob: "tp_inside_server", Value: "on", StepTimeUs: c.StepUs - byRatio, Low: c.StepUs - hi, High: c.StepUs - lo, Confidence: "medium"}
	p.ExposedUs = math.Max(c.CommShare*c.StepUs-byRatio, 0)
	p.CommShare = p.ExposedUs / p.StepTimeUs
	p.Assumptions = []string{fmt.Sprintf("the TP collectives (%.3f ms per step, %.3f ms exposed) re-timed for groups of %d inside one server: priced %.3f ms there against %.3f ms across servers, the measured time scaled by that ratio (%.2f); the same part of them stays exposed; at best the saving the absolute price gives, if larger, at worst half the ratio's",
		c.TotalUs/1e3, c.ExposedUs/1e3, c.TP, c.InsideUs/1e3, c.AcrossUs/1e3, c.InsideUs/c.AcrossUs)}
	return p, nil
}
