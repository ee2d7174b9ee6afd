package etcdcheck

import (
	"testing"

	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/tmpguard"
)

// TestMain runs the tests through the mutants' overlay (the soak's
// mutant test needs them) and fails them when they leave anything in
// $TMPDIR.
func TestMain(m *testing.M) { tmpguard.Main(build.Wrap(m)) }
