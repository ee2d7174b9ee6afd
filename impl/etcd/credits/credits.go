// Package credits is tollgate's 32-slot credit table (spec/credits.md) kept
// in an etcd cluster, so that callers and the owner may be separate
// processes on separate machines and no acknowledged transition is lost
// when a minority of the members fails (spec/etcd.md).
//
// Slots 1..26 admit the General class and 27..32 the Internal class. A
// caller reserves a slot, then enqueues its payload into that row; an owner
// lists the enqueued rows, takes each, handles it and finishes it, which
// frees the slot. Each reservation carries an epoch unique for the table's
// lifetime, and every later transition is pinned to it, so a stale token
// can never change a recycled slot (C3).
//
// Every transition is the seed's compare-and-swap on one row, with etcd's
// transaction as the compare-and-swap: the row is read at one revision,
// the transition decided on it, and one Txn puts the row's next value only
// if the row's key was not written since (its ModRevision compared) and the
// table was not destroyed. A lost race reads again and decides anew. The
// row's generation, and so its epoch, travels in the row's value: it is
// raised only by a reserve whose Txn committed, and a committed Txn is on a
// majority of the members, so no failover can hand an epoch out twice.
//
// # Holders and leases
//
// A Holder stands for a calling process, as in impl/credits. Its liveness
// is an etcd lease, which the cluster keeps and expires, never a caller's
// clock: NewHolder grants the lease and puts the holder's key under it,
// the holder renews it (Renew, or clientv3's KeepAlive on Holder.Lease),
// and Exit revokes it. When the lease ends, by expiry or revocation, etcd
// deletes the holder's key, and Sweep frees the reserved rows of holders
// whose key is gone (C10). A holder's id is 128 bits from crypto/rand;
// Enqueue and Release compare it, so a client cannot enqueue into or
// release another's reservation without that id.
//
// # Failures
//
// Every method takes a context and may fail in transport: its error then
// wraps ErrNotSent (nothing was written) or ErrUnknown (a Txn that writes
// was sent and no answer came: it may have committed), as impl/etcd/econn
// says; such an outcome is never reported as a refusal. A value under the
// table's prefix that the table never writes is an error wrapping
// ErrUnknown. Bad arguments (an invalid table name, a payload too large, a
// ttl below a second) return an *ArgError and send nothing. The defects of
// C12 (a nil holder or one of another table, a value that is not a class, a
// token slot outside 1..32 or epoch 0) panic, as in impl/credits, and send
// nothing.
package credits

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	mem "github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/impl/redis/credits/holder"
)

// The value types are impl/credits's, so code written against one table
// reads the other's answers unchanged.
type (
	Class    = mem.Class
	Token    = mem.Token
	Result   = mem.Result
	Entry    = mem.Entry[string]
	Counts   = mem.Counts
	Snapshot = mem.Snapshot
	Bounds   = mem.Bounds
)

// Slot counts, classes and results (C1), as impl/credits.
const (
	Slots         = mem.Slots
	GeneralSlots  = mem.GeneralSlots
	InternalSlots = mem.InternalSlots

	General  = mem.General
	Internal = mem.Internal

	OK        = mem.OK
	Exhausted = mem.Exhausted
	Lost      = mem.Lost
	NoTable   = mem.NoTable
)

// TableBounds reports the split every table has: 26 general, 6 internal.
func TableBounds() Bounds { return mem.TableBounds() }

// The transport errors (impl/etcd/econn; see the package doc).
var (
	ErrUnknown = econn.ErrUnknown
	ErrNotSent = econn.ErrNotSent
)

// ErrDestroyed is wrapped by the error of New and NewFromClient on a name
// whose table Destroy ended (C11: a name, once destroyed, is dead for good).
var ErrDestroyed = errors.New("the table was destroyed")

// ErrHolderGone is wrapped by Renew's error when the holder's lease has
// ended (expired, or revoked by Exit): the holder is dead for the table,
// and its reservations that a sweep freed are gone. A process that goes on
// makes a new Holder.
var ErrHolderGone = errors.New("the holder's lease has ended")

