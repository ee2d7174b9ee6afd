// Package etcdserver starts a throwaway etcd cluster on loopback, for the
// tests and checks of the etcd backend (impl/etcd, etcdcheck): n members,
// each a separate etcd process with a client URL and a peer URL on free
// ports, a data directory of its own and a log, all in a new directory
// under the parent given (the test's temporary directory, in a test), and
// heartbeat and election timeouts short enough for fast tests (50 ms and
// 500 ms by default, WithTimeouts; ElectionTimeout says which). StartCluster
// returns once the members have elected a leader and every one answers.
// Endpoints are the client URLs, for a client of the whole cluster;
// Endpoint, Member and Status are one member's URL, description and status
// (asked of it alone); Leader and WaitLeader name the member leading now.
// Stop kills every member and removes every directory, logs included.
//
// A Cluster can be broken the ways a real one breaks, member by member (a
// member keeps its index for the cluster's life, and a removed member's
// index is not reused):
//
//   - Kill sends a member SIGKILL and waits for it to exit. Its data
//     directory stays; its clients' connections are reset.
//   - Restart starts a killed member again from its data directory, on the
//     same ports (--initial-cluster-state existing), and waits until it
//     answers: it rejoins the cluster and catches up with the leader.
//   - Pause and Resume stop and continue a member (SIGSTOP, SIGCONT). A
//     paused member keeps its connections and answers nothing; a paused
//     leader is replaced after the election timeout, and learns it only
//     once resumed.
//   - Isolate cuts every link between a member and the others, both ways,
//     and Partition every link between groups of members, until Heal; the
//     members' clients still reach them. Peer traffic goes through a proxy
//     of this package in front of each member's peer listener (the member
//     advertises the proxy's address as its peer URL): the proxy learns
//     which member dialled each connection, closes the connections of a
//     link when it is cut, and refuses new ones until Heal. Raft messages
//     travel both ways on a member's connections (a stream a member dials
//     carries the peer's messages to it, a pipeline request it sends
//     carries its own), so a link is cut by cutting the connections each
//     end dialled to the other.
//   - RemoveMember removes a member from the cluster (asking the others),
//     kills it and deletes its data directory; AddMember adds a new member,
//     with the next index, a new data directory and a proxy of its own.
//
// The proxy learns a connection's dialler from its first request: etcd's
// peer transport (rafthttp) names the sending member, by its id in hex, in
// the X-Server-From header of every stream, pipeline and snapshot request.
// Some peer requests name no one: the prober's GET /raft/probing, sent on
// the pipeline transport, whose idle connections pipeline requests then
// reuse; GET /version and /members; lease renewals a follower forwards to
// the leader (POST /leases); and every request while the cluster forms,
// before the harness has learnt the members' ids. Such a connection is
// forwarded unnamed while no link of the member it reaches is cut; once
// one is, the proxy finds the member process that holds its other end, in
// /proc (the package runs on Linux only), for all its unnamed connections
// at once (netproxy.Diallers reads the kernel's whole socket table, so a
// cluster with nothing cut never pays for it). A connection whose dialler
// is still unknown is refused, or closed, while any link of the member it
// reaches is cut.
//
// The members run with --pre-vote (the default from etcd 3.5 on), so a
// member cut off and healed does not depose the leader with its raised
// term.
//
// In a test, use StartClusterT, or SharedT for one cluster that all the
// tests of a binary share: both skip the test when etcd is not installed,
// with a message saying how to install it, except under CI (CI=true),
// where a missing etcd fails the test. StartClusterT prints the end of
// every member's log when the test fails.
//
// A Cluster's methods are safe for concurrent use.
package etcdserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate/tollgate/backends/throwaway"
	"github.com/tollgate/tollgate/internal/lazyfs"
)

// Install is how to get etcd on Debian, as the messages say it.
const Install = "apt-get update && apt-get install -y etcd-server"

var (
	// ErrNotInstalled reports that no etcd is on PATH.
	ErrNotInstalled = throwaway.NotInstalled("etcdserver", "etcd", Install)
	// ErrNotRunning reports a call that needs a member's process while it
	// is not running (after Kill and before Restart, or after Stop).
	ErrNotRunning = errors.New("etcdserver: the member is not running")
)

// Option configures a cluster.
type Option func(*config)

