package redisserver

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

func TestStartAnswersAndStops(t *testing.T) {
	s := StartT(t)
	if r, err := s.Do("SET", "k", "v"); err != nil || r != "+OK" {
		t.Fatalf("SET: %q, %v", r, err)
	}
	if r, err := s.Do("GET", "k"); err != nil || r != "$1" {
		t.Fatalf("GET: %q, %v", r, err)
	}
	if v, err := s.Query("GET", "k"); err != nil || v != "v" {
		t.Fatalf("Query GET: %q, %v", v, err)
	}
	s.Stop()
	if _, err := s.Do("PING"); err == nil {
		t.Fatal("the server still answers after Stop")
	}
}

// client returns a go-redis client of s that never retries and waits at
// most timeout for a reply.
func client(t *testing.T, s *Server, timeout time.Duration) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: timeout, DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestCrashRestartKeepsTheAOF: with WithAOF a write acknowledged before
// SIGKILL is there after Restart (same address, same directory); without
// it, it is gone (so the check can fail).
func TestCrashRestartKeepsTheAOF(t *testing.T) {
	for _, aof := range []bool{true, false} {
		var opts []Option
		if aof {
			opts = append(opts, WithAOF())
		}
		s := StartT(t, opts...)
		if aof {
			if v, err := s.Info("persistence"); err != nil || v["aof_enabled"] != "1" {
				t.Fatalf("INFO persistence: aof_enabled %q, %v", v["aof_enabled"], err)
			}
		}
		if r, err := s.Do("SET", "k", "v"); err != nil || r != "+OK" {
			t.Fatalf("SET: %q, %v", r, err)
		}
		addr := s.Addr
		if err := s.Crash(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Do("PING"); err == nil {
			t.Fatal("the server answers after Crash")
		}
		if err := s.Crash(); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("a second Crash: %v, want ErrNotRunning", err)
		}
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
		if s.Addr != addr {
			t.Fatalf("Restart moved the server from %s to %s", addr, s.Addr)
		}
		v, err := s.Query("GET", "k")
		switch {
		case err != nil:
			t.Fatal(err)
		case aof && v != "v":
			t.Fatalf("with the AOF, GET after a crash and restart answered %q, want the acknowledged \"v\"", v)
		case !aof && v != "":
			t.Fatalf("without persistence, GET after a restart answered %q, want nothing", v)
		}
	}
}

// TestAOFFsyncsAlways: the AOF option is appendfsync always.
func TestAOFFsyncsAlways(t *testing.T) {
	s := StartT(t, WithAOF())
	c := client(t, s, 2*time.Second)
	got, err := c.ConfigGet(context.Background(), "appendfsync").Result()
	if err != nil || got["appendfsync"] != "always" {
		t.Fatalf("CONFIG GET appendfsync: %v, %v", got, err)
	}
}

// TestPauseResume: a command sent to a paused server gets no reply (the
// client times out), and runs once the server resumes.
func TestPauseResume(t *testing.T) {
	s := StartT(t)
	c := client(t, s, 200*time.Millisecond)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	err := c.Incr(ctx, "n").Err()
	if !isTimeout(err) {
		s.Resume()
		t.Fatalf("INCR against a paused server: %v, want a read timeout", err)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	var v string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if v, err = s.Query("GET", "n"); err == nil && v == "1" {
			return
		}
	}
	t.Fatalf("after Resume, GET n answered %q (%v): the timed-out INCR should have run once", v, err)
}

// TestReplicaPromote: a replica holds the primary's writes, refuses its
// own until promoted, and accepts them after.
func TestReplicaPromote(t *testing.T) {
	p := StartT(t)
	if r, err := p.Do("SET", "before", "1"); err != nil || r != "+OK" {
		t.Fatalf("SET: %q, %v", r, err)
	}
	r := StartReplicaT(t, p)
	if v, err := r.Query("GET", "before"); err != nil || v != "1" {
		t.Fatalf("the replica's GET before: %q, %v", v, err)
	}
	if _, err := p.Do("SET", "after", "2"); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitReplicated(p, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Query("GET", "after"); err != nil || v != "2" {
		t.Fatalf("the replica's GET after: %q, %v", v, err)
	}
	if _, err := r.Query("SET", "x", "1"); err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("a write to the replica: %v, want READONLY", err)
	}
	if err := p.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := r.Promote(); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Query("SET", "x", "1"); err != nil || v != "OK" {
		t.Fatalf("a write to the promoted replica: %q, %v", v, err)
	}
	if info, err := r.Info("replication"); err != nil || info["role"] != "master" {
		t.Fatalf("the promoted replica's role: %q, %v", info["role"], err)
	}
}

// TestPauseWrites: under CLIENT PAUSE WRITE reads are answered and writes
// wait unanswered; a write whose client stays connected runs when the pause
// ends, and one whose client gave up and closed its connection is dropped
// (Redis frees the client, and its held command with it).
func TestPauseWrites(t *testing.T) {
	s := StartT(t)
	ctx := context.Background()
	if _, err := s.Do("SET", "k", "0"); err != nil {
		t.Fatal(err)
	}
	if err := s.PauseWrites(time.Minute); err != nil {
		t.Fatal(err)
	}
	defer s.UnpauseWrites()
	if v, err := client(t, s, 5*time.Second).Get(ctx, "k").Result(); err != nil || v != "0" {
		t.Fatalf("a read under CLIENT PAUSE WRITE: %q, %v", v, err)
	}
	if err := client(t, s, 300*time.Millisecond).Incr(ctx, "gone").Err(); !isTimeout(err) {
		t.Fatalf("a write under CLIENT PAUSE WRITE: %v, want a read timeout", err)
	}
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(buf); !isTimeout(err) {
		t.Fatalf("a write under CLIENT PAUSE WRITE answered %q (%v), want no answer", buf[:n], err)
	}
	if err := s.UnpauseWrites(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := conn.Read(buf); err != nil || string(buf[:n]) != ":1\r\n" {
		t.Fatalf("the held INCR answered %q (%v) after the pause, want :1", buf[:n], err)
	}
	if v, err := s.Query("GET", "gone"); err != nil || v != "" {
		t.Fatalf("the INCR whose client gave up: GET answered %q (%v), want nothing (dropped)", v, err)
	}
}

// TestWaitReplicatedSeesStreaming: a replica of a fresh primary (offset 0)
// counts as replicated only once it has processed a write made after its
// link came up, so streaming is proven, not just the link: a replica that
// reported its link up at offset 0 was taken as in sync while the primary
// had not begun streaming to it (Redis 7.0 with diskless sync waits for the
// replica's next ACK), and acknowledged writes made then were lost in a
// failover.
func TestWaitReplicatedSeesStreaming(t *testing.T) {
	p := StartT(t)
	r, err := p.StartReplica()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	info, err := r.Info("replication")
	if err != nil {
		t.Fatal(err)
	}
	if off, _ := strconv.ParseInt(info["slave_repl_offset"], 10, 64); off <= 0 || info["master_link_status"] != "up" {
		t.Fatalf("StartReplica returned with link %s at offset %s: nothing streamed yet", info["master_link_status"], info["slave_repl_offset"])
	}
}
