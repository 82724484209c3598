package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// loneStage places the one profiled rank of an inferred pipeline group by its
// transfers' group-local ranks (PeerRanks: k+1 toward the stage before stage k, k+2
// toward the one after) and which op comes first. The middle stages of issue 37
// (stage 1 of 3, stages 1 and 2 of 4) were not placed: a receive first with more than
// two ranks named.
func TestLoneStage(t *testing.T) {
	grp := Group{Key: "g", Ranks: []int{9}, Inferred: true}
	op := func(name string, startNs int64, peerRanks int32) OpStat {
		return OpStat{Rank: 9, Group: "g", Name: name, StartNs: startNs, PeerRanks: peerRanks}
	}
	for _, c := range []struct {
		name string
		ops  []OpStat
		want []int // nil: not placed
	}{
		{"first of 2: sends first", []OpStat{op("hcom_send_0", 10, 2), op("hcom_receive_1", 20, 0)}, []int{9, -1}},
		{"last of 2: receives first", []OpStat{op("hcom_receive_0", 10, 0), op("hcom_send_1", 20, 2)}, []int{-1, 9}},
		{"stage 1 of 3 or more: from 0, forward to 2, back to 0",
			[]OpStat{op("hcom_receive_0", 10, 0), op("hcom_send_1", 20, 3), op("hcom_receive_2", 30, 0), op("hcom_send_3", 40, 2)}, []int{-1, 9, -1}},
		{"stage 2 of 4 or more",
			[]OpStat{op("hcom_receive_0", 10, 0), op("hcom_send_1", 20, 4), op("hcom_receive_2", 30, 0), op("hcom_send_3", 40, 3)}, []int{-1, -1, 9, -1}},
		{"stage 1, its receives naming the peers (the receiver copies the data in)",
			[]OpStat{op("hcom_receive_0", 10, 2), op("hcom_send_1", 20, 0), op("hcom_receive_2", 30, 3), op("hcom_send_3", 40, 0)}, []int{-1, 9, -1}},
		{"last of 3 or more: one peer, the stage before",
			[]OpStat{op("hcom_receive_0", 10, 0), op("hcom_send_1", 20, 3), op("hcom_send_2", 30, 3)}, []int{-1, -1, 9}},
		{"two peers, but the first send goes back: contradicts a middle stage",
			[]OpStat{op("hcom_receive_0", 10, 0), op("hcom_send_1", 20, 2), op("hcom_send_2", 30, 3)}, nil},
		{"no task names a peer", []OpStat{op("hcom_receive_0", 10, 0), op("hcom_send_1", 20, 0)}, nil},
	} {
		got, note := loneStage(grp, c.ops)
		assert.Equal(t, c.want, got, c.name)
		assert.Equal(t, c.want != nil, note != "", c.name)
	}
	stages, note := loneStage(grp, []OpStat{op("hcom_receive_0", 10, 0), op("hcom_send_1", 20, 3), op("hcom_send_2", 30, 2)})
	assert.Len(t, stages, 3)
	assert.Contains(t, note, "only stage 1 (a middle one: it receives from the stage before and sends on to the one after) of its 3 or more stages was profiled (rank 9;")
}