// MaxPayload is the largest payload Enqueue stores, in bytes: etcd refuses
// a request larger than its --max-request-bytes (1.5 MiB by default).
const MaxPayload = 1 << 20

// MaxGen is the largest generation a slot hands out, impl/credits': every
// epoch (mem.Epoch) fits in 63 bits (C3).
const MaxGen = mem.MaxGen

// ArgError reports a bad argument: the field, the value given and the rule
// it breaks. A call that returns one sent nothing.
type ArgError struct {
	Field string
	Value any
	Rule  string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("credits: %s %v %s", e.Field, e.Value, e.Rule)
}

// Table is one credit table in etcd, named by a string, holding string
// payloads. The zero value is not usable; create one with New or
// NewFromClient. A Table is safe for concurrent use by many goroutines, and
// any number of Tables in any number of processes may share one name.
type Table struct {
	c      *clientv3.Client
	own    bool
	name   string
	prefix string
	closed string // the key whose presence marks the table destroyed (C11)
}

// Prefix is the key prefix of the table called name. Under it: "closed"
// (present once destroyed), "holder/" + id (one per live holder, put under
// the holder's lease), and "row/01" … "row/32", one per slot that was ever
// reserved (spec/etcd.md, key layout). A row's value is its state byte
// (0 free, 1 reserved, 2 enqueued, 3 processing), its generation (8 bytes,
// big-endian), then, when not free, the reserving holder's id (32 bytes),
// then, when enqueued or processing, the mark (8 bytes, big-endian int64)
// and the payload.
func Prefix(name string) string { return "tollgate/cr/" + name + "/" }

// New connects to the cluster cfg names (clientv3.Config; cfg is not
// modified) and opens the table called name: a table no one has written is
// a live table with every slot free. Close closes the client and leaves
// the table as it is, for its other clients. On error nothing is left
// open. name must be 1 to 256 bytes without "/", or New returns an
// *ArgError; a destroyed name returns an error wrapping ErrDestroyed.
func New(ctx context.Context, cfg clientv3.Config, name string) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c, err := econn.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("credits: %w", err)
	}
	t, err := newTable(ctx, c, name)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	t.own = true
	return t, nil
}

// NewFromClient is New on a client the caller owns and keeps (Close does
// not close it).
func NewFromClient(ctx context.Context, c *clientv3.Client, name string) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return newTable(ctx, c, name)
}

func checkName(name string) error {
	if !econn.CheckName(name) {
		return &ArgError{Field: "name", Value: fmt.Sprintf("%q", name), Rule: econn.NameRule}
	}
	return nil
}

func newTable(ctx context.Context, c *clientv3.Client, name string) (*Table, error) {
	p := Prefix(name)
	t := &Table{c: c, name: name, prefix: p, closed: p + "closed"}
	switch gone, err := t.Destroyed(ctx); {
	case err != nil:
		return nil, err
	case gone:
		return nil, fmt.Errorf("credits: table %q: %w", name, ErrDestroyed)
	}
	return t, nil
}

// Close closes the client if New made it. The table stays in the cluster,
// live for every other client of its name: Close ends this handle, never
// the table (Destroy does that).
func (t *Table) Close() error {
	if !t.own {
		return nil
	}
	return t.c.Close()
}

// Name is the table's name.
func (t *Table) Name() string { return t.name }

// Client is the table's etcd client, for a holder's clientv3.KeepAlive.
func (t *Table) Client() *clientv3.Client { return t.c }

// Holder stands in for the process that holds a reservation: an id of 128
// bits from crypto/rand, recorded in every row the holder reserves and
// compared on Enqueue and Release, and an etcd lease that keeps the
// holder's key in the table while the holder lives. A Holder belongs to
// the table that made it; it is an immutable value, safe for concurrent use.
type Holder struct {
	id     string
	lease  clientv3.LeaseID
	prefix string // its table's
}

// ID is the holder's id, 32 lower-case hex digits: its capability.
func (h *Holder) ID() string { return h.id }