type config struct {
	heartbeat, election time.Duration
	snapshotCount       int
	dataParent          string
	lazy                bool // each member's data directory on a lazyfs mount
	// form is how long the members have to answer and elect a leader
	// when the cluster starts (default 30 s).
	form time.Duration
}

// withFormWait gives the members d to answer and elect a leader when the
// cluster starts: a test's second try on a loaded machine (startForTest).
func withFormWait(d time.Duration) Option {
	return func(c *config) { c.form = d }
}

// WithTimeouts sets the members' heartbeat interval and election timeout
// (default 50 ms and 500 ms: fast elections, and time enough that a loaded
// machine does not start one by itself).
func WithTimeouts(heartbeat, election time.Duration) Option {
	return func(c *config) { c.heartbeat, c.election = heartbeat, election }
}

// WithSnapshotCount makes each member snapshot its state after every n
// applied entries (--snapshot-count; etcd's default is 100000), so a test
// can make snapshots happen. etcd 3.4 keeps 5000 entries after a snapshot,
// so a member that lags by fewer is still caught up from the log.
func WithSnapshotCount(n int) Option { return func(c *config) { c.snapshotCount = n } }

// WithDataIn puts the members' data directories in a new directory under
// parent (instead of the cluster's directory), which Stop removes: under
// /dev/shm, say, to spare the members' fsyncs a busy disk. A member killed
// with SIGKILL loses nothing the kernel holds, on any file system, so the
// faults here need no disk; but data directories in memory that a crashed
// test binary leaves behind (Stop never ran) hold that memory until they
// are removed, some 120 MB a member (etcd preallocates its log).
func WithDataIn(parent string) Option { return func(c *config) { c.dataParent = parent } }

// Cluster is a running etcd cluster.
type Cluster struct {
	dir   string // the cluster's directory: the members' logs
	data  string // where the members' data directories go
	cfg   config
	token string

	reconf sync.Mutex // held by AddMember and RemoveMember

	mu      sync.Mutex
	members []*member
	cut     map[[2]int]bool // cut links, as (lower index, higher index)
	stopped bool
}

// Member describes one member of a Cluster as the harness knows it.
type Member struct {
	Index int
	Name  string
	// ID is etcd's id of the member (0 until the harness has learnt it).
	ID uint64
	// ClientURL is where clients reach it; PeerURL, where its peers do
	// (its proxy, which forwards to ListenPeerURL).
	ClientURL, PeerURL, ListenPeerURL string
	Dir                               string // its data directory
	LogPath                           string // its stdout and stderr
	Pid                               int    // 0 when it is not running
	Removed                           bool   // RemoveMember removed it
}

// member is one etcd member: its process, while it runs, and its proxy.
type member struct {
	index     int
	name      string
	id        uint64
	clientURL string
	peerAddr  string // where the process listens for peers
	proxy     *proxy // in front of peerAddr; its address is advertised
	dir       string
	logPath   string
	initial   string // --initial-cluster
	removed   bool
	proc      *throwaway.Process // nil when not running
	mount     *lazyfs.Mount      // OnLazyFS: the data directory's mount
}

// StartCluster starts n members (3 when n is 0) in a new directory under
// parent ("" for the system's default), waits until they have elected a
// leader and every one answers, and returns the cluster. If another
// process took a port between the harness finding it free and a member
// listening on it, it starts again on new ports. On error nothing is left
// running.
func StartCluster(parent string, n int, opts ...Option) (*Cluster, error) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var c *Cluster
		if c, err = startCluster(parent, n, opts); !errors.Is(err, errPortTaken) {
			return c, err
		}
	}
	return nil, err
}

// errPortTaken reports that a member could not listen on its ports: some
// other process took one after freePort found it free.
var errPortTaken = errors.New("etcdserver: a member's port was taken")

