// Package redischeck runs tollgate's linearizability checks against the
// Redis-backed tables (impl/redis/tokenbucket, impl/redis/credits, through
// internal/sut) on a real redis-server, with and without the faults a real
// deployment meets: the server stopped and continued (SIGSTOP, SIGCONT),
// killed and restarted from its append-only file, its writes paused (CLIENT
// PAUSE WRITE), and a replica promoted while the old primary still takes
// writes (REPLICAOF NO ONE), with and without WAIT. Every history goes
// through the one recorder of package linearizability and is checked by
// porcupine; the durability of acknowledged writes is also checked
// directly (Durability). spec/redis-faults.md says what each fault does and
// what the backend promises under it.
package redischeck

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redissut"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Target is where the backends of a run send their calls: one address at a
// time, which a failover moves (SetAddr), as a virtual address or a proxy
// in front of a primary would. Every backend's client dials the current
// address on each new connection. Tables are named with a random prefix,
// one name per backend, so runs sharing a server never meet.
//
// A Target is safe for concurrent use.
type Target struct {
	// Timeout is each call's budget: the client's dial, read and write
	// timeouts (each call's context allows five). A call that gets no reply
	// in it has an unknown outcome.
	Timeout time.Duration
	// Wait, when > 0, makes every call wait for that many replicas to
	// acknowledge every write the server had made when it answered (WAIT,
	// after a fencing write on the same connection); a call the replicas
	// have not acknowledged within Timeout is reported unknown, never as
	// done. Reads wait too: a read may have seen a write that a failover
	// then loses.
	Wait int
	// Retry is how long a call is sent again while it is refused without
	// running (ErrNotRun), and how long an unknown one is waited on to
	// settle; 0 means 20 × Timeout.
	Retry time.Duration

	addr    atomic.Pointer[string]
	cluster []string // a Redis Cluster's node addresses (NewClusterTarget)
	prefix  string
	tables  atomic.Int64
	last    atomic.Pointer[string] // the name of the table made last
	fences  sync.Map               // address → *goredis.Client dialing only that address

	// The backends' connections, each with the run_id of the server
	// process it reached, so that a fence can tell whether the server it
	// reached is the one that answered (fenced). mu guards them; seq counts
	// calls begun and connections closed, to order the two.
	mu      sync.Mutex
	seq     uint64
	live    map[*conn]struct{}
	closed  []closedConn
	suspect []suspect // tainted connections, oldest first (taint)
}

// conn is a backend connection and the server process it reached.
type conn struct {
	net.Conn
	t           *Target
	addr, runID string
	clientID    int64 // the server's CLIENT ID of this connection
	once        sync.Once
	tainted     atomic.Bool // a read or a write on it failed (taint)
}

// Read is the connection's; a failure taints it (taint).
func (c *conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.t.taint(c)
	}
	return n, err
}

// Write is the connection's; a failure taints it (taint).
func (c *conn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.t.taint(c)
	}
	return n, err
}

// SyscallConn is the TCP connection's: go-redis's pool peeks through it at
// an idle connection before reusing it, and drops one the server closed
// (a crashed server's), so that a call is not sent on a dead connection
// and left unknown for nothing.
func (c *conn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("redischeck: not a syscall.Conn")
	}
	return sc.SyscallConn()
}

// Close closes the connection and records when, for fenced.
func (c *conn) Close() error {
	c.once.Do(func() { c.t.forget(c) })
	return c.Conn.Close()
}

// closedConn is a closed connection, kept until no call that began while
// it was open can still be fenced.
type closedConn struct {
	runID string
	seq   uint64
	at    time.Time
}

// A call is what the fence needs to know of a call: the address it was
// sent to and when it began.
type call struct {
	addr string
	seq  uint64
}

// begin marks a call's start.
func (t *Target) begin() call {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	return call{addr: t.Addr(), seq: t.seq}
}

