// Package rconn is what the Redis-backed tables of impl/redis/tokenbucket
// and impl/redis/credits share: the client they build from go-redis's own
// options (never retrying a command on its own), the loading of their Redis
// Functions libraries, and the one rule for what a failed call means.
//
// # What a failed call means
//
// A Redis call fails in one of three ways, and the tables report each
// differently:
//
//   - The server answered with an error reply (a script's refusal, a
//     wrong-type key, NOSCRIPT, OOM, READONLY): the script did not write,
//     because every script checks everything before its first write and
//     Redis runs a script to completion. The error is returned as it is.
//   - The call was never sent: dialing failed, the pool had no connection
//     in time, or the client was closed. Nothing ran. Such an error wraps
//     ErrNotSent.
//   - The call was sent and no reply came (a read timeout, a connection
//     reset, the context cancelled while waiting). The script may have run
//     and committed, or may yet run: Redis executes a command it has read
//     even when its client has gone. Such an error wraps ErrUnknown, and a
//     caller must not treat it as a refusal.
//
// That last case is why the client never retries: go-redis retries a
// command whose read timed out up to MaxRetries times (3 by default), so a
// take that committed before the timeout would be applied twice.
package rconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The errors a failed call wraps (see the package doc).
var (
	// ErrUnknown: the call was sent and its outcome cannot be known; it may
	// have committed.
	ErrUnknown = errors.New("redis: outcome unknown: the call was sent and no reply came, so it may have committed")
	// ErrNotSent: the call never reached the server; nothing ran.
	ErrNotSent = errors.New("redis: the call was not sent")
)

// NewClient returns a go-redis client for opts (the caller's address, ACL
// user and password, TLS, pool and time-out settings, unchanged) with
// retries turned off: MaxRetries is forced to -1. opts is not modified.
func NewClient(opts *goredis.Options) *goredis.Client {
	o := *opts
	o.MaxRetries = -1
	return goredis.NewClient(&o)
}

// NewClusterClient returns a go-redis cluster client for opts (unchanged
// but for two settings) that never sends a command twice on its own:
// MaxRetries is forced to -1, and MaxRedirects to -1, since go-redis's
// cluster client also sends a command again, on its redirect budget, after
// a connection reset or a time-out, when the first copy may have run. The
// tables follow MOVED and ASK themselves (Call), which is safe: a node that
// redirects a command has not run it. opts is not modified.
func NewClusterClient(opts *goredis.ClusterOptions) *goredis.ClusterClient {
	o := *opts
	o.MaxRetries = -1
	o.MaxRedirects = -1
	return goredis.NewClusterClient(&o)
}

// CheckClient reports an error when c would send a command again on its
// own: a *goredis.Client with retries, or a *goredis.ClusterClient with
// retries or redirects (see NewClusterClient). (go-redis normalizes
// MaxRetries: -1 becomes 0, and 0 becomes 3 for a client; MaxRedirects -1
// becomes 0, and 0 becomes 3.)
func CheckClient(c goredis.UniversalClient) error {
	switch c := c.(type) {
	case *goredis.Client:
		if n := c.Options().MaxRetries; n != 0 {
			return fmt.Errorf("redis: the client retries a failed command up to %d times: build it with Options.MaxRetries = -1, or a take that committed before a time-out would be applied twice", n)
		}
	case *goredis.ClusterClient:
		o := c.Options()
		if o.MaxRedirects != 0 {
			return fmt.Errorf("redis: the cluster client sends a command again up to %d times, after a time-out or a reset too: build it with rconn.NewClusterClient or ClusterOptions.MaxRedirects = -1 (the tables follow MOVED and ASK themselves)", o.MaxRedirects)
		}
		if o.MaxRetries > 0 {
			return fmt.Errorf("redis: the cluster client's nodes retry a failed command up to %d times: build it with ClusterOptions.MaxRetries = -1", o.MaxRetries)
		}
	default:
		return fmt.Errorf("redis: a %T is not supported: use a *goredis.Client or a *goredis.ClusterClient", c)
	}
	return nil
}

// Redirects counts, for the whole process, the MOVED, ASK and TRYAGAIN
// replies Call has followed: how often the tables met a cluster moving
// their slots.
func Redirects() (moved, ask, tryAgain int64) {
	return redirects.moved.Load(), redirects.ask.Load(), redirects.tryAgain.Load()
}