// Lease is the holder's etcd lease, for clientv3's KeepAlive.
func (h *Holder) Lease() clientv3.LeaseID { return h.lease }

// String shows 16 bits of the id: enough to tell holders apart in a log,
// not enough to act as one.
func (h *Holder) String() string { return "holder{" + h.id[:4] + "…}" }

func (t *Table) holderKey(id string) string { return t.prefix + "holder/" + id }

// MaxLeaseTTL is the longest lease NewHolder grants: a longer ttl is an
// *ArgError. etcd itself accepts a ttl of up to 9·10⁹ seconds, and a holder
// whose process died under such a lease would keep its reservations for
// centuries, since only the lease's end makes them sweepable. A holder
// renews well inside its ttl, which is seconds to minutes in practice.
const MaxLeaseTTL = time.Hour

// NewHolder grants a lease of ttl (whole seconds, at least one and at most
// MaxLeaseTTL; etcd may raise a short ttl to its minimum, about 1.5
// election timeouts) and puts
// the new holder's key under it. The holder is live while the lease runs:
// renew it well inside ttl (Renew, or clientv3's KeepAlive). On error no
// holder is returned; a lease granted before the error expires by itself.
func (t *Table) NewHolder(ctx context.Context, ttl time.Duration) (*Holder, error) {
	if ttl < time.Second {
		return nil, &ArgError{Field: "ttl", Value: ttl, Rule: "must be at least 1s (etcd leases count whole seconds)"}
	}
	if ttl > MaxLeaseTTL {
		return nil, &ArgError{Field: "ttl", Value: ttl, Rule: fmt.Sprintf("must be at most MaxLeaseTTL (%v): a dead holder's reservations are freed only when its lease ends", MaxLeaseTTL)}
	}
	g, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.LeaseGrantResponse, error) {
		return t.c.Grant(ctx, int64(ttl/time.Second))
	})
	if err != nil {
		return nil, fmt.Errorf("credits: grant: %w", err)
	}
	h := &Holder{id: holder.New().ID(), lease: g.ID, prefix: t.prefix}
	if _, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.PutResponse, error) {
		return t.c.Put(ctx, t.holderKey(h.id), "", clientv3.WithLease(g.ID))
	}); err != nil {
		return nil, fmt.Errorf("credits: holder: %w", err)
	}
	return h, nil
}

// Renew renews h's lease once, for its full ttl. It returns an error
// wrapping ErrHolderGone when the lease has ended (expired, or Exit).
func (t *Table) Renew(ctx context.Context, h *Holder) error {
	t.checkHolder(h)
	_, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.LeaseKeepAliveResponse, error) {
		return t.c.KeepAliveOnce(ctx, h.lease)
	})
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("credits: renew %v: %w", h, ErrHolderGone)
	}
	if err != nil {
		return fmt.Errorf("credits: renew: %w", err)
	}
	return nil
}

// Exit revokes h's lease, which deletes its key: h has exited. Its
// reservations that were never enqueued are freed by the next sweep; rows
// it enqueued stay with the owner. Exiting twice is harmless.
func (t *Table) Exit(ctx context.Context, h *Holder) error {
	t.checkHolder(h)
	_, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.LeaseRevokeResponse, error) {
		return t.c.Revoke(ctx, h.lease)
	})
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("credits: exit: %w", err)
	}
	return nil
}

func (t *Table) checkHolder(h *Holder) {
	if h == nil {
		panic("credits: nil holder (defect)")
	}
	if h.prefix != t.prefix {
		panic(fmt.Sprintf("credits: %v belongs to the table under %q, not %q (defect)", h, h.prefix, t.prefix))
	}
}

func classRange(c Class) (first, last int) {
	switch c {
	case General:
		return 1, GeneralSlots
	case Internal:
		return GeneralSlots + 1, Slots
	}
	panic(fmt.Sprintf("credits: class %d is neither General nor Internal (defect)", uint8(c)))
}