func startCluster(parent string, n int, opts []Option) (*Cluster, error) {
	if _, err := exec.LookPath("etcd"); err != nil {
		return nil, ErrNotInstalled
	}

	if n == 0 {
		n = 3
	}
	if n < 0 {
		return nil, fmt.Errorf("etcdserver: StartCluster: %d members", n)
	}
	cfg := config{heartbeat: 50 * time.Millisecond, election: 500 * time.Millisecond, form: 30 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.lazy {
		if err := lazyfs.Available(); err != nil {
			return nil, fmt.Errorf("etcdserver: OnLazyFS: %w", err)
		}
	}
	if cfg.heartbeat <= 0 || cfg.election < 5*cfg.heartbeat {
		return nil, fmt.Errorf("etcdserver: StartCluster: heartbeat %v, election timeout %v: etcd wants the election timeout at least 5 heartbeats", cfg.heartbeat, cfg.election)
	}
	dir, err := os.MkdirTemp(parent, "etcdserver-")
	if err != nil {
		return nil, fmt.Errorf("etcdserver: %w", err)
	}
	c := &Cluster{dir: dir, data: filepath.Join(dir, "data"), cfg: cfg, token: filepath.Base(dir), cut: map[[2]int]bool{}}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	if cfg.dataParent != "" {
		if c.data, err = os.MkdirTemp(cfg.dataParent, "etcdserver-"); err != nil {
			return nil, fmt.Errorf("etcdserver: %w", err)
		}
	}
	var initial []string
	for i := 0; i < n; i++ {
		m, err := c.newMember(i)
		if err != nil {
			return nil, err
		}
		// Under mu: m's peer proxy already accepts, and a connection
		// to it (from a stray process that dials a reused port) reads
		// c.members to name its sender.
		c.mu.Lock()
		c.members = append(c.members, m)
		c.mu.Unlock()
		initial = append(initial, m.name+"="+m.proxy.url())
	}
	for _, m := range c.members {
		m.initial = strings.Join(initial, ",")
		if err := c.launch(m, "new"); err != nil {
			return nil, err
		}
	}
	if err := c.waitAll(c.members, make([]int64, len(c.members)), cfg.form); err != nil {
		return nil, err
	}
	if err := c.learnIDs(); err != nil {
		return nil, err
	}
	if _, err := c.WaitLeader(cfg.form); err != nil {
		var b strings.Builder
		for _, m := range c.members {
			fmt.Fprintf(&b, "\nmember %d's log ends:\n%s", m.index, m.logTail(2<<10))
		}
		return nil, fmt.Errorf("%w%s", err, b.String())
	}
	ok = true
	return c, nil
}

// StartClusterT is StartCluster for a test, in the test's temporary
// directory: it skips t without etcd (fails it under CI=true), fails it on
// any other error, prints the end of every member's log if t fails, and
// stops the cluster when t ends.
func StartClusterT(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	c, err := startForTest(t, func() string { return t.TempDir() }, n, opts)
	forTest(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			c.printLogs(t)
		}
		c.Stop()
	})
	return c
}

// startForTest starts a cluster of n members for a test, under the
// directory parent returns, and once more under a new one if the first
// does not form: the cluster is the test's setup, not what it checks, and
// on a loaded machine (CI's -race run beside the server-bound sections)
// three members starting at once were seen still electing after 30 s, and
// once a second cluster was too: the second try has 2 minutes. The first
// error is logged.
func startForTest(t testing.TB, parent func() string, n int, opts []Option) (*Cluster, error) {
	t.Helper()
	c, err := StartCluster(parent(), n, opts...)
	if err != nil && !errors.Is(err, ErrNotInstalled) {
		t.Logf("etcdserver: a first cluster of %d did not form, starting another: %v", n, err)
		c, err = StartCluster(parent(), n, append(opts[:len(opts):len(opts)], withFormWait(2*time.Minute))...)
	}
	return c, err
}

func forTest(t testing.TB, err error) {
	t.Helper()
	throwaway.ForTest(t, err, ErrNotInstalled, "etcd")
}

var shared struct {
	sync.Mutex
	c   *Cluster
	err error
}

// SharedT returns the one 3-member cluster of the test binary, started on
// first use: tests that only read and write keys of their own names share
// it, and do no faults to it. It skips t without etcd (fails it under
// CI=true). The package's TestMain stops it (StopShared) after m.Run.
func SharedT(t testing.TB) *Cluster {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.c == nil && shared.err == nil {
		shared.c, shared.err = startForTest(t, func() string { return "" }, 3, nil)
	}
	forTest(t, shared.err)
	return shared.c
}

// StopShared stops SharedT's cluster, if it was started.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.c != nil {
		shared.c.Stop()
		shared.c = nil
	}
}

// printLogs logs the end of every member's log.
func (c *Cluster) printLogs(t testing.TB) {
	c.mu.Lock()
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	for _, m := range ms {
		t.Logf("etcdserver: member %d (%s, %s) log, last 8 KB:\n%s", m.index, m.name, m.clientURL, m.logTail(8<<10))
	}
}

