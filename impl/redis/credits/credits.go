// Package credits is tollgate's 32-slot credit table (spec/credits.md) kept
// in Redis, so that callers and the owner may be separate processes on
// separate machines. It is impl/credits with the table in a Redis hash and
// every transition one call of a Redis function of the library tollgate_cr
// (credits.lua), which Redis runs to completion with nothing in between.
//
// Slots 1..26 admit the General class and 27..32 the Internal class. A
// caller reserves a slot, then enqueues its payload into that row; an owner
// lists the enqueued rows, takes each, handles it and finishes it, which
// frees the slot. Each reservation carries an epoch unique for the table's
// lifetime, and every later transition is pinned to it, so a stale token
// can never change a recycled slot (C3).
//
// # Holders and leases
//
// A Holder stands for a calling process, as in impl/credits, but its
// liveness cannot be a flag in this process's memory: it is a lease in the
// table, which the holder renews (RenewAt: the lease runs until nowMs +
// ttlMs on the callers' clock) and drops when it exits (Exit). SweepAt(nowMs)
// frees the reserved rows whose holder holds no lease running past nowMs:
// the Redis stand-in for "the holder's process has exited" (C10). The
// server's clock bounds the callers': a sweep or a renewal whose nowMs runs
// more than MaxClockAheadMs ahead of it is refused (ErrClockAhead), so no
// caller frees a reservation whose lease runs further than that past the
// server's clock. A holder's id is 128 bits from crypto/rand; Enqueue and Release compare it, so a
// client cannot enqueue into or release another's reservation without that
// id.
//
// Reserve neither needs nor renews a lease: a holder renews before it
// reserves and while it holds a reservation, at an interval well inside its
// ttl. A reservation whose holder holds no running lease (never renewed,
// expired, or dropped) is freed by the next sweep, and only then: until a
// sweep frees it, the holder's enqueue and release still succeed, exactly as
// an exited holder's would in the model (only sweep consults liveness).
// After a sweep freed it, they answer Lost and false; the epoch is the
// fencing token that makes a late call by a holder that paused past its
// lease harmless. An expired holder may renew and go on: its lease runs
// again, and tokens a sweep did not free are its own again.
//
// # Failures
//
// Every method takes a context and may fail in transport: its error then
// wraps ErrNotSent (nothing ran) or ErrUnknown (the call was sent and no
// reply came: it may have committed), as impl/redis/rconn says; such an
// outcome is never reported as a refusal. A server error reply (an
// out-of-memory refusal, a slot past its last generation) is returned,
// wrapped, and the call wrote nothing; a server that lost the library gets
// it again and the call is sent once more. A reply of a shape the library
// never gives is an error wrapping ErrUnknown. Bad arguments (an invalid table name or
// lease) return an *ArgError and send nothing. The defects of C12 (a nil
// holder, a value that is not a class, a token slot outside 1..32 or epoch
// 0) panic, as in impl/credits, and send nothing.
package credits

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	mem "github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/redis/rconn"
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

// The transport errors, re-exported from rconn (see the package doc).
var (
	ErrUnknown = rconn.ErrUnknown
	ErrNotSent = rconn.ErrNotSent
)

// ErrStateLost is wrapped by the error of any call that finds the table's
// state gone from the server while the table is live: a key of the table
// evicted under maxmemory, deleted, flushed, or missing on a replica
// promoted in a failover. The call wrote nothing. Going on would issue
// epochs already issued (C3) and sweep live holders (C10), so the table
// refuses instead; the operator decides (a table under a new name starts
// afresh). New marks each key of a live table (a field "live"), so that
// the loss of either is seen; a process that opens the name after both
// keys are gone finds a fresh table and cannot tell (spec/credits.md
// §10.5). New refuses a server whose maxmemory-policy can evict the keys
// (rconn.CheckEviction, ErrEvictable).
var ErrStateLost = errors.New("the table's state is gone from the server")

// ErrEvictable is rconn.ErrEvictable.
var ErrEvictable = rconn.ErrEvictable

// stateLost wraps ErrStateLost around the library's refusal of a table
// whose marker is gone; any other error is returned as it is.
func stateLost(err error) error {
	var reply goredis.Error
	if errors.As(err, &reply) && strings.Contains(reply.Error(), "tollgate_cr: state lost") {
		return fmt.Errorf("%w: %w", ErrStateLost, err)
	}
	return err
}

