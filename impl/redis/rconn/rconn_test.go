package rconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
)

func TestNewClientNeverRetries(t *testing.T) {
	opts := &goredis.Options{Addr: "127.0.0.1:1", MaxRetries: 5}
	c := NewClient(opts)
	defer c.Close()
	if err := CheckClient(c); err != nil {
		t.Fatal(err)
	}
	if opts.MaxRetries != 5 {
		t.Fatalf("NewClient changed the caller's options: MaxRetries = %d", opts.MaxRetries)
	}
	d := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer d.Close()
	if err := CheckClient(d); err == nil {
		t.Fatal("CheckClient accepted a client with go-redis's default of 3 retries")
	}
}

// TestNewClusterClientNeverSendsTwice: go-redis's cluster client sends a
// command again on its redirect budget after a reset or a time-out, so a
// cluster client must follow no redirects and retry nothing (the tables
// follow MOVED and ASK themselves); CheckClient refuses the defaults.
func TestNewClusterClientNeverSendsTwice(t *testing.T) {
	opts := &goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: 5, MaxRedirects: 8}
	c := NewClusterClient(opts)
	defer c.Close()
	if err := CheckClient(c); err != nil {
		t.Fatal(err)
	}
	if opts.MaxRetries != 5 || opts.MaxRedirects != 8 {
		t.Fatalf("NewClusterClient changed the caller's options: %+v", opts)
	}
	d := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer d.Close()
	if err := CheckClient(d); err == nil || !strings.Contains(err.Error(), "MaxRedirects") {
		t.Fatalf("CheckClient accepted a cluster client with go-redis's default of 3 redirects: %v", err)
	}
	r := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer r.Close()
	if err := CheckClient(r); err == nil {
		t.Fatal("CheckClient accepted a ring client")
	}
}

// TestClassify: a refused dial was not sent, a reply that never came is
// unknown, a server error reply is returned as it is.
func TestClassify(t *testing.T) {
	ctx := context.Background()
	// A port nothing listens on: the dial fails, nothing is sent.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := NewClient(&goredis.Options{Addr: addr, DialTimeout: time.Second})
	defer c.Close()
	if err := Classify(c.Ping(ctx).Err()); !errors.Is(err, ErrNotSent) || errors.Is(err, ErrUnknown) {
		t.Fatalf("a refused dial: %v, want ErrNotSent", err)
	}

	// A listener that accepts and never answers: the read times out after
	// the command was written, so its outcome is unknown.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			conn, err := mute.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	m := NewClient(&goredis.Options{Addr: mute.Addr().String(), ReadTimeout: 100 * time.Millisecond, Protocol: 2, DisableIdentity: true})
	defer m.Close()
	if err := Classify(m.Incr(ctx, "k").Err()); !errors.Is(err, ErrUnknown) {
		t.Fatalf("a read time-out: %v, want ErrUnknown", err)
	}

	if err := Classify(fmt.Errorf("wrapped: %w", errString("ERR wrong"))); !errors.Is(err, ErrUnknown) {
		t.Fatalf("a non-Redis error: %v, want ErrUnknown (the safe side)", err)
	}
	if Classify(nil) != nil {
		t.Fatal("Classify(nil) != nil")
	}
}

