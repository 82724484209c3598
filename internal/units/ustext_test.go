package units

import (
	"math"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNsFromUsText(t *testing.T) {
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
		got, err := NsFromUsText(tc.in)
		if tc.wantErr {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// The trace reader's fast path reads what it accepts exactly as NsFromUsText does, and
// leaves the rest (signs, exponents, more than three decimals, too many digits) to it.
func TestNsFromPlainUsAgrees(t *testing.T) {
	for _, in := range []string{"1736408883732241.564", "17", "1.", "0.5", "9223372036854774.807", "9223372036854775.807",
		"9999999999999999", "99999999999999999", "1.2345", "-2.5", "1.5e3", ".5", "1 ", "", "1..2", "12a"} {
		ns, ok := NsFromPlainUs([]byte(in))
		want, err := NsFromUsText(in)
		if ok {
			require.NoError(t, err, in)
			assert.Equal(t, want, ns, in)
		}
	}
	for _, in := range []string{"1736408883732241.564", "17", "1.", "0.5", "9223372036854774"} {
		_, ok := NsFromPlainUs([]byte(in))
		assert.True(t, ok, in)
	}
	for _, in := range []string{"9223372036854775.807", "99999999999999999", "1.2345", "-2.5", "1.5e3", ".5", "1 ", ""} {
		_, ok := NsFromPlainUs([]byte(in))
		assert.False(t, ok, in)
	}
}

func FuzzNsFromUsText(f *testing.F) {
	for _, s := range []string{"1736408883732241.564", "17", "1.", "-2.5", "1.5e3", "0.0005", "9223372036854775.807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ns, ok := NsFromPlainUs([]byte(in))
		want, err := NsFromUsText(in)
		if ok && (err != nil || ns != want) {
			t.Fatalf("%q: fast path %d, NsFromUsText %d, %v", in, ns, want, err)
		}
	})
}

// The profiler's µs figures convert to the ns written, including the float reprs real
// step_trace_time.csv files carry; a value int64 ns cannot hold saturates so that the
// range check rejects it; text that is no number is refused.
func TestNsFromUsFigureText(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"8873.756000000001", 8_873_756, true}, // imagenet-2rank-level1 rank 0's Computing
		{"4028.6750000000175", 4_028_675, true},
		{"231290.09999999995", 231_290_100, true},
		{"1726054679554437.8", 1_726_054_679_554_437_800, true}, // torch_npu's epoch Preparing
		{"1e300", math.MaxInt64, true},
		{"-1e300", math.MinInt64, true},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"x", 0, false},
	}
	for _, tc := range tests {
		got, ok := NsFromUsFigureText(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}
