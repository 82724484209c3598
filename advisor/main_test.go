package advisor_test

import (
	"testing"

	"github.com/hcclprof/hcclprof/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
