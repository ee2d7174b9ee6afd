package redisserver

import (
	"testing"

	"github.com/tollgate/tollgate/backends/throwaway"
)

// StartT starts a server for t and stops it when t ends. Without
// redis-server it skips t, or fails it when CI=true.
func StartT(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(t.TempDir(), opts...)
	return forTest(t, s, err)
}

func forTest(t testing.TB, s *Server, err error) *Server {
	t.Helper()
	throwaway.ForTest(t, err, ErrNotInstalled, "redis-server")
	t.Cleanup(s.Stop)
	return s
}

// StartReplicaT is StartReplica for a test: it fails t on an error and
// stops the replica when t ends.
func StartReplicaT(t testing.TB, s *Server, opts ...Option) *Server {
	t.Helper()
	r, err := s.StartReplica(opts...)
	return forTest(t, r, err)
}