// ErrDestroyed is wrapped by the error of New and NewFromClient on a name
// whose table Destroy ended (C11: a name, once destroyed, is dead for good).
var ErrDestroyed = errors.New("the table was destroyed")

// MaxClockAheadMs is how far, in milliseconds, the clock a sweep or a
// renewal is given may run ahead of the server's (Redis TIME): the library
// refuses a call beyond it, writing nothing, with an error that wraps
// ErrClockAhead. Leases are judged on the callers' clock (so a checker
// replays a sweep exactly), and this bound is what keeps that clock honest:
// a caller whose clock runs far ahead, by mistake or not, cannot sweep a
// reservation whose lease runs more than MaxClockAheadMs past the server's
// clock, nor (with MaxLeaseMs) set a lease that no sweep reaches.
const MaxClockAheadMs = 10_000

// MaxLeaseMs is the longest lease RenewAt sets: a ttlMs above it is an
// *ArgError, and the library refuses a lease expiry more than
// MaxClockAheadMs + MaxLeaseMs past the server's clock whoever sends it.
// So every lease ends at a time a sweep may be given, and a holder that
// stops renewing has its unenqueued reservations freed at most that long
// after its last renewal; without the cap RenewAt(nowMs, h,
// math.MaxInt64-nowMs) set a lease no sweep ever reached. A holder renews
// well inside its ttl, which is seconds to minutes in practice.
const MaxLeaseMs = 3_600_000

// ErrClockAhead is wrapped by the error of SweepAt and RenewAt when their
// nowMs runs more than MaxClockAheadMs ahead of the server's clock. The
// call ran and wrote nothing.
var ErrClockAhead = errors.New("now_ms runs ahead of the server's clock by more than MaxClockAheadMs")

//go:embed credits.lua
var librarySource string

// baseLibrary is the library's name as credits.lua spells it, in its first
// line and as the prefix of every function it registers.
const baseLibrary = "tollgate_cr"

// library is the name the package loads the library under. A mutant copy of
// this package (internal/mutants) sets its own, so that its functions load
// beside the real ones on a shared server rather than over them.
var library = baseLibrary

// source is the library's text under the package's library name.
func source() string { return strings.ReplaceAll(librarySource, baseLibrary, library) }

// MaxGen is the largest generation a slot hands out: 2^48 - 1, below
// impl/credits' cap (mem.MaxGen), so that every epoch (mem.Epoch, the same
// encoding) is below 2^53 and exact in the functions' Lua numbers. A slot
// that has used it refuses to reserve again, with an error reply, rather
// than repeat an epoch (C3): 2^48 reservations of one slot take 89 years at
// 100,000 a second.
const MaxGen = 1<<48 - 1

// ArgError reports a bad argument: the field, the value given and the rule
// it breaks. A call that returns one sent nothing and changed nothing.
type ArgError struct {
	Field string
	Value any
	Rule  string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("credits: %s = %q: %s", e.Field, fmt.Sprint(e.Value), e.Rule)
}

// Table is one credit table in Redis, named by a string, holding string
// payloads (which may be any bytes: the caller encodes). The zero value is
// not usable; open one with New. A Table is safe for concurrent use, by any
// number of goroutines and processes that open the same name on the same
// server.
type Table struct {
	c    goredis.UniversalClient
	own  bool // New made c, and Close closes it
	name string
	keys []string // rows, leases: one hash tag, so one cluster slot
	fn   functions
}

// functions are the library's function names.
type functions struct {
	reserve, enqueue, take, finish, release, sweep, renew, drop, enqueued, snapshot, close, closed, open string
}

// New connects to the server opts names (address, ACL user and password,
// TLS, pool and time-outs, as go-redis's Options; opts is not modified) with
// a client that never retries a call (rconn.NewClient), loads the
// tollgate_cr library there (rconn.Load: never over a newer version) and opens the table
// called name: a table no one has written is a live table with every slot
// free. Close closes the client and leaves the table as it is, for its
// other clients. On error nothing is left open.
//
// name must be 1 to 256 bytes without '{' or '}' (it is the hash tag of the
// table's keys), or New returns an *ArgError. A destroyed table stays
// destroyed: a name, once destroyed, is dead for good (C11), and New on it
// returns an error wrapping ErrDestroyed.
func New(ctx context.Context, opts *goredis.Options, name string) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c := rconn.NewClient(opts)
	t, err := newTable(ctx, c, name)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	t.own = true
	return t, nil
}

