// Package testlong gates the tests that would take `go test ./...` past a
// minute on two cores: those that start clusters of servers, run mutation
// campaigns or fill a million keys. They run when TOLLGATE_LONG=1 or
// CI=true is set, so CI runs every one of them (through the README's test
// command, with -race where their package's goroutines run at once:
// scripts/test-lanes.sh), and a local run skips them, saying how to run
// them.
package testlong

import (
	"os"
	"testing"
)

// Enabled reports whether this run includes the long tests.
func Enabled() bool {
	return os.Getenv("TOLLGATE_LONG") == "1" || os.Getenv("CI") == "true"
}

// Skip skips t unless the long tests are enabled.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skip("a long test: run with TOLLGATE_LONG=1 (CI runs it)")
	}
}
