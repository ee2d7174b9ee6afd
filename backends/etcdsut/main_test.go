package etcdsut_test

import (
	"os"
	"testing"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestMain stops the cluster the package's tests share (etcdserver.SharedT).
func TestMain(m *testing.M) {
	code := build.Wrap(m).Run()
	etcdserver.StopShared()
	os.Exit(code)
}
