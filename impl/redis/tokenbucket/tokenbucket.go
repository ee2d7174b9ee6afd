// Package tokenbucket is impl/tokenbucket's keyed token bucket kept in a
// shared Redis, so that many processes on many machines take from the same
// buckets (spec/tokenbucket.md, and spec/redis.md for what the server
// changes).
//
// The model is impl/tokenbucket's: a bucket holds at most Capacity tokens
// and regains RefillPerSecond tokens per second of clock time, the limits
// are passed on every call (T8), and the stored timestamp never moves
// backwards (T4), so a client whose clock runs behind the others' cannot be
// credited an interval twice (T5). Every operation that writes is one
// server-side function of the Redis Functions library tollgate_tb
// (tokenbucket.lua), which Redis runs atomically: a take reads, refills and
// commits in one step, so there is no race to lose and nothing to retry.
// Answers are bit for bit the model's (T3): floats and clocks cross the
// wire, and are stored, as their raw 8 bytes (spec/redis.md, "Stored
// format").
//
// Every method takes a context and can fail in transport as well as on its
// arguments. An *ArgError (the same type and messages as impl/tokenbucket)
// is decided before anything is sent. A transport failure wraps ErrNotSent
// (nothing ran) or ErrUnknown (the call was sent and no reply came: it may
// have committed, and must not be treated as a refusal). The client never
// retries a call on its own (rconn).
package tokenbucket

