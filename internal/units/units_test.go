package units

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSizeReadsMBAsHCCLDoes(t *testing.T) {
	for in, want := range map[string]int64{
		"400MB": 400 << 20, "400 MiB": 400 << 20, "400mb": 400 << 20, // HCCL_BUFFSIZE=400
		"25MB":   25 << 20, // bucket_cap_mb=25
		"256MiB": 256 << 20, "64 MiB": 64 << 20, "1GiB": 1 << 30, "1.5GB": 3 << 29, "2KiB": 2048, "2KB": 2048,
		"1TiB": 1 << 40, "1TB": 1 << 40, "4096": 4096, "10B": 10, "0": 0, " 7 ": 7,
	} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "x", "MB", "-1MiB", "1PiB", "NaNMB", "InfGB", "1e30GB"} {
		_, err := ParseSize(bad)
		assert.Error(t, err, bad)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{256 << 20: "256 MiB", 1 << 30: "1 GiB", 3 << 29: "1536 MiB",
		17713600: "16.89 MiB", 1536: "1.5 KiB", 1023: "1023 B", 0: "0 B"} {
		assert.Equal(t, want, FormatBytes(n), n)
	}
	for _, n := range []int64{200 << 20, 1 << 30, 1536} {
		back, err := ParseSize(FormatBytes(n))
		require.NoError(t, err)
		assert.Equal(t, n, back, "FormatBytes and ParseSize round-trip %d", n)
	}
}

func TestDurations(t *testing.T) {
	assert.Equal(t, "4 s", FormatSeconds(4e9))
	assert.Equal(t, "0.5 s", FormatSeconds(5e8))
	assert.Equal(t, int64(1500), NsFromUs(1.5))
	assert.Equal(t, int64(2), NsFromUs(0.0015), "rounds to the nearest ns")
	assert.Equal(t, int64(12_345_679), nsFromMs(12.3456789))
	assert.Equal(t, 1.5, Us(1500))
	assert.Equal(t, 0.0015, Ms(1500))
	assert.Equal(t, "12.346", FormatMs(12_345_679))
	assert.Equal(t, 2.0, GBps(4e9, 2e9))
	assert.Equal(t, 0.0, GBps(1, 0), "no time: no bandwidth")
	assert.Equal(t, int64(16_000_000), BytesFromDecimalMB(16))
	assert.Equal(t, int64(200<<20), bytesFromMB(200))
}