// forget records c's close.
func (t *Target) forget(c *conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, c)
	t.seq++
	now := time.Now()
	// A call and its fence end within 30 timeouts (Do's deadline, the
	// call's context, the fence's); a connection closed longer ago than
	// that cannot have answered a call still being fenced.
	keep := max(40*t.Timeout, 10*time.Second)
	i := 0
	for i < len(t.closed) && now.Sub(t.closed[i].at) > keep {
		i++
	}
	t.closed = append(t.closed[i:], closedConn{runID: c.runID, seq: t.seq, at: now})
}

// fenced reports a server other than the one with run_id id that a call
// begun at c may have been answered by: the run_id of a backend connection
// open at any time since c began that reached another process, or "". The
// connection that answers a call is the pool's to choose, so every
// connection that could have is checked.
func (t *Target) fenced(c call, id string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.live {
		if k.runID != id {
			return k.runID
		}
	}
	for _, k := range t.closed {
		if k.seq > c.seq && k.runID != id {
			return k.runID
		}
	}
	return ""
}

// NewTarget returns a target at addr whose calls wait at most timeout.
func NewTarget(addr string, timeout time.Duration) *Target {
	var b [4]byte
	_, _ = rand.Read(b[:])
	t := &Target{Timeout: timeout, prefix: "tollgate-check-" + hex.EncodeToString(b[:]) + "-"}
	t.SetAddr(addr)
	return t
}

// NewClusterTarget returns a target on the Redis Cluster whose nodes (some
// or all) are at addrs: its backends' tables are built by NewCluster, and
// their calls go to whichever node serves their slot. Wait is not
// supported on a cluster, nor SetAddr.
func NewClusterTarget(addrs []string, timeout time.Duration) *Target {
	t := NewTarget(addrs[0], timeout)
	t.cluster = addrs
	return t
}

// Fresh is a new target at t's current address (or on t's cluster), with
// t's Timeout and Retry and no connection, fence or Wait of t's: a client
// that took no part in what happened to t's.
func (t *Target) Fresh() *Target {
	var f *Target
	if t.cluster != nil {
		f = NewClusterTarget(t.cluster, t.Timeout)
	} else {
		f = NewTarget(t.Addr(), t.Timeout)
	}
	f.Retry = t.Retry
	return f
}

// SetAddr moves the target: connections made from now on go to addr.
// Connections already open stay where they are until they fail.
// The backends' connections to any other address are closed, so no call
// is answered by the old server after the move: a call in flight on one is
// left unknown.
func (t *Target) SetAddr(addr string) {
	t.mu.Lock()
	t.addr.Store(&addr)
	var old []*conn
	for c := range t.live {
		if c.addr != addr {
			old = append(old, c)
		}
	}
	t.mu.Unlock()
	for _, c := range old {
		_ = c.Close()
	}
}

// Addr is the current address.
func (t *Target) Addr() string { return *t.addr.Load() }

// Options are go-redis options for a client of the target: its dialer
// follows SetAddr, it never retries, and it waits at most Timeout.
func (t *Target) Options() *goredis.Options {
	return &goredis.Options{
		Addr:        "tollgate-target",
		Dialer:      t.dial,
		DialTimeout: t.Timeout, ReadTimeout: t.Timeout, WriteTimeout: t.Timeout,
		ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 64,
	}
}

// dial connects to the current address and asks the server its run_id
// and the connection's client id (INFO server, CLIENT ID) before go-redis's
// own handshake: the connection is tracked with them until it closes. A connection that cannot learn it is a dial
// that failed, so nothing of the call was sent.
func (t *Target) dial(ctx context.Context, _, node string) (net.Conn, error) {
	addr := t.Addr()
	if t.cluster != nil {
		addr = node // the node the cluster client chose
	}
	d := net.Dialer{Timeout: t.Timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	id, client, err := handshake(nc, t.Timeout)
	if err != nil {
		_ = nc.Close()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	c := &conn{Conn: nc, t: t, addr: addr, runID: id, clientID: client}
	t.mu.Lock()
	if t.cluster == nil && t.Addr() != addr {
		t.mu.Unlock()
		_ = nc.Close()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("the target moved from %s while dialing it", addr)}
	}
	if t.live == nil {
		t.live = map[*conn]struct{}{}
	}
	t.live[c] = struct{}{}
	t.mu.Unlock()
	return c, nil
}

// infoField is field's value in an INFO reply, or "".
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// fence returns the client that dials addr only.
func (t *Target) fence(addr string) *goredis.Client {
	if c, ok := t.fences.Load(addr); ok {
		return c.(*goredis.Client)
	}
	c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: t.Timeout, ReadTimeout: t.Timeout, WriteTimeout: t.Timeout,
		ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 64})
	if prev, loaded := t.fences.LoadOrStore(addr, c); loaded {
		_ = c.Close()
		return prev.(*goredis.Client)
	}
	return c
}

