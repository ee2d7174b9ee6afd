package redisserver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a running Redis Cluster on loopback: Primaries[i] serves the
// i-th equal share of the 16384 hash slots, and Replicas[i] replicates it
// (CLUSTER REPLICATE), so the cluster itself promotes Replicas[i] when
// Primaries[i] fails for longer than the node timeout (Adopt swaps the
// two back into their places). Every node is a Server, with the faults a
// Server has (Pause, Crash, Restart).
type Cluster struct {
	Primaries, Replicas []*Server
	// NodeTimeout is cluster-node-timeout: how long a node may be
	// unreachable before the others mark it failed.
	NodeTimeout time.Duration

	links *nodeLinks // ClusterThroughProxies: the nodes' proxies
}

// StartCluster starts a cluster of primaries primaries (1 to 16), each with
// one replica, in new temporary directories under parent, with the given
// node timeout (at least 100 ms), and returns once every node sees the
// whole cluster, the cluster's state is ok on every node, and every replica
// holds its primary's writes. On error nothing is left running.
//
// With ClusterThroughProxies every node is reached through proxies of its
// own (Isolate, Heal).
func StartCluster(parent string, primaries int, nodeTimeout time.Duration, opts ...ClusterOption) (*Cluster, error) {
	var cc clusterConfig
	for _, o := range opts {
		o(&cc)
	}
	if primaries < 1 || primaries > 16 {
		return nil, fmt.Errorf("redisserver: StartCluster: primaries %d must be in 1..16", primaries)
	}
	if nodeTimeout < 100*time.Millisecond {
		return nil, fmt.Errorf("redisserver: StartCluster: node timeout %v must be at least 100ms", nodeTimeout)
	}
	c := &Cluster{NodeTimeout: nodeTimeout}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	if err := c.startNodes(parent, primaries, cc); err != nil {
		return nil, err
	}
	for i, p := range c.Primaries {
		lo, hi := i*16384/primaries, (i+1)*16384/primaries-1
		if _, err := p.Query("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return nil, err
		}
	}
	if err := c.meetAll(cc); err != nil {
		return nil, err
	}
	if err := c.replicateAll(); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// startNodes starts the cluster's primaries and their replicas (one
// each), behind proxies when cc says so.
func (c *Cluster) startNodes(parent string, primaries int, cc clusterConfig) error {
	for i := 0; i < 2*primaries; i++ {
		bus, err := freePort()
		if err != nil {
			return err
		}
		s, err := start(parent, config{busPort: bus, nodeTimeout: c.NodeTimeout})
		if err != nil {
			return err
		}
		if i < primaries {
			c.Primaries = append(c.Primaries, s)
		} else {
			c.Replicas = append(c.Replicas, s)
		}
	}
	if cc.proxied {
		return c.proxyNodes()
	}
	return nil
}

// meetAll introduces every node to every other (CLUSTER MEET of each node
// it follows in Nodes) and waits until every node knows every other. A
// node met by the first alone learns of the others by gossip, a second or
// more later (1.0-3.8 s here, against 0.2 s met by each); either way a
// primary calls the cluster ok no sooner than 2 s after it started (Redis's
// CLUSTER_WRITABLE_DELAY), which replicateAll waits out.
func (c *Cluster) meetAll(cc clusterConfig) error {
	nodes := c.Nodes()
	meet := func(s, to *Server) error {
		_, port, _ := strings.Cut(to.Addr, ":")
		bus := to.cfg.busPort
		if cc.proxied {
			port, bus = strconv.Itoa(to.cfg.announcePort), to.cfg.announceBusPort
		}
		_, err := s.Query("CLUSTER", "MEET", "127.0.0.1", port, strconv.Itoa(bus))
		return err
	}
	meetEarlier := func() error {
		for i, s := range nodes {
			for _, to := range nodes[:i] {
				if err := meet(s, to); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := meetEarlier(); err != nil {
		return err
	}
	// A handshake that does not complete within the node timeout is
	// dropped by the server and never retried (seen under a loaded -race
	// run: 4 of 6 nodes after 10 s), so while any node misses some of the
	// others every node meets those before it again, every two seconds; a
	// MEET of a node already known is discarded when its handshake answers.
	lastMeet := time.Now()
	want := len(nodes)
	return c.waitFor(30*time.Second, "every node to know every other", func(s *Server) (bool, string) {
		out, err := s.Query("CLUSTER", "NODES")
		if err != nil {
			return false, err.Error()
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		whole := len(lines) == want && !strings.Contains(out, "handshake") && !strings.Contains(out, "noaddr")
		if !whole && time.Since(lastMeet) > 2*time.Second {
			lastMeet = time.Now()
			_ = meetEarlier()
		}
		return whole, fmt.Sprintf("%d of %d nodes", len(lines), want)
	})
}

// replicateAll makes each replica replicate its primary, then waits until
// the cluster's state is ok with every slot served and every replica holds
// its primary's writes.
func (c *Cluster) replicateAll() error {
	for i, r := range c.Replicas {
		id, err := c.Primaries[i].NodeID()
		if err != nil {
			return err
		}
		if _, err := r.Query("CLUSTER", "REPLICATE", id); err != nil {
			return err
		}
	}
	if err := c.waitFor(20*time.Second, "cluster_state:ok with every slot served on every node", func(s *Server) (bool, string) {
		info, err := s.Query("CLUSTER", "INFO")
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384"), firstLine(info)
	}); err != nil {
		return err
	}
	for i, r := range c.Replicas {
		if err := r.WaitReplicated(c.Primaries[i], 10*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// StartClusterT is StartCluster for a test: it skips t without
// redis-server (fails it under CI=true) and stops the cluster when t ends.
func StartClusterT(t testing.TB, primaries int, nodeTimeout time.Duration) *Cluster {
	t.Helper()
	c, err := StartCluster(t.TempDir(), primaries, nodeTimeout)
	if errors.Is(err, ErrNotInstalled) {
		forTest(t, nil, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// Nodes are every node, the primaries first.
func (c *Cluster) Nodes() []*Server {
	return append(append([]*Server(nil), c.Primaries...), c.Replicas...)
}

// Addrs are the nodes' addresses, for go-redis's ClusterOptions.Addrs.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, s := range c.Nodes() {
		out = append(out, s.Addr)
	}
	return out
}

// Stop stops every node and removes their directories.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes() {
		s.Stop()
	}
	c.closeLinks()
}

// NodeID is the node's cluster id (CLUSTER MYID).
func (s *Server) NodeID() (string, error) { return s.Query("CLUSTER", "MYID") }

// SlotOwner is the address of the primary that serves slot, as node s
// sees it (CLUSTER SHARDS is not in Redis 7.0's every build, so CLUSTER
// NODES is read).
func (s *Server) SlotOwner(slot int) (addr, id string, err error) {
	nodes, err := s.Query("CLUSTER", "NODES")
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.Contains(f[2], "master") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, isRange := strings.Cut(r, "-")
			if strings.HasPrefix(r, "[") {
				continue // a slot being migrated or imported
			}
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil && a <= slot && slot <= b {
				addr, _, _ := strings.Cut(f[1], "@")
				if s.cluster != nil {
					if n := s.cluster.node(addr); n != nil {
						addr = n.Addr // the node's own, not the proxy it announces
					}
				}
				return addr, f[0], nil
			}
		}
	}
	return "", "", fmt.Errorf("redisserver: no primary serves slot %d in %s's view", slot, s.Addr)
}

// waitFor polls every node until done holds on each, or d passes.
func (c *Cluster) waitFor(d time.Duration, what string, done func(*Server) (bool, string)) error {
	deadline := time.Now().Add(d)
	for {
		all, last := true, ""
		for _, s := range c.Nodes() {
			if ok, detail := done(s); !ok {
				all, last = false, s.Addr+": "+detail
				break
			}
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redisserver: cluster: waited %v for %s, in vain (%s)", d, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// MoveSlot migrates slot from the primary that serves it to the primary
// to, as redis-cli --cluster reshard does: to imports it (CLUSTER SETSLOT …
// IMPORTING), its owner migrates it (… MIGRATING), its keys move batch at a
// time (MIGRATE … KEYS), with pause after each batch so that calls made
// meanwhile meet ASK (the keys they name have moved) and TRYAGAIN (a
// call's keys are split across the two nodes), and then every primary is
// told the slot is to's (… NODE). Calls made before a node hears of it
// meet MOVED.
func (c *Cluster) MoveSlot(slot int, to *Server, batch int, pause time.Duration) error {
	fromAddr, fromID, err := to.SlotOwner(slot)
	if err != nil {
		return err
	}
	from := c.node(fromAddr)
	if from == nil {
		return fmt.Errorf("redisserver: MoveSlot: %s serves slot %d and is not a node of this cluster", fromAddr, slot)
	}
	if from == to {
		return nil
	}
	toID, err := to.NodeID()
	if err != nil {
		return err
	}
	s := strconv.Itoa(slot)
	if _, err := to.Query("CLUSTER", "SETSLOT", s, "IMPORTING", fromID); err != nil {
		return err
	}
	if _, err := from.Query("CLUSTER", "SETSLOT", s, "MIGRATING", toID); err != nil {
		return err
	}
	host, port, _ := strings.Cut(to.Addr, ":")
	for {
		keys, err := from.QueryList("CLUSTER", "GETKEYSINSLOT", s, strconv.Itoa(batch))
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		args := append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys...)
		if _, err := from.Query(args...); err != nil {
			return err
		}
		time.Sleep(pause)
	}
	for _, p := range append([]*Server{to, from}, c.Primaries...) {
		if _, err := p.Query("CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
			return err
		}
	}
	return nil
}

// node is the node at addr, or nil.
func (c *Cluster) node(addr string) *Server {
	for _, s := range c.Nodes() {
		s.mu.Lock()
		announce := s.announce
		s.mu.Unlock()
		if s.Addr == addr || announce != "" && announce == addr {
			return s
		}
	}
	return nil
}

// Describe says what addr is to the cluster, for an error: a primary's or
// replica's address (its own, or the client or bus port it announces
// through a proxy), or no node's.
func (c *Cluster) Describe(addr string) string {
	for _, role := range []struct {
		name  string
		nodes []*Server
	}{{"primary", c.Primaries}, {"replica", c.Replicas}} {
		for i, s := range role.nodes {
			s.mu.Lock()
			announce, bus, abus := s.announce, s.cfg.busPort, s.cfg.announceBusPort
			s.mu.Unlock()
			switch addr {
			case s.Addr:
				return fmt.Sprintf("%s %d", role.name, i)
			case announce:
				return fmt.Sprintf("the client proxy of %s %d (%s)", role.name, i, s.Addr)
			case fmt.Sprintf("127.0.0.1:%d", bus):
				return fmt.Sprintf("the bus port of %s %d (%s)", role.name, i, s.Addr)
			case fmt.Sprintf("127.0.0.1:%d", abus):
				return fmt.Sprintf("the bus proxy of %s %d (%s)", role.name, i, s.Addr)
			}
		}
	}
	return "no node's address, nor a proxy's"
}

// KeySlot is the hash slot of key (CLUSTER KEYSLOT).
func (s *Server) KeySlot(key string) (int, error) {
	v, err := s.Query("CLUSTER", "KEYSLOT", key)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// Adopt takes in a failover of pair i that the cluster made with no fault
// injected, as it does when Primaries[i] goes unanswered on the bus for
// longer than the node timeout on a starved machine: it waits, d at most,
// until Replicas[i] is a primary of a whole cluster, Primaries[i]
// replicates it and every node sees it serve the pair's slots, then swaps
// the two, so that Primaries[i] is the pair's
// primary again. On error the pair is left as it was.
func (c *Cluster) Adopt(i int, d time.Duration) error {
	if i < 0 || i >= len(c.Primaries) {
		return fmt.Errorf("redisserver: Adopt: pair %d not in 0..%d", i, len(c.Primaries)-1)
	}
	p, r := c.Primaries[i], c.Replicas[i]
	deadline := time.Now().Add(d)
	if err := c.WaitPrimary(r, d); err != nil {
		return err
	}
	if err := c.WaitReplicaOf(p, r, time.Until(deadline)); err != nil {
		return err
	}
	// The other nodes learn of the failover by gossip, after the pair
	// itself: a caller that asks any node who serves the pair's slots
	// must hear the promoted replica (one asked a moment after the swap
	// heard the old primary under a loaded run).
	n := len(c.Primaries)
	lo, hi := i*16384/n, (i+1)*16384/n-1
	if err := c.waitFor(time.Until(deadline), fmt.Sprintf("every node to see %s serve slots %d-%d", r.Addr, lo, hi), func(s *Server) (bool, string) {
		for _, slot := range []int{lo, hi} {
			a, _, err := s.SlotOwner(slot)
			if err != nil {
				return false, err.Error()
			}
			if a != r.Addr {
				return false, fmt.Sprintf("slot %d at %s", slot, a)
			}
		}
		return true, ""
	}); err != nil {
		return err
	}
	c.Primaries[i], c.Replicas[i] = r, p
	return nil
}

// WaitPrimary waits until node s is a primary (a replica promoted by the
// cluster after its primary failed, or by CLUSTER FAILOVER) and its view of
// the cluster is whole again (cluster_state:ok, every slot served), or d
// passes.
func (c *Cluster) WaitPrimary(s *Server, d time.Duration) error {
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		repl, err := s.Info("replication")
		info, ierr := s.Query("CLUSTER", "INFO")
		switch {
		case err != nil:
			last = err.Error()
		case ierr != nil:
			last = ierr.Error()
		case repl["role"] != "master":
			last = "role:" + repl["role"]
		case !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384"):
			last = firstLine(info)
		default:
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("redisserver: cluster: %s not a primary of a whole cluster within %v (%s)", s.Addr, d, last)
}