var redirects struct{ moved, ask, tryAgain atomic.Int64 }

// maxRedirects bounds how often Call follows MOVED, ASK and TRYAGAIN for
// one call: a slot moves once per resharding step, so a few suffice, and a
// cluster that keeps redirecting is reported rather than followed for ever.
const maxRedirects = 16

// Call runs the function fn of the library called name (whose source is
// src) on keys with args: FCALL, or FCALL_RO when readOnly (a replica may
// serve it).
//
// The function called is fn of src's version: fn with the suffix
// "_v<version>" (FunctionName) when src declares a version, and a
// versioned library registers every function under its suffixed name
// (CheckFunctionNames). So a process never runs another version's code:
// once a newer version has replaced its library on the server, its call
// finds no function of its version, and the reload that follows refuses
// (Load: never over a newer version) with an error wrapping
// ErrLibraryVersion.
//
// It sends a call again only when the server answered that it ran nothing:
//
//   - "Function not found" (FUNCTION FLUSH, a fresh server behind the same
//     address, a node new to the cluster): the library is loaded (Load) and
//     the call sent once more;
//   - on a cluster, MOVED (the slot has moved: the client reloads its slot
//     map and the call goes to the new owner), ASK (the slot is migrating
//     and the keys are on the importing node: ASKING and the call go there,
//     pipelined on one connection) and TRYAGAIN (the keys are split across
//     the two nodes for a moment), up to 16 times.
//
// Every other failure is returned: a reply error as it is, a transport
// failure classified (Classify), after which a cluster client reloads its
// slot map in the background (the node that failed may be dead, its slots
// served by a promoted replica). goredis.Nil is returned as it is.
func Call(ctx context.Context, c goredis.UniversalClient, name, src string, readOnly bool, fn string, keys []string, args ...any) (any, error) {
	cmd := goredis.NewCmd(ctx, Command(readOnly, FunctionName(fn, src), keys, args...)...)
	err := Run(ctx, c, name, src, cmd)
	return cmd.Val(), err
}

// Command is the arguments of an FCALL (or FCALL_RO when readOnly) of the
// function fn, its name as the server knows it (FunctionName), on keys
// with args.
func Command(readOnly bool, fn string, keys []string, args ...any) []any {
	full := make([]any, 0, 3+len(keys)+len(args))
	// In lower case, as go-redis looks commands up: an upper-case name
	// costs a cluster client two allocations per call to lower it.
	if readOnly {
		full = append(full, "fcall_ro")
	} else {
		full = append(full, "fcall")
	}
	full = append(full, fn, len(keys))
	for _, k := range keys {
		full = append(full, k)
	}
	return append(full, args...)
}

