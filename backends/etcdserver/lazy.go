package etcdserver

import (
	"fmt"
	"os"
	"time"

	"github.com/tollgate/tollgate/internal/lazyfs"
)

// OnLazyFS keeps each member's data directory on a lazyfs mount of its
// own (internal/lazyfs), so that PowerLoss can drop what the member wrote
// and did not fsync. StartCluster fails with an error wrapping
// lazyfs.ErrUnavailable where FUSE cannot be mounted (StartClusterT
// skips, or fails under CI).
func OnLazyFS() Option { return func(c *config) { c.lazy = true } }

// mountData makes m's data directory a lazyfs mount of a directory beside
// it (m.dir + ".disk"), both made here.
func (m *member) mountData() error {
	disk := m.dir + ".disk"
	for _, d := range []string{disk, m.dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("etcdserver: %w", err)
		}
	}
	mt, err := lazyfs.New(disk, m.dir)
	if err != nil {
		return fmt.Errorf("etcdserver: member %d: %w", m.index, err)
	}
	m.mount = mt
	return nil
}

// unmount unmounts m's data directory, if it is a mount.
func (m *member) unmount() error {
	if m.mount == nil {
		return nil
	}
	return m.mount.Unmount()
}

// PowerLoss crashes the machines of the members named, at one instant, in
// a cluster started OnLazyFS: each member is halted (lazyfs.Halt: every
// thread stopped, so it sends nothing more), every mount drops what its
// member had not fsynced (and every file creation and rename not followed
// by an fsync of its directory) and fails every later operation, each
// member is killed (SIGKILL), its backing directory mounted again, and all
// are started again from what was durable, as Restart does. It returns
// what each power loss dropped, in the order named. etcd fsyncs its WAL
// before it acknowledges a write, so no acknowledged write may be lost,
// even with every member named.
func (c *Cluster) PowerLoss(members ...int) ([]lazyfs.Loss, error) {
	var ms []*member
	for _, i := range members {
		m, err := c.member(i)
		if err != nil {
			return nil, err
		}
		if m.mount == nil {
			return nil, fmt.Errorf("etcdserver: PowerLoss: the cluster was not started OnLazyFS")
		}
		if c.running(m) == nil {
			return nil, fmt.Errorf("etcdserver: PowerLoss: member %d: %w", i, ErrNotRunning)
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		p := c.running(m)
		if p == nil {
			return nil, fmt.Errorf("etcdserver: PowerLoss: member %d: %w", m.index, ErrNotRunning)
		}
		if err := lazyfs.Halt(p.Cmd.Process.Pid, 5*time.Second); err != nil {
			return nil, err
		}
	}
	losses := make([]lazyfs.Loss, len(ms))
	for k, m := range ms {
		var err error
		if losses[k], err = m.mount.PowerLoss(); err != nil {
			return losses, fmt.Errorf("etcdserver: member %d: %w", m.index, err)
		}
	}
	for _, m := range ms {
		if err := c.kill(m); err != nil {
			return losses, err
		}
		if err := m.mount.Remount(); err != nil {
			return losses, fmt.Errorf("etcdserver: member %d: %w", m.index, err)
		}
	}
	// All launched before any is waited for: a member that lost its
	// cluster's quorum with it answers once the others are back.
	from := make([]int64, len(ms))
	for k, m := range ms {
		from[k] = m.logSize()
		if err := c.launch(m, "existing"); err != nil {
			return losses, err
		}
	}
	return losses, c.waitAll(ms, from, 30*time.Second)
}

// SetFsyncLies makes every member's disk ignore flushes while on
// (lazyfs.Mount.SetFsyncLies): the negative control of a power-loss
// check, under which etcd must lose acknowledged writes. It fails on a
// cluster not started OnLazyFS.
func (c *Cluster) SetFsyncLies(on bool) error {
	c.mu.Lock()
	ms := append([]*member(nil), c.members...)
	c.mu.Unlock()
	for _, m := range ms {
		if m.mount == nil {
			return fmt.Errorf("etcdserver: SetFsyncLies: the cluster was not started OnLazyFS")
		}
		m.mount.SetFsyncLies(on)
	}
	return nil
}