// Close closes the fence clients.
func (t *Target) Close() {
	t.fences.Range(func(_, c any) bool {
		_ = c.(*goredis.Client).Close()
		return true
	})
}

// client is a new client of the target: of its server, or of its cluster
// (never sending a call twice on its own, rconn.NewClusterClient), dialling
// through the target's tracked connections either way.
func (t *Target) client() goredis.UniversalClient {
	if t.cluster == nil {
		return goredis.NewClient(t.Options())
	}
	o := t.Options()
	return rconn.NewClusterClient(&goredis.ClusterOptions{
		Addrs: t.cluster, Dialer: o.Dialer,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		ContextTimeoutEnabled: true, PoolSize: o.PoolSize,
	})
}

func (t *Target) name(kind string) string {
	n := fmt.Sprintf("%s%s%d", t.prefix, kind, t.tables.Add(1))
	t.last.Store(&n)
	return n
}

// lastTable is the name of the table made last ("" before any).
func (t *Target) lastTable() string {
	if n := t.last.Load(); n != nil {
		return *n
	}
	return ""
}

// TB returns a backend over a fresh Redis token bucket of f's package
// (fault.None: impl/redis/tokenbucket), and what closes it.
func (t *Target) TB(f fault.Fault) (linearizability.TBBackend, func(), error) {
	return t.OpenTB(f, t.name("tb"))
}

// OpenTB is TB on the token bucket called name, as it is: one another
// target made, say (Fresh).
func (t *Target) OpenTB(f fault.Fault, name string) (linearizability.TBBackend, func(), error) {
	c := t.client()
	defer c.Close()
	s, err := opening(func() (*redissut.TokenBucket, error) { return redissut.NewTokenBucket(f, c, name) })
	if err != nil {
		return nil, nil, err
	}
	b := &retrying[model.TBInput[string], model.TBOutput]{t: t, apply: s.Apply}
	return b, func() { _ = s.Close() }, nil
}

// Cr returns a backend over a fresh Redis credit table of f's package
// (fault.None: impl/redis/credits), and what closes it.
func (t *Target) Cr(f fault.Fault) (linearizability.CrBackend, func(), error) {
	return t.OpenCr(f, t.name("cr"))
}

// OpenCr is Cr on the credit table called name, as it is.
func (t *Target) OpenCr(f fault.Fault, name string) (linearizability.CrBackend, func(), error) {
	c := t.client()
	defer c.Close()
	s, err := opening(func() (*redissut.Credits, error) { return redissut.NewCredits(f, c, name) })
	if err != nil {
		return nil, nil, err
	}
	apply := func(ctx context.Context, in model.CrInput[string]) (model.CrOutput[string], error) {
		out, err := s.Apply(ctx, in)
		return out, clockAheadNotRun(err)
	}
	b := &retrying[model.CrInput[string], model.CrOutput[string]]{t: t, apply: apply}
	return b, func() { _ = s.Close() }, nil
}

