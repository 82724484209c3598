package units

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	assert.Equal(t, "1 step", Count(1, "step"))
	assert.Equal(t, "2 steps", Count(2, "step"))
	assert.Equal(t, "0 problems", Count(0, "problem"))
	assert.Equal(t, "1 copy", countOf(1, "copy", "copies"))
	assert.Equal(t, "3 copies", countOf(3, "copy", "copies"))
}
