package tokenbucket_test

import (
	"github.com/tollgate/tollgate/internal/testwait"
	"os"
	"testing"

	"github.com/tollgate/tollgate/backends/etcdserver"
)

// TestMain stops the cluster the package's tests share (etcdserver.SharedT).
// The parallel tests mostly wait for the cluster's commits: eight run at
// once.
func TestMain(m *testing.M) {
	testwait.Parallel(8)
	code := m.Run()
	etcdserver.StopShared()
	os.Exit(code)
}
