// Package redisserver starts a throwaway redis-server on a free loopback
// port, in a temporary directory of its own, for tests and checks that
// need a real Redis (the limiter campaign's redis_rate runs, the Redis
// backends' conformance, linearizability and fault checks). By default
// nothing is persisted: no RDB snapshots, no AOF; WithAOF turns on the
// append-only file, fsynced before every reply (WithAppendFsync: another
// fsync policy).
//
// A Server can also be made to misbehave the way a real one does, for the
// fault checks: Pause and Resume stop and continue the process (SIGSTOP,
// SIGCONT: clients time out, and the commands they sent run once it
// continues), Crash kills it with SIGKILL and keeps its directory, Restart
// starts it again on the same port from what it left there (its AOF),
// StartReplica starts a replica of it and Promote makes a replica a primary
// (REPLICAOF NO ONE), and PauseWrites holds every write command for a
// while (CLIENT PAUSE … WRITE). A server started OnLazyFS keeps its data
// on a lazyfs mount (internal/lazyfs), where PowerLoss drops every write
// Redis has not fsynced before the kill: a crash of the machine, which
// Crash (a process kill: the kernel keeps what was written) is not.
//
// In a test, use StartT: it skips the test when redis-server is not
// installed, with a message saying how to install it, except under CI
// (CI=true), where a missing server fails the test.
//
// A Server's methods are safe for concurrent use.
package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tollgate/tollgate/backends/netproxy"
	"github.com/tollgate/tollgate/backends/throwaway"
	"github.com/tollgate/tollgate/internal/lazyfs"
)

// Install is how to get redis-server on Debian, as the messages say it.
const Install = "apt-get update && apt-get install -y redis-server"

// ErrNotInstalled reports that no redis-server is on PATH.
var ErrNotInstalled = throwaway.NotInstalled("redisserver", "redis-server", Install)

// ErrNotRunning reports a call that needs the process while it is not
// running (after Crash and before Restart, or after Stop).
var ErrNotRunning = errors.New("redisserver: the server is not running")

// Option configures a server started by Start, StartT or StartReplica.
type Option func(*config)

type config struct {
	aof       bool
	fsync     string // the appendfsync policy with aof ("" means always)
	lazy      bool   // the data directory on a lazyfs mount
	replicaOf string
	proxied   bool // a replica's link to its primary goes through a proxy
	// min-replicas-to-write and min-replicas-max-lag (0: off)
	minReplicas int
	maxLag      time.Duration
	// cluster mode: the cluster bus port and the node timeout (0: off)
	busPort     int
	nodeTimeout time.Duration
	clock       bool // the wall clock steppable (WithSteppableClock)
	// the client and bus ports a proxied cluster node announces (0: its own)
	announcePort, announceBusPort int
}

// cluster reports whether the server runs in cluster mode.
func (c config) cluster() bool { return c.busPort != 0 }

// WithAOF turns on the append-only file with appendfsync always: Redis
// writes and fsyncs every write command to the AOF before it sends the
// reply, so a write a client saw acknowledged survives a crash of the
// process (and of the machine). Restart after Crash loads it.
func WithAOF() Option { return func(c *config) { c.aof = true } }

// WithAppendFsync turns on the append-only file with the fsync policy
// given: "always" (as WithAOF), "everysec" (a background fsync once a
// second: a crash of the machine loses up to a second or two of
// acknowledged writes) or "no" (Redis never fsyncs the AOF and leaves it
// to the kernel: a crash of the machine loses whatever the kernel had not
// written back). Only a power loss (OnLazyFS, PowerLoss) tells the three
// apart; a process kill loses nothing under any of them. Start refuses
// any other policy.
func WithAppendFsync(policy string) Option {
	return func(c *config) { c.aof, c.fsync = true, policy }
}

// OnLazyFS keeps the server's data directory (its AOF, and the RDB of a
// replica's sync) on a lazyfs mount of a directory of its own, so that
// PowerLoss can drop what Redis wrote and did not fsync. Its log stays
// outside the mount. Start fails with an error wrapping
// lazyfs.ErrUnavailable where FUSE cannot be mounted (StartT skips, or
// fails under CI).
func OnLazyFS() Option { return func(c *config) { c.lazy = true } }