// newMember makes member i's ports and proxy (not its process).
func (c *Cluster) newMember(i int) (*member, error) {
	cp, err := freePort()
	if err != nil {
		return nil, err
	}
	pp, err := freePort()
	if err != nil {
		return nil, err
	}
	m := &member{index: i, name: fmt.Sprintf("m%d", i), clientURL: fmt.Sprintf("http://127.0.0.1:%d", cp),
		peerAddr: fmt.Sprintf("127.0.0.1:%d", pp)}
	m.dir = filepath.Join(c.data, m.name)
	m.logPath = filepath.Join(c.dir, m.name+".log")
	if m.proxy, err = newProxy(c, i, m.peerAddr); err != nil {
		return nil, err
	}
	if c.cfg.lazy {
		if err := m.mountData(); err != nil {
			m.proxy.Close()
			return nil, err
		}
	}
	return m, nil
}

// args is m's command line; state is "new" or "existing".
func (c *Cluster) args(m *member, state string) []string {
	a := []string{
		"--name", m.name, "--data-dir", m.dir,
		"--listen-client-urls", m.clientURL, "--advertise-client-urls", m.clientURL,
		"--listen-peer-urls", "http://" + m.peerAddr, "--initial-advertise-peer-urls", m.proxy.url(),
		"--initial-cluster", m.initial, "--initial-cluster-state", state, "--initial-cluster-token", c.token,
		"--heartbeat-interval", fmt.Sprint(c.cfg.heartbeat.Milliseconds()),
		"--election-timeout", fmt.Sprint(c.cfg.election.Milliseconds()),
		"--logger", "zap", "--log-outputs", "stderr",
		// As etcd 3.5 and later do by default: a member that was cut off
		// does not depose the leader with a raised term when it returns.
		"--pre-vote",
	}
	if c.cfg.snapshotCount > 0 {
		a = append(a, "--snapshot-count", fmt.Sprint(c.cfg.snapshotCount))
	}
	return a
}

// launch starts m's process (not waiting for it to answer).
func (c *Cluster) launch(m *member, state string) error {
	logf, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("etcdserver: %w", err)
	}
	cmd := exec.Command("etcd", c.args(m, state)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Killed with the test binary, even when it dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p, err := throwaway.Start(cmd, func() { logf.Close() })
	if err != nil {
		logf.Close()
		return fmt.Errorf("etcdserver: starting member %d: %w", m.index, err)
	}
	c.mu.Lock()
	m.proc = p
	c.mu.Unlock()
	return nil
}

// running is m's process while it runs, or nil.
func (c *Cluster) running(m *member) *throwaway.Process {
	c.mu.Lock()
	p := m.proc
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	if p.Wait(0) {
		return nil
	}
	return p
}

// kill sends m SIGKILL (which ends a stopped process too) and waits for it
// to exit.
func (c *Cluster) kill(m *member) error {
	var p *throwaway.Process
	c.mu.Lock()
	p, m.proc = m.proc, nil
	c.mu.Unlock()
	if err := p.Kill(10 * time.Second); err != nil {
		return fmt.Errorf("etcdserver: member %d: %w", m.index, err)
	}
	return nil
}