// tokenArgs returns tok's slot and generation, panicking on a token no
// reservation can carry (C12). An epoch that names another slot, or a
// generation above MaxGen, becomes generation 0, which pins nothing.
func tokenArgs(tok Token) (slot int, gen uint64) {
	if tok.Slot < 1 || tok.Slot > Slots {
		panic(fmt.Sprintf("credits: token slot %d outside 1..%d (defect)", tok.Slot, Slots))
	}
	if tok.Epoch == 0 {
		panic("credits: token epoch 0: no reservation carries it (defect)")
	}
	gen, ok := mem.Generation(tok.Slot, tok.Epoch)
	if !ok {
		return tok.Slot, 0
	}
	return tok.Slot, gen
}

// The row states, as the first byte of a row's value.
const (
	free       = 0
	reserved   = 1
	enqueued   = 2
	processing = 3
)

// row is one slot's row as a read found it; rev is its key's ModRevision
// (0 for a row never reserved: free, generation 0).
type row struct {
	state  byte
	gen    uint64
	holder string
	mark   int64
	pay    string
	rev    int64
}

const holderLen = 32

func (r row) encode() string {
	b := make([]byte, 0, 1+8+holderLen+8+len(r.pay))
	b = append(b, r.state)
	b = binary.BigEndian.AppendUint64(b, r.gen)
	if r.state != free {
		b = append(b, r.holder...)
	}
	if r.state == enqueued || r.state == processing {
		b = binary.BigEndian.AppendUint64(b, uint64(r.mark))
		b = append(b, r.pay...)
	}
	return string(b)
}

func decodeRow(kv *mvccpb.KeyValue) (row, error) {
	v := kv.Value
	bad := func() (row, error) {
		return row{}, fmt.Errorf("credits: %w: key %q holds %d bytes the table never writes", ErrUnknown, kv.Key, len(v))
	}
	if len(v) < 9 || v[0] > processing {
		return bad()
	}
	r := row{state: v[0], gen: binary.BigEndian.Uint64(v[1:9]), rev: kv.ModRevision}
	switch rest := v[9:]; {
	case r.state == free && len(rest) == 0:
	case r.state == reserved && len(rest) == holderLen:
		r.holder = string(rest)
	case r.state >= enqueued && len(rest) >= holderLen+8:
		r.holder = string(rest[:holderLen])
		r.mark = int64(binary.BigEndian.Uint64(rest[holderLen:]))
		r.pay = string(rest[holderLen+8:])
	default:
		return bad()
	}
	return r, nil
}

func (t *Table) rowKey(n int) string { return fmt.Sprintf("%srow/%02d", t.prefix, n) }

// read reads the closed mark and rows first..last at one revision; rows
// is indexed by slot.
//
// The rows come back on the heap, never as an array value: Go 1.24 through
// 1.27.3 on amd64 miscompile a local array of these rows that is indexed
// again after a call (step's rows[n] after its commit). The compiler keeps
// a pointer to the element across the call but takes the array for dead,
// so the garbage collector frees the strings the row holds, and a take
// answered freed memory as its payload (spec/etcd.md §6).
func (t *Table) read(ctx context.Context, first, last int, more ...clientv3.Op) (closed bool, rows *[Slots + 1]row, r *clientv3.TxnResponse, err error) {
	rows = new([Slots + 1]row)
	ops := append([]clientv3.Op{clientv3.OpGet(t.closed), clientv3.OpGet(t.rowKey(first), clientv3.WithRange(t.rowKey(last+1)))}, more...)
	r, err = econn.Read(ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return t.c.Txn(ctx).Then(ops...).Commit()
	})
	if err != nil {
		return false, rows, nil, fmt.Errorf("credits: read: %w", err)
	}
	if err := t.decodeRows(r.Responses[1].GetResponseRange().Kvs, rows); err != nil {
		return false, rows, nil, err
	}
	return len(r.Responses[0].GetResponseRange().Kvs) > 0, rows, r, nil
}