// ThroughProxy makes a replica (StartReplica) reach its primary through a
// proxy of its own (backends/netproxy): the replica's REPLICAOF names the
// proxy, so Partition and Heal can cut its link to the primary both ways
// and mend it while both processes run on.
func ThroughProxy() Option { return func(c *config) { c.proxied = true } }

// WithMinReplicas makes the server refuse writes (NOREPLICAS) while fewer
// than n replicas have acknowledged its replication stream within maxLag
// (min-replicas-to-write n, min-replicas-max-lag in whole seconds, at
// least 1). Redis judges the lag by the second of each replica's last
// acknowledgement (sent once a second) and recounts its good replicas
// once a second, so a primary cut from its replicas goes on accepting
// writes for up to maxLag + 2 s (MinReplicasBound). Start refuses n < 1
// or a maxLag not a whole number of seconds.
func WithMinReplicas(n int, maxLag time.Duration) Option {
	return func(c *config) { c.minReplicas, c.maxLag = n, maxLag }
}

// MinReplicasBound is how long after the last acknowledgement of its
// replicas reached it a primary started WithMinReplicas(n, maxLag) may
// still accept a write: the acknowledgement's age is counted in whole
// seconds of the server's clock (up to 1 s short), and the count of good
// replicas is refreshed by a cron once a second (up to 1 s late).
func MinReplicasBound(maxLag time.Duration) time.Duration { return maxLag + 2*time.Second }

// validate checks the options before anything starts.
func (c config) validate() error {
	if c.minReplicas != 0 || c.maxLag != 0 {
		if c.minReplicas < 1 {
			return fmt.Errorf("redisserver: WithMinReplicas(%d, %v): n must be at least 1", c.minReplicas, c.maxLag)
		}
		if c.maxLag < time.Second || c.maxLag%time.Second != 0 {
			return fmt.Errorf("redisserver: WithMinReplicas(%d, %v): maxLag must be a whole number of seconds, at least 1 s", c.minReplicas, c.maxLag)
		}
	}
	if c.proxied && c.replicaOf == "" {
		return errors.New("redisserver: ThroughProxy: only a replica (StartReplica) reaches its primary through a proxy")
	}
	switch c.fsync {
	case "", "always", "everysec", "no":
		return nil
	}
	return fmt.Errorf("redisserver: WithAppendFsync(%q): the policy must be always, everysec or no", c.fsync)
}

// Server is a running redis-server.
type Server struct {
	Addr string // host:port on the loopback interface
	Dir  string // its working directory, with its log (removed by Stop)
	// DataDir is where it keeps its data: Dir, or the lazyfs mount in Dir
	// (OnLazyFS).
	DataDir string

	mount *lazyfs.Mount   // OnLazyFS: the data directory's mount
	link  *netproxy.Proxy // ThroughProxy: the replica's link to its primary
	clock *clock          // WithSteppableClock: the shim and its offset
	// cluster is the proxied cluster the node belongs to (nil: none), and
	// announce the address of its client proxy
	cluster  *Cluster
	announce string

	bin  string
	port int
	cfg  config

	mu      sync.Mutex
	proc    *throwaway.Process // nil after Crash, until Restart
	stopped bool
}

// Start runs redis-server on a free loopback port with its working
// directory in a new temporary directory under parent ("" for the system's
// default) and waits until it answers PING.
func Start(parent string, opts ...Option) (*Server, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return start(parent, cfg)
}

func start(parent string, cfg config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	if cfg.lazy {
		if err := lazyfs.Available(); err != nil {
			return nil, fmt.Errorf("redisserver: OnLazyFS: %w", err)
		}
	}
	for attempt := 0; attempt < 5; attempt++ {
		dir, err := os.MkdirTemp(parent, "redisserver-")
		if err != nil {
			return nil, fmt.Errorf("redisserver: %w", err)
		}
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, DataDir: dir, bin: bin, port: port, cfg: cfg}
		if cfg.lazy {
			if err := s.mountData(); err != nil {
				s.Stop()
				return nil, err
			}
		}
		if cfg.clock {
			if s.clock, err = setUpClock(dir); err != nil {
				s.Stop()
				return nil, err
			}
		}
		err = s.launch()
		if err == nil {
			return s, nil
		}
		inUse := strings.Contains(s.log(), "Address already in use")
		s.Stop()
		if !inUse {
			return nil, err
		}
	}
	return nil, errors.New("redisserver: no free port after 5 attempts")
}

