// Package etcdserver starts a throwaway etcd cluster of separate etcd
// processes on loopback, each in a data directory of its own, for the tests
// and checks of the etcd backend (impl/etcd), and breaks it the ways a real
// cluster breaks:
//
//   - Kill sends a member SIGKILL and keeps its data directory; Restart
//     starts it again from it, on the same ports.
//   - Pause and Resume stop and continue a member (SIGSTOP, SIGCONT): a
//     paused leader neither leads nor knows it was replaced until it runs
//     again.
//   - Isolate cuts every raft connection between a member and the others,
//     both ways, and Heal restores them. Every member's peer traffic goes
//     through a proxy of this package in front of its peer port (the member
//     advertises the proxy's address): the proxy reads the first request of
//     each connection to learn which member dialled it (rafthttp names the
//     sender in the X-Server-From header of every stream and pipeline
//     request), and refuses, or closes, the connections of a cut link. A
//     member's messages to a peer go over streams the peer dialled and over
//     pipeline requests the member sends, so cutting both directions of each
//     connection by its dialler silences the link whichever way a message
//     travels.
//   - RemoveMember removes a member from the cluster and stops it;
//     AddMember adds a new one, with a new data directory.
//
// Members keep their index for the cluster's life (a removed member's
// index is not reused). In a test, use StartClusterT, or SharedT for one
// cluster that every test of a package shares: both skip the test when
// etcd is not installed, with a message saying how to install it, except
// under CI (CI=true), where a missing etcd fails the test.
//
// A Cluster's methods are safe for concurrent use.
package etcdserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Install is how to get etcd on Debian, as the messages say it.
const Install = "apt-get update && apt-get install -y etcd-server"

// ErrNotInstalled reports that no etcd is on PATH.
var ErrNotInstalled = errors.New("etcdserver: etcd is not on PATH (install it: " + Install + ")")

// Option configures a cluster.
type Option func(*config)

type config struct {
	heartbeat, election time.Duration
}

// WithTimeouts sets the members' heartbeat interval and election timeout
// (default 50 ms and 500 ms: fast elections, and time enough that a loaded
// machine does not start one by itself).
func WithTimeouts(heartbeat, election time.Duration) Option {
	return func(c *config) { c.heartbeat, c.election = heartbeat, election }
}

// Cluster is a running etcd cluster.
type Cluster struct {
	parent string
	data   string // where the members' data directories go (memory-backed when the machine has /dev/shm)
	cfg    config
	token  string

	mu      sync.Mutex
	members []*member
	cut     map[int]bool // isolated members
}

// member is one etcd process and its proxy.
type member struct {
	index     int
	name      string
	dir       string
	clientURL string
	peerAddr  string // where the process listens for peers
	proxy     *proxy // in front of peerAddr; its address is advertised
	id        uint64 // the cluster's id of the member (0 until known)
	removed   bool
	args      []string
	proc      *exec.Cmd
	exited    chan struct{}
	logPath   string
}