func (m *member) logTail(n int) string {
	b, _ := os.ReadFile(m.logPath)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// logSize is the size of m's log now.
func (m *member) logSize() int64 {
	fi, err := os.Stat(m.logPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// waitAnswers waits until m, started when its log was from bytes long,
// answers a status request. If it exited saying it could not listen, the
// error is errPortTaken.
func (c *Cluster) waitAnswers(m *member, from int64, d time.Duration) error {
	return c.waitAll([]*member{m}, []int64{from}, d)
}

// waitAll waits until every member of ms, each started when its log was
// from[k] bytes long, answers a status request, watching all of them at
// once: a member that exits while another is waited for ends the wait at
// once (with errPortTaken if it could not listen), rather than after d with
// the error of the member that cannot form a quorum without it. A status
// request is given 500 ms at first, then up to 4 s: on a loaded machine a
// new client's connection alone can take longer. When d has passed, the
// error says, for each member, whether it answers, runs or has exited, the
// counts of its peer proxy, and the end of its log.
func (c *Cluster) waitAll(ms []*member, from []int64, d time.Duration) error {
	deadline := time.Now().Add(d)
	answered := make([]bool, len(ms))
	last := make([]error, len(ms))
	timeout := 500 * time.Millisecond
	for {
		left := 0
		for k, m := range ms {
			if answered[k] {
				continue
			}
			if err := c.exitedErr(m, from[k]); err != nil {
				return err
			}
			if _, last[k] = status(m.clientURL, timeout); last[k] == nil {
				answered[k] = true
				continue
			}
			left++
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return c.notAnswering(ms, answered, last, d)
		}
		timeout = min(2*timeout, 4*time.Second)
		time.Sleep(20 * time.Millisecond)
	}
}

// exitedErr is nil while m runs; once it has exited, an error saying so
// and showing the end of its log (since from), errPortTaken if it could
// not listen.
func (c *Cluster) exitedErr(m *member, from int64) error {
	if c.running(m) != nil {
		return nil
	}
	b, _ := os.ReadFile(m.logPath)
	if int64(len(b)) >= from && strings.Contains(string(b[from:]), "address already in use") {
		return fmt.Errorf("%w: member %d: %s", errPortTaken, m.index, m.logTail(1<<10))
	}
	return fmt.Errorf("etcdserver: member %d exited (%s); its log ends:\n%s", m.index, c.exitStatus(m), m.logTail(4<<10))
}

// exitStatus is how m's last process ended, as Wait reported it.
func (c *Cluster) exitStatus(m *member) string {
	c.mu.Lock()
	p := m.proc
	c.mu.Unlock()
	if p == nil {
		return "not started"
	}
	if !p.Wait(0) {
		return "running"
	}
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// notAnswering is the error of waitAll once d has passed: every member
// of ms, answering or not, with its last error, its proxy's counts and
// the end of its log (4 KB for one member, 2 KB each for more), and the
// space left where the members keep their data.
func (c *Cluster) notAnswering(ms []*member, answered []bool, last []error, d time.Duration) error {
	var b strings.Builder
	n := 0
	for k, m := range ms {
		if !answered[k] {
			n++
			if n == 1 {
				fmt.Fprintf(&b, "etcdserver: member %d did not answer within %v (%v)", m.index, d, last[k])
			}
		}
	}
	if n > 1 {
		fmt.Fprintf(&b, ", nor did %d other members", n-1)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(c.data, &fs); err == nil {
		fmt.Fprintf(&b, "; the data directories' file system has %d MiB free", fs.Bavail*uint64(fs.Bsize)>>20)
	}
	tail := 4 << 10
	if len(ms) > 1 {
		tail = 2 << 10
	}
	for k, m := range ms {
		state := "answers"
		if !answered[k] {
			state = fmt.Sprintf("runs, does not answer (%v)", last[k])
		}
		fmt.Fprintf(&b, "\nmember %d %s; %s; its log ends:\n%s", m.index, state, m.proxy.counts(), m.logTail(tail))
	}
	return errors.New(b.String())
}

// learnIDs reads the member list and sets each member's id by its name.
func (c *Cluster) learnIDs() error {
	r, err := memberList(c.Endpoints())
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pm := range r.Members {
		for _, m := range c.members {
			if m.name == pm.Name || (len(pm.PeerURLs) == 1 && pm.PeerURLs[0] == m.proxy.url()) {
				m.id = pm.ID
			}
		}
	}
	return nil
}

// indexOfID is the index of the member whose id is id, or −1.
func (c *Cluster) indexOfID(id uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if id != 0 && m.id == id {
			return m.index
		}
	}
	return -1
}

// indexOfPid is the index of the member whose running process is pid, or
// −1.
func (c *Cluster) indexOfPid(pid int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.proc != nil && m.proc.Cmd.Process.Pid == pid {
			return m.index
		}
	}
	return -1
}

// pids are the processes of the members, running or lately exited.
func (c *Cluster) pids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, m := range c.members {
		if m.proc != nil {
			out = append(out, m.proc.Cmd.Process.Pid)
		}
	}
	return out
}

// ElectionTimeout is the members' election timeout.
func (c *Cluster) ElectionTimeout() time.Duration { return c.cfg.election }

// Size is the number of members ever started, removed ones included:
// every index below it names one.
func (c *Cluster) Size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.members)
}

// Endpoints are the client URLs of the cluster's members (all but the
// removed ones), running or not, in the order of their indices.
func (c *Cluster) Endpoints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.members {
		if !m.removed {
			out = append(out, m.clientURL)
		}
	}
	return out
}

