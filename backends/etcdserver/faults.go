package etcdserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Kill sends member i SIGKILL and waits for it to exit. Its data directory
// stays, for Restart.
func (c *Cluster) Kill(i int) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	if c.running(m) == nil {
		return ErrNotRunning
	}
	return c.kill(m)
}

// Restart starts member i again after Kill, from its data directory, on
// its ports (--initial-cluster-state existing), and waits until it
// answers (trying again for a second if another process holds one of its
// ports). It rejoins the cluster and catches up with the leader's log on
// its own.
func (c *Cluster) Restart(i int) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	if c.running(m) != nil {
		return fmt.Errorf("etcdserver: Restart: member %d is running (Kill it first)", i)
	}
	for attempt := 0; ; attempt++ {
		from := m.logSize()
		if err := c.launch(m, "existing"); err != nil {
			return err
		}
		err := c.waitAnswers(m, from, 30*time.Second)
		if !errors.Is(err, errPortTaken) || attempt == 20 {
			return err
		}
		time.Sleep(50 * time.Millisecond) // for whoever holds the port to let it go
	}
}

func (c *Cluster) signal(i int, sig syscall.Signal) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	p := c.running(m)
	if p == nil {
		return ErrNotRunning
	}
	if err := p.Cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("etcdserver: %v to member %d (pid %d): %w", sig, i, p.Cmd.Process.Pid, err)
	}
	return nil
}

// Pause stops member i (SIGSTOP). It keeps its connections and its state
// and does nothing: the kernel still accepts connections and buffers what
// clients and peers send, so their calls time out, and it reads it all
// after Resume.
func (c *Cluster) Pause(i int) error { return c.signal(i, syscall.SIGSTOP) }

// Resume continues member i after Pause (SIGCONT).
func (c *Cluster) Resume(i int) error { return c.signal(i, syscall.SIGCONT) }

// Isolate cuts every link between member i and the others, both ways,
// until Heal: the proxies close the connections between them and refuse
// new ones. Its clients still reach it. A member added later is not cut
// off from it.
func (c *Cluster) Isolate(i int) error {
	if _, err := c.member(i); err != nil {
		return err
	}
	c.mu.Lock()
	for j := range c.members {
		if j != i {
			c.cut[link(i, j)] = true
		}
	}
	c.mu.Unlock()
	c.enforce()
	return nil
}

// Partition cuts every link between members of different groups, both
// ways, until Heal; a member in no group is cut off from every other. The
// cuts add to those already made, and a member added later is cut off
// from no one. Partition([]int{0}, []int{1, 2}) is Isolate(0).
func (c *Cluster) Partition(groups ...[]int) error {
	group := map[int]int{}
	for g, ms := range groups {
		for _, i := range ms {
			if _, err := c.member(i); err != nil {
				return err
			}
			if _, dup := group[i]; dup {
				return fmt.Errorf("etcdserver: Partition: member %d is in two groups", i)
			}
			group[i] = g
		}
	}
	c.mu.Lock()
	for i := range c.members {
		for j := i + 1; j < len(c.members); j++ {
			gi, iok := group[i]
			gj, jok := group[j]
			if !iok || !jok || gi != gj {
				c.cut[link(i, j)] = true
			}
		}
	}
	c.mu.Unlock()
	c.enforce()
	return nil
}

// Heal restores every link Isolate and Partition cut; the members dial
// each other again on their own.
func (c *Cluster) Heal() error {
	c.mu.Lock()
	c.cut = map[[2]int]bool{}
	c.mu.Unlock()
	return nil
}

// link is the key of the link between members i and j in Cluster.cut.
func link(i, j int) [2]int {
	if i > j {
		i, j = j, i
	}
	return [2]int{i, j}
}

// blocked reports whether a connection from the member at from to the one
// at to is cut. A connection from an unknown sender (from −1) is, while
// any link of to is cut.
func (c *Cluster) blocked(from, to int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if from >= 0 {
		return c.cut[link(from, to)]
	}
	for k := range c.cut {
		if k[0] == to || k[1] == to {
			return true
		}
	}
	return false
}