// Run is Call for a command the caller built: cmd is the whole FCALL or
// FCALL_RO (Command), of a reply type of the caller's choice (a
// *goredis.StringCmd reads a bulk reply without boxing it), whose
// arguments the caller may reuse once Run returns. Run processes it on c
// and does what Call does around it; the error it returns is Call's, and
// cmd holds the last reply.
func Run(ctx context.Context, c goredis.UniversalClient, name, src string, cmd goredis.Cmder) error {
	var node *goredis.Client // the node an ASK named, for the next attempt
	loaded := false
	for attempt := 0; ; attempt++ {
		// cmd is sent again after a redirect, still holding the redirect's
		// error. go-redis sets a command's error only where it has none:
		// a pipeline that fails after sending (a read timeout at the node
		// an ASK named) would leave the ASK in place, and the call, which
		// may have run, would be reported redirected (not run) and sent
		// again. So every attempt starts clean.
		cmd.SetErr(nil)
		var err error
		if node != nil {
			pipe := node.Pipeline()
			pipe.Do(ctx, "ASKING")
			_ = pipe.Process(ctx, cmd)
			_, _ = pipe.Exec(ctx)
			err = cmd.Err()
			node = nil
		} else {
			err = c.Process(ctx, cmd)
		}
		if err == nil {
			return nil // (before errors.As, whose target would escape: no allocation on success)
		}
		var reply goredis.Error
		if !errors.As(err, &reply) {
			if err != nil && !errors.Is(err, goredis.Nil) {
				err = Classify(err)
				if cc, ok := c.(*goredis.ClusterClient); ok {
					// The node may be dead and its replica promoted: go-redis
					// reloads its slot map on MOVED, or every 60 s, so a
					// dead primary would be dialed for a minute. The call
					// is not sent again; the next one goes where the
					// reloaded map says.
					cc.ReloadState(ctx)
				}
			}
			return err
		}
		msg := reply.Error()
		switch {
		case strings.HasPrefix(msg, "ERR Function not found") && !loaded:
			if err := Load(ctx, c, name, src); err != nil {
				return err
			}
			loaded = true
			continue
		case attempt >= maxRedirects:
		case strings.HasPrefix(msg, "MOVED "), strings.HasPrefix(msg, "TRYAGAIN"):
			if msg[0] == 'M' {
				redirects.moved.Add(1)
			} else {
				redirects.tryAgain.Add(1)
			}
			if err := pause(ctx, attempt); err != nil {
				return fmt.Errorf("%w: %w", ErrNotSent, err)
			}
			continue
		case strings.HasPrefix(msg, "ASK "):
			cc, ok := c.(*goredis.ClusterClient)
			if !ok {
				break
			}
			f := strings.Fields(msg) // ASK <slot> <addr>
			if len(f) != 3 {
				break
			}
			n, err := master(ctx, cc, f[2])
			if err != nil {
				return fmt.Errorf("%w: following %q: %w", ErrNotSent, msg, err)
			}
			node = n
			redirects.ask.Add(1)
			continue
		}
		return err
	}
}

// pause waits a little before a call goes out again after a redirect
// (the cluster client reloads its slot map in the background).
func pause(ctx context.Context, attempt int) error {
	t := time.NewTimer(time.Duration(attempt+1) * 5 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// master is the client of cc's primary at addr.
func master(ctx context.Context, cc *goredis.ClusterClient, addr string) (*goredis.Client, error) {
	var mu sync.Mutex
	var found *goredis.Client
	err := cc.ForEachMaster(ctx, func(_ context.Context, m *goredis.Client) error {
		if m.Options().Addr == addr {
			mu.Lock()
			found = m
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("no primary at %s in the client's view of the cluster", addr)
	}
	return found, nil
}

// Classify returns err, wrapped in ErrNotSent or ErrUnknown as the package
// doc says; nil and server error replies are returned unchanged.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var reply goredis.Error
	if errors.As(err, &reply) {
		return err
	}
	if errors.Is(err, goredis.ErrClosed) || err.Error() == "redis: connection pool timeout" {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return fmt.Errorf("%w: %w", ErrUnknown, err)
}

// TableNameRule is the rule every table name keeps, in both packages: the
// name is the hash tag of the table's keys, so it may not hold a brace, and
// it is bounded so that a key stays small.
const TableNameRule = "must be 1 to 256 bytes without '{' or '}' (it is the hash tag of the table's keys)"

// ValidTableName reports whether name keeps TableNameRule.
func ValidTableName(name string) bool {
	return name != "" && len(name) <= 256 && !strings.ContainsAny(name, "{}")
}

// ErrLibraryVersion is the error of Load when the server holds another
// version of the library than this build's and replacing it would be
// wrong: a newer version (an older process must not downgrade the library
// under the whole fleet), or the same version with other code (two builds
// claim one version).
var ErrLibraryVersion = errors.New("redis: the server holds another version of the functions library")

// versionLine is how a library's source declares its version, on a line
// of its own.
var versionLine = regexp.MustCompile(`(?m)^-- tollgate library version (\d+)$`)

// LibraryVersion is the version the library source src declares, 0 when it
// declares none (a library loaded before versions existed).
func LibraryVersion(src string) int {
	m := versionLine.FindStringSubmatch(src)
	if m == nil {
		return 0
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return v
}

// ErrEvictable is wrapped by the error of CheckEviction, and so of opening
// a table, on a server whose maxmemory-policy may evict the table's keys.
var ErrEvictable = errors.New("redis: the server may evict the table's keys")

// CheckEviction reports an error wrapping ErrEvictable, naming the setting,
// when a server c reaches (every primary, on a cluster) has a
// maxmemory-policy that can evict the tables' keys: allkeys-lru,
// allkeys-lfu or allkeys-random. The tables' keys carry no TTL, so
// noeviction and the volatile-* policies never evict them. An evicted
// key is state forgotten without a trace: a credit table would issue
// epochs again (C3) and sweep live holders (C10), a token bucket refill
// (T5). The policy is read from INFO memory, which a user without CONFIG
// may run.
func CheckEviction(ctx context.Context, c goredis.UniversalClient) error {
	if cc, ok := c.(*goredis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
			return checkEviction(ctx, m)
		})
	}
	return checkEviction(ctx, c)
}

func checkEviction(ctx context.Context, c goredis.Cmdable) error {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return fmt.Errorf("redis: reading maxmemory-policy (INFO memory): %w", Classify(err))
	}
	policy := ""
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory_policy:"); ok {
			policy = v
		}
	}
	switch {
	case policy == "":
		return fmt.Errorf("%w: INFO memory names no maxmemory_policy, so it cannot be checked", ErrEvictable)
	case strings.HasPrefix(policy, "allkeys-"):
		return fmt.Errorf("%w: maxmemory-policy is %s, which evicts any key once maxmemory is reached, the tables' too: set maxmemory-policy to noeviction (or a volatile-* policy: the tables' keys have no TTL), or keep the tables on a server of their own", ErrEvictable, policy)
	}
	return nil
}

