package profile

// TaskLabelCache hands out tasks' shared labels (TaskLabelSet) by a key of the
// source's own ids (row and string ids, string indexes), so that the strings are
// hashed once per distinct key rather than once per task. Tasks come in runs of one
// key: the last is remembered. The zero value is ready to use.
type TaskLabelCache[K comparable] struct {
	set        TaskLabelSet
	byKey      map[K]*TaskLabels
	last       K
	lastLabels *TaskLabels
}

// Of is the labels of key k, made by labels the first time k is seen.
func (c *TaskLabelCache[K]) Of(k K, labels func() TaskLabels) *TaskLabels {
	if c.lastLabels != nil && k == c.last {
		return c.lastLabels
	}
	p, ok := c.byKey[k]
	if !ok {
		if c.byKey == nil {
			c.byKey = map[K]*TaskLabels{}
		}
		p = c.set.Of(labels())
		c.byKey[k] = p
	}
	c.last, c.lastLabels = k, p
	return p
}

// Labels is the shared copy of l, from the set the keyed labels come from, for labels
// that have no key of the source's.
func (c *TaskLabelCache[K]) Labels(l TaskLabels) *TaskLabels { return c.set.Of(l) }
