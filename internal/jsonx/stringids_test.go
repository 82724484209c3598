package jsonx

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStringIDsNumberInOrderFirstSeen(t *testing.T) {
	var a StringIDs[uint16]
	require.Equal(t, uint16(0), a.ID("Notify_Wait"))
	require.Equal(t, uint16(1), a.IDOfBytes([]byte("Memcpy")))
	require.Equal(t, uint16(0), a.IDOfBytes([]byte("Notify_Wait")))
	require.Equal(t, uint16(1), a.ID("Memcpy"))
	require.Equal(t, []string{"Notify_Wait", "Memcpy"}, a.Values)

	var b StringIDs[uint16]
	b.ID("RDMASend")
	b.ID("Memcpy")
	b.ID("")
	// b's ids 0, 1, 2 as a's: RDMASend and "" are new to a, numbered after its own.
	require.Equal(t, []uint16{2, 1, 3}, a.Merge(&b))
	require.Equal(t, []string{"Notify_Wait", "Memcpy", "RDMASend", ""}, a.Values)
	require.Empty(t, a.Merge(&StringIDs[uint16]{}))
}
