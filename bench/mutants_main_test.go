package bench

import (
	"testing"

	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestMain runs the tests that need the mutants in a build with their
// overlay when this one was built without it (internal/mutants/build).
func TestMain(m *testing.M) { build.Main(m) }
