package etcdexplore_test

import (
	"testing"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/internal/tmpguard"
)

// stopping runs the tests, then stops the cluster they share
// (etcdserver.SharedT).
type stopping struct{ m *testing.M }

func (s stopping) Run() int {
	defer etcdserver.StopShared()
	return s.m.Run()
}

func TestMain(m *testing.M) { tmpguard.Main(stopping{m}) }
