// Package tokenbucket is impl/tokenbucket's keyed token bucket kept in an
// etcd cluster, so that many processes on many machines take from the same
// buckets and no acknowledged take is lost when a minority of the members
// fails (spec/tokenbucket.md; spec/etcd.md for what the store changes).
//
// The model is impl/tokenbucket's: a bucket holds at most Capacity tokens
// and regains RefillPerSecond tokens per second of clock time, the limits
// are passed on every call (T8), and the stored timestamp never moves
// backwards (T4). A take is the seed's compare-and-swap with retry, with
// etcd's transaction as the compare-and-swap: it reads the bucket (and the
// table's floor, T12) at one revision, decides with impl/tokenbucket's own
// arithmetic (RefillOf: the answers are the model's bit for bit, T3), and
// commits one Txn that puts the new bucket only if the bucket's key was not
// written since that revision (its ModRevision compared; for an absent
// bucket, the floor's too). A lost race reads again, in the same round trip,
// and decides anew, without bound (T2: a lost race is never a refusal).
//
// Every method takes a context and can fail in transport as well as on its
// arguments. An *ArgError (impl/tokenbucket's type and messages) is decided
// before anything is sent. A transport failure wraps ErrNotSent (nothing
// was written) or ErrUnknown (a Txn that writes was sent and no answer
// came: it may have committed, and must not be treated as a refusal).
// Nothing that writes is sent twice after an error (impl/etcd/econn).
package tokenbucket

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// Limits are impl/tokenbucket's: Capacity and RefillPerSecond, both finite
// and greater than zero, passed on every call and never stored (T8).
type Limits = tokenbucket.Limits

// ArgError is impl/tokenbucket's: an argument that breaks a rule of T9. A
// call that returns one sent nothing and changed nothing.
type ArgError = tokenbucket.ArgError

// Never is what RetryAfter reports when no wait within the clock's range
// refills the bucket enough (T7), as in impl/tokenbucket.
const Never = tokenbucket.Never

// The transport errors a call's error wraps (impl/etcd/econn).
var (
	// ErrUnknown: a write was sent and no answer came; it may have
	// committed (a take may have taken).
	ErrUnknown = econn.ErrUnknown
	// ErrNotSent: nothing was written.
	ErrNotSent = econn.ErrNotSent
)

// maxBatch is how many buckets one reclaim transaction forgets: each costs
// a compare and a delete, and etcd refuses a transaction of more than 128
// of either (its --max-txn-ops default); one more op is the floor's put,
// whose transaction has two more compares (the floor's, and that no bucket
// was made since the read), so it forgets at most 126.
const maxBatch = 127

// Table is a set of token buckets keyed by string, kept in etcd under the
// table's name (Prefix): every process that makes a Table with the same
// cluster and name shares its buckets. The zero value is not usable; create
// one with New or NewFromClient. A Table is safe for concurrent use by many
// goroutines.
//
// A take, a reset and a reset-all each linearize at one transaction; a
// peek and a retry-after at one linearizable read; a reclaim per bucket
// (and as one step when it forgets at most 126 buckets). What a failed call
// leaves behind is what its error says.
type Table struct {
	c      *clientv3.Client
	own    bool // New built c; Close closes it
	prefix string
	floor  string // the floor's key (T12)
	clock  func() int64

	// known holds, per key, what this Table last knew of the key's bucket
	// (its own last commit, or its last linearizable read of it), so that
	// a take can commit without reading first; placeSeed hashes a key to
	// its place. A place holds one key at a time: another key's take
	// replaces it. A take compares what it knew, so a stale view never
	// commits.
	known [knownSlots]atomic.Pointer[view]
}

// placeSeed hashes keys to their places in known: one seed for the
// process, so that within it a key has the same place in every Table.
// Which keys share a place decides whether a take reads first, so with a
// seed per Table two keys shared one in some tables only, and the
// explorer's replay of a schedule, on a fresh table, took other steps
// than the run it replayed (backends/etcdexplore, 2 runs in 60 of
// TestCatalogue). Random per process, the places still cannot be chosen
// from outside.
var placeSeed = maphash.MakeSeed()

// knownSlots is the number of keys a Table remembers at once (8 KiB of
// pointers, a view of about 100 bytes each).
const knownSlots = 1024

// view is what a Table knew of one key's bucket, and of the floor when the
// bucket was absent, at one revision. shared marks a key another client
// wrote since this Table's view of it: its takes read first again.
type view struct {
	key      string
	b        bucket
	floorMs  int64
	floorRev int64
	shared   bool
}

