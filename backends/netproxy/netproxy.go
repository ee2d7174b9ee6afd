// Package netproxy is the one TCP proxy of the server wings' network
// faults (backends/etcdserver between etcd members, backends/redisserver
// between a Redis primary and its replica): a listener on a free loopback
// port in front of one address, forwarding every connection it accepts
// to that address, which cuts a link in either of the two ways a network
// partition does:
//
//   - Enforce closes the connections a Cut rule now refuses (and Cut
//     refuses new ones): both ends see the connection reset, as after a
//     partition long enough for TCP to give up.
//   - Stall holds every byte in both directions, of every connection and
//     of those accepted meanwhile, closing nothing: each end sees silence
//     and notices only by its own timeouts, as when packets are dropped.
//     Resume forwards what was held, in order, as TCP's retransmissions
//     do once a partition heals.
//
// And it loses a client's answers (Deafen, then Reset): what the target
// sends is held while what it is sent still reaches it, so requests are
// served and their answers go nowhere; Reset then closes every
// connection, dropping what was held, as a link that fails after the
// request went out. The client cannot know whether its request ran. Hear
// instead forwards what was held: the answers only came late.
//
// A wing that needs to know who dialled (etcd's peers) reads the start of
// each connection with Identify and tags it; the proxy sends what Identify
// read on first. Where naming the dialler is dear (Diallers reads the
// kernel's whole table of TCP sockets: some 10 ms of system time with a
// few thousand sockets on the machine, far more on a loaded one), Identify
// may leave it Unresolved: the proxy asks Resolve only once a cut is in
// force that could concern the connection, so that a cluster forming or
// running with nothing cut never pays for it.
//
// It imports nothing of the wings. A Proxy is safe for concurrent use.
package netproxy

import (
	"fmt"
	"math"
	"net"
	"sync"
	"time"
)

// Options configure a Proxy.
type Options struct {
	// Identify, if not nil, reads the start of each accepted connection
	// and returns what it read (sent upstream before the rest) and a tag
	// naming the dialler, which Cut is asked about; an error drops the
	// connection. Without it every connection's tag is −1.
	Identify func(nc net.Conn) (head []byte, tag int, err error)
	// Resolve names the diallers of connections Identify tagged
	// Unresolved, a tag for each (Diallers names many at once); it is
	// asked at most once a connection, when Cut(Unresolved) reports true:
	// for one connection as it arrives, or for all of them that Enforce
	// finds unnamed. Identify may return Unresolved only when Resolve is
	// set.
	Resolve func(ncs []net.Conn) []int
	// Cut, if not nil, reports whether the link of connections tagged tag
	// is cut now: such a connection is closed when it is accepted, and by
	// Enforce once it is.
	Cut func(tag int) bool
	// DialTimeout bounds the dial of the target (default 1 s).
	DialTimeout time.Duration
}

// Proxy forwards the connections of a loopback listener to one address.
type Proxy struct {
	target string
	o      Options
	l      net.Listener

	mu     sync.Mutex
	conns  map[*link]struct{}
	closed bool
	// held is not nil while the proxy is stalled: closed by Resume (or
	// Close), it lets the held bytes go.
	held chan struct{}
	// deaf is not nil while the proxy holds what the target sends
	// (Deafen): closed by Reset or Close.
	deaf chan struct{}
}

// Unresolved is the tag Identify gives a connection whose dialler is to
// be named by Resolve only if it matters: Cut(Unresolved) reports whether
// a cut is in force that could concern a connection of a dialler not yet
// named; while it does not, such a connection is forwarded as it is.
const Unresolved = math.MinInt32

// link is one forwarded connection.
type link struct {
	tag              int // under Proxy.mu once registered
	client, upstream net.Conn
}

func (k *link) close() {
	k.client.Close()
	k.upstream.Close()
}

// New listens on a free loopback port and forwards every connection to
// target.
func New(target string, o Options) (*Proxy, error) {
	if o.DialTimeout == 0 {
		o.DialTimeout = time.Second
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	p := &Proxy{target: target, o: o, l: l, conns: map[*link]struct{}{}}
	go p.accept()
	return p, nil
}

// Addr is the proxy's address (host:port), to be dialled instead of the
// target's.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

func (p *Proxy) accept() {
	for {
		nc, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.serve(nc)
	}
}

func (p *Proxy) cut(tag int) bool { return p.o.Cut != nil && p.o.Cut(tag) }

func (p *Proxy) serve(nc net.Conn) {
	var head []byte
	tag := -1
	if p.o.Identify != nil {
		var err error
		if head, tag, err = p.o.Identify(nc); err != nil {
			nc.Close()
			return
		}
	}
	tag = p.resolve(nc, tag)
	// A connection made during a stall is held before it reaches the
	// target, as a SYN that gets no answer.
	if p.cut(tag) || !p.pass(false) {
		nc.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.target, p.o.DialTimeout)
	if err != nil {
		nc.Close()
		return
	}
	k := &link{tag: tag, client: nc, upstream: up}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		k.close()
		return
	}
	p.conns[k] = struct{}{}
	p.mu.Unlock()
	// A cut made between the check above and the registration did not
	// find this connection: check again now that Enforce would.
	if p.cutLink(k) {
		p.drop(k)
		return
	}
	if len(head) > 0 {
		if _, err := up.Write(head); err != nil {
			p.drop(k)
			return
		}
	}
	done := make(chan struct{}, 2)
	go func() { p.pipe(up, nc, false); done <- struct{}{} }()
	go func() { p.pipe(nc, up, true); done <- struct{}{} }()
	<-done
	p.drop(k)
}

