package ranklist

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		ranks []int
		want  string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{0, 1}, "0-1"},
		{[]int{7, 6, 5, 4, 3, 2, 1, 0}, "0-7"},
		{[]int{0, 2, 4, 6, 2}, "0, 2, 4, 6"},
		{[]int{15, 0, 1, 2, 8, 9, 10, 12}, "0-2, 8-10, 12, 15"},
	} {
		in := append([]int(nil), tc.ranks...)
		assert.Equal(t, tc.want, Format(tc.ranks), "%v", tc.ranks)
		assert.Equal(t, in, tc.ranks, "the input is not modified")
	}
}