// TestClassifyServerError: an error reply from a real server is returned
// unchanged: the server answered, nothing is unknown.
func TestClassifyServerError(t *testing.T) {
	s := redisserver.StartT(t)
	c := NewClient(&goredis.Options{Addr: s.Addr})
	defer c.Close()
	err := Classify(c.Do(context.Background(), "NO-SUCH-COMMAND").Err())
	var reply goredis.Error
	if err == nil || errors.Is(err, ErrUnknown) || errors.Is(err, ErrNotSent) || !errors.As(err, &reply) {
		t.Fatalf("an error reply: %v, want the server's error unchanged", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// lib is a one-function library declaring version v (none when v < 0),
// answering ret, its function named as Call names it (FunctionName).
func lib(v int, ret string) string {
	s := "#!lua name=tg_test\n"
	if v >= 0 {
		s += fmt.Sprintf("-- tollgate library version %d\n", v)
	}
	return s + "redis.register_function('" + FunctionName("tg_test_f", s) + "', function() return '" + ret + "' end)\n"
}

// TestLoadVersions: Load replaces an older library (or one that declares
// no version), keeps the same one, and refuses, leaving the server's
// library in place, a newer version or another text under the same
// version; the function called afterwards is the one the server kept.
func TestLoadVersions(t *testing.T) {
	s := redisserver.StartT(t)
	ctx := context.Background()
	c := NewClient(&goredis.Options{Addr: s.Addr})
	defer c.Close()
	var kept string // the source the server should hold
	answers := func(want string) {
		t.Helper()
		fn := FunctionName("tg_test_f", kept)
		if got, err := c.FCall(ctx, fn, nil).Text(); err != nil || got != want {
			t.Fatalf("%s = %q, %v; want %q", fn, got, err, want)
		}
	}
	steps := []struct {
		src     string
		refused string // "" when Load must succeed
		then    string // what the function answers afterwards
	}{
		{lib(-1, "unversioned"), "", "unversioned"},
		{lib(1, "one"), "", "one"},     // replaces a library that declares no version
		{lib(1, "one"), "", "one"},     // the same text: nothing to do
		{lib(3, "three"), "", "three"}, // an older one is replaced
		{lib(2, "two"), "version 3 is loaded, this build has version 2", "three"},
		{lib(3, "other"), "version 3 is loaded with other code", "three"},
		{lib(4, "four"), "", "four"},
	}
	for i, st := range steps {
		err := Load(ctx, c, "tg_test", st.src)
		switch {
		case st.refused == "" && err != nil:
			t.Fatalf("step %d: Load = %v", i, err)
		case st.refused != "" && (!errors.Is(err, ErrLibraryVersion) || !strings.Contains(err.Error(), st.refused)):
			t.Fatalf("step %d: Load = %v, want ErrLibraryVersion saying %q", i, err, st.refused)
		}
		if err == nil {
			kept = st.src
		}
		answers(st.then)
	}
	if LibraryVersion(lib(-1, "x")) != 0 || LibraryVersion(lib(7, "x")) != 7 {
		t.Error("LibraryVersion misreads a version line")
	}
}

// TestVersionSkew: two library versions on one redis-server. A process
// that opened the library at version 1 never runs version 2's code once
// version 2 has replaced it: its call fails with ErrLibraryVersion naming
// both. After FUNCTION FLUSH it still may not load version 1: the data
// set's VersionMark says version 2 was there (what it wrote may be), so
// the call fails the same way, and version 2's next call loads its own.
// Only once an operator deletes the mark does version 1 load again.
func TestVersionSkew(t *testing.T) {
	s := redisserver.StartT(t)
	ctx := context.Background()
	c := NewClient(&goredis.Options{Addr: s.Addr})
	defer c.Close()
	v1, v2 := lib(1, "one"), lib(2, "two")
	call := func(src string) (string, error) {
		v, err := Call(ctx, c, "tg_test", src, false, "tg_test_f", nil)
		str, _ := v.(string)
		return str, err
	}
	expect := func(step, src, want string) {
		t.Helper()
		got, err := call(src)
		if err != nil || got != want {
			t.Fatalf("%s: %q, %v; want %q", step, got, err, want)
		}
	}
	refused := func(step, src string) {
		t.Helper()
		got, err := call(src)
		if !errors.Is(err, ErrLibraryVersion) || !strings.Contains(err.Error(), "version 2 is loaded, this build has version 1") {
			t.Fatalf("%s: %q, %v; want ErrLibraryVersion", step, got, err)
		}
	}
	expect("v1 loads its library", v1, "one")
	expect("v2 replaces it", v2, "two")
	refused("v1 after v2 replaced it", v1)
	expect("v2 still", v2, "two")
	if _, err := c.FunctionFlush(ctx).Result(); err != nil {
		t.Fatal(err)
	}
	// The library is gone, the data it wrote is not: VersionMark keeps
	// version 2, and version 1 must not load over it.
	got, err := call(v1)
	if !errors.Is(err, ErrLibraryVersion) || !strings.Contains(err.Error(), "version 2 has been loaded on this server") {
		t.Fatalf("v1 after FUNCTION FLUSH: %q, %v; want ErrLibraryVersion naming the mark", got, err)
	}
	expect("v2 after FUNCTION FLUSH loads its own", v2, "two")
	refused("v1 again", v1)
	// A downgrade on purpose: the operator deletes the mark.
	if err := c.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Del(ctx, VersionMark("tg_test")).Err(); err != nil {
		t.Fatal(err)
	}
	expect("v1 once the mark is deleted", v1, "one")
	if m, err := c.Get(ctx, VersionMark("tg_test")).Result(); err != nil || m != "1" {
		t.Fatalf("the mark after v1 loaded: %q, %v; want 1", m, err)
	}
	expect("v2 replaces it again", v2, "two")
	if m, err := c.Get(ctx, VersionMark("tg_test")).Result(); err != nil || m != "2" {
		t.Fatalf("the mark after v2 loaded: %q, %v; want 2", m, err)
	}
	libs, err := c.FunctionList(ctx, goredis.FunctionListQuery{LibraryNamePattern: "tg_test", WithCode: true}).Result()
	if err != nil || len(libs) != 1 || libs[0].Code != v2 {
		t.Fatalf("the server holds %+v, %v; want version 2", libs, err)
	}
}

// TestFunctionNames: a versioned source must register every function with
// its version's suffix.
func TestFunctionNames(t *testing.T) {
	if err := CheckFunctionNames(lib(2, "x")); err != nil {
		t.Fatal(err)
	}
	bad := "#!lua name=tg_test\n-- tollgate library version 2\nredis.register_function{function_name = 'tg_test_f_v1', callback = f}\n"
	if err := CheckFunctionNames(bad); err == nil || !strings.Contains(err.Error(), `"tg_test_f_v1"`) {
		t.Fatalf("a function of another version's name: %v", err)
	}
	if err := CheckFunctionNames(lib(-1, "x")); err == nil {
		t.Fatal("an unversioned library passed")
	}
	if FunctionName("f", lib(12, "x")) != "f_v12" || FunctionName("f", lib(-1, "x")) != "f" {
		t.Fatal("FunctionName")
	}
}