// enforce makes every proxy close the connections of cut links.
func (c *Cluster) enforce() {
	c.mu.Lock()
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	for _, m := range ms {
		m.proxy.Enforce()
	}
}

// RemoveMember removes member i from the cluster, asking the other members
// (retried while etcd refuses it as unsafe, as AddMember is; it fails if
// they cannot agree, with a quorum of them down or cut off), then kills it
// and deletes its data directory. Its index is not reused.
func (c *Cluster) RemoveMember(i int) error {
	c.reconf.Lock()
	defer c.reconf.Unlock()
	m, err := c.member(i)
	if err != nil {
		return err
	}
	var others []string
	for _, e := range c.Endpoints() {
		if e != m.clientURL {
			others = append(others, e)
		}
	}
	id := c.Member(i).ID
	if id == 0 {
		if err := c.learnIDs(); err != nil {
			return err
		}
		id = c.Member(i).ID
	}
	cl, err := newClient(others, 2*time.Second)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := reconfigure(func(ctx context.Context) error {
		_, err := cl.MemberRemove(ctx, id)
		return err
	}); err != nil {
		return fmt.Errorf("etcdserver: removing member %d: %w", i, err)
	}
	c.mu.Lock()
	m.removed = true
	c.mu.Unlock()
	if err := c.kill(m); err != nil {
		return err
	}
	m.proxy.Close()
	if err := m.unmount(); err != nil {
		return fmt.Errorf("etcdserver: %w", err)
	}
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("etcdserver: %w", err)
	}
	return nil
}

// reconfigure runs a membership change until it takes, for up to 30 s:
// etcd 3.4 refuses one it deems unsafe ("unhealthy cluster", "not enough
// started members") until every member it counts on has been connected to
// the leader for 5 s, which is not yet the case just after the cluster
// started, a member rejoined or the leader changed.
func reconfigure(change func(ctx context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := change(ctx)
		cancel()
		unsafe := err != nil && (strings.Contains(err.Error(), "unhealthy cluster") || strings.Contains(err.Error(), "not enough started members"))
		if err == nil || !unsafe || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// AddMember adds a new member to the cluster (MemberAdd, retried while
// etcd refuses it as unsafe: etcd 3.4 changes the membership only once
// every member it counts on has been connected for 5 s), starts it with a new data directory, the
// next index (returned) and a proxy of its own (--initial-cluster-state
// existing), and waits until it answers. It catches up from the leader, by
// snapshot if the leader has compacted the entries it lacks. If the new
// member was added to the cluster but does not answer, its index comes
// back with the error.
func (c *Cluster) AddMember() (int, error) {
	c.reconf.Lock()
	defer c.reconf.Unlock()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return -1, ErrNotRunning
	}
	i := len(c.members)
	c.mu.Unlock()
	m, err := c.newMember(i)
	if err != nil {
		return -1, err
	}
	cl, err := newClient(c.Endpoints(), 2*time.Second)
	if err != nil {
		m.proxy.Close()
		return -1, err
	}
	defer cl.Close()
	var r *clientv3.MemberAddResponse
	if err := reconfigure(func(ctx context.Context) (err error) {
		r, err = cl.MemberAdd(ctx, []string{m.proxy.url()})
		return err
	}); err != nil {
		m.proxy.Close()
		return -1, fmt.Errorf("etcdserver: adding a member: %w", err)
	}
	m.id = r.Member.ID // m is not yet in c.members: no one else reads it
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
	m.initial = strings.Join(initial, ",")
	c.mu.Lock()
	c.members = append(c.members, m)
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		m.proxy.Close()
		return -1, ErrNotRunning
	}
	if err := c.launch(m, "existing"); err != nil {
		return i, err
	}
	return i, c.waitAnswers(m, 0, 30*time.Second)
}