// NewCluster is New on a Redis Cluster: opts are go-redis's cluster
// options, and the client built from them never sends a call twice on its
// own (rconn.NewClusterClient: no retries, no redirects followed by
// go-redis; the table follows MOVED and ASK itself, which a node answers
// only when it ran nothing). The library is loaded on every primary. Both
// keys of a table share one hash tag, its name, so a table lives in one
// slot and every transition is one function on one node; tables spread
// over the cluster by name. Close closes the client.
func NewCluster(ctx context.Context, opts *goredis.ClusterOptions, name string) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c := rconn.NewClusterClient(opts)
	t, err := newTable(ctx, c, name)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	t.own = true
	return t, nil
}

// NewFromClient is New on a client the caller owns and keeps (Close does
// not close it): a *goredis.Client or a *goredis.ClusterClient. It refuses a client that would retry a call on its
// own (rconn.CheckClient): build it with rconn.NewClient, or Options.MaxRetries = -1.
func NewFromClient(ctx context.Context, c goredis.UniversalClient, name string) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := rconn.CheckClient(c); err != nil {
		return nil, err
	}
	return newTable(ctx, c, name)
}

func checkName(name string) error {
	if !rconn.ValidTableName(name) {
		return &ArgError{Field: "name", Value: name, Rule: rconn.TableNameRule}
	}
	return nil
}

func newTable(ctx context.Context, c goredis.UniversalClient, name string) (*Table, error) {
	f := func(op string) string { return library + "_" + op }
	t := &Table{c: c, name: name, keys: Keys(name), fn: functions{
		reserve: f("reserve"), enqueue: f("enqueue"), take: f("take"), finish: f("finish"),
		release: f("release"), sweep: f("sweep"), renew: f("renew"), drop: f("drop"),
		enqueued: f("enqueued"), snapshot: f("snapshot"), close: f("close"), closed: f("closed"), open: f("open"),
	}}
	if err := rconn.CheckEviction(ctx, c); err != nil {
		return nil, fmt.Errorf("credits: table %q: %w", name, err)
	}
	if err := rconn.Load(ctx, c, library, source()); err != nil {
		return nil, err
	}
	// Mark the table live in both its keys (or find it live, or destroyed):
	// a call that later finds a marker gone fails with ErrStateLost rather
	// than issue epochs again.
	v, err := t.call(ctx, false, t.fn.open)
	if err != nil {
		return nil, stateLost(err)
	}
	switch r, err := resultOf(t.fn.open, v); {
	case err != nil:
		return nil, err
	case r == NoTable:
		return nil, fmt.Errorf("credits: table %q: %w", name, ErrDestroyed)
	}
	return t, nil
}

// Close closes the client if New made it (a client given to NewFromClient
// stays open). The table stays on the server as it is, live for every
// other client of its name: Close ends this handle, never the table
// (Destroy does that). Calls after Close fail with ErrNotSent.
func (t *Table) Close() error {
	if !t.own {
		return nil
	}
	return t.c.Close()
}

// Keys returns the table's keys: its rows hash and its leases hash, both
// under the hash tag {name}.
func Keys(name string) []string {
	return []string{"tollgate:cr:{" + name + "}:rows", "tollgate:cr:{" + name + "}:leases"}
}

// Name is the table's name.
func (t *Table) Name() string { return t.name }

func checkHolder(h *Holder) {
	if h == nil {
		panic("credits: nil holder (defect)")
	}
}

func classArg(c Class) string {
	switch c {
	case General:
		return "1"
	case Internal:
		return "2"
	}
	panic(fmt.Sprintf("credits: class %d is neither General nor Internal (defect)", uint8(c)))
}

// tokenArgs returns tok's slot and generation as the functions take them,
// panicking on a token no reservation can carry (C12). An epoch that names
// another slot or a generation never handed out becomes generation 0, which
// pins nothing.
func tokenArgs(tok Token) (slot, gen string) {
	if tok.Slot < 1 || tok.Slot > Slots {
		panic(fmt.Sprintf("credits: token slot %d outside 1..%d (defect)", tok.Slot, Slots))
	}
	if tok.Epoch == 0 {
		panic(fmt.Sprintf("credits: token for slot %d has epoch 0, which no reservation carries (defect)", tok.Slot))
	}
	g, ok := mem.Generation(tok.Slot, tok.Epoch)
	if !ok || g < 1 || g > MaxGen {
		g = 0
	}
	return strconv.Itoa(tok.Slot), strconv.FormatUint(g, 10)
}

