package etcdserver

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proxy stands in front of one member's peer port: every other member
// dials it as that member's peer URL. It learns each connection's sender
// from the first request's X-Server-From header (the sender's member id in
// hex, which rafthttp sets on its stream, pipeline and snapshot requests),
// then forwards both ways, unless the cluster has cut the link; Isolate
// makes it close the connections of a cut link.
type proxy struct {
	c      *Cluster
	to     int    // the index of the member behind it
	target string // the member's own peer address
	l      net.Listener

	mu     sync.Mutex
	conns  map[*link]struct{}
	closed bool
}

// link is one forwarded connection.
type link struct {
	from             int // the dialling member's index, −1 when unknown
	client, upstream net.Conn
}

func newProxy(c *Cluster, to int, target string) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{c: c, to: to, target: target, l: l, conns: map[*link]struct{}{}}
	go p.accept()
	return p, nil
}

func (p *proxy) url() string { return "http://" + p.l.Addr().String() }

func (p *proxy) accept() {
	for {
		conn, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.serve(conn)
	}
}

// maxHead bounds the bytes read to find a request's headers.
const maxHead = 64 << 10

// sender reads the start of a connection until the end of its first
// request's headers and returns what it read and the sender's index (−1
// when the headers name no member the cluster knows).
func (p *proxy) sender(conn net.Conn) ([]byte, int, error) {
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = conn.SetReadDeadline(time.Time{}) }()
	var head []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(head, []byte("\r\n\r\n")) && len(head) < maxHead {
		n, err := conn.Read(buf)
		head = append(head, buf[:n]...)
		if err != nil {
			return head, -1, err
		}
	}
	end := bytes.Index(head, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(head)
	}
	for _, line := range strings.Split(string(head[:end]), "\r\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "X-Server-From") {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		if err != nil {
			return head, -1, nil
		}
		return head, p.c.indexOf(id), nil
	}
	return head, -1, nil
}

func (p *proxy) serve(conn net.Conn) {
	head, from, err := p.sender(conn)
	if err != nil || p.c.blocked(from, p.to) {
		conn.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		conn.Close()
		return
	}
	k := &link{from: from, client: conn, upstream: up}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		k.close()
		return
	}
	p.conns[k] = struct{}{}
	p.mu.Unlock()
	// Isolate may have cut the link between the check above and the
	// registration: enforce again now that it can be found.
	if p.c.blocked(from, p.to) {
		p.drop(k)
		return
	}
	if _, err := up.Write(head); err != nil {
		p.drop(k)
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, up); done <- struct{}{} }()
	<-done
	p.drop(k)
}

func (k *link) close() {
	k.client.Close()
	k.upstream.Close()
}

func (p *proxy) drop(k *link) {
	p.mu.Lock()
	delete(p.conns, k)
	p.mu.Unlock()
	k.close()
}

// enforce closes the connections of links the cluster has cut.
func (p *proxy) enforce() {
	p.mu.Lock()
	var cut []*link
	for k := range p.conns {
		if p.c.blocked(k.from, p.to) {
			cut = append(cut, k)
		}
	}
	p.mu.Unlock()
	for _, k := range cut {
		p.drop(k)
	}
}

// close stops accepting and closes every connection.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	ks := make([]*link, 0, len(p.conns))
	for k := range p.conns {
		ks = append(ks, k)
	}
	p.mu.Unlock()
	p.l.Close()
	for _, k := range ks {
		p.drop(k)
	}
}
