package rconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/redisserver"
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
