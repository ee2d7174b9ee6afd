package etcdserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/internal/testlong"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// client is a quiet client of endpoints, closed when t ends.
func client(t *testing.T, endpoints ...string) *clientv3.Client {
	t.Helper()
	c, err := newClient(endpoints, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func put(c *clientv3.Client, key, value string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := c.Put(ctx, key, value)
	return err
}

// localGet reads key from the member at endpoint alone, with a
// serializable read: what that member has applied, without asking the
// leader.
func localGet(t *testing.T, endpoint, key string) string {
	t.Helper()
	c, err := newClient([]string{endpoint}, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r, err := c.Get(ctx, key, clientv3.WithSerializable())
	if err != nil || len(r.Kvs) == 0 {
		return ""
	}
	return string(r.Kvs[0].Value)
}

// eventually retries f for up to d.
func eventually(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !f(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within %v: %s", d, what)
		}
	}
}

// others is a client of every member but i (a client of all of them may
// send a request to i and wait there until its deadline).
func others(t *testing.T, c *Cluster, i int) *clientv3.Client {
	var eps []string
	for _, j := range c.Members() {
		if j != i {
			eps = append(eps, c.Endpoint(j))
		}
	}
	return client(t, eps...)
}

// newLeader waits for a leader other than old, and returns it.
func newLeader(t *testing.T, c *Cluster, old int) int {
	t.Helper()
	l := -1
	eventually(t, 10*c.ElectionTimeout(), fmt.Sprintf("a leader other than member %d", old), func() bool {
		var err error
		l, err = c.Leader()
		return err == nil && l != old
	})
	return l
}

// TestStartStop: every member takes writes and serves what the others
// took; with nothing cut, the peer proxies look no sender up in /proc; Stop leaves no process, no listener and no directory behind (the
// data directories WithDataIn placed elsewhere included), and may be
// called again.
func TestStartStop(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	data := t.TempDir()
	c := StartClusterT(t, 0, WithDataIn(data))
	if c.Size() != 3 || len(c.Endpoints()) != 3 {
		t.Fatalf("StartCluster(n=0): %d members, %d endpoints, want 3", c.Size(), len(c.Endpoints()))
	}
	for i := range 3 {
		if err := put(client(t, c.Endpoint(i)), fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i), 5*time.Second); err != nil {
			t.Fatalf("a put through member %d: %v", i, err)
		}
	}
	for j := range 3 {
		cl := client(t, c.Endpoint(j))
		for i := range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := cl.Get(ctx, fmt.Sprintf("k%d", i))
			cancel()
			if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != fmt.Sprintf("v%d", i) {
				t.Fatalf("member %d's get of k%d: %v, %v", j, i, r, err)
			}
		}
	}
	noLookups(t, c)
	var ms []Member
	for i := range 3 {
		m := c.Member(i)
		if m.Pid == 0 || m.ID == 0 {
			t.Fatalf("member %d: %+v, want a pid and an id", i, m)
		}
		ms = append(ms, m)
	}
	c.Stop()
	c.Stop()
	for _, m := range ms {
		if err := syscall.Kill(m.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("member %d's process %d after Stop: kill -0 says %v, want no such process", m.Index, m.Pid, err)
		}
		for _, u := range []string{m.ClientURL, m.PeerURL, m.ListenPeerURL} {
			if nc, err := net.DialTimeout("tcp", strings.TrimPrefix(u, "http://"), time.Second); err == nil {
				nc.Close()
				t.Errorf("member %d: %s still takes connections after Stop", m.Index, u)
			}
		}
		if _, err := os.Stat(m.Dir); !os.IsNotExist(err) {
			t.Errorf("member %d's data directory after Stop: %v", m.Index, err)
		}
	}
	if left, err := os.ReadDir(data); err != nil || len(left) != 0 {
		t.Errorf("WithDataIn's directory after Stop holds %v (%v), want nothing", left, err)
	}
	if _, err := os.Stat(filepath.Dir(ms[0].LogPath)); !os.IsNotExist(err) {
		t.Errorf("the cluster's directory after Stop: %v", err)
	}
	if err := c.Kill(0); err == nil {
		t.Error("Kill after Stop succeeded")
	}
}