// call runs one function of the library on the table's keys (rconn.Call:
// FCALL_RO for one flagged no-writes, which a replica may serve; the
// library loaded again after "Function not found", MOVED, ASK and TRYAGAIN
// followed on a cluster; nothing else sent twice).
func (t *Table) call(ctx context.Context, readOnly bool, fn string, args ...any) (any, error) {
	v, err := rconn.Call(ctx, t.c, library, source(), readOnly, fn, t.keys, args...)
	if err != nil {
		return nil, fmt.Errorf("credits: %s: %w", fn, stateLost(err))
	}
	return v, nil
}

// clockAhead wraps ErrClockAhead around the library's refusal of a clock
// too far ahead of the server's; any other error is returned as it is.
func clockAhead(err error) error {
	var reply goredis.Error
	if errors.As(err, &reply) && strings.Contains(reply.Error(), "runs ahead of the server's clock") {
		return fmt.Errorf("%w: %w", ErrClockAhead, err)
	}
	return err
}

// malformed is the error for a reply the library never gives (a library of
// another version, or keys written by something else). The call was sent
// and ran, so what it did is unknown to the caller.
func malformed(fn string, v any) error {
	return fmt.Errorf("credits: %s: %w: unexpected reply %#v", fn, ErrUnknown, v)
}

func resultOf(fn string, v any) (Result, error) {
	n, ok := v.(int64)
	if !ok || n < int64(OK) || n > int64(NoTable) {
		return 0, malformed(fn, v)
	}
	return Result(n), nil
}

func intsOf(fn string, v any, n int) ([]int64, error) {
	vs, ok := v.([]any)
	if !ok || len(vs) != n {
		return nil, malformed(fn, v)
	}
	out := make([]int64, n)
	for i, x := range vs {
		if out[i], ok = x.(int64); !ok {
			return nil, malformed(fn, v)
		}
	}
	return out, nil
}

// RenewAt makes h's lease run until nowMs + ttlMs, exclusive, on the
// callers' clock (milliseconds; the clock SweepAt is given), replacing its
// expiry (so a renewal with an earlier clock shortens it). ttlMs must be
// positive and at most MaxLeaseMs, and nowMs + ttlMs must not overflow, or
// RenewAt returns an *ArgError. A nowMs more than MaxClockAheadMs ahead of the server's
// clock is refused with an error wrapping ErrClockAhead, writing nothing.
// It returns NoTable, writing nothing, after Close.
func (t *Table) RenewAt(ctx context.Context, nowMs int64, h *Holder, ttlMs int64) (Result, error) {
	checkHolder(h)
	if ttlMs <= 0 {
		return 0, &ArgError{Field: "ttl_ms", Value: ttlMs, Rule: "must be positive"}
	}
	if ttlMs > MaxLeaseMs {
		return 0, &ArgError{Field: "ttl_ms", Value: ttlMs, Rule: fmt.Sprintf("must be at most MaxLeaseMs (%d): no sweep could end a longer lease in time", MaxLeaseMs)}
	}
	if nowMs > 0 && ttlMs > 1<<63-1-nowMs {
		return 0, &ArgError{Field: "ttl_ms", Value: ttlMs, Rule: fmt.Sprintf("now_ms %d + ttl_ms overflows int64", nowMs)}
	}
	v, err := t.call(ctx, false, t.fn.renew, h.ID(), strconv.FormatInt(nowMs+ttlMs, 10), strconv.FormatInt(nowMs, 10))
	if err != nil {
		return 0, clockAhead(err)
	}
	return resultOf(t.fn.renew, v)
}

// Exit drops h's lease: h has exited. Its reservations that were never
// enqueued are freed by the next sweep; rows it enqueued stay with the
// owner. Exiting twice is harmless, and so is exiting on a closed table. h
// may renew later, which makes it live again (a process that exited does
// not).
func (t *Table) Exit(ctx context.Context, h *Holder) error {
	checkHolder(h)
	_, err := t.call(ctx, false, t.fn.drop, h.ID())
	return err
}