// Endpoint is member i's client URL. It panics if no member has index i.
func (c *Cluster) Endpoint(i int) string { return c.Member(i).ClientURL }

// Members are the indices of the cluster's members (all but the removed
// ones), running or not.
func (c *Cluster) Members() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, m := range c.members {
		if !m.removed {
			out = append(out, m.index)
		}
	}
	return out
}

// Member describes member i (removed or not). It panics if no member has
// index i, as indexing a slice does.
func (c *Cluster) Member(i int) Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.members) {
		panic(fmt.Sprintf("etcdserver: Member(%d) of a cluster of %d", i, len(c.members)))
	}
	m := c.members[i]
	d := Member{Index: i, Name: m.name, ID: m.id, ClientURL: m.clientURL, PeerURL: m.proxy.url(),
		ListenPeerURL: "http://" + m.peerAddr, Dir: m.dir, LogPath: m.logPath, Removed: m.removed}
	if m.proc != nil {
		if !m.proc.Wait(0) {
			d.Pid = m.proc.Cmd.Process.Pid
		}
	}
	return d
}

// member is member i, or an error if there is none or it was removed.
func (c *Cluster) member(i int) (*member, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, ErrNotRunning
	}
	if i < 0 || i >= len(c.members) {
		return nil, fmt.Errorf("etcdserver: no member %d (the cluster has had %d)", i, len(c.members))
	}
	if c.members[i].removed {
		return nil, fmt.Errorf("etcdserver: member %d was removed", i)
	}
	return c.members[i], nil
}

// Leader returns the index of the member that leads the cluster now,
// asking every running member alone for its status (members that do not
// answer within 300 ms count as unreachable). The leader must be agreed
// by a majority of the members that answer, and by a quorum of the
// cluster's members, and must answer itself as the leader; otherwise
// Leader returns an error (during an election, say, or while the old
// leader is paused and the others still follow it).
func (c *Cluster) Leader() (int, error) {
	c.mu.Lock()
	var ms []*member
	for _, m := range c.members {
		if !m.removed {
			ms = append(ms, m)
		}
	}
	c.mu.Unlock()
	type answer struct {
		self, leader uint64
		ok           bool
	}
	answers := make([]answer, len(ms))
	var wg sync.WaitGroup
	for k, m := range ms {
		if c.running(m) == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, err := status(m.clientURL, 300*time.Millisecond); err == nil && st.Header != nil {
				answers[k] = answer{self: st.Header.MemberId, leader: st.Leader, ok: true}
			}
		}()
	}
	wg.Wait()
	votes, reachable, claims := map[uint64]int{}, 0, map[uint64]bool{}
	for _, a := range answers {
		if !a.ok {
			continue
		}
		reachable++
		if a.leader != 0 {
			votes[a.leader]++
		}
		if a.leader == a.self {
			claims[a.self] = true
		}
	}
	for id, n := range votes {
		if 2*n <= reachable || 2*n <= len(ms) || !claims[id] {
			continue
		}
		i := c.indexOfID(id)
		if i < 0 {
			if err := c.learnIDs(); err == nil {
				i = c.indexOfID(id)
			}
		}
		if i >= 0 {
			return i, nil
		}
	}
	var claimed []string
	for id := range claims {
		claimed = append(claimed, fmt.Sprintf("%x", id))
	}
	return -1, fmt.Errorf("etcdserver: no leader agreed by a majority of %d members (%d answered; votes by member id %x; claimed by %v)", len(ms), reachable, votes, claimed)
}

// WaitLeader waits up to d for Leader to name one, and returns it.
func (c *Cluster) WaitLeader(d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		i, err := c.Leader()
		if err == nil {
			return i, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("%w (waited %v)", err, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills every member, closes every proxy and deletes the cluster's
// directories, logs included. Calls after the first do nothing.
func (c *Cluster) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	for _, m := range ms {
		_ = c.kill(m) // best effort: the directories go either way
		m.proxy.Close()
		_ = m.unmount()
	}
	_ = os.RemoveAll(c.data)
	_ = os.RemoveAll(c.dir)
}

func freePort() (int, error) {
	port, err := throwaway.FreePort()
	if err != nil {
		return 0, fmt.Errorf("etcdserver: %w", err)
	}
	return port, nil
}
