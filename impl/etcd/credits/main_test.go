package credits_test

import (
	"os"
	"testing"

	"github.com/tollgate/tollgate/backends/etcdserver"
)

// TestMain stops the cluster the package's tests share (etcdserver.SharedT).
func TestMain(m *testing.M) {
	code := m.Run()
	etcdserver.StopShared()
	os.Exit(code)
}