// FunctionName is the name under which the library source src registers
// its function fn: fn itself when src declares no version, else fn with
// the suffix "_v<version>", so that each version's functions are its own
// (see Call).
func FunctionName(fn, src string) string {
	if v := LibraryVersion(head(src)); v > 0 {
		return fn + "_v" + strconv.Itoa(v)
	}
	return fn
}

// head is the part of a library source that declares its version: its
// lines within the first 512 bytes (the second line of a source, the third
// of a generated mutant's), so that a call does not scan the whole library.
func head(src string) string {
	if len(src) <= 512 {
		return src
	}
	h := src[:512]
	if i := strings.LastIndexByte(h, '\n'); i >= 0 {
		h = h[:i]
	}
	return h
}

// registered finds the names a library source registers its functions
// under, in either form of redis.register_function.
var registered = regexp.MustCompile(`redis\.register_function(?:\s*\(\s*'([^']+)'|\s*\{\s*function_name\s*=\s*'([^']+)')`)

// CheckFunctionNames reports a library source that declares a version in
// its head (the lines of its first 512 bytes) and registers a function under a name without that
// version's suffix ("_v<version>"), or one that registers none: a process
// of one version must find no function of another (Call).
func CheckFunctionNames(src string) error {
	v := LibraryVersion(src)
	if FunctionName("f", src) == "f" {
		return fmt.Errorf("redis: the library declares no version in its first 512 bytes (%d further on)", v)
	}
	suffix := "_v" + strconv.Itoa(v)
	ms := registered.FindAllStringSubmatch(src, -1)
	if len(ms) == 0 {
		return errors.New("redis: the library registers no function")
	}
	for _, m := range ms {
		if name := m[1] + m[2]; !strings.HasSuffix(name, suffix) {
			return fmt.Errorf("redis: function %q of library version %d is not named with the suffix %q", name, v, suffix)
		}
	}
	return nil
}

