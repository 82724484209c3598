package testkit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/fixtures/scenario"
)

// Every built-in scenario can be copied to be written again.
func TestCopyScenario(t *testing.T) {
	for _, name := range scenario.BuiltinNames() {
		sc, err := scenario.Builtin(name)
		require.NoError(t, err)
		cp := copyScenario(sc)
		require.NotNil(t, cp, name)
		assert.Equal(t, string(sc.JSON()), string(cp.JSON()), name)
		cp.Steps++
		assert.NotEqual(t, sc.Steps, cp.Steps, "a copy, not the test's own")
	}
}