// args is the command line of the server.
func (s *Server) args() []string {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	a := []string{"--port", fmt.Sprint(s.port), "--bind", "127.0.0.1", "--dir", s.DataDir,
		"--save", "", "--daemonize", "no", "--repl-diskless-sync-delay", "0", "--logfile", filepath.Join(s.Dir, "redis.log")}
	if cfg.aof {
		policy := cfg.fsync
		if policy == "" {
			policy = "always"
		}
		a = append(a, "--appendonly", "yes", "--appendfsync", policy)
	} else {
		a = append(a, "--appendonly", "no")
	}
	if cfg.minReplicas > 0 {
		a = append(a, "--min-replicas-to-write", fmt.Sprint(cfg.minReplicas), "--min-replicas-max-lag", fmt.Sprint(int(cfg.maxLag/time.Second)))
	}
	if cfg.replicaOf != "" {
		host, port, _ := net.SplitHostPort(cfg.replicaOf)
		a = append(a, "--replicaof", host, port)
	}
	if cfg.busPort != 0 {
		a = append(a, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", fmt.Sprint(cfg.busPort), "--cluster-node-timeout", fmt.Sprint(cfg.nodeTimeout.Milliseconds()))
		if cfg.announcePort != 0 {
			a = append(a, "--cluster-announce-ip", "127.0.0.1", "--cluster-announce-port", fmt.Sprint(cfg.announcePort),
				"--cluster-announce-bus-port", fmt.Sprint(cfg.announceBusPort))
		}
	}
	return a
}

// launch starts the process and waits until it answers PING; on failure
// the process is killed (the directory is kept).
func (s *Server) launch() error {
	cmd := exec.Command(s.bin, s.args()...)
	if s.clock != nil {
		cmd.Env = s.clock.env()
	}
	p, err := throwaway.Start(cmd, nil)
	if err != nil {
		return fmt.Errorf("redisserver: starting %s: %w", s.bin, err)
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	if err := s.waitReady(p, 10*time.Second); err != nil {
		_ = s.kill() // the readiness error says more
		return err
	}
	return nil
}

// StartReplica starts a new server (in a directory next to s's, on a free
// port, with opts) as a replica of s, and waits until its link to s is up
// and it holds every write s had made by then. A replica answers reads and
// refuses writes (READONLY) until Promote.
//
// ThroughProxy puts a proxy between the two (Partition, Heal).
func (s *Server) StartReplica(opts ...Option) (*Server, error) {
	cfg := config{replicaOf: s.Addr}
	for _, o := range opts {
		o(&cfg)
	}
	var link *netproxy.Proxy
	if cfg.proxied {
		if err := cfg.validate(); err != nil {
			return nil, err
		}
		var err error
		if link, err = netproxy.New(s.Addr, netproxy.Options{}); err != nil {
			return nil, fmt.Errorf("redisserver: %w", err)
		}
		cfg.replicaOf = link.Addr()
	}
	r, err := start(filepath.Dir(s.Dir), cfg)
	if err != nil {
		if link != nil {
			link.Close()
		}
		return nil, err
	}
	r.link = link
	if err := r.WaitReplicated(s, 10*time.Second); err != nil {
		r.Stop()
		return nil, err
	}
	return r, nil
}

// Stop kills the server (its pid only) and removes its directory. Calls
// after the first do nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.mu.Unlock()
	_ = s.kill() // Stop is best effort: the directory goes either way
	if s.link != nil {
		s.link.Close()
	}
	if s.mount != nil {
		_ = s.mount.Unmount()
	}
	if s.clock != nil {
		s.mu.Lock()
		s.clock.close()
		s.mu.Unlock()
	}
	os.RemoveAll(s.Dir)
}

// mountData makes the data directory a lazyfs mount of Dir/disk.
func (s *Server) mountData() error {
	disk, data := filepath.Join(s.Dir, "disk"), filepath.Join(s.Dir, "data")
	for _, d := range []string{disk, data} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("redisserver: %w", err)
		}
	}
	m, err := lazyfs.New(disk, data)
	if err != nil {
		return fmt.Errorf("redisserver: OnLazyFS: %w", err)
	}
	s.mount, s.DataDir = m, data
	return nil
}