// Load makes the server hold the Functions library name with the source
// src (whose first line must be "#!lua name=<name>"). Functions are kept
// with the data set (RDB and AOF) and replicated, so they survive a restart
// and a failover without being loaded again; and one library serves every
// client of the server, so loading is a fleet-wide act:
//
//   - no library of that name: FUNCTION LOAD (without REPLACE, so two
//     processes loading at once do not overwrite each other: the one that
//     loses looks again);
//   - the same code: nothing to do;
//   - an older version (or one that declares none): FUNCTION LOAD REPLACE;
//   - a newer version, or the same version with other code: an error
//     wrapping ErrLibraryVersion, which names both, and the server's
//     library stays.
//
// The data set also keeps the highest version ever loaded (VersionMark), so
// that FUNCTION FLUSH, which drops the library and keeps the keys, cannot
// let an older process load its version over data a newer one wrote: Load
// refuses, wrapping ErrLibraryVersion, when the mark is above src's
// version, and raises the mark to it once loaded. (FLUSHALL drops the mark
// with the data; deleting the mark is how an operator downgrades on
// purpose.)
func Load(ctx context.Context, c goredis.UniversalClient, name, src string) error {
	want := LibraryVersion(src)
	mark := func() error { return checkMark(ctx, c, name, want) }
	// Functions live on each node: on a cluster every primary loads the
	// library (its replicas get it by replication).
	var err error
	if cc, ok := c.(*goredis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
			return loadOne(ctx, m, name, src, mark)
		})
	} else {
		err = loadOne(ctx, c, name, src, mark)
	}
	if err != nil || want == 0 {
		return err
	}
	// The mark only rises: two processes of versions 2 and 3 loading at
	// once leave 3, whichever writes last.
	if err := raiseMark.Run(ctx, c, []string{VersionMark(name)}, want).Err(); err != nil {
		return fmt.Errorf("redis: raising %s to version %d: %w", VersionMark(name), want, Classify(err))
	}
	return nil
}

// VersionMark is the key that keeps the highest version of the library
// name ever loaded on the server (on a cluster, in one slot for the whole
// cluster): an integer, raised by Load.
func VersionMark(name string) string { return "tollgate:library:" + name }

// raiseMark sets KEYS[1] to ARGV[1] unless it holds a higher version.
var raiseMark = goredis.NewScript(`local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v == nil or v < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`)

// checkMark refuses, wrapping ErrLibraryVersion, to load version want of
// the library name where a higher version has been loaded (VersionMark):
// Load calls it only where the server does not hold a newer library
// (which Load refuses on its own).
func checkMark(ctx context.Context, c goredis.UniversalClient, name string, want int) error {
	s, err := c.Get(ctx, VersionMark(name)).Result()
	if errors.Is(err, goredis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("redis: reading %s: %w", VersionMark(name), Classify(err))
	}
	had, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%w: %s holds %q, not a version", ErrLibraryVersion, VersionMark(name), s)
	}
	if had > want {
		return fmt.Errorf("%w: %s version %d has been loaded on this server (%s says so), this build has version %d: its library is not there now (FUNCTION FLUSH?), but what it wrote may be; run a process of version %d or later, or delete %s to downgrade on purpose", ErrLibraryVersion, name, had, VersionMark(name), want, had, VersionMark(name))
	}
	return nil
}

// loadOne is Load on one server; mark is checked before the library is
// loaded or replaced (checkMark).
func loadOne(ctx context.Context, c goredis.Cmdable, name, src string, mark func() error) error {
	want := LibraryVersion(src)
	for range 3 {
		libs, err := c.FunctionList(ctx, goredis.FunctionListQuery{LibraryNamePattern: name, WithCode: true}).Result()
		if err != nil {
			return fmt.Errorf("redis: listing the %s functions library: %w", name, Classify(err))
		}
		var have *goredis.Library
		for i := range libs {
			if libs[i].Name == name {
				have = &libs[i]
			}
		}
		switch {
		case have == nil:
			if err := mark(); err != nil {
				return err
			}
			err := c.FunctionLoad(ctx, src).Err()
			if err != nil && strings.Contains(err.Error(), "already exists") {
				continue // another process loaded it meanwhile: judge its version
			}
			if err != nil {
				return fmt.Errorf("redis: loading the %s functions library: %w", name, Classify(err))
			}
			return nil
		case have.Code == src:
			return nil
		}
		switch v := LibraryVersion(have.Code); {
		case v > want:
			return fmt.Errorf("%w: %s version %d is loaded, this build has version %d: upgrade this process rather than replace the library every client of the server uses", ErrLibraryVersion, name, v, want)
		case v == want:
			return fmt.Errorf("%w: %s version %d is loaded with other code than this build's version %d: two builds claim one version (a changed library must raise its version line)", ErrLibraryVersion, name, v, want)
		}
		if err := mark(); err != nil {
			return err
		}
		if err := c.FunctionLoadReplace(ctx, src).Err(); err != nil {
			return fmt.Errorf("redis: replacing the %s functions library: %w", name, Classify(err))
		}
		return nil
	}
	return fmt.Errorf("redis: loading the %s functions library: it changed three times while this process loaded it", name)
}
