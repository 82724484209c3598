package analysis

import (
	"sort"

	"github.com/hcclprof/hcclprof/profile"
)

// union merges intervals into a sorted list of disjoint ones. Touching intervals merge,
// as in msprof-analyze's RangeCalculator. The input is not modified.
func union(ivs []profile.Interval) []profile.Interval {
	if len(ivs) == 0 {
		return nil
	}
	s := make([]profile.Interval, 0, len(ivs))
	for _, iv := range ivs {
		if iv.EndNs > iv.StartNs {
			s = append(s, iv)
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].StartNs < s[j].StartNs })
	out := s[:0]
	for _, iv := range s {
		if n := len(out); n > 0 && iv.StartNs <= out[n-1].EndNs {
			if iv.EndNs > out[n-1].EndNs {
				out[n-1].EndNs = iv.EndNs
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// totalNs is the summed length of disjoint intervals.
func totalNs(ivs []profile.Interval) int64 {
	var t int64
	for _, iv := range ivs {
		t += iv.DurNs()
	}
	return t
}

// intersectNs is the length of the intersection of two sorted disjoint lists.
func intersectNs(a, b []profile.Interval) int64 {
	var t int64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo := max(a[i].StartNs, b[j].StartNs)
		hi := min(a[i].EndNs, b[j].EndNs)
		if hi > lo {
			t += hi - lo
		}
		if a[i].EndNs < b[j].EndNs {
			i++
		} else {
			j++
		}
	}
	return t
}

// mergeSorted unions two sorted disjoint lists.
func mergeSorted(a, b []profile.Interval) []profile.Interval {
	all := make([]profile.Interval, 0, len(a)+len(b))
	all = append(all, a...)
	all = append(all, b...)
	return union(all)
}

// ExposedCommunication returns a rank's communication not overlapped by computation:
// the union of its HCCL op intervals minus the union of its compute tasks, sorted.
// It needs the rank's timeline (before profile.Rank.DropTimeline).
func ExposedCommunication(r *profile.Rank) []profile.Interval {
	ops := make([]profile.Interval, 0, len(r.CommOps))
	for _, op := range r.CommOps {
		ops = append(ops, op.Interval)
	}
	comm, comp := union(ops), union(r.Compute)
	var out []profile.Interval
	j := 0
	for _, c := range comm {
		start := c.StartNs
		for j < len(comp) && comp[j].EndNs <= start {
			j++
		}
		for k := j; k < len(comp) && comp[k].StartNs < c.EndNs; k++ {
			if comp[k].StartNs > start {
				out = append(out, profile.Interval{StartNs: start, EndNs: comp[k].StartNs})
			}
			start = max(start, comp[k].EndNs)
		}
		if start < c.EndNs {
			out = append(out, profile.Interval{StartNs: start, EndNs: c.EndNs})
		}
	}
	return out
}
