package redisserver

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/testlong"
)

// TestClusterIsolate: a primary cut from every other node (bus and
// replication) while this process still reaches it through its proxy:
// the others promote its replica, the isolated primary stops serving
// (cluster_state:fail), and once healed it rejoins as a replica of the new
// primary with the cluster whole again; until the cut, no proxy looks a
// dialler up in /proc. Six nodes behind proxies and some
// 5 s of CPU: it runs with -long.
func TestClusterIsolate(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	// A node timeout of 2 s: through the proxies, under CI's -race run, the
	// handshakes did not complete within 1 s (a node knew 1 of 6 after 30 s).
	// The cluster is this test's setup, not what it checks, so a cluster
	// that does not form is started once more before the test fails.
	c, err := StartCluster(t.TempDir(), 3, 2*time.Second, ClusterThroughProxies())
	if err != nil && err != ErrNotInstalled {
		t.Logf("a first cluster did not form: %v", err)
		c, err = StartCluster(t.TempDir(), 3, 2*time.Second, ClusterThroughProxies())
	}
	if err != nil {
		if err == ErrNotInstalled {
			forTest(t, nil, err)
		}
		t.Fatal(err)
	}
	defer c.Stop()
	p, r := c.Primaries[0], c.Replicas[0]
	nodes, err := r.Query("CLUSTER", "NODES")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(nodes, p.announce) {
		t.Fatalf("the nodes do not know the primary by its proxy %s:\n%s", p.announce, nodes)
	}
	// With nothing cut yet, no dialler was looked up in /proc.
	c.links.mu.Lock()
	looked, unnamed := c.links.byNode+c.links.byClient+c.links.unknown, c.links.unnamed
	c.links.mu.Unlock()
	if looked != 0 || unnamed == 0 {
		t.Fatalf("before any cut: %s; want every connection forwarded unnamed", c.LinkCounts())
	}
	if err := c.Isolate(p); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitPrimary(r, 10*c.NodeTimeout); err != nil {
		t.Fatalf("the replica of the isolated primary was not promoted: %v", err)
	}
	// A client still reaches the isolated primary, through its proxy. A
	// cut client would read an end of file (the proxy closes what it
	// cuts) at once; the deadline only bounds a machine slow enough that
	// the proxy's lookup of the dialler in /proc and the reply take long
	// (CI's -race lanes once took more than 2 s).
	t0 := time.Now()
	nc, err := net.DialTimeout("tcp", p.announce, 10*c.NodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(10 * c.NodeTimeout))
	if _, err := nc.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := nc.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "+PONG") {
		t.Fatalf("a client of the isolated primary, after %v: %q, %v (%s)", time.Since(t0).Round(time.Millisecond), buf[:n], err, c.LinkCounts())
	}
	nc.Close()
	waitState(t, p, "fail", 10*c.NodeTimeout) // the isolated primary stops serving
	t.Log(c.LinkCounts())
	if err := c.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := c.waitFor(30*time.Second, "the old primary to rejoin as a replica with the cluster whole", func(s *Server) (bool, string) {
		info, err := s.Query("CLUSTER", "INFO")
		if err != nil {
			return false, err.Error()
		}
		if s == p {
			repl, err := s.Info("replication")
			if err != nil || repl["role"] != "slave" {
				return false, "role " + repl["role"]
			}
		}
		return strings.Contains(info, "cluster_state:ok"), firstLine(info)
	}); err != nil {
		t.Fatal(err)
	}
	// Adopt swaps the pair's places; the proxies keep cutting by node, so
	// isolating the new Primaries[0] cuts r, not the p now in its place.
	if err := c.Adopt(0, 10*c.NodeTimeout); err != nil {
		t.Fatal(err)
	}
	if err := c.Isolate(c.Primaries[0]); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Heal() }()
	waitState(t, r, "fail", 10*c.NodeTimeout)
}

// waitState waits until node s's cluster_state is state, or d passes.
func waitState(t *testing.T, s *Server, state string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		info, err := s.Query("CLUSTER", "INFO")
		if err == nil && strings.Contains(info, "cluster_state:"+state) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: cluster_state not %s within %v: %s", s.Addr, state, d, firstLine(info))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
