package redischeck

import (
	"github.com/tollgate/tollgate/internal/testwait"
	"testing"

	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/tmpguard"
)

// TestMain fails the tests when they leave anything in $TMPDIR. The
// parallel tests, each on servers of its own, mostly wait out faults and
// failovers: eight run at once.
func TestMain(m *testing.M) {
	testwait.Parallel(8)
	tmpguard.Main(build.Wrap(m))
}