// Option configures a Table.
type Option func(*config)

type config struct {
	clock func() int64
}

// WithClock makes the shorthand methods (Take, Peek, RetryAfter, Reclaim)
// read time from clock, in milliseconds. The default is UnixMs: the clients
// of one table run on different machines, so they need a clock they share,
// and T4 keeps a client whose clock runs behind from gaining by it.
func WithClock(clock func() int64) Option {
	return func(c *config) { c.clock = clock }
}

// UnixMs is the default clock: wall-clock milliseconds since the Unix epoch.
func UnixMs() int64 { return time.Now().UnixMilli() }

// New connects to the cluster cfg names (endpoints, TLS, credentials and
// time-outs, as clientv3.Config; cfg is not modified) and returns the table
// called name. Close closes the client. On error nothing is left open.
func New(cfg clientv3.Config, name string, options ...Option) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c, err := econn.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("tokenbucket: %w", err)
	}
	t := newTable(c, name, options)
	t.own = true
	return t, nil
}

// NewFromClient is New on a client the caller owns and keeps (Close does
// not close it).
func NewFromClient(c *clientv3.Client, name string, options ...Option) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return newTable(c, name, options), nil
}

// Prefix is the key prefix of the table called name: every key of the table
// starts with it. Under it, "floor" holds the floor (T12, 8 bytes, a
// big-endian int64 in milliseconds; absent when there is none) and "b/"
// followed by the bucket's key holds a present bucket (16 bytes: the
// tokens' float64 bits, then the timestamp, both big-endian). An absent
// bucket is a key not there.
func Prefix(name string) string { return "tollgate/tb/" + name + "/" }

func newTable(c *clientv3.Client, name string, options []Option) *Table {
	cfg := config{clock: UnixMs}
	for _, o := range options {
		o(&cfg)
	}
	p := Prefix(name)
	return &Table{c: c, prefix: p, floor: p + "floor", clock: cfg.clock}
}

func checkName(name string) error {
	if !econn.CheckName(name) {
		shown := strconv.Quote(name)
		if len(name) > 40 {
			shown = fmt.Sprintf("%q… (%d bytes)", name[:40], len(name))
		}
		return fmt.Errorf("tokenbucket: table name %s %s", shown, econn.NameRule)
	}
	return nil
}

// Close closes the client if New made it. The buckets stay in the cluster.
func (t *Table) Close() error {
	if !t.own {
		return nil
	}
	return t.c.Close()
}

// Now reads the table's clock (WithClock; UnixMs by default), in
// milliseconds: the reading every shorthand method takes.
func (t *Table) Now() int64 { return t.clock() }

func (t *Table) key(k string) string { return t.prefix + "b/" + k }

// bucket is one key's bucket as a read found it: absent, or present with
// its tokens and timestamp; rev is its key's ModRevision (0 when absent).
type bucket struct {
	present bool
	tokens  float64
	lastMs  int64
	rev     int64
}

func encodeBucket(tokens float64, lastMs int64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], math.Float64bits(tokens))
	binary.BigEndian.PutUint64(b[8:], uint64(lastMs))
	return string(b[:])
}

func encodeMs(ms int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(ms))
	return string(b[:])
}

// malformed is the error for a value the table never writes: the cluster
// holds something else under the table's prefix.
func malformed(key string, v []byte) error {
	return fmt.Errorf("tokenbucket: %w: key %q holds %d bytes the table never writes", ErrUnknown, key, len(v))
}

func parseBucket(kvs []*mvccpb.KeyValue) (bucket, error) {
	if len(kvs) == 0 {
		return bucket{}, nil
	}
	kv := kvs[0]
	if len(kv.Value) != 16 || math.Signbit(math.Float64frombits(binary.BigEndian.Uint64(kv.Value[:8]))) {
		return bucket{}, malformed(string(kv.Key), kv.Value)
	}
	return bucket{
		present: true,
		tokens:  math.Float64frombits(binary.BigEndian.Uint64(kv.Value[:8])),
		lastMs:  int64(binary.BigEndian.Uint64(kv.Value[8:])),
		rev:     kv.ModRevision,
	}, nil
}

