package parser

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// TestInOrderFollowsTheRanks: with several workers finishing out of order (the first
// ranks slowest), InOrder still sees the ranks one at a time in the cluster's order.
func TestInOrderFollowsTheRanks(t *testing.T) {
	var mu sync.Mutex
	var seen []*profile.Rank
	busy := 0
	c, err := LoadCluster([]string{"../fixtures/samples/demo-2server-8rank"}, LoadOptions{Workers: 4,
		OnRank: func(r *profile.Rank) { time.Sleep(time.Duration(8-r.Rank) * 5 * time.Millisecond) },
		InOrder: func(r *profile.Rank) {
			mu.Lock()
			busy++
			assert.Equal(t, 1, busy, "one rank at a time")
			seen = append(seen, r)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			busy--
			mu.Unlock()
		}})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 8)
	assert.Equal(t, c.Ranks, seen)
}
