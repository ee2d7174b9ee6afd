package conform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Conn is the harness's end of one driver: it numbers requests, matches
// answers to them by id (answers may come in any order) and turns every way
// a driver can misbehave into a DriverError naming the request: exiting,
// printing a line that is not a response, answering an id nobody asked, or
// not answering within the per-request timeout. After the first such error
// the Conn is dead: the driver is killed and every pending and later Send
// returns the same error. Close always reaps the child.
type Conn struct {
	timeout time.Duration
	cmd     *exec.Cmd // nil for an in-process driver
	stdin   io.WriteCloser
	stderr  *tail

	wmu     sync.Mutex // serializes writes to stdin
	mu      sync.Mutex
	nextID  int64
	wait    map[int64]*pending
	dead    chan struct{}
	err     *DriverError
	failing bool
	// answered counts the answers read; overtook those among them whose
	// request was written after another request still unanswered.
	answered, overtook int
	exited             chan struct{} // closed when the child has been reaped
	// grace is how long Close waits for the driver to exit on its own
	// once its input has ended, before it kills it (closeGrace).
	grace time.Duration
	// stderrDone is closed when the driver's stderr has been read to its end.
	stderrDone chan struct{}
}

type pending struct {
	req  string
	done chan Answer
}

// Answer is a driver's response together with the line it was parsed from.
type Answer struct {
	Resp Response
	Line string
}

// DriverError is a driver that broke the protocol.
type DriverError struct {
	Kind    string // "exited", "garbage", "unknown_id", "timeout", "write"
	Request string // the request concerned (protocol form), if any
	Detail  string
	Stderr  string // the driver's last stderr lines
}

func (e *DriverError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "driver %s: %s", e.Kind, e.Detail)
	if e.Request != "" {
		fmt.Fprintf(&b, "\n  request: %s", e.Request)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "\n  driver stderr (last lines):\n    %s", strings.ReplaceAll(strings.TrimRight(e.Stderr, "\n"), "\n", "\n    "))
	}
	return b.String()
}

// Start runs argv as a driver. Its stderr is kept (the last lines go into
// errors) and copied to logw when logw is not nil.
func Start(argv []string, timeout time.Duration, logw io.Writer) (*Conn, error) {
	if len(argv) == 0 {
		return nil, errors.New("conform: no driver command given (usage: tollgate conform [flags] -- CMD ARGS...)")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so Close can kill the whole group
	cmd.WaitDelay = 2 * time.Second                       // a grandchild holding stderr cannot stall the reaping
	c := newConn(timeout)
	c.cmd = cmd
	var errw io.Writer = c.stderr
	if logw != nil {
		errw = io.MultiWriter(c.stderr, logw)
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("conform: driver stderr: %w", err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("conform: driver stdin: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("conform: driver stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("conform: starting driver %q: %w", strings.Join(argv, " "), err)
	}
	c.stdin = in
	go func() {
		_, _ = io.Copy(errw, errp)
		close(c.stderrDone)
	}()
	go func() {
		c.read(out)
		select { // Wait must follow the last read of stderr
		case <-c.stderrDone:
		case <-time.After(2 * time.Second):
		}
		werr := cmd.Wait()
		close(c.exited)
		c.fail(&DriverError{Kind: "exited", Detail: exitText(werr)})
	}()
	return c, nil
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// StartFunc runs an in-process driver: serve reads requests from in and
// writes answers to out, as ServeGo does.
func StartFunc(serve func(in io.Reader, out io.Writer, logw io.Writer) error, timeout time.Duration) *Conn {
	c := newConn(timeout)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c.stdin = inW
	go func() {
		err := serve(inR, outW, c.stderr)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
		}
		close(c.stderrDone)
		outW.Close()
		inR.Close()
	}()
	go func() {
		c.read(outR)
		close(c.exited)
		c.fail(&DriverError{Kind: "exited", Detail: "the in-process driver returned"})
	}()
	return c
}

func newConn(timeout time.Duration) *Conn {
	return &Conn{timeout: timeout, grace: closeGrace, stderr: &tail{max: 4096}, wait: map[int64]*pending{},
		dead: make(chan struct{}), exited: make(chan struct{}), stderrDone: make(chan struct{})}
}

func (c *Conn) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		var resp Response
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&resp); err != nil || !hasID(line) {
			if err == nil {
				err = errors.New(`no "id" field`)
			}
			c.fail(&DriverError{Kind: "garbage", Request: c.outstanding(),
				Detail: fmt.Sprintf("printed a line that is not a protocol response (%v): %.300s", err, line)})
			return
		}
		c.mu.Lock()
		p, ok := c.wait[resp.ID]
		delete(c.wait, resp.ID)
		if ok {
			c.answered++
			for id := range c.wait {
				if id < resp.ID {
					c.overtook++
					break
				}
			}
		}
		c.mu.Unlock()
		if !ok {
			c.fail(&DriverError{Kind: "unknown_id", Request: c.outstanding(),
				Detail: fmt.Sprintf("answered id %d, which no outstanding request has: %.300s", resp.ID, line)})
			return
		}
		p.done <- Answer{Resp: resp, Line: line}
	}
	if err := sc.Err(); err != nil {
		c.fail(&DriverError{Kind: "garbage", Request: c.outstanding(), Detail: fmt.Sprintf("unreadable output: %v", err)})
	}
}

