// Package throwaway is the one shape of the server wings' throwaway
// servers (backends/redisserver, backends/etcdserver): a free loopback
// port, a server process started and watched until it exits, and a test's
// verdict on a server that cannot be started here. Each wing keeps its
// command line and its readiness check.
//
// It may import internal/lazyfs; nothing of the wings.
package throwaway

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/lazyfs"
	"github.com/tollgate/tollgate/internal/skipnote"
)

// FreePort returns a loopback TCP port that was free a moment ago: another
// process may take it before the server binds it, so a caller starts
// again on another port when the server says its address is in use.
//
// The port is drawn at random from outside the kernel's ephemeral range
// (net.ipv4.ip_local_port_range, 32768-60999 by default), where no
// outgoing connection is given a local port: a port the kernel handed out
// for a listener a moment ago (port 0) is one it may hand the next
// connect() as its own end, and a machine running the checks makes
// thousands of connections a minute (an etcd member was seen failing to
// form its cluster under CI's load). Two harnesses may still draw the same
// port; the caller's retry covers that. When the range leaves no room
// outside it, the kernel picks.
func FreePort() (int, error) {
	if lo, hi, ok := ephemeralRange(); ok {
		for _, span := range [][2]int{{firstPort, lo - 1}, {hi + 1, 65535}} {
			if span[1]-span[0] < 1000 {
				continue
			}
			for try := 0; try < 64; try++ {
				p := span[0] + rand.IntN(span[1]-span[0]+1)
				if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
					l.Close()
					return p, nil
				}
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// firstPort is the lowest port FreePort draws: below it are the well-known
// and the commonly configured services' ports.
const firstPort = 10000

// ephemeralRange is the kernel's range of local ports for outgoing
// connections, from /proc (Linux).
func ephemeralRange() (lo, hi int, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, false
	}
	if n, err := fmt.Sscan(string(b), &lo, &hi); err != nil || n != 2 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// Process is one run of a server's process.
type Process struct {
	Cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	err    error         // Wait's result, set before exited is closed
}

// Start starts cmd and watches it: once it has exited, done (if not nil)
// runs, then Exited is closed.
func Start(cmd *exec.Cmd, done func()) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		if done != nil {
			done()
		}
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is how the process exited (exec.Cmd.Wait's error); call it once
// Exited is closed.
func (p *Process) Err() error { return p.err }

// Wait reports whether the process has exited, waiting up to d for it.
func (p *Process) Wait(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	}
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// Kill sends the process SIGKILL (which ends a stopped process too) and
// waits up to d for it to exit; an error says it had not. A nil Process
// (none running) is killed at once.
func (p *Process) Kill(d time.Duration) error {
	if p == nil {
		return nil
	}
	_ = p.Cmd.Process.Kill()
	if !p.Wait(d) {
		return fmt.Errorf("pid %d has not exited %v after SIGKILL", p.Cmd.Process.Pid, d)
	}
	return nil
}

// ForTest is a test's verdict on a server that could not be started with
// err: when the server is not installed (err wraps notInstalled) or needs
// a lazyfs mount that cannot be made here, it skips t, except under CI
// (CI=true), where it fails it; any other error fails t.
func ForTest(t testing.TB, err, notInstalled error, program string) {
	t.Helper()
	if errors.Is(err, notInstalled) || errors.Is(err, lazyfs.ErrUnavailable) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI must have it", err)
		}
		if errors.Is(err, lazyfs.ErrUnavailable) {
			program = "FUSE"
		}
		skipnote.Missing(program, err) // shown without -v
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// NotInstalled is the error of a wing (pkg) whose server binary bin is
// not on PATH, saying how to install it.
func NotInstalled(pkg, bin, install string) error {
	return fmt.Errorf("%s: %s is not on PATH (install it: %s)", pkg, bin, install)
}
