package analysis

import (
	"testing"
	"unique"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// A rank's own index in a group without parallel_group_info: its LOCAL self-link,
// else the source of its links; a group whose entries disagree is left out, and a
// mapped group is not read.
func TestGroupLocalIndex(t *testing.T) {
	link := func(group string, src, dst int, transport string) profile.MatrixLink {
		return profile.MatrixLink{Group: group, SrcLocal: src, DstLocal: dst, Transport: transport}
	}
	got := groupLocalIndex([]profile.MatrixLink{
		link("a", 3, 3, "LOCAL"), link("a", 3, 4, "HCCS"), // self-link and source agree
		link("b", 2, 5, "RDMA"), link("b", 2, 6, "RDMA"), // no self-link: the sources
		link("c", 1, 1, "LOCAL"), link("c", 2, 2, "LOCAL"), // two self-links: not one rank's
		link("d", 0, 0, "LOCAL"),                         // mapped by parallel_group_info
		link("e", 1, 0, "HCCS"), link("e", 2, 0, "HCCS"), // sources disagree
		link("", 0, 0, "LOCAL"), // unnamed
	}, map[string][]int{"d": {7, 8}})
	assert.Equal(t, map[string]int{"a": 3, "b": 2}, got)
	assert.Nil(t, groupLocalIndex(nil, nil))
}

// The merge maps group-local transfers through the ranks that claim each index: a
// peer nobody claims, or an index two ranks claim, leaves the bytes unmapped; a
// retransmission to an unmapped peer keeps its rank.
func TestMapGroupLocalRanks(t *testing.T) {
	w := func(group string, src, dst int, bytes int64) transfer {
		return transfer{peer: unique.Make(peerKey{group, "op", "RDMA", bytes}), bytes: bytes, timeNs: 1000, src: int32(src), dst: int32(dst), count: 1}
	}
	ranks := []rankComm{
		{rank: 10, selfIndex: map[string]int{"g": 0, "x": 0},
			localTransfers: []transfer{w("g", 0, 1, 100), w("g", 0, 2, 200), w("x", 0, 1, 400)},
			localRetransmissions: []localRetransmission{
				{group: "g", Retransmission: Retransmission{Src: 0, Dst: 1, Step: 3, Op: "op", TimeNs: 5e9}},
				{group: "g", Retransmission: Retransmission{Src: 0, Dst: 2, Step: 3, Op: "op", TimeNs: 5e9}},
			}},
		{rank: 11, selfIndex: map[string]int{"g": 1, "x": 0}, localTransfers: []transfer{w("g", 1, 0, 800)}},
	}
	mapGroupLocalRanks(ranks)
	require.Len(t, ranks[0].transfers, 1)
	assert.Equal(t, linkKey{10, 11, "RDMA"}, ranks[0].transfers[0].link())
	assert.Equal(t, int64(200+400), ranks[0].unmappedBytes, "index 2 of g is nobody's; x's index 0 is two ranks'")
	require.Len(t, ranks[1].transfers, 1)
	assert.Equal(t, linkKey{11, 10, "RDMA"}, ranks[1].transfers[0].link())
	require.Len(t, ranks[0].retransmissions, 2)
	assert.Equal(t, [2]int{10, 11}, [2]int{ranks[0].retransmissions[0].Src, ranks[0].retransmissions[0].Dst})
	assert.Equal(t, [2]int{10, -1}, [2]int{ranks[0].retransmissions[1].Src, ranks[0].retransmissions[1].Dst})
	assert.Equal(t, "rank 10 (peer not recorded)", ranks[0].retransmissions[1].Link())
	assert.Nil(t, ranks[0].localTransfers)
}