// floorOf is the floor a read found (T12): math.MinInt64 when there is
// none, and its key's ModRevision (0 when absent).
func floorOf(kvs []*mvccpb.KeyValue) (ms, rev int64, err error) {
	if len(kvs) == 0 {
		return math.MinInt64, 0, nil
	}
	if len(kvs[0].Value) != 8 {
		return 0, 0, malformed(string(kvs[0].Key), kvs[0].Value)
	}
	return int64(binary.BigEndian.Uint64(kvs[0].Value)), kvs[0].ModRevision, nil
}

// refill is the tokens b holds at nowMs (T3), by impl/tokenbucket's code.
func (b bucket) refill(lim Limits, nowMs int64) float64 {
	if !b.present {
		return lim.Capacity
	}
	return tokenbucket.RefillOf(b.tokens, b.lastMs, lim, nowMs)
}

// readOnly runs a transaction that only reads: a failure wrote nothing.
func (t *Table) readOnly(ctx context.Context, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	return econn.Read(ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return t.c.Txn(ctx).Then(ops...).Commit()
	})
}

// Admit is AdmitAt with the table's clock.
func (t *Table) Admit(ctx context.Context, key string, lim Limits, cost float64) (tokenbucket.Decision, error) {
	return t.AdmitAt(ctx, t.clock(), key, lim, cost)
}

// AdmitAt is TakeAt that also answers a refusal's wait: the bucket the
// refusal was decided on gives it, by impl/tokenbucket's own code
// (RetryAfterOf), bit for bit what RetryAfterAt would answer at nowMs from
// that bucket (T7). What an error leaves behind is TakeAt's.
func (t *Table) AdmitAt(ctx context.Context, nowMs int64, key string, lim Limits, cost float64) (tokenbucket.Decision, error) {
	if err := tokenbucket.CheckArgs(lim, cost, true); err != nil {
		return tokenbucket.Decision{}, err
	}
	left, ok, b, err := t.take(ctx, nowMs, key, lim, cost)
	switch {
	case err != nil:
		return tokenbucket.Decision{}, err
	case ok:
		return tokenbucket.Decision{OK: true, Remaining: left}, nil
	}
	return tokenbucket.Decision{RetryAfterMs: tokenbucket.RetryAfterOf(b.tokens, b.lastMs, lim, cost, nowMs)}, nil
}

// Wait blocks until key's bucket covers cost, then takes it and reports the
// tokens remaining, as impl/tokenbucket's Wait does (tokenbucket.WaitLoop,
// over AdmitAt). It fails having taken nothing with an *ArgError, ctx's
// error, or an error wrapping tokenbucket.ErrWouldExceedDeadline or
// tokenbucket.ErrNever; a transport error ends it as AdmitAt's would
// (ErrUnknown: the last take happened once or not at all).
func (t *Table) Wait(ctx context.Context, key string, lim Limits, cost float64) (remaining float64, err error) {
	if err := tokenbucket.CheckArgs(lim, cost, true); err != nil {
		return 0, err
	}
	admit := func(nowMs int64) (tokenbucket.Decision, error) { return t.AdmitAt(ctx, nowMs, key, lim, cost) }
	return tokenbucket.WaitLoop(ctx, lim, cost, t.clock, admit, nil)
}

// Take is TakeAt with the table's clock.
func (t *Table) Take(ctx context.Context, key string, lim Limits, cost float64) (remaining float64, ok bool, err error) {
	return t.TakeAt(ctx, t.clock(), key, lim, cost)
}

// TakeAt takes cost tokens from key's bucket at nowMs (T1, T2), as
// impl/tokenbucket's TakeAt does: the bucket is refilled for the
// milliseconds since its timestamp (none when nowMs is older), and if it
// covers cost, cost is removed and the tokens remaining are reported with ok
// set; its timestamp becomes max(timestamp, nowMs) (T4), or for a key with
// no bucket max(floor, nowMs) (T12). A refusal (ok false) changes nothing;
// so does an *ArgError, sent nowhere. A transport error wraps ErrNotSent
// (nothing taken) or ErrUnknown (taken once or not at all).
//
// A take linearizes at the transaction that commits it; a refusal at the
// linearizable read it was decided on (one revision of the bucket, and of
// the floor when the bucket is absent). A take reads first from the member its client talks to, and
// through the leader only to confirm a refusal, and not at all when this
// Table knows the bucket from its own last take of the key and no other
// client wrote it since (spec/etcd.md §1): an admitted take then costs one
// Txn, otherwise one local read and one Txn.
func (t *Table) TakeAt(ctx context.Context, nowMs int64, key string, lim Limits, cost float64) (remaining float64, ok bool, err error) {
	if err := tokenbucket.CheckArgs(lim, cost, true); err != nil {
		return 0, false, err
	}
	left, ok, _, err := t.take(ctx, nowMs, key, lim, cost)
	return left, ok, err
}