// opening opens a table, again (up to 5 times) when loading its Functions
// library timed out: a loaded machine can take longer than one call's
// budget to answer FUNCTION LOAD, and loading again replaces the library
// with itself.
func opening[T any](open func() (T, error)) (T, error) {
	var t T
	var err error
	for range 5 {
		if t, err = open(); err == nil || !errors.Is(err, rconn.ErrUnknown) && !errors.Is(err, rconn.ErrNotSent) {
			return t, err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return t, err
}

// retrying is a backend over a server-side table (redissut.Remote's
// mapping of errors) that sends again, after a short pause, a call that was
// not sent or that the server refused to run yet (it is down, restarting,
// loading its AOF, or still a replica), as a client reconnecting would: a
// call that did not run may always be sent again. It gives up after 20
// Timeouts and reports the call not run. With Target.Wait it also waits
// for the replicas after every call.
type retrying[In, Out any] struct {
	t     *Target
	apply func(context.Context, In) (Out, error)
}

func (r *retrying[In, Out]) Do(client int, in In) (Out, error) {
	// The context outlives the client's read timeout, as an application's
	// request deadline does: a client that retries a timed-out call on its
	// own (mutant rtb-retry-on-timeout) has the time to.
	b := redissut.Remote(r.apply, 5*r.t.Timeout)
	retry := r.t.Retry
	if retry <= 0 {
		retry = 20 * r.t.Timeout
	}
	deadline := time.Now().Add(retry)
	for {
		c := r.t.begin()
		out, err := b.Do(client, in)
		switch {
		case errors.Is(err, linearizability.ErrUnknown):
			// No reply: settled once no connection that may have carried
			// the call can still run it.
			if r.t.settle(c, deadline) {
				err = fmt.Errorf("%w: %w", linearizability.ErrSettled, err)
			}
		case err == nil && r.t.Wait > 0:
			// The reply came, so the call ran before it did: if its
			// durability is unknown, it took effect then or (lost in a
			// failover) never.
			if err = r.wait(c); err != nil {
				err = fmt.Errorf("%w: %w", linearizability.ErrSettled, err)
			}
		}
		if !errors.Is(err, linearizability.ErrNotRun) || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fenceKey is the key the WAIT fence writes: one per process is enough.
const fenceKey = "tollgate-check-fence"

// wait makes sure the replicas of the server that answered call c hold
// every write it acknowledged so far: a write on one connection to that
// server (INCR of the fence key), then WAIT and INFO server on the same
// connection, pipelined. WAIT waits for the writes of its own connection,
// and the fence was sent after the call's reply came, so it follows the
// call in that server's replication stream. The fence must reach the
// server that answered: it dials the address the call was sent to, and
// INFO names the process it reached; every backend connection open since
// the call began must have reached that same process (Target.fenced),
// since a crashed server's successor on the same port, or an old primary
// after a failover, would otherwise acknowledge what it never held. Fewer
// replicas than Target.Wait within Timeout, a target that moved during the
// call, another server, or any failure, leaves the call's durability
// unknown.
func (r *retrying[In, Out]) wait(c call) error {
	if now := r.t.Addr(); now != c.addr {
		return fmt.Errorf("%w: the target moved from %s to %s during the call", linearizability.ErrUnknown, c.addr, now)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*r.t.Timeout)
	defer cancel()
	pipe := r.t.fence(c.addr).Pipeline()
	pipe.Incr(ctx, fenceKey)
	n := pipe.Do(ctx, "WAIT", r.t.Wait, r.t.Timeout.Milliseconds())
	info := pipe.Info(ctx, "server")
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("%w: WAIT %d: %v", linearizability.ErrUnknown, r.t.Wait, err)
	}
	id := infoField(info.Val(), "run_id")
	if id == "" {
		return fmt.Errorf("%w: the fence's INFO server named no run_id", linearizability.ErrUnknown)
	}
	if other := r.t.fenced(c, id); other != "" {
		return fmt.Errorf("%w: the call may have been answered by server %s, the fence reached server %s", linearizability.ErrUnknown, other, id)
	}
	got, err := n.Int64()
	if err != nil {
		return fmt.Errorf("%w: WAIT %d: %v", linearizability.ErrUnknown, r.t.Wait, err)
	}
	if got < int64(r.t.Wait) {
		return fmt.Errorf("%w: WAIT %d: %d replicas acknowledged within %v", linearizability.ErrUnknown, r.t.Wait, got, r.t.Timeout)
	}
	return nil
}
