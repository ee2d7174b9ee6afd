package main

import (
	"os"
	"testing"

	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestMain runs the tests that need the mutants in a build with their
// overlay when this one was built without it (internal/mutants/build).
// Started with $TOLLGATE_TEST_AS_COMMAND=1, the test binary is the command
// itself (the workers of explore -procs, TestExploreProcs).
func TestMain(m *testing.M) {
	if os.Getenv("TOLLGATE_TEST_AS_COMMAND") == "1" {
		main()
	}
	build.Main(m)
}