// noLookups fails t unless, with nothing cut, no peer connection's sender
// was looked up in /proc: rafthttp's are named by their header once the
// ids are known, the others forwarded unnamed.
func noLookups(t *testing.T, c *Cluster) {
	t.Helper()
	for _, m := range c.members {
		m.proxy.mu.Lock()
		byProc, unknown, unnamed := m.proxy.byProc, m.proxy.unknown, m.proxy.unnamed
		m.proxy.mu.Unlock()
		if byProc != 0 || unknown != 0 || unnamed == 0 {
			t.Errorf("member %d, with nothing ever cut: %s; want no lookup in /proc", m.index, m.proxy.counts())
		}
	}
}

// TestFaults: on one cluster of three, in turn: a killed leader is
// replaced and, restarted from its data directory, catches up; a paused
// leader is replaced and steps down when it runs again; an isolated leader
// is replaced, neither sends nor receives a raft message while cut off
// (by etcd's own count of peer bytes), acknowledges no write, and catches
// up once healed; a partitioned follower misses writes until healed.
func TestFaults(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	c := StartClusterT(t, 3)
	if err := put(client(t, c.Endpoints()...), "k", "v0", 5*time.Second); err != nil {
		t.Fatal(err)
	}

	t.Run("KillTheLeader", func(t *testing.T) { faultKillTheLeader(t, c) })

	t.Run("PauseTheLeader", func(t *testing.T) { faultPauseTheLeader(t, c) })

	t.Run("IsolateTheLeader", func(t *testing.T) { faultIsolateTheLeader(t, c) })

	t.Run("PartitionAFollower", func(t *testing.T) { faultPartitionAFollower(t, c) })
}

// faultKillTheLeader: a killed leader is replaced and, restarted from its
// data directory, catches up.
func faultKillTheLeader(t *testing.T, c *Cluster) {
	l, err := c.WaitLeader(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(l); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(l); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("a second Kill: %v, want ErrNotRunning", err)
	}
	if m := c.Member(l); m.Pid != 0 {
		t.Fatalf("member %d has pid %d after Kill", l, m.Pid)
	}
	newLeader(t, c, l)
	if err := put(others(t, c, l), "k", "v1", 5*time.Second); err != nil {
		t.Fatalf("a write with the leader dead: %v", err)
	}
	if err := c.Restart(l); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the restarted member serves the write made while it was down", func() bool { return localGet(t, c.Endpoint(l), "k") == "v1" })
}

// faultPauseTheLeader: a paused leader is replaced and steps down when it
// runs again.
func faultPauseTheLeader(t *testing.T, c *Cluster) {
	l, err := c.WaitLeader(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Pause(l); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Resume(l) }()
	nl := newLeader(t, c, l)
	if err := put(others(t, c, l), "k", "v2", 5*time.Second); err != nil {
		t.Fatalf("a write with the leader paused: %v", err)
	}
	if err := c.Resume(l); err != nil {
		t.Fatal(err)
	}
	self := c.Member(l).ID
	eventually(t, 10*time.Second, "the resumed old leader follows another", func() bool {
		st, err := c.Status(l)
		return err == nil && st.Leader != 0 && st.Leader != self
	})
	if err := put(client(t, c.Endpoint(l)), "k", "v2b", 5*time.Second); err != nil {
		t.Fatalf("a write through the resumed old leader: %v", err)
	}
	if now, err := c.Leader(); err != nil || now == l {
		t.Fatalf("the leader after a write through the resumed member: %d, %v; want one other than %d (%d was elected)", now, err, l, nl)
	}
	eventually(t, 5*time.Second, "the others serve the write made through the old leader", func() bool {
		for _, j := range c.Members() {
			if localGet(t, c.Endpoint(j), "k") != "v2b" {
				return false
			}
		}
		return true
	})
}