// StartCluster starts n members in directories under parent (a new one
// each), waits until they have elected a leader and every one answers, and
// returns the cluster. On error nothing is left running.
func StartCluster(parent string, n int, opts ...Option) (*Cluster, error) {
	if _, err := exec.LookPath("etcd"); err != nil {
		return nil, ErrNotInstalled
	}
	cfg := config{heartbeat: 50 * time.Millisecond, election: 500 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	dir, err := os.MkdirTemp(parent, "etcd-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{parent: dir, data: filepath.Join(dir, "data"), cfg: cfg, token: filepath.Base(dir), cut: map[int]bool{}}
	// Data directories in memory: etcd fsyncs its log on every commit, and
	// three members syncing one shared disk make every write wait tens of
	// milliseconds. A process killed with SIGKILL loses nothing the kernel
	// holds, on any file system, so the faults here need no disk.
	if shm, err := os.MkdirTemp("/dev/shm", "tollgate-etcd-"); err == nil {
		c.data = shm
	}
	var initial []string
	for i := 0; i < n; i++ {
		m, err := c.newMember(i)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.proxy.url())
	}
	for _, m := range c.members {
		m.args = c.args(m, strings.Join(initial, ","), "new")
		if err := m.start(); err != nil {
			c.Stop()
			return nil, err
		}
	}
	for _, m := range c.members {
		if err := c.waitAnswers(m, 30*time.Second); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := c.learnIDs(); err != nil {
		c.Stop()
		return nil, err
	}
	if _, err := c.WaitLeader(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// StartClusterT is StartCluster for a test: in the test's temporary
// directory, stopped when the test ends, skipped (failed under CI=true)
// when etcd is missing; a member's log is printed when the test fails.
func StartClusterT(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	c, err := StartCluster(t.TempDir(), n, opts...)
	c = forTest(t, c, err)
	t.Cleanup(func() {
		if t.Failed() {
			c.printLogs(t)
		}
		c.Stop()
	})
	return c
}

func forTest(t testing.TB, c *Cluster, err error) *Cluster {
	t.Helper()
	if errors.Is(err, ErrNotInstalled) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI must have it", err)
		}
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var shared struct {
	sync.Mutex
	c   *Cluster
	err error
}

// SharedT returns the one 3-member cluster of the test binary, started on
// first use: tests that only read and write tables of their own names
// share it. The package's TestMain stops it (StopShared) after m.Run.
func SharedT(t testing.TB) *Cluster {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.c == nil && shared.err == nil {
		shared.c, shared.err = StartCluster(os.TempDir(), 3)
	}
	return forTest(t, shared.c, shared.err)
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

func (c *Cluster) printLogs(t testing.TB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		t.Logf("member %d (%s) log tail:\n%s", m.index, m.name, m.logTail())
	}
}

// newMember makes member i's directory, ports and proxy (not its process).
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
	m.logPath = filepath.Join(c.parent, m.name+".log")
	if m.proxy, err = newProxy(c, i, m.peerAddr); err != nil {
		return nil, err
	}
	return m, nil
}

func (c *Cluster) args(m *member, initial, state string) []string {
	return []string{
		"--name", m.name, "--data-dir", m.dir,
		"--listen-client-urls", m.clientURL, "--advertise-client-urls", m.clientURL,
		"--listen-peer-urls", "http://" + m.peerAddr, "--initial-advertise-peer-urls", m.proxy.url(),
		"--initial-cluster", initial, "--initial-cluster-state", state, "--initial-cluster-token", c.token,
		"--heartbeat-interval", fmt.Sprint(c.cfg.heartbeat.Milliseconds()),
		"--election-timeout", fmt.Sprint(c.cfg.election.Milliseconds()),
		"--logger", "zap", "--log-outputs", "stderr",
		// As etcd 3.5 and later do by default: a member that was cut off
		// does not depose the leader with its raised term when it returns.
		"--pre-vote",
	}
}

func (m *member) start() error {
	logf, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command("etcd", m.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Killed with the test binary, even when it dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("etcdserver: starting %s: %w", m.name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	m.proc, m.exited = cmd, exited
	return nil
}

func (m *member) running() bool {
	if m.proc == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

func (m *member) logTail() string {
	b, _ := os.ReadFile(m.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func quietClient(endpoints []string, timeout time.Duration) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: timeout, Logger: zap.NewNop()})
}

// status asks member m alone for its status.
func (c *Cluster) status(m *member, timeout time.Duration) (*clientv3.StatusResponse, error) {
	cl, err := quietClient([]string{m.clientURL}, timeout)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return cl.Status(ctx, m.clientURL)
}

// waitAnswers waits until m answers a status request.
func (c *Cluster) waitAnswers(m *member, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !m.running() {
			return fmt.Errorf("etcdserver: %s exited:\n%s", m.name, m.logTail())
		}
		if _, err := c.status(m, 500*time.Millisecond); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("etcdserver: %s did not answer within %v:\n%s", m.name, d, m.logTail())
}

// learnIDs reads the member list and sets each member's id by its name.
func (c *Cluster) learnIDs() error {
	cl, err := quietClient(c.Endpoints(), 2*time.Second)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := cl.MemberList(ctx)
	if err != nil {
		return fmt.Errorf("etcdserver: member list: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pm := range r.Members {
		for _, m := range c.members {
			if m.name == pm.Name || (pm.Name == "" && len(pm.PeerURLs) > 0 && pm.PeerURLs[0] == m.proxy.url()) {
				m.id = pm.ID
			}
		}
	}
	return nil
}

// indexOf is the index of the member whose id is id, or -1.
func (c *Cluster) indexOf(id uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.id == id && id != 0 {
			return m.index
		}
	}
	return -1
}

// ElectionTimeout is the members' election timeout.
func (c *Cluster) ElectionTimeout() time.Duration { return c.cfg.election }

// Size is the number of members ever started (removed ones included):
// every index below it names one.
func (c *Cluster) Size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.members)
}

// Endpoints are the client URLs of the members in the cluster (not
// removed), running or not.
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

// Endpoint is member i's client URL.
func (c *Cluster) Endpoint(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members[i].clientURL
}

// Leader returns the index of the member a majority of the cluster's
// members agree leads, asking each running member alone.
func (c *Cluster) Leader() (int, error) {
	c.mu.Lock()
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	votes, in := map[uint64]int{}, 0
	for _, m := range ms {
		if m.removed {
			continue
		}
		in++
		if !m.running() {
			continue
		}
		if st, err := c.status(m, 300*time.Millisecond); err == nil && st.Leader != 0 {
			votes[st.Leader]++
		}
	}
	for id, n := range votes {
		if n > in/2 {
			if i := c.indexOf(id); i >= 0 {
				return i, nil
			}
			if err := c.learnIDs(); err == nil {
				if i := c.indexOf(id); i >= 0 {
					return i, nil
				}
			}
		}
	}
	return -1, fmt.Errorf("etcdserver: no leader agreed by a majority of %d members (votes %v)", in, votes)
}

// WaitLeader waits up to d for a leader a majority agrees on.
func (c *Cluster) WaitLeader(d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		i, err := c.Leader()
		if err == nil || time.Now().After(deadline) {
			return i, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *Cluster) member(i int) (*member, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.members) {
		return nil, fmt.Errorf("etcdserver: no member %d", i)
	}
	if c.members[i].removed {
		return nil, fmt.Errorf("etcdserver: member %d was removed", i)
	}
	return c.members[i], nil
}

func (c *Cluster) signal(i int, sig syscall.Signal) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	if !m.running() {
		return fmt.Errorf("etcdserver: member %d is not running", i)
	}
	return m.proc.Process.Signal(sig)
}

// Kill sends member i SIGKILL and waits for it to exit; its data
// directory stays, for Restart.
func (c *Cluster) Kill(i int) error {
	if err := c.signal(i, syscall.SIGKILL); err != nil {
		return err
	}
	m, _ := c.member(i)
	<-m.exited
	return nil
}

// Restart starts member i again from its data directory, on its ports, and
// waits until it answers.
func (c *Cluster) Restart(i int) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	if m.running() {
		return fmt.Errorf("etcdserver: member %d is running", i)
	}
	if err := m.start(); err != nil {
		return err
	}
	return c.waitAnswers(m, 30*time.Second)
}

// Pause stops member i (SIGSTOP): it keeps its connections and state, and
// does nothing until Resume.
func (c *Cluster) Pause(i int) error { return c.signal(i, syscall.SIGSTOP) }

// Resume continues member i after Pause (SIGCONT).
func (c *Cluster) Resume(i int) error { return c.signal(i, syscall.SIGCONT) }

// Isolate cuts every peer connection between member i and the others,
// both ways (open ones are closed, new ones refused), until Heal. Its
// clients still reach it.
func (c *Cluster) Isolate(i int) error {
	if _, err := c.member(i); err != nil {
		return err
	}
	c.mu.Lock()
	c.cut[i] = true
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	for _, m := range ms {
		m.proxy.enforce()
	}
	return nil
}

// Heal restores every link Isolate cut; the members dial again on their
// own.
func (c *Cluster) Heal() error {
	c.mu.Lock()
	c.cut = map[int]bool{}
	c.mu.Unlock()
	return nil
}

// blocked reports whether the link between the members at from and to is
// cut (from −1: a connection whose sender is unknown).
func (c *Cluster) blocked(from, to int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut[to] {
		return true // an isolated member takes no peer connection at all
	}
	return from >= 0 && c.cut[from]
}

// RemoveMember removes member i from the cluster (asking the others), then
// stops it and deletes its data directory.
func (c *Cluster) RemoveMember(i int) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	var others []string
	for _, o := range c.Endpoints() {
		if o != m.clientURL {
			others = append(others, o)
		}
	}
	cl, err := quietClient(others, 2*time.Second)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := retryUnhealthy(func(ctx context.Context) error {
		_, err := cl.MemberRemove(ctx, m.id)
		return err
	}); err != nil {
		return fmt.Errorf("etcdserver: removing member %d: %w", i, err)
	}
	c.mu.Lock()
	m.removed = true
	c.mu.Unlock()
	if m.running() {
		_ = m.proc.Process.Signal(syscall.SIGKILL)
		<-m.exited
	}
	m.proxy.close()
	return os.RemoveAll(m.dir)
}

