package report

import (
	"fmt"
	"math"

	"github.com/hcclprof/hcclprof/report/contract"
)

// maxReportUs bounds a duration a report can hold: a day, in µs (no analysis keeps a
// longer interval; see profile.MaxPlausibleNs).
const maxReportUs = 86400e6

// checkReportFigures says which figure of a saved report no analysis can have written
// (a negative or over-a-day duration, a share outside [0, 1], a negative count or
// size), naming its field; nil when every figure diff reads can be a measurement. A
// report edited by hand or damaged this way was diffed as if measured.
func checkReportFigures(rep *contract.Report) error {
	dur := func(where, field string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > maxReportUs {
			return fmt.Errorf("%s: %s = %v: a duration in µs is in [0, %g] (a day)", where, field, v, maxReportUs)
		}
		return nil
	}
	for i, r := range rep.Ranks {
		for j, s := range r.Steps {
			where := fmt.Sprintf("ranks[%d] (rank %d) steps[%d] (step %d)", i, r.Rank, j, s.Step)
			for _, f := range []struct {
				name string
				v    float64
			}{
				{"stage_us", s.StageUs}, {"computing_us", s.ComputingUs}, {"communication_us", s.CommunicationUs},
				{"communication_not_overlapped_us", s.CommunicationNotOverlappedUs}, {"overlapped_us", s.OverlappedUs},
				{"free_us", s.FreeUs}, {"bubble_us", s.BubbleUs},
			} {
				if err := dur(where, f.name, f.v); err != nil {
					return err
				}
			}
			if s.PreparingUs != nil {
				if err := dur(where, "preparing_us", *s.PreparingUs); err != nil {
					return err
				}
			}
			for _, f := range []struct {
				name string
				v    float64
			}{{"comm_share", s.CommShare}, {"comm_total_share", s.CommTotalShare}} {
				if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
					return fmt.Errorf("%s: %s = %v: a share is in [0, 1]", where, f.name, f.v)
				}
			}
		}
	}
	for i, o := range rep.Communication.Ops {
		where := fmt.Sprintf("communication.ops[%d] (rank %d, %s)", i, o.Rank, o.Name)
		if err := dur(where, "elapse_us", o.ElapseUs); err != nil {
			return err
		}
		if o.Bytes != nil && *o.Bytes < 0 {
			return fmt.Errorf("%s: bytes = %d: a size cannot be negative", where, *o.Bytes)
		}
	}
	for i, c := range rep.Collectives {
		where := fmt.Sprintf("collectives[%d] (%s in group %s)", i, c.Op, c.Group)
		if c.Count < 0 {
			return fmt.Errorf("%s: count = %d: a count cannot be negative", where, c.Count)
		}
		if err := dur(where, "mean_us", c.MeanUs); err != nil {
			return err
		}
		if c.GroupSize != nil && *c.GroupSize < 0 {
			return fmt.Errorf("%s: group_size = %d: a group size cannot be negative", where, *c.GroupSize)
		}
		if c.BusBwGBps != nil && (math.IsNaN(*c.BusBwGBps) || *c.BusBwGBps < 0) {
			return fmt.Errorf("%s: busbw_gbps = %v: a bandwidth cannot be negative", where, *c.BusBwGBps)
		}
	}
	return nil
}