// Reserve claims the lowest free slot of class c for h under a fresh epoch
// (C1, C2, C3) and returns its token. It returns Exhausted when every slot
// of c is in use and NoTable after Close; both write nothing. Reserve is
// one function call: it sees the whole class at one instant, so Exhausted
// is exact and the lowest free slot is claimed even under concurrency.
// When the slot it would claim has handed out MaxGen generations it
// returns the server's error reply and writes nothing.
func (t *Table) Reserve(ctx context.Context, h *Holder, c Class) (Token, Result, error) {
	checkHolder(h)
	v, err := t.call(ctx, false, t.fn.reserve, h.ID(), classArg(c))
	if err != nil {
		return Token{}, 0, err
	}
	r, err := intsOf(t.fn.reserve, v, 3)
	if err != nil {
		return Token{}, 0, err
	}
	res, err := resultOf(t.fn.reserve, r[0])
	if err != nil || res != OK {
		return Token{}, res, err
	}
	first, last := mem.GeneralSlots+1, mem.Slots
	if c == General {
		first, last = 1, mem.GeneralSlots
	}
	if r[1] < int64(first) || r[1] > int64(last) || r[2] < 1 || r[2] > MaxGen {
		return Token{}, 0, malformed(t.fn.reserve, v)
	}
	return Token{Slot: int(r[1]), Epoch: mem.Epoch(int(r[1]), uint64(r[2]))}, OK, nil
}

// EnqueueAt stores payload in tok's row and publishes it as enqueued,
// marked at nowMs, in one function call (C4, C5): no observer ever sees an
// enqueued row without its payload. It succeeds only for the holder that
// reserved, with that epoch, from reserved; otherwise it returns Lost. It
// returns NoTable after Close. Refusals write nothing. The payload is
// stored as given, byte for byte; Redis bounds its size
// (proto-max-bulk-len, 512 MB by default) and refuses a larger one with an
// error reply, writing nothing.
func (t *Table) EnqueueAt(ctx context.Context, nowMs int64, h *Holder, tok Token, payload string) (Result, error) {
	checkHolder(h)
	slot, gen := tokenArgs(tok)
	v, err := t.call(ctx, false, t.fn.enqueue, h.ID(), slot, gen, strconv.FormatInt(nowMs, 10), payload)
	if err != nil {
		return 0, err
	}
	return resultOf(t.fn.enqueue, v)
}

// Take moves tok's row from enqueued to processing and returns its payload,
// which stays the row's until Finish (C6, C7). It reports false, writing
// nothing, when the row is not enqueued under tok's epoch or the table is
// closed. Each enqueued payload is taken at most once.
func (t *Table) Take(ctx context.Context, tok Token) (string, bool, error) {
	slot, gen := tokenArgs(tok)
	v, err := t.call(ctx, false, t.fn.take, slot, gen)
	if err != nil {
		return "", false, err
	}
	vs, ok := v.([]any)
	switch {
	case ok && len(vs) == 1 && vs[0] == int64(0):
		return "", false, nil
	case ok && len(vs) == 2 && vs[0] == int64(1):
		if p, ok := vs[1].(string); ok {
			return p, true, nil
		}
	}
	return "", false, malformed(t.fn.take, v)
}

func boolOf(fn string, v any) (bool, error) {
	switch v {
	case int64(0):
		return false, nil
	case int64(1):
		return true, nil
	}
	return false, malformed(fn, v)
}

// Finish frees tok's row when it is processing or, defensively, still
// enqueued under tok's epoch, so a row listed twice drains exactly once
// (C8). It reports whether this call freed the row; a repeated Finish, or
// one after Close, writes nothing and reports false.
func (t *Table) Finish(ctx context.Context, tok Token) (bool, error) {
	slot, gen := tokenArgs(tok)
	v, err := t.call(ctx, false, t.fn.finish, slot, gen)
	if err != nil {
		return false, err
	}
	return boolOf(t.fn.finish, v)
}

// Release frees tok's row only when it is reserved by h under tok's epoch,
// and reports whether it did (C9); at most one Release of a token succeeds.
// Another holder's id, or a guessed one, frees nothing.
func (t *Table) Release(ctx context.Context, h *Holder, tok Token) (bool, error) {
	checkHolder(h)
	slot, gen := tokenArgs(tok)
	v, err := t.call(ctx, false, t.fn.release, h.ID(), slot, gen)
	if err != nil {
		return false, err
	}
	return boolOf(t.fn.release, v)
}

