// Package redisserver starts a throwaway redis-server on a free loopback
// port, in a temporary directory of its own, for tests and checks that
// need a real Redis (the limiter campaign's redis_rate runs; a Redis
// backend later). Nothing is persisted: no RDB snapshots, no AOF.
//
// In a test, use StartT: it skips the test when redis-server is not
// installed, with a message saying how to install it, except under CI
// (CI=true), where a missing server fails the test.
package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Install is how to get redis-server on Debian, as the messages say it.
const Install = "apt-get update && apt-get install -y redis-server"

// ErrNotInstalled reports that no redis-server is on PATH.
var ErrNotInstalled = errors.New("redisserver: redis-server is not on PATH (install it: " + Install + ")")

// Server is a running redis-server.
type Server struct {
	Addr string // host:port on the loopback interface
	Dir  string // its working directory (removed by Stop)
	cmd  *exec.Cmd
	exit chan error
	once sync.Once
}

// Start runs redis-server on a free loopback port with its working
// directory in a new temporary directory under parent ("" for the system's
// default) and waits until it answers PING.
func Start(parent string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	dir, err := os.MkdirTemp(parent, "redisserver-")
	if err != nil {
		return nil, fmt.Errorf("redisserver: %w", err)
	}
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, exit: make(chan error, 1)}
		s.cmd = exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
		if err := s.cmd.Start(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("redisserver: starting %s: %w", bin, err)
		}
		go func() { s.exit <- s.cmd.Wait() }()
		if err := s.waitReady(5 * time.Second); err != nil {
			s.Stop()
			if attempt < 4 && strings.Contains(s.log(), "Address already in use") {
				if dir, err = os.MkdirTemp(parent, "redisserver-"); err != nil {
					return nil, fmt.Errorf("redisserver: %w", err)
				}
				continue
			}
			return nil, err
		}
		return s, nil
	}
	return nil, errors.New("redisserver: no free port after 5 attempts")
}

// StartT starts a server for t and stops it when t ends. Without
// redis-server it skips t, or fails it when CI=true.
func StartT(t testing.TB) *Server {
	t.Helper()
	s, err := Start(t.TempDir())
	if errors.Is(err, ErrNotInstalled) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI must have it", err)
		}
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Stop kills the server (its pid only) and removes its directory. Calls
// after the first do nothing.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			select {
			case <-s.exit:
			case <-time.After(5 * time.Second):
			}
		}
		os.RemoveAll(s.Dir)
	})
}

func (s *Server) log() string {
	data, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return string(data)
}

// Do sends one command in RESP and returns the first line of the reply.
func (s *Server) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

func (s *Server) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exit:
			s.exit <- err
			return fmt.Errorf("redisserver: redis-server exited: %v\n%s", err, s.log())
		default:
		}
		if r, err := s.Do("PING"); err == nil && r == "+PONG" {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("redisserver: no PONG from %s within %v\n%s", s.Addr, d, s.log())
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisserver: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