import (
	"context"
	_ "embed" // the server-side library
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/rconn"
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

// The transport errors a call's error wraps (impl/redis/rconn).
var (
	// ErrUnknown: the call was sent and no reply came; it may have
	// committed (a take may have taken).
	ErrUnknown = rconn.ErrUnknown
	// ErrNotSent: the call never reached the server; nothing ran.
	ErrNotSent = rconn.ErrNotSent
)

//go:embed tokenbucket.lua
var librarySource string

// baseLibrary is the library's name as tokenbucket.lua spells it, in its
// first line and as the prefix of every function it registers.
const baseLibrary = "tollgate_tb"

// library is the name the package loads the library under. A mutant copy of
// this package (internal/mutants) sets its own, so that its functions load
// beside the real ones on a shared server rather than over them.
var library = baseLibrary

// source is the library's text under the package's library name.
func source() string { return strings.ReplaceAll(librarySource, baseLibrary, library) }

// Table is a set of token buckets keyed by string, kept in Redis under the
// table's name (spec/redis.md, "Key layout"): every process that makes a
// Table with the same server and name shares its buckets. The zero value is
// not usable; create one with New or NewFromClient. A Table is safe for
// concurrent use by many goroutines.
//
// Each method is one call to the server: a take, reset or reclaim is one
// server-side function that Redis runs atomically, and linearizes there; a
// peek or retry_after reads the bucket in one read-only call. When a call
// fails in transport, what it leaves behind is what its error says
// (ErrNotSent: nothing; ErrUnknown: the operation either happened once or
// not at all).
type Table struct {
	c     goredis.UniversalClient
	own   bool     // New built c; Close closes it
	keys  []string // KEYS of every call: the buckets hash and the floor
	clock func() int64
	fn    functions
	src   string // the library's source under its name (source)
	// pool holds the argument vectors of takes and admits, reused from
	// call to call (callArgs).
	pool sync.Pool
}

// functions are the library's function names as the server knows them,
// with the version's suffix (rconn.FunctionName).
type functions struct {
	take, admit, peek, state, reset, resetAll, reclaim string
}

// callArgs is the argument vector of one FCALL of take or admit, kept
// from call to call in Table.pool so that a take allocates no arguments:
// cmd is fcall (lower case: see rconn.Command), the function, 2, the two keys, then &key and &nums,
// pointers that go-redis writes without boxing anything.
type callArgs struct {
	cmd  [7]any
	key  string
	nums numbers
	// admit is AdmitAt's command over cmd, made on the vector's first
	// admit and reused after (each call clears what the last one left:
	// rconn.Run its error, AdmitAt its value). It is made with
	// context.Background(), which go-redis keeps but never uses: each call
	// runs under the ctx passed to rconn.Run. (A take's command is made per
	// call, in takeCall.)
	admit *goredis.Cmd
}

// numbers is a packed numbers argument: float64s and an int64, each as its
// 8 little-endian bytes (spec/redis.md, "Stored format"), as the library
// unpacks them with struct ('<d' and '<I4I4').
type numbers struct {
	b [32]byte
	n int
}

// MarshalBinary is how go-redis writes the argument: its bytes.
func (p *numbers) MarshalBinary() ([]byte, error) { return p.b[:p.n], nil }

func (p *numbers) float(x float64) {
	binary.LittleEndian.PutUint64(p.b[p.n:], math.Float64bits(x))
	p.n += 8
}

func (p *numbers) clock(ms int64) {
	binary.LittleEndian.PutUint64(p.b[p.n:], uint64(ms))
	p.n += 8
}

// pack returns the numbers argument of the floats xs and the clock ms.
func pack(ms int64, xs ...float64) *numbers {
	p := new(numbers)
	for _, x := range xs {
		p.float(x)
	}
	p.clock(ms)
	return p
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

// New connects to the server opts names (address, ACL user and password,
// TLS, pool and time-outs, as go-redis's Options; opts is not modified) with
// a client that never retries a call (rconn.NewClient), loads the library
// (rconn.Load: never over a newer version) and returns the table called name. Close closes
// the client. On error nothing is left open.
//
// name must be non-empty and hold no '{' or '}': it is the hash tag of the
// table's keys.
func New(ctx context.Context, opts *goredis.Options, name string, options ...Option) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c := rconn.NewClient(opts)
	t, err := newTable(ctx, c, name, options)
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
// only when it ran nothing). The library is loaded on every primary. The
// table's keys share one hash tag, its name, so a table lives in one slot
// and every call is one function on one node; tables spread over the
// cluster by name. Close closes the client.
func NewCluster(ctx context.Context, opts *goredis.ClusterOptions, name string, options ...Option) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c := rconn.NewClusterClient(opts)
	t, err := newTable(ctx, c, name, options)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	t.own = true
	return t, nil
}

// NewFromClient is New on a client the caller owns and keeps (Close does not
// close it): a *goredis.Client or a *goredis.ClusterClient. It refuses a client that would retry a call on its own
// (rconn.CheckClient): build it with Options.MaxRetries = -1.
func NewFromClient(ctx context.Context, c goredis.UniversalClient, name string, options ...Option) (*Table, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := rconn.CheckClient(c); err != nil {
		return nil, err
	}
	return newTable(ctx, c, name, options)
}

// Keys returns the keys of the table called name: its buckets hash and its
// floor, both under the hash tag name, so one cluster slot holds the table.
func Keys(name string) []string {
	base := "tollgate:tb:{" + name + "}"
	return []string{base, base + ":floor"}
}

func newTable(ctx context.Context, c goredis.UniversalClient, name string, options []Option) (*Table, error) {
	cfg := config{clock: UnixMs}
	for _, o := range options {
		o(&cfg)
	}
	src := source()
	f := func(fn string) string { return rconn.FunctionName(library+"_"+fn, src) }
	t := &Table{
		c: c, keys: Keys(name), clock: cfg.clock, src: src,
		fn: functions{
			take: f("take"), admit: f("admit"), peek: f("peek"), state: f("state"),
			reset: f("reset"), resetAll: f("reset_all"), reclaim: f("reclaim"),
		},
	}
	// An evicted bucket is a bucket refilled (T5): refuse a server that may
	// evict the table's keys.
	if err := rconn.CheckEviction(ctx, c); err != nil {
		return nil, fmt.Errorf("tokenbucket: table %q: %w", name, err)
	}
	if err := rconn.Load(ctx, c, library, src); err != nil {
		return nil, err
	}
	return t, nil
}

func checkName(name string) error {
	if !rconn.ValidTableName(name) {
		shown := strconv.Quote(name)
		if len(name) > 40 {
			shown = fmt.Sprintf("%q… (%d bytes)", name[:40], len(name))
		}
		return fmt.Errorf("tokenbucket: table name %s %s", shown, rconn.TableNameRule)
	}
	return nil
}

// Close closes the client if New made it. The buckets stay on the server.
func (t *Table) Close() error {
	if !t.own {
		return nil
	}
	return t.c.Close()
}

// call runs one function of the library on the table's keys (rconn.Run:
// the library loaded again after "Function not found", MOVED, ASK and
// TRYAGAIN followed on a cluster; nothing else sent twice). A nil reply is
// nil.
func (t *Table) call(ctx context.Context, readOnly bool, fn string, args ...any) (any, error) {
	cmd := goredis.NewCmd(ctx, rconn.Command(readOnly, fn, t.keys, args...)...)
	err := rconn.Run(ctx, t.c, library, t.src, cmd)
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokenbucket: %s: %w", fn, err)
	}
	return cmd.Val(), nil
}

