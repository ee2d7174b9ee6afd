package redischeck

import (
	"testing"

	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/tmpguard"
)

// TestMain fails the tests when they leave anything in $TMPDIR.
func TestMain(m *testing.M) { tmpguard.Main(build.Wrap(m)) }