func hasID(line string) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &probe) != nil {
		return false
	}
	_, ok := probe["id"]
	return ok
}

// outstanding lists the requests still waiting for an answer.
func (c *Conn) outstanding() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var reqs []string
	for _, p := range c.wait {
		reqs = append(reqs, p.req)
	}
	if len(reqs) == 0 {
		return "(none outstanding)"
	}
	if len(reqs) > 4 {
		reqs = append(reqs[:4], fmt.Sprintf("… and %d more", len(reqs)-4))
	}
	return strings.Join(reqs, "\n           ")
}

// fail records the first protocol breach and kills the driver. The error is
// published (and dead closed) only once the driver's last stderr lines are in
// it.
func (c *Conn) fail(e *DriverError) {
	c.mu.Lock()
	if c.failing {
		c.mu.Unlock()
		return
	}
	c.failing = true
	c.mu.Unlock()
	c.kill()
	// The killed process's stderr ends; quote all of it.
	select {
	case <-c.stderrDone:
	case <-time.After(2 * time.Second):
	}
	e.Stderr = c.stderr.String()
	c.mu.Lock()
	c.err = e
	close(c.dead)
	c.mu.Unlock()
}

func (c *Conn) kill() {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		_ = c.cmd.Process.Kill()
	}
	_ = c.stdin.Close()
}

// Overlap returns the number of answers read so far and how many of them
// overtook a request written before theirs and not yet answered: the
// driver had both in hand at once, so a driver that runs one request at a
// time never overtakes.
func (c *Conn) Overlap() (answered, overtook int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answered, c.overtook
}

// Err returns the protocol breach that killed the driver, or nil.
func (c *Conn) Err() *DriverError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Send writes req with a fresh id and waits for its answer, at most the
// per-request timeout. It is safe for concurrent use; each call waits for
// its own answer.
func (c *Conn) Send(req Request) (Answer, error) { return c.SendWithin(req, c.timeout) }

// SendWithin is Send with a timeout of its own (the hello's, which also
// waits for the driver to start).
func (c *Conn) SendWithin(req Request, timeout time.Duration) (Answer, error) {
	// Ids are issued in the order requests are written (under wmu), so an
	// answer to an id above one still waiting overtook it (Overlap).
	c.wmu.Lock()
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		c.wmu.Unlock()
		return Answer{}, c.err
	}
	c.nextID++
	req.ID = c.nextID
	line := Line(req)
	p := &pending{req: line, done: make(chan Answer, 1)}
	c.wait[req.ID] = p
	c.mu.Unlock()
	_, werr := io.WriteString(c.stdin, line+"\n")
	c.wmu.Unlock()
	if werr != nil {
		c.fail(&DriverError{Kind: "write", Request: line, Detail: fmt.Sprintf("cannot write the request: %v", werr)})
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-p.done:
		return a, nil
	case <-c.dead:
		select { // an answer that arrived just before the breach still counts
		case a := <-p.done:
			return a, nil
		default:
		}
		e := *c.Err()
		if e.Kind == "exited" || e.Kind == "write" {
			e.Request = line
		}
		return Answer{}, &e
	case <-timer.C:
		c.fail(&DriverError{Kind: "timeout", Request: line, Detail: fmt.Sprintf("no answer within %v", timeout)})
		<-c.dead // another breach may have been first
		return Answer{}, c.Err()
	}
}

// closeGrace is how long Close waits for a driver to exit after its input
// has ended.
const closeGrace = 3 * time.Second

// Close ends the session: it closes the driver's stdin, waits closeGrace
// for it to exit, kills it if it has not, and reaps it. It returns the protocol
// breach, if any, that happened before Close.
func (c *Conn) Close() *DriverError {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(c.grace):
		c.kill()
		<-c.exited
	}
	return err
}

// Stderr returns the driver's last stderr output.
func (c *Conn) Stderr() string { return c.stderr.String() }

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
		if i := bytes.IndexByte(t.buf, '\n'); i >= 0 {
			t.buf = t.buf[i+1:]
		}
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