// retryUnhealthy runs a reconfiguration until it takes, for up to 15 s:
// etcd refuses one that would leave fewer members active than a quorum
// ("unhealthy cluster"), as it is just after a member rejoined.
func retryUnhealthy(reconfigure func(ctx context.Context) error) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := reconfigure(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) || !strings.Contains(err.Error(), "unhealthy cluster") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// AddMember adds a new member to the cluster, with a new data directory,
// starts it and waits until it answers; it returns the new member's index.
func (c *Cluster) AddMember() (int, error) {
	c.mu.Lock()
	i := len(c.members)
	c.mu.Unlock()
	m, err := c.newMember(i)
	if err != nil {
		return -1, err
	}
	cl, err := quietClient(c.Endpoints(), 2*time.Second)
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	var r *clientv3.MemberAddResponse
	if err := retryUnhealthy(func(ctx context.Context) (err error) {
		r, err = cl.MemberAdd(ctx, []string{m.proxy.url()})
		return err
	}); err != nil {
		m.proxy.close()
		return -1, fmt.Errorf("etcdserver: adding a member: %w", err)
	}
	m.id = r.Member.ID
	var initial []string
	for _, pm := range r.Members {
		name := pm.Name
		if pm.ID == m.id {
			name = m.name
		}
		for _, u := range pm.PeerURLs {
			initial = append(initial, name+"="+u)
		}
	}
	m.args = c.args(m, strings.Join(initial, ","), "existing")
	c.mu.Lock()
	c.members = append(c.members, m)
	c.mu.Unlock()
	if err := m.start(); err != nil {
		return -1, err
	}
	return i, c.waitAnswers(m, 30*time.Second)
}

// Stop kills every member, closes every proxy and deletes the data
// directories (the members' logs stay under parent). It may be called more
// than once.
func (c *Cluster) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	for _, m := range ms {
		if m.running() {
			_ = m.proc.Process.Signal(syscall.SIGCONT)
			_ = m.proc.Process.Signal(syscall.SIGKILL)
			<-m.exited
		}
		m.proxy.close()
	}
	_ = os.RemoveAll(c.data)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("etcdserver: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