func (t *Table) decodeRows(kvs []*mvccpb.KeyValue, rows *[Slots + 1]row) error {
	for _, kv := range kvs {
		n := 0
		if _, err := fmt.Sscanf(string(kv.Key[len(t.prefix):]), "row/%02d", &n); err != nil || n < 1 || n > Slots || t.rowKey(n) != string(kv.Key) {
			return fmt.Errorf("credits: %w: key %q is not a row the table writes", ErrUnknown, kv.Key)
		}
		r, err := decodeRow(kv)
		if err != nil {
			return err
		}
		rows[n] = r
	}
	return nil
}

// commit runs one transaction that writes: cmps, and the table not
// destroyed, then ops. It reports whether the compares held; its error is
// econn's classification (ErrUnknown: it may have committed).
func (t *Table) commit(ctx context.Context, what string, cmps []clientv3.Cmp, ops ...clientv3.Op) (bool, error) {
	cmps = append(cmps, clientv3.Compare(clientv3.Version(t.closed), "=", 0))
	r, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return t.c.Txn(ctx).If(cmps...).Then(ops...).Commit()
	})
	if err != nil {
		return false, fmt.Errorf("credits: %s: %w", what, err)
	}
	return r.Succeeded, nil
}

// step is one pinned transition of row n: it reads the row, asks decide
// for its next value (ok false: a refusal, which writes nothing and
// linearizes at the read), and commits it only if the row is as read and
// the table not destroyed; a lost race reads again. closed reports a
// destroyed table, which changes nothing.
func (t *Table) step(ctx context.Context, what string, n int, decide func(r row) (next row, ok bool)) (applied, closed bool, before row, err error) {
	for {
		closed, rows, _, err := t.read(ctx, n, n)
		if err != nil || closed {
			return false, closed, row{}, err
		}
		next, ok := decide(rows[n])
		if !ok {
			return false, false, rows[n], nil
		}
		done, err := t.commit(ctx, what, []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(t.rowKey(n)), "=", rows[n].rev)},
			clientv3.OpPut(t.rowKey(n), next.encode()))
		if err != nil || done {
			return done, false, rows[n], err
		}
	}
}

// Reserve claims the lowest free slot of class c for h under a fresh epoch
// (C1, C2, C3) and returns its token. It returns Exhausted when every slot
// of c is in use and NoTable after Destroy; both write nothing and
// linearize at the read of the class. A reserve commits only if no row of
// c at or below the slot it claims was written since that read, so the slot
// is the lowest free one at the commit too (C2), and Exhausted is exact:
// the whole class is read at one revision. When the slot it would claim
// has handed out MaxGen generations it returns an error and writes nothing.
func (t *Table) Reserve(ctx context.Context, h *Holder, c Class) (Token, Result, error) {
	t.checkHolder(h)
	first, last := classRange(c)
	for {
		closed, rows, r, err := t.read(ctx, first, last)
		if err != nil {
			return Token{}, 0, err
		}
		if closed {
			return Token{}, NoTable, nil
		}
		n := first
		for n <= last && rows[n].state != free {
			n++
		}
		if n > last {
			return Token{}, Exhausted, nil
		}
		gen := rows[n].gen + 1
		if gen > MaxGen {
			return Token{}, 0, fmt.Errorf("credits: slot %d has handed out its last generation (%d); another reservation would repeat an epoch (C3)", n, rows[n].gen)
		}
		// free → reserved, generation + 1, pinned to h: only if rows
		// first..n are as read (none freed below n, n still free).
		rev := r.Header.Revision
		done, err := t.commit(ctx, "reserve",
			[]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(t.rowKey(first)), "<", rev+1).WithRange(t.rowKey(n + 1))},
			clientv3.OpPut(t.rowKey(n), row{state: reserved, gen: gen, holder: h.id}.encode()))
		if err != nil {
			return Token{}, 0, err
		}
		if done {
			return Token{Slot: n, Epoch: mem.Epoch(n, gen)}, OK, nil
		}
	}
}

