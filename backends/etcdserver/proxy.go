package etcdserver

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proxy stands in front of one member's peer listener: the member
// advertises the proxy's address as its peer URL, so every other member
// dials the proxy. For each connection the proxy learns the dialler (see
// sender), then forwards the bytes it read and pipes both ways, unless the
// link between the two members is cut; Cluster.enforce makes it close the
// connections of links cut later.
type proxy struct {
	c      *Cluster
	to     int    // the index of the member behind it
	target string // that member's peer listener
	l      net.Listener

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	// how many connections learnt their sender from the header, from
	// /proc, or not at all
	byHeader, byProc, unknown int
}

// conn is one forwarded connection.
type conn struct {
	from             int // the dialling member's index, −1 when unknown
	client, upstream net.Conn
}

func newProxy(c *Cluster, to int, target string) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("etcdserver: a peer proxy: %w", err)
	}
	p := &proxy{c: c, to: to, target: target, l: l, conns: map[*conn]struct{}{}}
	go p.accept()
	return p, nil
}

func (p *proxy) url() string { return "http://" + p.l.Addr().String() }

func (p *proxy) accept() {
	for {
		nc, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.serve(nc)
	}
}

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

// sender is the index of the member that dialled nc, whose first request
// has headers h, or −1: the member named by X-Server-From, or else the
// member process holding the other end of nc.
func (p *proxy) sender(nc net.Conn, h []byte) int {
	if i := p.c.indexOfID(serverFrom(h)); i >= 0 {
		p.count(&p.byHeader)
		return i
	}
	remote, rok := nc.RemoteAddr().(*net.TCPAddr)
	local, lok := nc.LocalAddr().(*net.TCPAddr)
	if rok && lok {
		if pid := socketOwner(remote.Port, local.Port, p.c.pids()); pid != 0 {
			if i := p.c.indexOfPid(pid); i >= 0 {
				p.count(&p.byProc)
				return i
			}
		}
	}
	p.count(&p.unknown)
	return -1
}

func (p *proxy) count(n *int) {
	p.mu.Lock()
	*n++
	p.mu.Unlock()
}

func (p *proxy) serve(nc net.Conn) {
	h, err := head(nc)
	if err != nil {
		nc.Close()
		return
	}
	from := p.sender(nc, h)
	if p.c.blocked(from, p.to) {
		nc.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		nc.Close()
		return
	}
	k := &conn{from: from, client: nc, upstream: up}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		k.close()
		return
	}
	p.conns[k] = struct{}{}
	p.mu.Unlock()
	// A cut made between the check above and the registration did not
	// find this connection: check again now that enforce would.
	if p.c.blocked(from, p.to) {
		p.drop(k)
		return
	}
	if _, err := up.Write(h); err != nil {
		p.drop(k)
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, nc); done <- struct{}{} }()
	go func() { _, _ = io.Copy(nc, up); done <- struct{}{} }()
	<-done
	p.drop(k)
}

func (k *conn) close() {
	k.client.Close()
	k.upstream.Close()
}

func (p *proxy) drop(k *conn) {
	p.mu.Lock()
	delete(p.conns, k)
	p.mu.Unlock()
	k.close()
}

// enforce closes the connections of links the cluster has cut.
func (p *proxy) enforce() {
	p.mu.Lock()
	ks := make([]*conn, 0, len(p.conns))
	for k := range p.conns {
		ks = append(ks, k)
	}
	p.mu.Unlock()
	for _, k := range ks {
		if p.c.blocked(k.from, p.to) {
			p.drop(k)
		}
	}
}

// close stops accepting and closes every connection.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	ks := make([]*conn, 0, len(p.conns))
	for k := range p.conns {
		ks = append(ks, k)
	}
	p.mu.Unlock()
	p.l.Close()
	for _, k := range ks {
		p.drop(k)
	}
}

// socketOwner returns which of pids holds the local end of the loopback
// TCP connection from port local to port remote, or 0: it finds the
// socket's inode in /proc/net/tcp, then a descriptor of it among each
// process's descriptors in /proc/<pid>/fd.
func socketOwner(local, remote int, pids []int) int {
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0
	}
	inode := ""
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 10 && hexPort(f[1]) == local && hexPort(f[2]) == remote {
			inode = f[9]
			break
		}
	}
	if inode == "" || inode == "0" {
		return 0
	}
	want := "socket:[" + inode + "]"
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && l == want {
				return pid
			}
		}
	}
	return 0
}

// hexPort is the port of an address of /proc/net/tcp ("0100007F:9C40"),
// or −1.
func hexPort(addr string) int {
	_, port, ok := strings.Cut(addr, ":")
	if !ok {
		return -1
	}
	n, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}
