package redischeck

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Settling an unknown outcome.
//
// A call that got no reply (a time-out, a connection reset) may still run
// later: its bytes may wait in the socket of a stopped server, or in the
// query buffer of a client CLIENT PAUSE holds. Left so, the checker must let
// it take effect at any later point of the history, and a credit history
// with a few dozen such calls does not check in a minute (porcupine's
// search keeps every one of them open). So the harness settles it: a call
// can no longer run once the server process that held its connection has
// freed that connection or has died, and both can be established.
//
// Which pooled connection carried a call, go-redis does not say; but the
// one that did failed a read or a write, so every connection that failed
// since the call began (a suspect) is settled: on a fresh connection to its
// address, the same process (its run_id) is asked to CLIENT KILL ID the
// suspect's client id, and once it answers the client is gone, with
// whatever it had not run. Another process at the address, or none, means
// the suspect's process is dead, and a dead process runs nothing more (what
// its AOF or its replica holds, it ran before). A server that does not
// answer (stopped) is asked again until the call's deadline; a call not
// settled by then stays open.

// suspect is a connection that failed a read or a write at seq.
type suspect struct {
	c       *conn
	seq     uint64
	at      time.Time
	settled bool
}

// taint records c as a suspect, once.
func (t *Target) taint(c *conn) {
	if c.tainted.Swap(true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	now := time.Now()
	keep := max(40*t.Timeout, 10*time.Second)
	i := 0
	for i < len(t.suspect) && now.Sub(t.suspect[i].at) > keep {
		i++
	}
	t.suspect = append(t.suspect[i:], suspect{c: c, seq: t.seq, at: now})
}

// settle returns once every suspect tainted since call c began is settled
// (true), or at deadline with some not (false).
func (t *Target) settle(c call, deadline time.Time) bool {
	for {
		t.mu.Lock()
		var todo []*conn
		for _, s := range t.suspect {
			if s.seq > c.seq && !s.settled {
				todo = append(todo, s.c)
			}
		}
		t.mu.Unlock()
		if len(todo) == 0 {
			return true
		}
		for _, k := range todo {
			if t.drop(k) == nil {
				t.mu.Lock()
				for i := range t.suspect {
					if t.suspect[i].c == k {
						t.suspect[i].settled = true
					}
				}
				t.mu.Unlock()
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// drop makes sure k's server process runs nothing more that k sent: nil
// once it has freed k's client, or is gone.
func (t *Target) drop(k *conn) error {
	d := net.Dialer{Timeout: t.Timeout}
	nc, err := d.Dial("tcp", k.addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil // nothing listens there: k's process is dead
		}
		return err
	}
	defer nc.Close()
	id, _, err := handshake(nc, t.Timeout)
	if err != nil {
		return err
	}
	if id != k.runID {
		return nil // another process holds the port: k's is dead
	}
	if err := nc.SetDeadline(time.Now().Add(t.Timeout)); err != nil {
		return err
	}
	if _, err := io.WriteString(nc, resp("CLIENT", "KILL", "ID", strconv.FormatInt(k.clientID, 10))); err != nil {
		return err
	}
	// An integer (how many clients it killed, 0 if k's was already gone);
	// an older server's "No such client" error says the same.
	if _, err := readReply(bufio.NewReader(nc)); err != nil && !strings.Contains(err.Error(), "No such client") {
		return err
	}
	return nil
}

// handshake asks the server on nc its run_id and nc's client id, pipelined
// (INFO server, CLIENT ID), and leaves nc with no deadline.
func handshake(nc net.Conn, timeout time.Duration) (runID string, client int64, err error) {
	if err := nc.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", 0, err
	}
	if _, err := io.WriteString(nc, resp("INFO", "server")+resp("CLIENT", "ID")); err != nil {
		return "", 0, err
	}
	r := bufio.NewReader(nc)
	info, err := readReply(r)
	if err != nil {
		return "", 0, fmt.Errorf("INFO server: %w", err)
	}
	id, _ := info.(string)
	if id = infoField(id, "run_id"); id == "" {
		return "", 0, errors.New("INFO server: no run_id in the reply")
	}
	v, err := readReply(r)
	if err != nil {
		return "", 0, fmt.Errorf("CLIENT ID: %w", err)
	}
	n, ok := v.(int64)
	if !ok {
		return "", 0, fmt.Errorf("CLIENT ID: reply %v", v)
	}
	if r.Buffered() > 0 {
		return "", 0, errors.New("the server sent more than was asked")
	}
	return id, n, nc.SetDeadline(time.Time{})
}

// resp encodes one command.
func resp(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// readReply reads one RESP2 reply: a bulk or simple string, an integer, or
// an error reply (returned as the error). Arrays are not needed here.
func readReply(r *bufio.Reader) (any, error) {
	head, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	head = strings.TrimRight(head, "\r\n")
	if head == "" {
		return nil, errors.New("empty reply")
	}
	switch head[0] {
	case '+':
		return head[1:], nil
	case '-':
		return nil, errors.New(head[1:])
	case ':':
		return strconv.ParseInt(head[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(head[1:])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("reply %q", head)
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return string(body[:n]), nil
	}
	return nil, fmt.Errorf("reply %q", head)
}
