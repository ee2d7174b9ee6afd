package redisserver

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/backends/netproxy"
)

// Partitions inside a Redis Cluster. A cluster started ClusterThroughProxies
// puts two proxies (backends/netproxy) in front of every node, one on its
// client port and one on its cluster bus port, and the node announces the
// proxies' ports (cluster-announce-port, cluster-announce-bus-port): every
// other node reaches it through them, on the bus and for replication
// (a replica dials its primary's announced address), and so do the
// clients that follow the cluster's slot map. While a node is isolated,
// each proxy learns who dialled each connection from the kernel's socket
// tables (netproxy.Diallers): a node, this process (a client), or neither;
// with nothing cut it forwards every connection unnamed, as that lookup
// reads the kernel's whole table of TCP sockets.
//
// Isolate cuts a node from every other node, both ways (their connections
// reset, new ones refused, as after a partition long enough for TCP to
// give up), while clients still reach every node: clients on both sides.
// Heal mends every link.

// ClusterOption configures StartCluster.
type ClusterOption func(*clusterConfig)

type clusterConfig struct{ proxied bool }

// ClusterThroughProxies starts the cluster with every node behind proxies
// of its own, so that Isolate can cut it from the others.
func ClusterThroughProxies() ClusterOption { return func(c *clusterConfig) { c.proxied = true } }

// Dialler tags of a proxied node's connections that are no node's.
const (
	dialClient  = -1 // this process: the test's clients
	dialUnknown = -2 // no node's, and not this process's (or not found)
)

// nodeLinks is what a proxied cluster keeps to cut its nodes apart.
type nodeLinks struct {
	mu sync.Mutex
	// nodes are the cluster's nodes in Nodes()'s order when the proxies
	// were made: the proxies' and isolated's indices, which stay the same
	// when Adopt swaps a pair's roles
	nodes    []*Server
	isolated map[int]bool // by index in nodes
	proxies  []*netproxy.Proxy
	// connections accepted, by who dialled them: a node, this process, or
	// neither as far as the kernel's tables told, or not named at all
	// (nothing was cut)
	byNode, byClient, unknown, unnamed int
}

// LinkCounts says how many connections the proxies of a proxied cluster
// accepted from nodes, from this process and from diallers they could not
// tell (cut while a node is isolated), and how many they forwarded with
// no dialler named (nothing cut).
func (c *Cluster) LinkCounts() string {
	if c.links == nil {
		return "no proxies"
	}
	c.links.mu.Lock()
	defer c.links.mu.Unlock()
	return fmt.Sprintf("the proxies accepted %d connections from nodes, %d from clients, %d from diallers not told, and %d not named (nothing cut)", c.links.byNode, c.links.byClient, c.links.unknown, c.links.unnamed)
}

func (c *Cluster) count(n *int) {
	c.links.mu.Lock()
	*n++
	c.links.mu.Unlock()
}