// faultIsolateTheLeader: an isolated leader is replaced, neither sends nor
// receives a raft message while cut off, acknowledges no write, and catches
// up once healed.
func faultIsolateTheLeader(t *testing.T, c *Cluster) {
	l, err := c.WaitLeader(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before := localGet(t, c.Endpoint(l), "k")
	if err := c.Isolate(l); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Heal() }()
	nl := newLeader(t, c, l)
	// What every member has received from every other so far: from
	// here on, nothing may pass between l and the others.
	base := peerBytes(t, c)
	if err := put(others(t, c, l), "k", "v3", 5*time.Second); err != nil {
		t.Fatalf("a write through the majority: %v", err)
	}
	// A lease kept alive through a follower of the majority: the
	// follower forwards the renewal to the leader over the peer
	// network, in a request that names no sender; cutting l off must
	// not cut that.
	f := -1
	for _, j := range c.Members() {
		if j != l && j != nl {
			f = j
		}
	}
	fc := client(t, c.Endpoint(f))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := fc.Grant(ctx, 10)
	if err != nil {
		t.Fatalf("a lease granted through follower %d: %v", f, err)
	}
	if _, err := fc.KeepAliveOnce(ctx, g.ID); err != nil {
		t.Fatalf("a lease kept alive through follower %d while %d is isolated: %v", f, l, err)
	}
	if err := put(client(t, c.Endpoint(l)), "k", "cut", 4*c.ElectionTimeout()); err == nil {
		t.Fatal("the isolated member acknowledged a write")
	}
	self, nid := c.Member(l).ID, c.Member(nl).ID
	eventually(t, 5*time.Second, "the isolated old leader steps down", func() bool {
		st, err := c.Status(l)
		return err == nil && st.Leader != self
	})
	if st, err := c.Status(l); err != nil || st.Leader == nid {
		t.Fatalf("the isolated member's status: %v, %v: it heard of leader %d", st, err, nl)
	}
	if got := localGet(t, c.Endpoint(l), "k"); got != before {
		t.Fatalf("the isolated member applied %q (had %q)", got, before)
	}
	after := peerBytes(t, c)
	for _, j := range c.Members() {
		if j == l {
			continue
		}
		jid := c.Member(j).ID
		if d := after[l][jid] - base[l][jid]; d != 0 {
			t.Errorf("the isolated member %d received %v bytes from member %d while cut off", l, d, j)
		}
		if d := after[j][self] - base[j][self]; d != 0 {
			t.Errorf("member %d received %v bytes from the isolated member %d while it was cut off", j, d, l)
		}
	}
	if err := c.Heal(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the healed member catches up", func() bool { return localGet(t, c.Endpoint(l), "k") == "v3" })
	logProxies(t, c)
}

// faultPartitionAFollower: a partitioned follower misses writes until
// healed.
func faultPartitionAFollower(t *testing.T, c *Cluster) {
	l, err := c.WaitLeader(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var rest []int
	f := -1
	for _, j := range c.Members() {
		if j != l && f < 0 {
			f = j
		} else {
			rest = append(rest, j)
		}
	}
	if err := c.Partition([]int{f}, rest); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Heal() }()
	if err := put(others(t, c, f), "k", "v4", 5*time.Second); err != nil {
		t.Fatalf("a write through the majority: %v", err)
	}
	time.Sleep(c.ElectionTimeout())
	if got := localGet(t, c.Endpoint(f), "k"); got == "v4" {
		t.Fatal("the partitioned follower applied a write made after the partition")
	}
	if now, err := c.WaitLeader(5 * time.Second); err != nil || now == f {
		t.Fatalf("the leader with follower %d cut off: %d, %v", f, now, err)
	}
	if err := c.Heal(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the healed follower catches up", func() bool { return localGet(t, c.Endpoint(f), "k") == "v4" })
}

// peerBytes is, for each member, etcd's count of the raft message bytes it
// has received from each peer (etcd_network_peer_received_bytes_total, by
// the sender's id), read from its /metrics.
func peerBytes(t *testing.T, c *Cluster) map[int]map[uint64]float64 {
	t.Helper()
	out := map[int]map[uint64]float64{}
	hc := &http.Client{Timeout: 2 * time.Second}
	for _, i := range c.Members() {
		r, err := hc.Get(c.Endpoint(i) + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		out[i] = map[uint64]float64{}
		sc := bufio.NewScanner(r.Body)
		const prefix = `etcd_network_peer_received_bytes_total{From="`
		for sc.Scan() {
			rest, ok := strings.CutPrefix(sc.Text(), prefix)
			if !ok {
				continue
			}
			from, value, _ := strings.Cut(rest, `"} `)
			id, err1 := strconv.ParseUint(from, 16, 64)
			v, err2 := strconv.ParseFloat(value, 64)
			if err1 == nil && err2 == nil {
				out[i][id] = v
			}
		}
		r.Body.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// logProxies logs how the proxies learnt their connections' senders.
func logProxies(t *testing.T, c *Cluster) {
	c.mu.Lock()
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	for _, m := range ms {
		m.proxy.mu.Lock()
		t.Logf("proxy of member %d: senders from X-Server-From %d, from /proc %d, unknown %d", m.index, m.proxy.byHeader, m.proxy.byProc, m.proxy.unknown)
		m.proxy.mu.Unlock()
	}
}

// TestReplaceAFollower: under a steady load of writes, a follower removed
// and a new member added leave a cluster of three that takes writes, and
// the new member serves the data; meanwhile the members make snapshots
// (WithSnapshotCount).
func TestReplaceAFollower(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	c := StartClusterT(t, 3, WithSnapshotCount(100))
	l, err := c.WaitLeader(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f := (l + 1) % 3
	load := others(t, c, f)
	var wrote atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; !stopped.Load(); n++ {
			if put(load, fmt.Sprintf("load/%d", n), "x", time.Second) == nil {
				wrote.Add(1)
			}
		}
	}()
	defer func() { stopped.Store(true); wg.Wait() }()
	if err := c.RemoveMember(f); err != nil {
		t.Fatal(err)
	}
	if !c.Member(f).Removed || c.Member(f).Pid != 0 {
		t.Fatalf("member %d after RemoveMember: %+v", f, c.Member(f))
	}
	if _, err := os.Stat(c.Member(f).Dir); !os.IsNotExist(err) {
		t.Fatalf("the removed member's data directory: %v", err)
	}
	if err := c.Kill(f); err == nil {
		t.Fatal("Kill of a removed member succeeded")
	}
	n, err := c.AddMember()
	if err != nil {
		t.Fatal(err)
	}
	during := wrote.Load() // acknowledged while the membership changed
	if n != 3 || len(c.Members()) != 3 {
		t.Fatalf("AddMember gave index %d; members %v", n, c.Members())
	}
	list, err := memberList(c.Endpoints())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Members) != 3 {
		t.Fatalf("the cluster lists %d members, want 3", len(list.Members))
	}
	if err := put(client(t, c.Endpoints()...), "k", "after", 5*time.Second); err != nil {
		t.Fatalf("a write after the replacement: %v", err)
	}
	eventually(t, 10*time.Second, "the new member serves the data", func() bool {
		return localGet(t, c.Endpoint(n), "k") == "after" && localGet(t, c.Endpoint(n), "load/0") == "x"
	})
	// The load ran through the change and goes on after it: counts, not a
	// rate (a rate measures the machine: 46 writes under -race at a load
	// average of 25, where a quiet run makes hundreds).
	if during == 0 {
		t.Fatal("no write of the load was acknowledged while the follower was replaced")
	}
	eventually(t, 10*time.Second, "the load goes on after the replacement", func() bool { return wrote.Load() > during })
	// The members snapshot every 100 entries: the load goes on until the
	// leader has made one.
	eventually(t, 60*time.Second, "a snapshot of the leader (WithSnapshotCount(100))", func() bool {
		snaps, err := filepath.Glob(filepath.Join(c.Member(l).Dir, "member", "snap", "*.snap"))
		return err == nil && len(snaps) > 0
	})
	t.Logf("%d writes of the load acknowledged", wrote.Load())
}

// TestSenderHeader: the proxy reads the sender from X-Server-From, in any
// case, and nothing from a request without it.
func TestSenderHeader(t *testing.T) {
	for h, want := range map[string]uint64{
		"POST /raft HTTP/1.1\r\nHost: x\r\nX-Server-From: 8e9e05c52164694d\r\n\r\n": 0x8e9e05c52164694d,
		"GET /raft/stream/message/1 HTTP/1.1\r\nx-server-from:  a\r\n\r\nbody":      10,
		"GET /raft/probing HTTP/1.1\r\nHost: x\r\n\r\n":                             0,
		"GET /raft HTTP/1.1\r\nHost: x\r\n\r\nX-Server-From: 1\r\n":                 0,
	} {
		if got := serverFrom([]byte(h)); got != want {
			t.Errorf("serverFrom(%q) = %x, want %x", h, got, want)
		}
	}
}

// TestStartForTestStartsAgain: a cluster that does not form is started
// once more, under a new directory, before the test fails; one that fails
// twice is the test's error.
func TestStartForTestStartsAgain(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(bad, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tries := 0
	c, err := startForTest(t, func() string {
		tries++
		if tries == 1 {
			return bad // no directory can be made under a file
		}
		return t.TempDir()
	}, 1, nil)
	if errors.Is(err, ErrNotInstalled) {
		forTest(t, err)
	}
	if err != nil || tries != 2 {
		t.Fatalf("after a first cluster that could not start: %v, %d tries, want a cluster on the second", err, tries)
	}
	c.Stop()
	if _, err := startForTest(t, func() string { return bad }, 1, nil); err == nil {
		t.Fatal("two clusters that could not start, and no error")
	}
}

// TestWaitWatchesEveryMember: while the harness waits for a member that
// cannot answer (restarted without a quorum), another member that exits
// ends the wait at once, named with how it ended, rather than after the
// whole wait with the error of the member that cannot form a quorum
// without it; a wait that runs out names every member, whether it
// answers, its proxy's counts and the end of its log.
func TestWaitWatchesEveryMember(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	c := StartClusterT(t, 3)
	for i := range 3 {
		if err := c.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	m0, m1 := c.members[0], c.members[1]
	from := []int64{m0.logSize(), m1.logSize()}
	if err := c.launch(m0, "existing"); err != nil {
		t.Fatal(err)
	}
	// Alone, member 0 has no quorum and does not answer: the wait runs
	// out and names both members.
	err := c.waitAll([]*member{m0}, from[:1], 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "member 0 runs, does not answer") || !strings.Contains(err.Error(), "its peer proxy named the sender of") {
		t.Fatalf("a wait for a member without a quorum: %v, want it to say the member runs and does not answer, with its proxy's counts", err)
	}
	if err := c.launch(m1, "existing"); err != nil {
		t.Fatal(err)
	}
	if err := m1.proc.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = c.waitAll([]*member{m0, m1}, from, time.Minute)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "member 1 exited (signal: killed)") {
		t.Fatalf("a wait for member 0 while member 1 was killed: %v, want member 1 named as killed", err)
	}
	if took > 20*time.Second {
		t.Fatalf("the wait ended %v after member 1 was killed, want at once (well within its minute)", took)
	}
}
