package advisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownVariables(t *testing.T) {
	assert.Empty(t, UnknownVariables("export HCCL_BUFFSIZE=400 and HCCL_ALGO=\"allreduce=level0:NA;level1:NHR\""))
	assert.Equal(t, []string{"HCCL_OP_BASE_FUSION_MODE", "HCCL_ROCE_QP_NUM"},
		UnknownVariables("set HCCL_ROCE_QP_NUM=4 or HCCL_OP_BASE_FUSION_MODE=1, HCCL_ROCE_QP_NUM again"))
}

// TestNotRealNamesAreNotKnobs keeps the allowlist and the deny list apart.
func TestNotRealNamesAreNotKnobs(t *testing.T) {
	for name := range notReal {
		_, ok := LookupKnob(name)
		assert.False(t, ok, name)
	}
}

// TestSeedInventionsListed checks every HCCL_* name that docs/costmodel.md §2.5 lists
// as the seed article's invention is in notReal and is not a knob.
func TestSeedInventionsListed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "costmodel.md"))
	require.NoError(t, err)
	text := string(b)
	start := strings.Index(text, "### 2.5 The seed article's variable names, checked")
	end := strings.Index(text, "## 3. Costs")
	require.True(t, start >= 0 && end > start, "docs/costmodel.md §2.5 not found")
	// The first column of §2.5's table is the seed article's names.
	n := 0
	for _, line := range strings.Split(text[start:end], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.Contains(cells[1], "HCCL_") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		n++
		_, isKnob := LookupKnob(name)
		assert.False(t, isKnob, "%s is the seed article's and must not be a knob", name)
		_, listed := notReal[name]
		assert.True(t, listed, "%s is named by the seed article but not in notReal", name)
	}
	assert.GreaterOrEqual(t, n, 15, "the table of §2.5 was found")
}