// takeArgs is the argument vector of a call of take or admit (*fn, a
// field of t.fn) for key with lim, cost and nowMs, from t.pool; release
// gives it back once the call's reply has been read.
func (t *Table) takeArgs(fn *string, key string, lim Limits, cost float64, nowMs int64) *callArgs {
	a, _ := t.pool.Get().(*callArgs)
	if a == nil {
		a = &callArgs{}
		a.cmd = [7]any{"fcall", nil, 2, t.keys[0], t.keys[1], &a.key, &a.nums}
	}
	a.cmd[1] = fn
	a.key = key
	a.nums.n = 0
	a.nums.float(lim.Capacity)
	a.nums.float(lim.RefillPerSecond)
	a.nums.float(cost)
	a.nums.clock(nowMs)
	return a
}

// release puts a back in t.pool: go-redis has written the arguments and
// read the reply, and keeps no reference to either once the call returns.
func (t *Table) release(a *callArgs) {
	a.key = ""
	t.pool.Put(a)
}

// takeCall is the call of take or admit (*fn, a field of t.fn) for key
// with lim, cost and nowMs, its arguments from t.pool; cmd is a
// *goredis.StringCmd when str (take, whose reply is a bulk string or nil)
// and a *goredis.Cmd otherwise. It returns what call does, with the reply
// left in cmd, a command of its own (AdmitAt reuses the vector's).
func (t *Table) takeCall(ctx context.Context, fn *string, key string, lim Limits, cost float64, nowMs int64, str bool) (goredis.Cmder, error) {
	a := t.takeArgs(fn, key, lim, cost, nowMs)
	var cmd goredis.Cmder
	if str {
		cmd = goredis.NewStringCmd(ctx, a.cmd[:]...)
	} else {
		cmd = goredis.NewCmd(ctx, a.cmd[:]...)
	}
	err := callErr(*fn, rconn.Run(ctx, t.c, library, t.src, cmd))
	t.release(a)
	if err != nil {
		return nil, err
	}
	return cmd, nil
}

// callErr is the error a failed call of take or admit returns (nil for a
// nil reply, which a take's command reports as goredis.Nil).
func callErr(fn string, err error) error {
	if err == nil || errors.Is(err, goredis.Nil) {
		return nil
	}
	return fmt.Errorf("tokenbucket: %s: %w", fn, err)
}

// malformed is the error for a reply the library never gives. The call was
// sent and ran, so what it did is unknown to the caller.
func malformed(fn string, res any) error {
	return fmt.Errorf("tokenbucket: %s: %w: unexpected reply %#v", fn, ErrUnknown, res)
}

// float is the float64 of an 8-byte reply (T3: its bits as the server
// computed them).
func float(s string) (float64, bool) {
	if len(s) != 8 {
		return 0, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64([]byte(s))), true
}

// Now reads the table's clock (WithClock; UnixMs by default), in
// milliseconds: the reading every shorthand method takes.
func (t *Table) Now() int64 { return t.clock() }

// Admit is AdmitAt with the table's clock.
func (t *Table) Admit(ctx context.Context, key string, lim Limits, cost float64) (tokenbucket.Decision, error) {
	return t.AdmitAt(ctx, t.clock(), key, lim, cost)
}

