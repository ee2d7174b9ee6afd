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
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/redissut"
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

	addr   atomic.Pointer[string]
	prefix string
	tables atomic.Int64
	fences sync.Map // address → *goredis.Client dialing only that address
}

// NewTarget returns a target at addr whose calls wait at most timeout.
func NewTarget(addr string, timeout time.Duration) *Target {
	var b [4]byte
	_, _ = rand.Read(b[:])
	t := &Target{Timeout: timeout, prefix: "tollgate-check-" + hex.EncodeToString(b[:]) + "-"}
	t.SetAddr(addr)
	return t
}

// SetAddr moves the target: connections made from now on go to addr.
// Connections already open stay where they are until they fail.
func (t *Target) SetAddr(addr string) { t.addr.Store(&addr) }

// Addr is the current address.
func (t *Target) Addr() string { return *t.addr.Load() }

// Options are go-redis options for a client of the target: its dialer
// follows SetAddr, it never retries, and it waits at most Timeout.
func (t *Target) Options() *goredis.Options {
	return &goredis.Options{
		Addr: "tollgate-target",
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: t.Timeout}
			return d.DialContext(ctx, "tcp", t.Addr())
		},
		DialTimeout: t.Timeout, ReadTimeout: t.Timeout, WriteTimeout: t.Timeout,
		ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 64,
	}
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

func (t *Target) name(kind string) string {
	return fmt.Sprintf("%s%s%d", t.prefix, kind, t.tables.Add(1))
}

// TB returns a backend over a fresh Redis token bucket of f's package
// (fault.None: impl/redis/tokenbucket), and what closes it.
func (t *Target) TB(f fault.Fault) (linearizability.TBBackend, func(), error) {
	c := goredis.NewClient(t.Options())
	defer c.Close()
	name := t.name("tb")
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
	c := goredis.NewClient(t.Options())
	defer c.Close()
	name := t.name("cr")
	s, err := opening(func() (*redissut.Credits, error) { return redissut.NewCredits(f, c, name) })
	if err != nil {
		return nil, nil, err
	}
	b := &retrying[model.CrInput[string], model.CrOutput[string]]{t: t, apply: s.Apply}
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
	deadline := time.Now().Add(20 * r.t.Timeout)
	for {
		addr := r.t.Addr()
		out, err := b.Do(client, in)
		if err == nil && r.t.Wait > 0 {
			err = r.wait(addr)
		}
		if !errors.Is(err, linearizability.ErrNotRun) || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fenceKey is the key the WAIT fence writes: one per process is enough.
const fenceKey = "tollgate-check-fence"

// wait makes sure the replicas of the server at addr hold every write it
// acknowledged so far: a write on one connection to that server (INCR of
// the fence key) then WAIT on the same connection, pipelined. WAIT waits
// for the writes of its own connection, and the fence was sent after the
// call's reply came, so it follows the call in that server's replication
// stream. The fence must reach the server that answered the call: addr is
// the target's address when the call was made, and a call made after a
// failover moved the target is fenced on the new address (its connections
// to the old primary are dead by then: the scenarios kill it first).
// Fewer replicas than Target.Wait within Timeout, a target that moved
// during the call, or any failure, leaves the call's durability unknown.
func (r *retrying[In, Out]) wait(addr string) error {
	if now := r.t.Addr(); now != addr {
		return fmt.Errorf("%w: the target moved from %s to %s during the call", linearizability.ErrUnknown, addr, now)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*r.t.Timeout)
	defer cancel()
	pipe := r.t.fence(addr).Pipeline()
	pipe.Incr(ctx, fenceKey)
	n := pipe.Do(ctx, "WAIT", r.t.Wait, r.t.Timeout.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("%w: WAIT %d: %v", linearizability.ErrUnknown, r.t.Wait, err)
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