// EnqueueAt stores payload in tok's row and publishes it as enqueued,
// marked at nowMs, in one transaction (C4, C5): no observer ever sees an
// enqueued row without its payload. It succeeds only for the holder that
// reserved, with that epoch, from reserved; otherwise it returns Lost. It
// returns NoTable after Destroy. Refusals write nothing. A payload over
// MaxPayload bytes returns an *ArgError and sends nothing.
func (t *Table) EnqueueAt(ctx context.Context, nowMs int64, h *Holder, tok Token, payload string) (Result, error) {
	t.checkHolder(h)
	n, gen := tokenArgs(tok)
	if len(payload) > MaxPayload {
		return 0, &ArgError{Field: "payload", Value: fmt.Sprintf("of %d bytes", len(payload)), Rule: fmt.Sprintf("must be at most %d bytes", MaxPayload)}
	}
	applied, closed, _, err := t.step(ctx, "enqueue", n, func(r row) (row, bool) {
		// reserved → enqueued, for the reserving holder and generation
		return row{state: enqueued, gen: r.gen, holder: r.holder, mark: nowMs, pay: payload},
			r.state == reserved && r.gen == gen && r.holder == h.id
	})
	switch {
	case err != nil:
		return 0, err
	case closed:
		return NoTable, nil
	case !applied:
		return Lost, nil
	}
	return OK, nil
}

// Take moves tok's row from enqueued to processing and returns its payload,
// which stays the row's until Finish (C6, C7). It reports false, writing
// nothing, when the row is not enqueued under tok's epoch or the table is
// destroyed. Each enqueued payload is taken at most once.
func (t *Table) Take(ctx context.Context, tok Token) (string, bool, error) {
	n, gen := tokenArgs(tok)
	applied, _, was, err := t.step(ctx, "take", n, func(r row) (row, bool) {
		// enqueued → processing, of tok's generation; the payload stays
		ok := r.state == enqueued && r.gen == gen
		r.state = processing
		return r, ok
	})
	if err != nil || !applied {
		return "", false, err
	}
	return was.pay, true, nil
}

// Finish frees tok's row when it is processing or, defensively, still
// enqueued under tok's epoch, so a row listed twice drains exactly once
// (C8). It reports whether this call freed the row; a repeated Finish, or
// one after Destroy, writes nothing and reports false.
func (t *Table) Finish(ctx context.Context, tok Token) (bool, error) {
	n, gen := tokenArgs(tok)
	applied, _, _, err := t.step(ctx, "finish", n, func(r row) (row, bool) {
		// processing or enqueued → free, of tok's generation; the
		// generation stays (C3)
		return row{state: free, gen: r.gen}, r.gen == gen && (r.state == processing || r.state == enqueued)
	})
	return applied, err
}

// Release frees tok's row only when it is reserved by h under tok's epoch,
// and reports whether it did (C9); at most one Release of a token succeeds.
// Another holder's id, or a guessed one, frees nothing.
func (t *Table) Release(ctx context.Context, h *Holder, tok Token) (bool, error) {
	t.checkHolder(h)
	n, gen := tokenArgs(tok)
	applied, _, _, err := t.step(ctx, "release", n, func(r row) (row, bool) {
		// reserved → free, for the reserving holder and generation
		return row{state: free, gen: r.gen}, r.state == reserved && r.gen == gen && r.holder == h.id
	})
	return applied, err
}