// AdmitAt is TakeAt that also answers a refusal's wait, in the same one
// call: on a refusal the library's admit function replies the bucket the
// refusal was decided on, and the wait is computed from it here with
// impl/tokenbucket's own code (RetryAfterOf), bit for bit what RetryAfterAt
// would answer at nowMs from that bucket (T7). It saves a refused caller
// the second round trip of RetryAfter, as redis_rate's Result.RetryAfter
// does. What an error leaves behind is TakeAt's.
func (t *Table) AdmitAt(ctx context.Context, nowMs int64, key string, lim Limits, cost float64) (tokenbucket.Decision, error) {
	if err := tokenbucket.CheckArgs(lim, cost, true); err != nil {
		return tokenbucket.Decision{}, err
	}
	a := t.takeArgs(&t.fn.admit, key, lim, cost, nowMs)
	if a.admit == nil {
		a.admit = goredis.NewCmd(context.Background(), a.cmd[:]...)
	}
	a.admit.SetVal(nil)
	err := callErr(t.fn.admit, rconn.Run(ctx, t.c, library, t.src, a.admit))
	res := a.admit.Val()
	t.release(a)
	if err != nil {
		return tokenbucket.Decision{}, err
	}
	switch r := res.(type) {
	case string:
		if x, ok := float(r); ok {
			return tokenbucket.Decision{OK: true, Remaining: x}, nil
		}
	case []any:
		if len(r) == 2 && r[0] == "refused" {
			s, _ := r[1].(string)
			if b, ok := parseBucket(s); ok {
				return tokenbucket.Decision{RetryAfterMs: tokenbucket.RetryAfterOf(b.tokens, b.lastMs, lim, cost, nowMs)}, nil
			}
		}
	}
	return tokenbucket.Decision{}, malformed(t.fn.admit, res)
}

// Wait blocks until key's bucket covers cost, then takes it and reports the
// tokens remaining, as impl/tokenbucket's Wait does (tokenbucket.WaitLoop,
// over AdmitAt): each round is one call, at one reading of the table's
// clock; a refusal sleeps the wait it answered, on the real clock, and
// tries again. It fails having taken nothing with an *ArgError, ctx's
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
// TakeAt is one call of the library's take function, and linearizes where
// the server runs it.
func (t *Table) TakeAt(ctx context.Context, nowMs int64, key string, lim Limits, cost float64) (remaining float64, ok bool, err error) {
	if err := tokenbucket.CheckArgs(lim, cost, true); err != nil {
		return 0, false, err
	}
	cmd, err := t.takeCall(ctx, &t.fn.take, key, lim, cost, nowMs, true)
	if err != nil {
		return 0, false, err
	}
	// The tokens remaining as 8 bytes, or nil for a refusal (never a Lua
	// number, which Redis would truncate to an integer).
	sc := cmd.(*goredis.StringCmd)
	if errors.Is(sc.Err(), goredis.Nil) {
		return 0, false, nil
	}
	if x, ok := float(sc.Val()); ok {
		return x, true, nil
	}
	return 0, false, malformed(t.fn.take, sc.Val())
}

// Peek is PeekAt with the table's clock.
func (t *Table) Peek(ctx context.Context, key string, lim Limits) (float64, error) {
	return t.PeekAt(ctx, t.clock(), key, lim)
}

// PeekAt reports the tokens key's bucket holds at nowMs, refilled for the
// time elapsed but not consumed (T6); an unseen key holds Capacity. It
// writes nothing (a read-only call, which a replica may serve when the
// client is routed there).
func (t *Table) PeekAt(ctx context.Context, nowMs int64, key string, lim Limits) (float64, error) {
	if err := tokenbucket.CheckArgs(lim, 0, false); err != nil {
		return 0, err
	}
	res, err := t.call(ctx, true, t.fn.peek, key, pack(nowMs, lim.Capacity, lim.RefillPerSecond))
	if err != nil {
		return 0, err
	}
	if s, isStr := res.(string); isStr {
		if x, ok := float(s); ok {
			return x, nil
		}
	}
	return 0, malformed(t.fn.peek, res)
}