// pipe copies src to dst until either fails, holding each chunk read
// while the proxy is stalled, and src's end too: a connection one side
// closes during a stall is closed on the other only once the stall ends,
// as its FIN would arrive. down marks the target's side, which Deafen
// holds too.
func (p *Proxy) pipe(dst, src net.Conn, down bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if !p.pass(down) {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pass waits while the proxy is stalled, and, for the target's side
// (down), while it is deaf: true once it is not, false once it is closed.
func (p *Proxy) pass(down bool) bool {
	for {
		p.mu.Lock()
		closed, held, deaf := p.closed, p.held, p.deaf
		p.mu.Unlock()
		switch {
		case closed:
			return false
		case held != nil:
			<-held
		case down && deaf != nil:
			<-deaf
		default:
			return true
		}
	}
}

func (p *Proxy) drop(k *link) {
	p.mu.Lock()
	delete(p.conns, k)
	p.mu.Unlock()
	k.close()
}

func (p *Proxy) links() []*link {
	p.mu.Lock()
	defer p.mu.Unlock()
	ks := make([]*link, 0, len(p.conns))
	for k := range p.conns {
		ks = append(ks, k)
	}
	return ks
}

// Links is how many connections the proxy forwards now.
func (p *Proxy) Links() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// resolve is tag, or, for Unresolved while Cut(Unresolved) reports a cut
// that could concern it, the dialler Resolve names.
func (p *Proxy) resolve(nc net.Conn, tag int) int {
	if tag != Unresolved || !p.cut(Unresolved) {
		return tag
	}
	return p.resolveAll([]net.Conn{nc})[0]
}

// resolveAll asks Resolve to name the diallers of ncs, panicking on a
// wing that left a dialler unnamed with no Resolve, or whose Resolve does
// not give one tag a connection.
func (p *Proxy) resolveAll(ncs []net.Conn) []int {
	if p.o.Resolve == nil {
		panic("netproxy: Identify returned Unresolved with no Resolve")
	}
	tags := p.o.Resolve(ncs)
	if len(tags) != len(ncs) {
		panic(fmt.Sprintf("netproxy: Resolve gave %d tags for %d connections", len(tags), len(ncs)))
	}
	return tags
}

// name names the diallers of the links of ks still Unresolved, all at
// once, if Cut(Unresolved) says it has become needed.
func (p *Proxy) name(ks []*link) {
	var open []*link
	var ncs []net.Conn
	p.mu.Lock()
	for _, k := range ks {
		if k.tag == Unresolved {
			open = append(open, k)
			ncs = append(ncs, k.client)
		}
	}
	p.mu.Unlock()
	if len(open) == 0 || !p.cut(Unresolved) {
		return
	}
	tags := p.resolveAll(ncs)
	p.mu.Lock()
	for i, k := range open {
		k.tag = tags[i]
	}
	p.mu.Unlock()
}

// cutLink reports whether k's link is cut now, naming its dialler first
// if that has become needed.
func (p *Proxy) cutLink(k *link) bool {
	p.name([]*link{k})
	p.mu.Lock()
	tag := k.tag
	p.mu.Unlock()
	return p.cut(tag)
}

// Enforce closes the connections whose link Cut now reports cut.
func (p *Proxy) Enforce() {
	ks := p.links()
	p.name(ks)
	for _, k := range ks {
		if p.cutLink(k) {
			p.drop(k)
		}
	}
}

// Stall holds every byte from now on, both ways, on every connection and
// on those accepted meanwhile, until Resume. Stalling a stalled proxy
// does nothing.
func (p *Proxy) Stall() { p.hold(&p.held) }

// Resume forwards what Stall held, and everything after it. Resuming a
// proxy that is not stalled does nothing.
func (p *Proxy) Resume() { p.let(&p.held) }

// Stalled reports whether the proxy holds its bytes (Stall).
func (p *Proxy) Stalled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held != nil
}

// Deafen holds every byte the target sends from now on, on every
// connection and on those accepted meanwhile, while what the target is
// sent still reaches it, until Reset. Deafening a deaf proxy does nothing.
func (p *Proxy) Deafen() { p.hold(&p.deaf) }

// hold shuts the gate *g (p.held or p.deaf) unless it is shut already or
// the proxy is closed.
func (p *Proxy) hold(g *chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if *g == nil && !p.closed {
		*g = make(chan struct{})
	}
}

// Hear forwards what Deafen held, and everything after it. Hearing a
// proxy that is not deaf does nothing.
func (p *Proxy) Hear() { p.let(&p.deaf) }

// let opens the gate *g under p.mu.
func (p *Proxy) let(g *chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	open(g)
}

// Reset closes every connection, dropping the bytes a Stall or Deafen
// holds (both ends see the connection end), and ends the stall and the
// deafness: the connections made after it are forwarded both ways.
func (p *Proxy) Reset() {
	for _, k := range p.links() {
		p.drop(k)
	}
	p.mu.Lock()
	p.release()
	p.mu.Unlock()
}

// release lets the held bytes go (to closed connections, after Reset and
// Close). p.mu is held.
func (p *Proxy) release() {
	open(&p.held)
	open(&p.deaf)
}

// open closes the gate *g, if any, letting what waits on it go, and
// clears it. p.mu is held.
func open(g *chan struct{}) {
	if *g != nil {
		close(*g)
		*g = nil
	}
}

// Close stops accepting and closes every connection; bytes held by a
// stall or by Deafen are dropped.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.release()
	p.mu.Unlock()
	p.l.Close()
	for _, k := range p.links() {
		p.drop(k)
	}
}