// Sweep frees every reserved row whose holder's key is gone (its lease
// expired, or Exit revoked it), and returns how many rows it freed (C10,
// C17). Enqueued and processing rows are never swept. It is one step: the
// rows and the holders are read at one revision, and one transaction frees
// the rows only if none of them, and none of their holders' keys, changed
// since (else it reads again). Liveness is the cluster's judgment, never a
// caller's clock. After Destroy it frees nothing and returns 0.
func (t *Table) Sweep(ctx context.Context) (int, error) {
	for {
		closed, rows, r, err := t.read(ctx, 1, Slots, clientv3.OpGet(t.holderKey(""), clientv3.WithPrefix(), clientv3.WithKeysOnly()))
		if err != nil || closed {
			return 0, err
		}
		live := map[string]bool{}
		for _, kv := range r.Responses[2].GetResponseRange().Kvs {
			live[string(kv.Key)] = true
		}
		var cmps []clientv3.Cmp
		var ops []clientv3.Op
		gone := map[string]bool{}
		for n := 1; n <= Slots; n++ {
			if rows[n].state != reserved || live[t.holderKey(rows[n].holder)] {
				continue
			}
			// reserved → free, of a holder without a lease: only if the
			// row is as read and the holder's key still absent.
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(t.rowKey(n)), "=", rows[n].rev))
			ops = append(ops, clientv3.OpPut(t.rowKey(n), row{state: free, gen: rows[n].gen}.encode()))
			if k := t.holderKey(rows[n].holder); !gone[k] {
				gone[k] = true
				cmps = append(cmps, clientv3.Compare(clientv3.Version(k), "=", 0))
			}
		}
		if len(ops) == 0 {
			return 0, nil
		}
		done, err := t.commit(ctx, "sweep", cmps, ops...)
		if err != nil || done {
			return len(ops), err
		}
	}
}

// Enqueued lists the enqueued rows, oldest mark first, ties by slot (C13):
// the owner's poll. It is a read-only view of one revision; consuming a row
// is still Take. A destroyed table lists nothing.
func (t *Table) Enqueued(ctx context.Context) ([]Entry, error) {
	closed, rows, _, err := t.read(ctx, 1, Slots)
	if err != nil || closed {
		return nil, err
	}
	var out []Entry
	for n := 1; n <= Slots; n++ {
		if r := rows[n]; r.state == enqueued {
			out = append(out, Entry{Token: Token{Slot: n, Epoch: mem.Epoch(n, r.gen)}, MarkedMs: r.mark, Payload: r.pay})
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		switch {
		case a.MarkedMs < b.MarkedMs:
			return -1
		case a.MarkedMs > b.MarkedMs:
			return 1
		}
		return 0
	})
	return out, nil
}

// Snapshot counts the rows of each class by state (C14), at one revision.
// A destroyed table reports zero counts and Closed.
func (t *Table) Snapshot(ctx context.Context) (Snapshot, error) {
	closed, rows, _, err := t.read(ctx, 1, Slots)
	if err != nil {
		return Snapshot{}, err
	}
	if closed {
		return Snapshot{Closed: true}, nil
	}
	var s Snapshot
	for n := 1; n <= Slots; n++ {
		c := &s.General
		if n > GeneralSlots {
			c = &s.Internal
		}
		switch rows[n].state {
		case free:
			c.Free++
		case reserved:
			c.Reserved++
		case enqueued:
			c.Enqueued++
		case processing:
			c.Processing++
		}
	}
	return s, nil
}

// Destroy ends the table for every client of its name, irreversibly (C11):
// one transaction marks it closed and deletes every row, payload and holder
// key. From then on Reserve and Enqueue return NoTable, Take reports
// nothing, Finish and Release do nothing, Sweep frees nothing, Enqueued is
// empty and Snapshot is all zero, for every client of the name, and New on
// the name fails with ErrDestroyed. Every transition compares the closed
// mark, so no epoch is handed out after it, though the generations are
// gone. It is not how a client lets go of its connection: that is Close.
func (t *Table) Destroy(ctx context.Context) error {
	_, err := econn.Do(ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return t.c.Txn(ctx).Then(clientv3.OpPut(t.closed, "1"),
			clientv3.OpDelete(t.prefix+"row/", clientv3.WithPrefix()),
			clientv3.OpDelete(t.prefix+"holder/", clientv3.WithPrefix())).Commit()
	})
	if err != nil {
		return fmt.Errorf("credits: destroy: %w", err)
	}
	return nil
}

// Destroyed reports whether the table was destroyed.
func (t *Table) Destroyed(ctx context.Context) (bool, error) {
	r, err := econn.Read(ctx, func(ctx context.Context) (*clientv3.GetResponse, error) {
		return t.c.Get(ctx, t.closed, clientv3.WithCountOnly())
	})
	if err != nil {
		return false, fmt.Errorf("credits: read: %w", err)
	}
	return r.Count > 0, nil
}
