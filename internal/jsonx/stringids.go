package jsonx

// StringIDs numbers distinct strings in the order first seen: a trace's records (in
// Chunks) hold the ids, 2 or 4 bytes, and each string is kept once.
type StringIDs[I uint16 | uint32] struct {
	ids    map[string]I
	Values []string // the strings by id
}

// IDOfBytes is b's id, numbering it when new; looking it up does not allocate.
func (t *StringIDs[I]) IDOfBytes(b []byte) I {
	if id, ok := t.ids[string(b)]; ok {
		return id
	}
	return t.ID(string(b))
}

// ID is s's id, numbering it when new.
func (t *StringIDs[I]) ID(s string) I {
	if id, ok := t.ids[s]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[string]I{}
	}
	id := I(len(t.Values))
	t.ids[s] = id
	t.Values = append(t.Values, s)
	return id
}

// Merge numbers o's strings in t, those new to t after its own, and returns t's id of
// each of o's ids: what rewrites the records of a part read apart (see Chunks.Join).
func (t *StringIDs[I]) Merge(o *StringIDs[I]) []I {
	ids := make([]I, len(o.Values))
	for i, s := range o.Values {
		ids[i] = t.ID(s)
	}
	return ids
}