// take is TakeAt's loop; on a refusal it also returns the bucket it was
// decided on.
func (t *Table) take(ctx context.Context, nowMs int64, key string, lim Limits, cost float64) (float64, bool, bucket, error) {
	bk := t.key(key)
	reads := []clientv3.Op{clientv3.OpGet(bk), clientv3.OpGet(t.floor)}
	// The first view is what this Table knew of the bucket (its own last
	// commit or linearizable read of it), or else the member's own read
	// (serializable: no round through the leader). An admission is decided
	// on it only if the Txn's compares find nothing written since, so a
	// stale view cannot commit; a refusal writes nothing to compare, so it
	// is decided only on a linearizable read (confirmed): the reads of a
	// failed Txn, or a read through the leader.
	v, err := t.firstView(ctx, key, bk)
	if err != nil {
		return 0, false, bucket{}, fmt.Errorf("tokenbucket: take: %w", err)
	}
	confirmed, shared := false, v.shared
	for {
		have := v.b.refill(lim, nowMs)
		if have < cost && !confirmed {
			confirmed = true
			if v, err = t.confirmView(ctx, v, reads); err != nil {
				return 0, false, bucket{}, fmt.Errorf("tokenbucket: take: %w", err)
			}
			continue
		}
		if have < cost {
			v.shared = shared
			t.remember(v)
			return 0, false, v.b, nil // T2: a refusal writes nothing
		}
		// present → present: the bucket refilled and taken from, stamped
		// max(last, now) (T4); absent → present: a full bucket taken from,
		// stamped max(floor, now) (T12). Either commits only if the bucket's
		// key is as read (and, for an absent one, the floor: a reclaim that
		// raised it since makes this take read again).
		last := max(nowMs, v.b.lastMs)
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(bk), "=", v.b.rev)}
		if !v.b.present {
			last = max(nowMs, v.floorMs)
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(t.floor), "=", v.floorRev))
		}
		left := have - cost
		put := clientv3.OpPut(bk, encodeBucket(left, last))
		r, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
			return t.c.Txn(ctx).If(cmps...).Then(put).Else(reads...).Commit()
		})
		if err != nil {
			t.forget(key)
			return 0, false, bucket{}, fmt.Errorf("tokenbucket: take: %w", err)
		}
		if r.Succeeded {
			// The Txn's put is the bucket at the Txn's revision: what this
			// Table knows of it until another write.
			t.remember(view{key: key, b: bucket{present: true, tokens: left, lastMs: last, rev: r.Header.Revision}, shared: shared})
			return left, true, bucket{}, nil
		}
		// T2: a lost race is decided again on the reads the failed
		// transaction returned (at its revision, through the leader:
		// linearizable), never refused for being lost. Another client
		// wrote the bucket: its next takes read first.
		if v, err = t.viewOf(key, r); err != nil {
			return 0, false, bucket{}, err
		}
		confirmed, shared = true, true
	}
}

// firstView is the view a take starts from: what this Table knew of key's
// bucket, unless another client writes it too (shared), else the member's
// own read.
func (t *Table) firstView(ctx context.Context, key, bk string) (view, error) {
	known := t.known[t.place(key)].Load()
	if known != nil && known.key == key && !known.shared {
		return *known, nil
	}
	v, err := t.readView(ctx, key, clientv3.OpGet(bk, clientv3.WithSerializable()), clientv3.OpGet(t.floor, clientv3.WithSerializable()))
	v.shared = known != nil && known.key == key // shared: it is known only as such
	return v, err
}

// confirmView is the linearizable view a refusal decided on v is confirmed
// on. A bucket v holds is read again alone, with one Get through the leader
// (the floor decides nothing about a bucket that is there, T12); if it is
// gone since, or v held none, the bucket and the floor are read together.
func (t *Table) confirmView(ctx context.Context, v view, reads []clientv3.Op) (view, error) {
	if v.b.present {
		r, err := econn.Read(ctx, func(ctx context.Context) (*clientv3.GetResponse, error) {
			return t.c.Get(ctx, t.key(v.key))
		})
		if err != nil {
			return view{}, err
		}
		b, err := parseBucket(r.Kvs)
		if err != nil || b.present {
			return view{key: v.key, b: b}, err
		}
	}
	return t.readView(ctx, v.key, reads...)
}

