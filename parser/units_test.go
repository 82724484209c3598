package parser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMicrosToNs(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"1736408883732241.564", 1736408883732241564, false}, // float64 would lose the last ns
		{"1736408883732241.563\t", 1736408883732241563, false},
		{"56635864652.490005", 56635864652490, false}, // more than 3 decimals: rounded to the ns
		{"56635868946.3", 56635868946300, false},
		{"17", 17000, false},
		{"-2.5", -2500, false},
		{"0.0005", 1, false},
		{"1.5e3", 1500000, false},
		{"", 0, true},
		{"abc", 0, true},
		{"99999999999999999.0", 0, true},
	}
	for _, tc := range tests {
		got, err := MicrosToNs(tc.in)
		if tc.wantErr {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}