// proxyNodes puts the proxies in front of every node and has each
// announce them; its nodes must not have met yet.
func (c *Cluster) proxyNodes() error {
	c.links = &nodeLinks{nodes: c.Nodes(), isolated: map[int]bool{}}
	for i, s := range c.links.nodes {
		s.cluster = c
		opts := netproxy.Options{Identify: c.unnamed, Resolve: c.identify, Cut: func(from int) bool { return c.blocked(from, i) }}
		client, err := netproxy.New(s.Addr, opts)
		if err != nil {
			return fmt.Errorf("redisserver: a node's proxy: %w", err)
		}
		c.links.proxies = append(c.links.proxies, client)
		bus, err := netproxy.New(fmt.Sprintf("127.0.0.1:%d", s.cfg.busPort), opts)
		if err != nil {
			return fmt.Errorf("redisserver: a node's bus proxy: %w", err)
		}
		c.links.proxies = append(c.links.proxies, bus)
		cp, bp := port(client.Addr()), port(bus.Addr())
		s.mu.Lock()
		s.cfg.announcePort, s.cfg.announceBusPort = cp, bp
		s.announce = client.Addr()
		s.mu.Unlock()
		for _, kv := range [][2]string{{"cluster-announce-ip", "127.0.0.1"}, {"cluster-announce-port", strconv.Itoa(cp)}, {"cluster-announce-bus-port", strconv.Itoa(bp)}} {
			if _, err := s.Query("CONFIG", "SET", kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

func port(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// unnamed tags every connection a proxy accepts netproxy.Unresolved: the
// proxy asks identify only while a node is isolated.
func (c *Cluster) unnamed(net.Conn) ([]byte, int, error) {
	c.count(&c.links.unnamed)
	return nil, netproxy.Unresolved, nil
}

// identify is, for each connection of ncs a proxy accepted, the index of
// the node that dialled it, dialClient or dialUnknown (netproxy.Diallers:
// the kernel's tables read once for all of them).
func (c *Cluster) identify(ncs []net.Conn) []int {
	nodes := c.links.nodes
	pids := make([]int, 0, len(nodes)+1)
	for _, s := range nodes {
		s.mu.Lock()
		if s.proc != nil {
			pids = append(pids, s.proc.Cmd.Process.Pid)
		}
		s.mu.Unlock()
	}
	pids = append(pids, os.Getpid())
	out := make([]int, len(ncs))
	for k, pid := range netproxy.Diallers(ncs, pids) {
		out[k] = c.nodeOf(pid)
	}
	return out
}

// nodeOf tags the dialler pid (0 if none was found): the index of the node
// whose process it is, dialClient for this process, or dialUnknown.
func (c *Cluster) nodeOf(pid int) int {
	if pid == os.Getpid() {
		c.count(&c.links.byClient)
		return dialClient
	}
	for i, s := range c.links.nodes {
		s.mu.Lock()
		match := s.proc != nil && s.proc.Cmd.Process.Pid == pid
		s.mu.Unlock()
		if pid != 0 && match {
			c.count(&c.links.byNode)
			return i
		}
	}
	c.count(&c.links.unknown)
	return dialUnknown
}

// blocked reports whether a connection from the dialler tagged from to
// node to is cut: while a node is isolated, every link between it and
// another node is, and a dialler that could not be told is treated as a
// node (cut); clients are never cut. For netproxy.Unresolved it reports
// whether any node is isolated: the dialler must then be named.
func (c *Cluster) blocked(from, to int) bool {
	c.links.mu.Lock()
	defer c.links.mu.Unlock()
	switch {
	case len(c.links.isolated) == 0 || from == dialClient:
		return false
	case from == dialUnknown || from == netproxy.Unresolved:
		return true
	}
	return c.links.isolated[from] != c.links.isolated[to]
}

// Isolate cuts node s from every other node of the cluster, both ways, on
// the cluster bus and for replication, while clients still reach it. The
// cluster must have been started ClusterThroughProxies.
func (c *Cluster) Isolate(s *Server) error {
	if c.links == nil {
		return fmt.Errorf("redisserver: Isolate: the cluster was not started ClusterThroughProxies")
	}
	i := c.index(s)
	if i < 0 {
		return fmt.Errorf("redisserver: Isolate: %s is not a node of the cluster", s.Addr)
	}
	c.links.mu.Lock()
	c.links.isolated[i] = true
	c.links.mu.Unlock()
	for _, p := range c.links.proxies {
		p.Enforce()
	}
	return nil
}

// Heal mends every link Isolate cut: the nodes reconnect on their own.
func (c *Cluster) Heal() error {
	if c.links == nil {
		return fmt.Errorf("redisserver: Heal: the cluster was not started ClusterThroughProxies")
	}
	c.links.mu.Lock()
	c.links.isolated = map[int]bool{}
	c.links.mu.Unlock()
	return nil
}

func (c *Cluster) index(s *Server) int {
	for i, n := range c.links.nodes {
		if n == s {
			return i
		}
	}
	return -1
}

// closeLinks closes the proxies.
func (c *Cluster) closeLinks() {
	if c.links == nil {
		return
	}
	for _, p := range c.links.proxies {
		p.Close()
	}
}

// WaitReplicaOf waits until node s replicates node p (a primary that lost
// its slots rejoins as its successor's replica) and every node sees the
// cluster whole, or d passes.
func (c *Cluster) WaitReplicaOf(s, p *Server, d time.Duration) error {
	id, err := p.NodeID()
	if err != nil {
		return err
	}
	return c.waitFor(d, fmt.Sprintf("%s to replicate %s with the cluster whole", s.Addr, p.Addr), func(n *Server) (bool, string) {
		info, err := n.Query("CLUSTER", "INFO")
		if err != nil {
			return false, err.Error()
		}
		if n == s {
			nodes, err := s.Query("CLUSTER", "NODES")
			if err != nil {
				return false, err.Error()
			}
			for _, line := range strings.Split(nodes, "\n") {
				if f := strings.Fields(line); len(f) > 3 && strings.Contains(f[2], "myself") {
					if !strings.Contains(f[2], "slave") || f[3] != id {
						return false, "myself: " + strings.Join(f[:4], " ")
					}
				}
			}
		}
		return strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384"), firstLine(info)
	})
}
