package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
)

// A retransmission's peer is null in JSON, and the rank stands alone in text, when
// only its op's RDMA total is known or its group's members are not: "dst" read -1
// and the text "5→-1".
func TestRetransmissionPeerUnknown(t *testing.T) {
	c := analysis.Communication{Ops: []analysis.OpStat{{Name: "a"}}, Retransmissions: []analysis.Retransmission{
		{Src: 5, Dst: 13, Step: 2, Op: "a", TimeNs: 4_100_000_000, LimitNs: 4e9},
		{Src: 6, Dst: -1, Step: 2, Op: "b", TimeNs: 4_200_000_000, LimitNs: 4e9},
		{Src: 7, Dst: -1, Step: 2, Op: "c", TimeNs: 4_300_000_000, LimitNs: 4e9, FromOpTotal: true, Bytes: 4_915_200},
	}}
	got := commJSON(c, advisor.Detections{}).Retransmissions
	require.Len(t, got, 3)
	require.NotNil(t, got[0].Dst)
	assert.Equal(t, 13, *got[0].Dst)
	assert.Equal(t, "task", got[0].Source)
	assert.Nil(t, got[1].Dst)
	assert.Equal(t, "task", got[1].Source)
	assert.Nil(t, got[2].Dst)
	assert.Equal(t, "op_rdma_time", got[2].Source)

	var buf bytes.Buffer
	p := newPrinter(&buf, 0)
	writeCommunication(p, c, &reportView{}, false)
	assert.Contains(t, buf.String(), "RDMA retransmission: 5→13 in step 2, a took 4.100 s")
	assert.Contains(t, buf.String(), "RDMA retransmission: rank 6 (peer not recorded) in step 2, b took 4.200 s")
	assert.Contains(t, buf.String(), "RDMA retransmission (suspected): rank 7 in step 2, c spent 4.300 s in RDMA transfers")
}