// RetryAfter is RetryAfterAt with the table's clock.
func (t *Table) RetryAfter(ctx context.Context, key string, lim Limits, cost float64) (int64, error) {
	return t.RetryAfterAt(ctx, t.clock(), key, lim, cost)
}

// RetryAfterAt reports how many milliseconds after nowMs a take of cost
// would succeed if nobody else took from the bucket: 0 when it covers cost
// now, otherwise the smallest whole w such that TakeAt(nowMs+w, …) succeeds
// (T7), or Never. It reads the bucket in one read-only call and computes the
// answer here with impl/tokenbucket's own code (RetryAfterOf); it writes
// nothing.
func (t *Table) RetryAfterAt(ctx context.Context, nowMs int64, key string, lim Limits, cost float64) (int64, error) {
	if err := tokenbucket.CheckArgs(lim, cost, true); err != nil {
		return 0, err
	}
	res, err := t.call(ctx, true, t.fn.state, key)
	if err != nil {
		return 0, err
	}
	if res == nil { // absent: full, and a valid cost never exceeds capacity
		return 0, nil
	}
	s, _ := res.(string)
	b, ok := parseBucket(s)
	if !ok {
		return 0, malformed(t.fn.state, res)
	}
	return tokenbucket.RetryAfterOf(b.tokens, b.lastMs, lim, cost, nowMs), nil
}

// Reset forgets key's bucket (T10): its next take starts from a full one,
// stamped no earlier than the floor (T12). On a transport error the bucket
// is reset or untouched as the error says.
func (t *Table) Reset(ctx context.Context, key string) error {
	_, err := t.call(ctx, false, t.fn.reset, key)
	return err
}

// ResetAll forgets every bucket of the table and its floor (T10), in one
// atomic call: the table is as new.
func (t *Table) ResetAll(ctx context.Context) error {
	_, err := t.call(ctx, false, t.fn.resetAll)
	return err
}

// Reclaim is ReclaimAt with the table's clock.
func (t *Table) Reclaim(ctx context.Context, lim Limits) (int, error) {
	return t.ReclaimAt(ctx, t.clock(), lim)
}

// ReclaimAt forgets every bucket that is full at nowMs by lim and whose
// timestamp is not after nowMs, and raises the table's floor to nowMs, as
// impl/tokenbucket's ReclaimAt does (T12); it returns how many buckets it
// forgot. It is one atomic call, so it linearizes as one step for every key;
// it holds the server for time in proportion to the table's size (about a
// microsecond a bucket), so a table of millions of keys should be split
// into several names. Invalid limits return an *ArgError and send nothing.
func (t *Table) ReclaimAt(ctx context.Context, nowMs int64, lim Limits) (int, error) {
	if err := tokenbucket.CheckArgs(lim, 0, false); err != nil {
		return 0, err
	}
	res, err := t.call(ctx, false, t.fn.reclaim, pack(nowMs, lim.Capacity, lim.RefillPerSecond))
	if err != nil {
		return 0, err
	}
	n, ok := res.(int64)
	if !ok || n < 0 {
		return 0, malformed(t.fn.reclaim, res)
	}
	return int(n), nil
}

// bucket is a present bucket as the library stores it (spec/redis.md,
// "Stored format"): 17 bytes, the tag 4, the tokens' float64 and last_ms's
// int64, little-endian; or, written by library version 3 and not taken
// from since, the text "<tokens> <last_ms>".
type bucket struct {
	tokens float64
	lastMs int64
}

// bucketTag is the first byte of a bucket in the current format.
const bucketTag = 4

func parseBucket(s string) (bucket, bool) {
	if len(s) == 17 && s[0] == bucketTag {
		b := []byte(s[1:])
		x := math.Float64frombits(binary.LittleEndian.Uint64(b))
		return bucket{x, int64(binary.LittleEndian.Uint64(b[8:]))}, x >= 0 && x <= math.MaxFloat64
	}
	tok, last, found := strings.Cut(s, " ")
	if !found {
		return bucket{}, false
	}
	x, err1 := strconv.ParseFloat(tok, 64)
	l, err2 := strconv.ParseInt(last, 10, 64)
	return bucket{x, l}, err1 == nil && err2 == nil
}