// PowerLoss crashes the machine under a server started OnLazyFS: the
// process is halted (lazyfs.Halt), the data directory's mount drops every write Redis had not fsynced (and every
// file creation and rename not followed by an fsync of its directory)
// and fails every later operation, the process is killed (SIGKILL), the
// backing directory is mounted again, and the server restarts from what
// was durable (its AOF) on the same port, as Restart does. It returns
// what the power loss dropped. With appendfsync always nothing Redis
// acknowledged is dropped; with everysec, the writes since the last
// background fsync; with no, every write since the AOF file was made.
func (s *Server) PowerLoss() (lazyfs.Loss, error) {
	if s.mount == nil {
		return lazyfs.Loss{}, errors.New("redisserver: PowerLoss: the server was not started OnLazyFS")
	}
	s.mu.Lock()
	running := s.proc != nil && !s.stopped
	s.mu.Unlock()
	if !running {
		return lazyfs.Loss{}, ErrNotRunning
	}
	// One instant: the process is halted (every thread stopped, so no
	// reply goes out after), the data that was not durable is dropped,
	// and then the process is killed.
	s.mu.Lock()
	pid := s.proc.Cmd.Process.Pid
	s.mu.Unlock()
	if err := lazyfs.Halt(pid, 5*time.Second); err != nil {
		return lazyfs.Loss{}, err
	}
	loss, err := s.mount.PowerLoss()
	if err != nil {
		return loss, fmt.Errorf("redisserver: %w", err)
	}
	if err := s.kill(); err != nil {
		return loss, err
	}
	if err := s.mount.Remount(); err != nil {
		return loss, fmt.Errorf("redisserver: %w", err)
	}
	return loss, s.Restart()
}

// kill sends SIGKILL (which ends a stopped process too) and waits for the
// process to exit.
func (s *Server) kill() error {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if err := p.Kill(5 * time.Second); err != nil {
		return fmt.Errorf("redisserver: %w: connections to it may still answer", err)
	}
	return nil
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.stopped {
		return ErrNotRunning
	}
	if err := s.proc.Cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("redisserver: %v to pid %d: %w", sig, s.proc.Cmd.Process.Pid, err)
	}
	return nil
}

// Pause stops the process (SIGSTOP). The kernel still accepts connections
// and buffers what clients send, so their calls time out waiting for a
// reply; the server reads and runs all of it after Resume.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

// Crash kills the process with SIGKILL, as a crash would, and keeps its
// directory (and so its AOF, with WithAOF). Every connection is reset;
// Restart brings the server back. It returns only once the process has
// exited, or an error saying it has not: a fault scenario that fences the
// crashed server relies on no connection to it answering afterwards.
func (s *Server) Crash() error {
	s.mu.Lock()
	running := s.proc != nil && !s.stopped
	s.mu.Unlock()
	if !running {
		return ErrNotRunning
	}
	return s.kill()
}