// readView reads key's bucket and the floor with reads (the bucket's Get,
// then the floor's).
func (t *Table) readView(ctx context.Context, key string, reads ...clientv3.Op) (view, error) {
	r, err := t.readOnly(ctx, reads...)
	if err != nil {
		return view{}, err
	}
	return t.viewOf(key, r)
}

// viewOf is the view a response's two reads give: the bucket's, then the
// floor's.
func (t *Table) viewOf(key string, r *clientv3.TxnResponse) (view, error) {
	b, err := parseBucket(r.Responses[0].GetResponseRange().Kvs)
	if err != nil {
		return view{}, err
	}
	floorMs, floorRev, err := floorOf(r.Responses[1].GetResponseRange().Kvs)
	if err != nil {
		return view{}, err
	}
	return view{key: key, b: b, floorMs: floorMs, floorRev: floorRev}, nil
}

// place is key's place in known.
func (t *Table) place(key string) uint64 { return maphash.String(placeSeed, key) % knownSlots }

// remember makes v what this Table knows of its key.
func (t *Table) remember(v view) { t.known[t.place(v.key)].Store(&v) }

// forget drops what this Table knows of key.
func (t *Table) forget(key string) {
	p := &t.known[t.place(key)]
	if v := p.Load(); v != nil && v.key == key {
		p.CompareAndSwap(v, nil)
	}
}

// forgetAll drops what this Table knows of every key.
func (t *Table) forgetAll() {
	for i := range t.known {
		t.known[i].Store(nil)
	}
}

// Peek is PeekAt with the table's clock.
func (t *Table) Peek(ctx context.Context, key string, lim Limits) (float64, error) {
	return t.PeekAt(ctx, t.clock(), key, lim)
}

// PeekAt reports the tokens key's bucket holds at nowMs, refilled for the
// time elapsed but not consumed (T6); an unseen key holds Capacity. It
// writes nothing, and linearizes at its one read.
func (t *Table) PeekAt(ctx context.Context, nowMs int64, key string, lim Limits) (float64, error) {
	if err := tokenbucket.CheckArgs(lim, 0, false); err != nil {
		return 0, err
	}
	b, err := t.read(ctx, key)
	if err != nil {
		return 0, err
	}
	return b.refill(lim, nowMs), nil
}

func (t *Table) read(ctx context.Context, key string) (bucket, error) {
	r, err := t.readOnly(ctx, clientv3.OpGet(t.key(key)))
	if err != nil {
		return bucket{}, fmt.Errorf("tokenbucket: read: %w", err)
	}
	return parseBucket(r.Responses[0].GetResponseRange().Kvs)
}

// RetryAfter is RetryAfterAt with the table's clock.
func (t *Table) RetryAfter(ctx context.Context, key string, lim Limits, cost float64) (int64, error) {
	return t.RetryAfterAt(ctx, t.clock(), key, lim, cost)
}

// RetryAfterAt reports how many milliseconds after nowMs a take of cost
// would succeed if nobody else took from the bucket: 0 when it covers cost
// now, otherwise the smallest whole w such that TakeAt(nowMs+w, …) succeeds
// (T7), or Never. It reads the bucket once and answers with
// impl/tokenbucket's own code (RetryAfterOf); it writes nothing.
func (t *Table) RetryAfterAt(ctx context.Context, nowMs int64, key string, lim Limits, cost float64) (int64, error) {
	if err := tokenbucket.CheckArgs(lim, cost, true); err != nil {
		return 0, err
	}
	b, err := t.read(ctx, key)
	if err != nil || !b.present { // absent: full, and a valid cost never exceeds capacity
		return 0, err
	}
	return tokenbucket.RetryAfterOf(b.tokens, b.lastMs, lim, cost, nowMs), nil
}

// write runs one transaction that writes; its error is classified.
func (t *Table) write(ctx context.Context, what string, txn func(clientv3.Txn) clientv3.Txn) (*clientv3.TxnResponse, error) {
	r, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return txn(t.c.Txn(ctx)).Commit()
	})
	if err != nil {
		return nil, fmt.Errorf("tokenbucket: %s: %w", what, err)
	}
	return r, nil
}

// Reset forgets key's bucket (T10): its next take starts from a full one,
// stamped no earlier than the floor (T12). It is one delete; the floor
// stays. On a transport error the bucket is reset or untouched as the
// error says.
func (t *Table) Reset(ctx context.Context, key string) error {
	defer t.forget(key) // after the delete: no take's view from before it is kept
	_, err := t.write(ctx, "reset", func(x clientv3.Txn) clientv3.Txn {
		return x.Then(clientv3.OpDelete(t.key(key)))
	})
	return err
}

