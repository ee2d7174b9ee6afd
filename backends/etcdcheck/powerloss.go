package etcdcheck

import (
	"fmt"

	"github.com/tollgate/tollgate/backends/etcdserver"
)

// The power-loss scenarios: every member's data directory on a lazyfs
// mount (internal/lazyfs), and at 30% of the calls a crash of machines:
// every write a member had not fsynced is dropped, the member is killed
// and restarted from what was durable (etcdserver.PowerLoss). etcd fsyncs
// its WAL before it acknowledges, so no acknowledged write may be lost,
// even when every member loses power at once. The negative control runs
// the same on disks that ignore flushes from the start of the recording
// (lazyfs.Mount.SetFsyncLies), where acknowledged writes must be lost:
// proof that the check can see a loss and that fsync is what saves them.
func powerLossScenarios() []Scenario {
	return []Scenario{
		{Name: "power-loss-leader", What: "the leader's machine loses power at 30% of the calls (its unsynced writes dropped, kill -9, restarted from its data directory at once)", OnLazyFS: true,
			inject: func(e *env) error { return e.powerLoss(false) }},
		{Name: "power-loss-all", What: "every member's machine loses power at once at 30% of the calls (unsynced writes dropped, kill -9, all restarted from their data directories)", OnLazyFS: true,
			inject: func(e *env) error { return e.powerLoss(true) }},
	}
}

// lyingDisks is the negative control of power-loss-all: disks that ignore
// flushes from the start of the recording. It must lose acknowledged
// writes.
var lyingDisks = Scenario{Name: "power-loss-all-lying-disks", What: "as power-loss-all, on disks that ignore fsync from the start of the recording (negative control: must lose)", OnLazyFS: true, MustLose: true,
	start: func(e *env) error { return e.cluster.SetFsyncLies(true) },
	inject: func(e *env) error {
		err := e.powerLoss(true)
		if lerr := e.cluster.SetFsyncLies(false); err == nil {
			err = lerr
		}
		return err
	}}

// powerLoss crashes the leader's machine, or every member's, at 30% of
// the calls.
func (e *env) powerLoss(all bool) error {
	if !e.At(0.3) {
		return nil
	}
	var members []int
	if all {
		members = e.cluster.Members()
	} else {
		l, err := e.leader()
		if err != nil {
			return err
		}
		members = []int{l}
	}
	// The members are chosen first: the power goes at once after the
	// strike, while the write it found is still in flight.
	if !e.StrikeNow() {
		return nil
	}
	e.faulting.Store(true)
	defer e.faulting.Store(false)
	losses, err := e.cluster.PowerLoss(members...)
	if err != nil {
		return err
	}
	if err := e.healed(); err != nil {
		return err
	}
	var pages, files, undone int
	for _, l := range losses {
		pages, files, undone = pages+l.Pages, files+l.Files, undone+len(l.Undone)
	}
	e.Note = fmt.Sprintf("power loss of members %v: dropped %d files' unsynced changes (%d pages), %d directory operations undone", members, files, pages, undone)
	return nil
}

// clusterOptions are the options of s's cluster.
func (s Scenario) clusterOptions() []etcdserver.Option {
	if s.OnLazyFS {
		return []etcdserver.Option{etcdserver.OnLazyFS()}
	}
	return nil
}
