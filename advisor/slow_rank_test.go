package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
)

// The retransmission finding names the limit the transfer exceeded, as configured
// (retransmission_s), not a fixed 4 s.
func TestRetransmissionFindingNamesTheLimit(t *testing.T) {
	retrans := []analysis.Retransmission{{Src: 1, Dst: 2, Step: 3, Op: "x", TimeNs: 9e8, LimitNs: 5e8}}
	fs := slowFindings(Detections{}, retrans, defaultStakeThresholds)
	require.Len(t, fs, 1)
	assert.Equal(t, "1 RDMA transfer(s) took over 0.5 s: packet loss and retransmission", fs[0].Title)
}
