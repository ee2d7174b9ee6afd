package redisserver

import (
	"os"
	"testing"

	"github.com/tollgate/tollgate/internal/testwait"
)

// TestMain: the parallel tests, each on servers of its own, mostly wait on
// them (a replica's sync, a pause, an fsync): eight run at once.
func TestMain(m *testing.M) {
	testwait.Parallel(8)
	os.Exit(m.Run())
}
