package etcdserver

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/backends/netproxy"
)

// proxy stands in front of one member's peer listener: the member
// advertises the proxy's address as its peer URL, so every other member
// dials the proxy. It is a netproxy.Proxy that learns each connection's
// dialler (see sender) and refuses it while the link between the two
// members is cut; Cluster.enforce makes it close the connections of links
// cut later.
type proxy struct {
	*netproxy.Proxy

	mu sync.Mutex
	// how many connections learnt their sender from the header, from
	// /proc, or not at all, and how many were forwarded with no sender
	// named (no cut was in force that needed it)
	byHeader, byProc, unknown, unnamed int
}

func newProxy(c *Cluster, to int, target string) (*proxy, error) {
	p := &proxy{}
	np, err := netproxy.New(target, netproxy.Options{
		Identify: func(nc net.Conn) ([]byte, int, error) {
			h, err := head(nc)
			if err != nil {
				return nil, 0, err
			}
			return h, p.named(c, h), nil
		},
		Resolve: func(ncs []net.Conn) []int { return p.fromProc(c, ncs) },
		Cut:     func(from int) bool { return c.blocked(from, to) },
	})
	if err != nil {
		return nil, fmt.Errorf("etcdserver: a peer proxy: %w", err)
	}
	p.Proxy = np
	return p, nil
}

func (p *proxy) url() string { return "http://" + p.Addr() }

// maxHead bounds the bytes read to find the end of a request's headers.
const maxHead = 64 << 10

// head reads the start of a connection up to the end of its first
// request's headers, and returns what it read.
func head(nc net.Conn) ([]byte, error) {
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = nc.SetReadDeadline(time.Time{}) }()
	var h []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(h, []byte("\r\n\r\n")) {
		if len(h) > maxHead {
			return h, fmt.Errorf("no end of headers in the first %d bytes", len(h))
		}
		n, err := nc.Read(buf)
		h = append(h, buf[:n]...)
		if err != nil {
			return h, err
		}
	}
	return h, nil
}

// serverFrom is the value of the X-Server-From header in the request
// headers h (which etcd's rafthttp sets to the sending member's id in hex),
// or 0.
func serverFrom(h []byte) uint64 {
	end := bytes.Index(h, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(h)
	}
	for _, line := range strings.Split(string(h[:end]), "\r\n")[1:] {
		name, value, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "X-Server-From") {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		if err != nil {
			return 0
		}
		return id
	}
	return 0
}

// named is the index of the member that X-Server-From in the headers h
// names (which etcd's rafthttp sets to the sending member's id in hex), or
// netproxy.Unresolved: a request that names no member known yet (the
// prober's, and every one while the cluster forms, before learnIDs) is
// named by its process (fromProc) only if a cut makes it matter.
func (p *proxy) named(c *Cluster, h []byte) int {
	if i := c.indexOfID(serverFrom(h)); i >= 0 {
		p.count(&p.byHeader)
		return i
	}
	p.count(&p.unnamed)
	return netproxy.Unresolved
}

// fromProc is, for each of ncs, the index of the member process holding
// its other end, or −1 (netproxy.Diallers: it reads the kernel's whole
// table of TCP sockets, once for all of them).
func (p *proxy) fromProc(c *Cluster, ncs []net.Conn) []int {
	out := make([]int, len(ncs))
	for k, pid := range netproxy.Diallers(ncs, c.pids()) {
		out[k] = -1
		if pid != 0 {
			out[k] = c.indexOfPid(pid)
		}
		if out[k] >= 0 {
			p.count(&p.byProc)
		} else {
			p.count(&p.unknown)
		}
	}
	return out
}

func (p *proxy) count(n *int) {
	p.mu.Lock()
	*n++
	p.mu.Unlock()
}

// counts says how many of the proxy's connections learnt their sender
// from the header, from /proc, or not at all, how many it left unnamed,
// and how many it forwards now.
func (p *proxy) counts() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("its peer proxy named the sender of %d connections by header, %d from /proc, %d not at all, left %d unnamed (nothing cut needed it), and forwards %d now", p.byHeader, p.byProc, p.unknown, p.unnamed, p.Links())
}