// ResetAll forgets every bucket of the table and its floor (T10), in one
// delete of the table's prefix: the table is as new.
func (t *Table) ResetAll(ctx context.Context) error {
	defer t.forgetAll()
	_, err := t.write(ctx, "reset-all", func(x clientv3.Txn) clientv3.Txn {
		return x.Then(clientv3.OpDelete(t.prefix, clientv3.WithPrefix()))
	})
	return err
}

// Reclaim is ReclaimAt with the table's clock.
func (t *Table) Reclaim(ctx context.Context, lim Limits) (int, error) {
	return t.ReclaimAt(ctx, t.clock(), lim)
}

// ReclaimAt forgets every bucket that is full at nowMs by lim and whose
// timestamp is not after nowMs, and raises the table's floor to nowMs, as
// impl/tokenbucket's ReclaimAt does (T12); it returns how many buckets it
// forgot. It reads the whole table at one revision, then commits
// transactions of at most 127 buckets each, the first raising the floor
// with them: each bucket is deleted only if it is as read (a take that
// committed since keeps it, and the batch is read and decided again), and
// the first commits only if no bucket was made since the read (else it is
// all read and decided again). A
// reclaim that forgets at most 126 buckets is one transaction, one step for
// every key; a larger one is linearizable per key, as impl/tokenbucket's
// is. Invalid limits return an *ArgError and send nothing. On a transport
// error some batches may have committed (ErrUnknown names the one in
// doubt); the floor is raised before any bucket is forgotten.
func (t *Table) ReclaimAt(ctx context.Context, nowMs int64, lim Limits) (int, error) {
	if err := tokenbucket.CheckArgs(lim, 0, false); err != nil {
		return 0, err
	}
	defer t.forgetAll()
	forgot, floorRaised := 0, false
	for {
		r, err := t.readOnly(ctx, clientv3.OpGet(t.prefix, clientv3.WithPrefix()))
		if err != nil {
			return forgot, fmt.Errorf("tokenbucket: reclaim: %w", err)
		}
		kvs, readRev := r.Responses[0].GetResponseRange().Kvs, r.Header.Revision
		var victims []*mvccpb.KeyValue
		floorMs, floorRev := int64(math.MinInt64), int64(0)
		for _, kv := range kvs {
			if string(kv.Key) == t.floor {
				if floorMs, floorRev, err = floorOf([]*mvccpb.KeyValue{kv}); err != nil {
					return forgot, err
				}
				continue
			}
			b, err := parseBucket([]*mvccpb.KeyValue{kv})
			if err != nil {
				return forgot, err
			}
			if b.lastMs <= nowMs && b.refill(lim, nowMs) == lim.Capacity {
				victims = append(victims, kv)
			}
		}
		lost := false
		for first := true; first || len(victims) > 0; first = false {
			var cmps []clientv3.Cmp
			var ops []clientv3.Op
			if !floorRaised {
				// the floor first (T12): a take that meets a forgotten
				// bucket must stamp no earlier than this reclaim's clock.
				// The floor's put is this reclaim's point for every key
				// the read found absent, so it commits only if no bucket
				// was made since the read: one made by a take stamped from
				// the old floor, and the reclaim, coming after it, would
				// have to judge it (mutant etb-reclaim-misses-new-bucket).
				cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(t.floor), "=", floorRev),
					clientv3.Compare(clientv3.CreateRevision(t.prefix+"b/"), "<", readRev+1).WithPrefix())
				ops = append(ops, clientv3.OpPut(t.floor, encodeMs(max(floorMs, nowMs))))
			}
			n := min(len(victims), maxBatch-len(ops))
			for _, kv := range victims[:n] {
				// present → absent: forgets a bucket full at nowMs, only if
				// no take committed to it since the read.
				cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision))
				ops = append(ops, clientv3.OpDelete(string(kv.Key)))
			}
			if len(ops) == 0 {
				break
			}
			r, err := t.write(ctx, "reclaim", func(x clientv3.Txn) clientv3.Txn { return x.If(cmps...).Then(ops...) })
			if err != nil {
				return forgot, err
			}
			if !r.Succeeded {
				lost = true
				break
			}
			floorRaised = true
			forgot += n
			victims = victims[n:]
		}
		if !lost {
			return forgot, nil
		}
	}
}