// Restart starts the server again after Crash, on the same port, in the
// same directory, with the same options, and waits until it answers PING
// (with WithAOF, once it has loaded the AOF). A replica starts again as a
// replica of the same primary.
func (s *Server) Restart() error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return ErrNotRunning
	}
	if s.proc != nil {
		s.mu.Unlock()
		return errors.New("redisserver: Restart: the server is running (Crash it first)")
	}
	s.mu.Unlock()
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if err = s.launch(); err == nil || !strings.Contains(s.log(), "Address already in use") {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// Partition cuts a replica started ThroughProxy from its primary, both
// ways: from now on every byte between them is held and no connection is
// closed, as when the network drops their packets. Neither side is told:
// the replica notices when its repl-timeout passes without a word from the
// primary, the primary when its min-replicas-max-lag passes without an
// acknowledgement (WithMinReplicas) or its repl-timeout; WAIT on the
// primary times out. Heal mends the link.
func (s *Server) Partition() error {
	if s.link == nil {
		return errors.New("redisserver: Partition: the replica was not started ThroughProxy")
	}
	s.link.Stall()
	return nil
}

// Heal mends the link Partition cut: what was held is delivered, in order,
// as TCP's retransmissions deliver it once a partition heals (if neither
// side gave the link up meanwhile, replication carries on where it
// stopped).
func (s *Server) Heal() error {
	if s.link == nil {
		return errors.New("redisserver: Heal: the replica was not started ThroughProxy")
	}
	s.link.Resume()
	return nil
}

// Promote makes a replica a primary that accepts writes (REPLICAOF NO
// ONE). It keeps the data set it has: whatever its primary acknowledged
// and had not yet sent it is not there.
func (s *Server) Promote() error {
	r, err := s.Do("REPLICAOF", "NO", "ONE")
	if err != nil {
		return fmt.Errorf("redisserver: REPLICAOF NO ONE: %w", err)
	}
	if r != "+OK" {
		return fmt.Errorf("redisserver: REPLICAOF NO ONE answered %q", r)
	}
	s.mu.Lock()
	s.cfg.replicaOf = "" // a Restart brings back a primary
	s.mu.Unlock()
	return nil
}

// PauseWrites holds every client's write commands for d (CLIENT PAUSE
// <ms> WRITE): they wait unanswered and run when the pause ends, if their
// client is still connected (Redis drops the held command of a client that
// closed its connection); reads are answered. A script or function that
// may write counts as a write.
func (s *Server) PauseWrites(d time.Duration) error {
	r, err := s.Do("CLIENT", "PAUSE", strconv.FormatInt(d.Milliseconds(), 10), "WRITE")
	if err != nil {
		return fmt.Errorf("redisserver: CLIENT PAUSE: %w", err)
	}
	if r != "+OK" {
		return fmt.Errorf("redisserver: CLIENT PAUSE answered %q", r)
	}
	return nil
}

// WaitWritable waits, for d at most, until the server accepts a write
// (SET of the key "tollgate:writable" on a connection of its own): after
// PauseWrites, proof that the pause is over, since the server holds every
// write until it ends.
func (s *Server) WaitWritable(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		r, err := s.Do("SET", "tollgate:writable", "1")
		if err == nil && r == "+OK" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redisserver: no write accepted within %v (last answer %q, %v)", d, r, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// UnpauseWrites ends a pause of PauseWrites early (CLIENT UNPAUSE).
func (s *Server) UnpauseWrites() error {
	r, err := s.Do("CLIENT", "UNPAUSE")
	if err == nil && r != "+OK" {
		err = fmt.Errorf("answered %q", r)
	}
	if err != nil {
		return fmt.Errorf("redisserver: CLIENT UNPAUSE: %w", err)
	}
	return nil
}

// Info returns the fields of INFO section ("replication", "persistence", …).
func (s *Server) Info(section string) (map[string]string, error) {
	text, err := s.Query("INFO", section)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for _, line := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			fields[k] = v
		}
	}
	return fields, nil
}

