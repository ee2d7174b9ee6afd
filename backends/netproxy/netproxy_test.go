package netproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echo is a loopback server that writes back every line it reads, after
// sending it on served if served is not nil.
func echo(t *testing.T, served chan<- string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if served != nil {
						served <- strings.TrimSuffix(line, "\n")
					}
					if _, err := io.WriteString(c, line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// through is a proxy in front of target, closed at the test's end, and a
// connection through it that has made one round trip ("before").
func through(t *testing.T, target string) (*Proxy, net.Conn, *bufio.Reader) {
	t.Helper()
	p, err := New(target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	if got, err := roundTrip(c, r, "before", time.Second); err != nil || got != "before" {
		t.Fatalf("the first round trip: %q, %v", got, err)
	}
	return p, c, r
}

// roundTrip sends line on c and reads it back within d.
func roundTrip(c net.Conn, r *bufio.Reader, line string, d time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := r.ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

// TestStallHoldsThenDelivers: a stalled proxy forwards nothing either way,
// on an open connection or a new one, and closes nothing; Resume delivers
// what it held, in order.
func TestStallHoldsThenDelivers(t *testing.T) {
	p, c, r := through(t, echo(t, nil))
	p.Stall()
	if got, err := roundTrip(c, r, "during", 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("during the stall: %q, %v; want a time-out", got, err)
	}
	fresh, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	fr := bufio.NewReader(fresh)
	if got, err := roundTrip(fresh, fr, "new", 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection made during the stall: %q, %v; want a time-out", got, err)
	}
	p.Resume()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "during\n" {
		t.Fatalf("after Resume, the held line: %q, %v", got, err)
	}
	_ = fresh.SetDeadline(time.Now().Add(time.Second))
	if got, err := fr.ReadString('\n'); err != nil || got != "new\n" {
		t.Fatalf("after Resume, the new connection's line: %q, %v", got, err)
	}
	if got, err := roundTrip(c, r, "after", time.Second); err != nil || got != "after" {
		t.Fatalf("after the stall: %q, %v", got, err)
	}
}

// TestCutAndEnforce: Identify's head goes upstream first and tags the
// connection; a connection whose tag Cut refuses is closed on arrival, and
// Enforce closes an open one once its link is cut.
func TestCutAndEnforce(t *testing.T) {
	var cut atomic.Bool
	p, err := New(echo(t, nil), Options{
		Identify: func(nc net.Conn) ([]byte, int, error) {
			head := make([]byte, 3)
			_, err := io.ReadFull(nc, head)
			return head, int(head[0] - '0'), err
		},
		Cut: func(tag int) bool { return tag == 7 && cut.Load() },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dial := func(tag string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, tag+":\n"); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	seven, r7 := dial("7")
	_ = seven.SetDeadline(time.Now().Add(time.Second))
	if got, err := r7.ReadString('\n'); err != nil || got != "7:\n" {
		t.Fatalf("the head came back as %q, %v", got, err)
	}
	one, r1 := dial("1")
	_ = one.SetDeadline(time.Now().Add(time.Second))
	if _, err := r1.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cut.Store(true)
	p.Enforce()
	if got, err := roundTrip(seven, r7, "x", time.Second); err == nil {
		t.Fatalf("a cut link still answered %q", got)
	}
	if got, err := roundTrip(one, r1, "y", time.Second); err != nil || got != "y" {
		t.Fatalf("a link not cut: %q, %v", got, err)
	}
	late, rl := dial("7")
	_ = late.SetDeadline(time.Now().Add(time.Second))
	if got, err := rl.ReadString('\n'); err == nil {
		t.Fatalf("a connection of a cut link was forwarded: %q", got)
	}
}

// TestStallHoldsAClose: a connection closed on one side during a stall
// stays open on the other until Resume, as its FIN would be held; Close
// ends a stall and every connection.
func TestStallHoldsAClose(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	p, err := New(l.Addr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var up net.Conn
	select {
	case up = <-accepted:
	case <-time.After(2 * time.Second):
		t.Fatal("the proxy did not dial the target")
	}
	defer up.Close()
	p.Stall()
	if !p.Stalled() {
		t.Fatal("Stalled after Stall: false")
	}
	c.Close()
	buf := make([]byte, 1)
	_ = up.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := up.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the target saw the close during the stall: %v", err)
	}
	p.Resume()
	_ = up.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := up.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("after Resume the target's read: %v, want EOF", err)
	}
}

// TestDeafenLosesTheAnswer: while the proxy is deaf a request still
// reaches the target, which answers it, and the answer is held; Hear
// delivers it late; Reset ends the connection without it, and a new
// connection is forwarded both ways.
func TestDeafenLosesTheAnswer(t *testing.T) {
	served := make(chan string, 4)
	p, c, r := through(t, echo(t, served))
	<-served
	p.Deafen()
	if got, err := roundTrip(c, r, "late", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("while deaf: %q, %v; want a time-out", got, err)
	}
	p.Hear()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "late\n" {
		t.Fatalf("after Hear, the held answer: %q, %v", got, err)
	}
	<-served
	p.Deafen()
	if got, err := roundTrip(c, r, "request", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("while deaf: %q, %v; want a time-out", got, err)
	}
	select {
	case got := <-served:
		if got != "request" {
			t.Fatalf("the target served %q, want request", got)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("while deaf, the request did not reach the target")
	}
	p.Reset()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if got, err := r.ReadString('\n'); err == nil || got != "" {
		t.Fatalf("after Reset the client read %q, %v; want the connection ended and the answer lost", got, err)
	}
	fresh, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if got, err := roundTrip(fresh, bufio.NewReader(fresh), "after", time.Second); err != nil || got != "after" {
		t.Fatalf("a connection after Reset: %q, %v", got, err)
	}
}

// TestUnresolvedNamedOnlyWhenCut: connections Identify leaves Unresolved
// are forwarded with no call of Resolve while nothing is cut; the first
// Enforce under a cut names all of them in one call of Resolve, and
// closes those whose link is cut; a connection made while the cut is in
// force is named as it arrives, and refused if its link is cut.
func TestUnresolvedNamedOnlyWhenCut(t *testing.T) {
	var cut atomic.Bool
	var mu sync.Mutex
	var calls [][]int      // the tags Resolve gave, call by call
	tagOf := map[int]int{} // by the dialler's port: the tag Resolve gives
	p, err := New(echo(t, nil), Options{
		Identify: func(nc net.Conn) ([]byte, int, error) { return nil, Unresolved, nil },
		Resolve: func(ncs []net.Conn) []int {
			tags := make([]int, len(ncs))
			for k, nc := range ncs {
				tags[k] = -1
				// dial records the tag once net.Dial returns, which may
				// be after the proxy accepted.
				for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
					mu.Lock()
					tag, ok := tagOf[nc.RemoteAddr().(*net.TCPAddr).Port]
					mu.Unlock()
					if ok {
						tags[k] = tag
						break
					}
				}
			}
			mu.Lock()
			calls = append(calls, tags)
			mu.Unlock()
			return tags
		},
		Cut: func(tag int) bool { return cut.Load() && tag != 0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dial := func(tag int) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		mu.Lock()
		tagOf[c.LocalAddr().(*net.TCPAddr).Port] = tag
		mu.Unlock()
		return c, bufio.NewReader(c)
	}
	type conn struct {
		c net.Conn
		r *bufio.Reader
	}
	var conns []conn
	for k := range 6 {
		c, r := dial(k % 2)
		if got, err := roundTrip(c, r, "hi", time.Second); err != nil || got != "hi" {
			t.Fatalf("an unnamed connection with nothing cut: %q, %v", got, err)
		}
		conns = append(conns, conn{c, r})
	}
	mu.Lock()
	if len(calls) != 0 {
		t.Fatalf("Resolve was called with nothing cut: %v", calls)
	}
	mu.Unlock()
	cut.Store(true)
	p.Enforce()
	mu.Lock()
	if len(calls) != 1 || len(calls[0]) != 6 {
		t.Fatalf("Enforce under a cut called Resolve %v, want once for all 6 connections", calls)
	}
	mu.Unlock()
	for k, cn := range conns {
		got, err := roundTrip(cn.c, cn.r, "again", time.Second)
		if k%2 == 1 && err == nil {
			t.Errorf("connection %d (tag 1, cut) still answered %q", k, got)
		}
		if k%2 == 0 && (err != nil || got != "again") {
			t.Errorf("connection %d (tag 0, not cut): %q, %v", k, got, err)
		}
	}
	p.Enforce() // every connection is named: no call of Resolve
	mu.Lock()
	if len(calls) != 1 {
		t.Fatalf("a second Enforce called Resolve again: %v", calls)
	}
	mu.Unlock()
	for tag := range 2 {
		late, r := dial(tag)
		got, err := roundTrip(late, r, "late", time.Second)
		if (tag == 1) != (err != nil) {
			t.Fatalf("a connection of tag %d made under the cut: %q, %v", tag, got, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 3 || len(calls[1]) != 1 || len(calls[2]) != 1 {
		t.Fatalf("two connections made under the cut: Resolve calls %v, want one more for each, alone", calls)
	}
}

// TestDiallersNamesEachConnection: Diallers finds the process holding
// the far end of each of several loopback connections in one reading of
// the kernel's tables: a child process that dialled three of them, this
// process the other two, and 0 for a process not listed. (With both ends
// in one process, a lookup of the wrong end would pass.)
func TestDiallersNamesEachConnection(t *testing.T) {
	if addr := os.Getenv("TOLLGATE_NETPROXY_DIALLER"); addr != "" {
		for range 3 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				os.Exit(2)
			}
			defer c.Close()
		}
		_, _ = io.Copy(io.Discard, os.Stdin) // hold them until the parent is done
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	child := exec.Command(os.Args[0], "-test.run=^TestDiallersNamesEachConnection$")
	child.Env = append(os.Environ(), "TOLLGATE_NETPROXY_DIALLER="+l.Addr().String())
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = child.Wait() }()
	var accepted []net.Conn
	for range 3 {
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		accepted = append(accepted, s)
	}
	for range 2 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		accepted = append(accepted, s)
	}
	me, kid := os.Getpid(), child.Process.Pid
	for k, pid := range Diallers(accepted, []int{me, kid}) {
		want := kid
		if k >= 3 {
			want = me
		}
		if pid != want {
			t.Errorf("connection %d: Diallers says %d, want %d (this process %d, the child %d)", k, pid, want, me, kid)
		}
	}
	for k, pid := range Diallers(accepted, []int{1}) {
		if pid != 0 {
			t.Errorf("connection %d, with only pid 1 listed: %d, want 0", k, pid)
		}
	}
}
