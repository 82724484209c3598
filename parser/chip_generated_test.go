package parser_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

// TestGenerated910AReadsAs910A writes a 910A cluster in every format and checks that
// each carries the chip fact a real 910A profile carries (text: the raw PROF_*'s
// info.json; db: NPU_INFO Ascend910A; msprof: info.json) and that the analysis holds
// the links against 910A's peaks; an A2 cluster reads as A2 from the same facts.
// -short checks each product and each format once.
func TestGenerated910AReadsAs910A(t *testing.T) {
	const info910A = "info.json ai_core_num 32, aiv_num 0, platform_version 1"
	const infoA2 = "info.json ai_core_num 24, aiv_num 48, platform_version 5"
	for _, tc := range []struct {
		product string
		format  render.Format
		want    string
		source  string
		short   bool
	}{
		{"910a", render.FormatText, "910A", info910A, true},
		{"910a", render.FormatDB, "910A", "NPU_INFO Ascend910A", false},
		{"910a", render.FormatMsprof, "910A", info910A, false},
		{"a2", render.FormatText, "A2", infoA2, false},
		{"a2", render.FormatDB, "A2", "NPU_INFO Ascend910B", false},
		{"a2", render.FormatMsprof, "A2", infoA2, true},
		{"a3", render.FormatDB, "A3", "NPU_INFO Ascend910_9392", true},
	} {
		t.Run(tc.product+"/"+string(tc.format), func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("-short: each product and each format once")
			}
			sc := testkit.Builtin(t, "seed-8card-bert")
			sc.Product = tc.product
			require.NoError(t, sc.Normalize())
			a := testkit.Analyse(t, sc, tc.format)
			for _, r := range a.Cluster.Ranks {
				assert.Empty(t, r.Problems, "rank %d", r.Rank)
			}
			hw := a.Result.Communication.Hardware
			assert.Equal(t, tc.want, hw.Name)
			assert.Equal(t, tc.source, hw.Source)
			assert.False(t, hw.Assumed)
		})
	}
}