// WaitReplicated waits until s, a replica of primary, has its link up and
// has processed a write primary made after the link came up, and with it
// every write primary had made by then; or returns an error after d.
//
// A link reported up is not yet a replica in sync: with diskless sync,
// Redis 7.0 starts streaming to a new replica only on its first REPLCONF
// ACK, and ignores one that arrives before the primary has reaped its RDB
// child, so streaming can wait a second for the next one. A fresh primary's
// offset is 0, which any replica "reaches". So once the link is up the
// primary makes a write that leaves nothing behind (mark), and the wait
// ends when the replica's offset has passed it.
func (s *Server) WaitReplicated(primary *Server, d time.Duration) error {
	deadline := time.Now().Add(d)
	var target int64 = -1
	var last string
	for time.Now().Before(deadline) {
		r, err := s.Info("replication")
		if err == nil {
			off, _ := strconv.ParseInt(r["slave_repl_offset"], 10, 64)
			up := r["master_link_status"] == "up"
			last = fmt.Sprintf("link %s, offset %d of %d", r["master_link_status"], off, target)
			if up && target < 0 {
				if err := primary.mark(s.Addr); err == nil {
					if p, err := primary.Info("replication"); err == nil {
						target, _ = strconv.ParseInt(p["master_repl_offset"], 10, 64)
					}
				}
			}
			if up && target >= 0 && off >= target {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("redisserver: replica %s not in sync with %s within %v (%s)", s.Addr, primary.Addr, d, last)
}

// mark makes a write on s that its replicas receive and that leaves
// nothing behind, so that their offsets pass s's: PUBLISH on a channel no
// one reads, or on a cluster node (where PUBLISH travels over the cluster
// bus, not the replication stream) SET and DEL of a key of a slot s
// serves, found by trying keys until one is not MOVED elsewhere.
func (s *Server) mark(value string) error {
	if !s.cfg.cluster() {
		_, err := s.Query("PUBLISH", "__tollgate_redisserver_sync", value)
		return err
	}
	for i := 0; i < 1000; i++ {
		k := fmt.Sprintf("__tollgate_redisserver_sync:%d", i)
		if _, err := s.Query("SET", k, value); err != nil {
			if strings.Contains(err.Error(), "MOVED ") {
				continue
			}
			return err
		}
		_, err := s.Query("DEL", k)
		return err
	}
	return fmt.Errorf("redisserver: %s serves none of the slots of 1000 keys tried", s.Addr)
}

func (s *Server) log() string {
	data, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return string(data)
}

// Do sends one command in RESP and returns the first line of the reply.
func (s *Server) Do(args ...string) (string, error) {
	var line string
	err := s.roundTrip(args, func(rd *bufio.Reader) (err error) {
		line, err = rd.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		return err
	})
	return line, err
}

// Query sends one command and returns its reply as text: a simple string,
// an integer or a bulk string as it is, a nil bulk string as "", an error
// reply as an error.
func (s *Server) Query(args ...string) (string, error) {
	var out string
	err := s.roundTrip(args, func(rd *bufio.Reader) error {
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return errors.New("redisserver: empty reply")
		}
		switch line[0] {
		case '+', ':':
			out = line[1:]
		case '-':
			return fmt.Errorf("redisserver: %s: %s", args[0], line[1:])
		case '$':
			n, err := strconv.Atoi(line[1:])
			if err != nil {
				return fmt.Errorf("redisserver: bad bulk length %q", line)
			}
			if n < 0 {
				return nil
			}
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(rd, buf); err != nil {
				return err
			}
			out = string(buf[:n])
		default:
			return fmt.Errorf("redisserver: Query does not read %q replies", line[:1])
		}
		return nil
	})
	return out, err
}

// QueryList sends one command whose reply is an array of bulk strings
// (CLUSTER GETKEYSINSLOT, say) and returns it; an error reply is an error.
func (s *Server) QueryList(args ...string) ([]string, error) {
	var out []string
	err := s.roundTrip(args, func(rd *bufio.Reader) error {
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "-") {
			return fmt.Errorf("redisserver: %s: %s", args[0], line[1:])
		}
		if !strings.HasPrefix(line, "*") {
			return fmt.Errorf("redisserver: %s: want an array, got %q", args[0], line)
		}
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return fmt.Errorf("redisserver: bad array length %q", line)
		}
		for range n {
			head, err := rd.ReadString('\n')
			if err != nil {
				return err
			}
			head = strings.TrimRight(head, "\r\n")
			m, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
			if !strings.HasPrefix(head, "$") || err != nil || m < 0 {
				return fmt.Errorf("redisserver: %s: want bulk strings, got %q", args[0], head)
			}
			buf := make([]byte, m+2)
			if _, err := io.ReadFull(rd, buf); err != nil {
				return err
			}
			out = append(out, string(buf[:m]))
		}
		return nil
	})
	return out, err
}

// dialTimeout bounds the dial of an admin command: a dial on loopback
// takes microseconds, but CI's go test -race, with the mutants' builds
// beside it, saw dials of live servers time out at one second.
const dialTimeout = 5 * time.Second

func (s *Server) roundTrip(args []string, read func(*bufio.Reader) error) error {
	c, err := net.DialTimeout("tcp", s.Addr, dialTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return err
	}
	return read(bufio.NewReader(c))
}

func (s *Server) waitReady(p *throwaway.Process, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if p.Wait(0) {
			return fmt.Errorf("redisserver: redis-server exited: %v\n%s", p.Err(), s.log())
		}
		if r, err := s.Do("PING"); err == nil && r == "+PONG" {
			if info, err := s.Info("persistence"); err == nil && info["loading"] == "0" {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("redisserver: no PONG from %s within %v\n%s", s.Addr, d, s.log())
}

func freePort() (int, error) {
	port, err := throwaway.FreePort()
	if err != nil {
		return 0, fmt.Errorf("redisserver: %w", err)
	}
	return port, nil
}