// SweepAt frees every reserved row whose holder holds no lease running past
// nowMs (never renewed, expired at or before nowMs, or dropped by Exit),
// forgets every expired lease, and returns how many rows it freed (C10).
// Enqueued and processing rows are never swept. Unlike impl/credits's Sweep
// it is one atomic step. A nowMs more than MaxClockAheadMs ahead of the
// server's clock is refused with an error wrapping ErrClockAhead, freeing
// nothing. After Close it frees nothing and returns 0. Its cost grows with
// the number of leases held.
func (t *Table) SweepAt(ctx context.Context, nowMs int64) (int, error) {
	v, err := t.call(ctx, false, t.fn.sweep, strconv.FormatInt(nowMs, 10))
	if err != nil {
		return 0, clockAhead(err)
	}
	n, ok := v.(int64)
	if !ok || n < 0 || n > Slots {
		return 0, malformed(t.fn.sweep, v)
	}
	return int(n), nil
}

// Enqueued lists the enqueued rows, oldest mark first, ties by slot (C13):
// the owner's poll. It is a read-only view, of one instant (one function
// call, runnable on a replica with FCALL_RO); consuming a row is still
// Take. A closed table lists nothing.
func (t *Table) Enqueued(ctx context.Context) ([]Entry, error) {
	v, err := t.call(ctx, true, t.fn.enqueued)
	if err != nil {
		return nil, err
	}
	vs, ok := v.([]any)
	if !ok || len(vs)%4 != 0 {
		return nil, malformed(t.fn.enqueued, v)
	}
	var out []Entry
	for i := 0; i < len(vs); i += 4 {
		slot, ok1 := vs[i].(int64)
		gs, ok2 := vs[i+1].(string)
		ms, ok3 := vs[i+2].(string)
		p, ok4 := vs[i+3].(string)
		gen, err1 := strconv.ParseUint(gs, 10, 64)
		mark, err2 := strconv.ParseInt(ms, 10, 64)
		if !ok1 || !ok2 || !ok3 || !ok4 || err1 != nil || err2 != nil || slot < 1 || slot > Slots || gen < 1 || gen > MaxGen {
			return nil, malformed(t.fn.enqueued, v)
		}
		e := Entry{Token: Token{Slot: int(slot), Epoch: mem.Epoch(int(slot), gen)}, MarkedMs: mark, Payload: p}
		// Insertion by mark: the function lists in slot order, so equal
		// marks stay in slot order.
		j := len(out)
		out = append(out, e)
		for ; j > 0 && out[j-1].MarkedMs > mark; j-- {
			out[j] = out[j-1]
		}
		out[j] = e
	}
	return out, nil
}

// Snapshot counts the rows of each class by state (C14), at one instant
// (one function call). A closed table reports zero counts.
func (t *Table) Snapshot(ctx context.Context) (Snapshot, error) {
	v, err := t.call(ctx, true, t.fn.snapshot)
	if err != nil {
		return Snapshot{}, err
	}
	n, err := intsOf(t.fn.snapshot, v, 9)
	if err != nil {
		return Snapshot{}, err
	}
	c := func(n []int64) Counts {
		return Counts{Free: int(n[0]), Reserved: int(n[1]), Enqueued: int(n[2]), Processing: int(n[3])}
	}
	return Snapshot{General: c(n[:4]), Internal: c(n[4:8]), Closed: n[8] == 1}, nil
}

// Destroy ends the table for every client of its name, irreversibly: its
// owner died and the table died with it (C11, spec/credits.md's close).
// Every row, payload and lease is deleted and the table is marked closed
// for good (the generations stay). From then on Reserve and Enqueue return
// NoTable, Take reports nothing, Finish and Release do nothing, SweepAt
// frees nothing, Enqueued is empty and Snapshot is all zero, for every
// client of the name, and New on the name fails with ErrDestroyed. It is
// not how a client lets go of its connection: that is Close.
func (t *Table) Destroy(ctx context.Context) error {
	_, err := t.call(ctx, false, t.fn.close)
	return err
}

// Destroyed reports whether the table was destroyed.
func (t *Table) Destroyed(ctx context.Context) (bool, error) {
	v, err := t.call(ctx, true, t.fn.closed)
	if err != nil {
		return false, err
	}
	return boolOf(t.fn.closed, v)
}
