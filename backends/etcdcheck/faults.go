// Package etcdcheck runs tollgate's linearizability checks against the
// etcd-backed tables (impl/etcd/tokenbucket, impl/etcd/credits, through
// backends/etcdsut) on a real cluster of three etcd members, separate
// processes started by etcdserver, while a fault is done to the cluster:
// the leader killed and restarted from its data directory, a follower
// killed, the leader paused past the election timeout, the leader cut off
// from the others by a partition, a member replaced. Each history is
// checked by porcupine against the model, and the store is asked afterwards
// for what every acknowledged write must have left
// (linearizability.TBDurability, CrDurability). The promise being checked
// is the one Redis cannot make (redischeck): no acknowledged write is lost
// in any of these faults.
package etcdcheck

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/etcdsut"
	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Scenario is one fault workload: what is done to the cluster while a
// history is recorded. Faults are injected when a share of the
// recording's calls has been made, so they land mid-run whatever the
// machine's speed.
type Scenario struct {
	// Name names the scenario, and What says what its fault is, for the
	// summary.
	Name, What string
	// OnLazyFS keeps every member's data directory on a lazyfs mount, for
	// a power loss (powerloss.go).
	OnLazyFS bool
	// MustLose marks a negative control, which must lose an acknowledged
	// write: a row that lost none fails.
	MustLose bool
	// clientLinks puts the recording's client behind a proxy for each
	// member (answerloss.go).
	clientLinks bool
	start       func(e *env) error // before the recording (nil: nothing)
	inject      func(e *env) error
}

// Recovery bounds how long after a fault's end the table may take to
// acknowledge a call again.
const Recovery = 10 * time.Second

// env is a scenario's cluster while it runs, and its recording
// (faultrun.Run: its faults wait on At and strike through Clock).
type env struct {
	*faultrun.Run
	cluster  *etcdserver.Cluster
	links    *clientLinks // with Scenario.clientLinks, else nil
	faulting atomic.Bool  // the fault is being done
}

// hold keeps a fault for d, or until the recording ends.
func (e *env) hold(d time.Duration) {
	select {
	case <-e.Stop:
	case <-time.After(d):
	}
}

// leader is the index of the member leading now, waiting up to Recovery
// for a majority to agree on it (on a loaded machine a member can take
// more than its status request's second to answer).
func (e *env) leader() (int, error) {
	return e.cluster.WaitLeader(Recovery)
}

// follower is the index of a member that is not the leader.
func (e *env) follower() (int, error) {
	l, err := e.leader()
	if err != nil {
		return 0, err
	}
	for _, i := range e.cluster.Members() {
		if i != l {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no follower: the cluster has one member")
}

// outage is how long each fault lasts: four election timeouts, long
// enough for the others to elect a new leader and go on without the
// member it struck.
func (e *env) outage() time.Duration { return 4 * e.cluster.ElectionTimeout() }

// Scenarios are the fault workloads, in the order they run.
func Scenarios() []Scenario {
	return append([]Scenario{
		{Name: "none", What: "no fault (the baseline)", inject: func(*env) error { return nil }},
		{Name: "leader-kill", What: "kill -9 of the leader at 30% of the calls; restarted from its data directory 4 election timeouts later",
			inject: func(e *env) error {
				return e.strike(func(l int) error { return e.cluster.Kill(l) }, func(l int) error { return e.cluster.Restart(l) }, e.leader)
			}},
		{Name: "follower-kill", What: "kill -9 of a follower at 30% of the calls; restarted from its data directory 4 election timeouts later",
			inject: func(e *env) error {
				return e.strike(func(f int) error { return e.cluster.Kill(f) }, func(f int) error { return e.cluster.Restart(f) }, e.follower)
			}},
		{Name: "leader-pause", What: "SIGSTOP of the leader at 30% of the calls for 4 election timeouts, then SIGCONT: a stale leader must not acknowledge",
			inject: func(e *env) error {
				return e.strike(func(l int) error { return e.cluster.Pause(l) }, func(l int) error { return e.cluster.Resume(l) }, e.leader)
			}},
		{Name: "leader-partition", What: "the leader cut off from both other members (every peer connection, both ways, through the test's proxies) at 30% of the calls for 4 election timeouts, then healed",
			inject: func(e *env) error {
				return e.strike(func(l int) error { return e.cluster.Isolate(l) }, func(int) error { return e.cluster.Heal() }, e.leader)
			}},
		{Name: "member-replace", What: "a follower removed from the cluster at 30% of the calls, and a new member added in its place",
			inject: func(e *env) error {
				return e.strike(func(f int) error { return e.cluster.RemoveMember(f) }, func(int) error { _, err := e.cluster.AddMember(); return err }, e.follower)
			}},
	}, powerLossScenarios()...)
}

// strike does a fault to the member which picks, at 30% of the calls and
// once a write is in flight, for outage, then undoes it and waits until
// every member answers again (healed).
func (e *env) strike(do, undo func(i int) error, which func() (int, error)) error {
	if !e.At(0.3) {
		return nil
	}
	i, err := which()
	if err != nil {
		return err
	}
	// The member is chosen first: the fault acts at once after the strike,
	// while the write it found is still in flight.
	if !e.StrikeNow() {
		return nil
	}
	e.faulting.Store(true)
	if err := do(i); err != nil {
		return err
	}
	e.Note = fmt.Sprintf("struck member %d", i)
	e.hold(e.outage())
	if err = undo(i); err == nil {
		err = e.healed()
	}
	e.faulting.Store(false)
	return err
}

// healed waits, for Recovery at most, until every member answers a status
// request and follows one leader: the fault is over.
func (e *env) healed() error {
	deadline := time.Now().Add(Recovery)
	for {
		err := e.agreed()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster did not heal within %v: %w", Recovery, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) agreed() error {
	var leader uint64
	for _, i := range e.cluster.Members() {
		st, err := e.cluster.Status(i)
		if err != nil {
			return err
		}
		if st.Leader == 0 || leader != 0 && st.Leader != leader {
			return fmt.Errorf("member %d follows leader %x, another %x", i, st.Leader, leader)
		}
		leader = st.Leader
	}
	return nil
}

// Row is what one scenario found for one primitive.
type Row = faultrun.Row

// Options configure Run (the call budget's default is 2 s). A primitive
// the Fault is not a mutant of runs the real table.
type Options = faultrun.Options

// Run runs scenario s for the primitives named ("tokenbucket", "credits";
// both when empty), each on a cluster of its own, and returns a row each.
func Run(s Scenario, prims []string, o Options) ([]Row, error) {
	// Longer than an election (4 election timeouts of 500 ms at most, on a
	// loaded machine), so that a call sent while the cluster elects is
	// answered after it rather than left unknown.
	o.Defaults(2*time.Second, "tollgate-etcd-check")
	return faultrun.Rows("etcdcheck", s.Name, prims, func(string) bool { return true }, func(p string) (Row, error) { return runOne(s, p, o) })
}

// endShare is the share of a recording's calls that may begin before the
// fault has ended: the calls after it wait for the end, so that every
// recording has calls begun after the fault (Row.After), however fast the
// others went through it.
const endShare = 0.6

// runOne runs scenario s for the primitive prim on a cluster of its own.
func runOne(s Scenario, prim string, o Options) (Row, error) {
	start := time.Now()
	row := Row{Scenario: s.Name, Primitive: prim, MustLose: s.MustLose}
	if s.Name != "none" {
		row.MustStrike, row.RecoverWithin = true, Recovery
	}
	cl, err := etcdserver.StartCluster(o.Parent, 3, s.clusterOptions()...)
	if err != nil {
		return row, err
	}
	defer cl.Stop()
	e := &env{Run: faultrun.NewRun(), cluster: cl}
	e.Ended, e.EndShare = make(chan struct{}), endShare
	endpoints := cl.Endpoints()
	if s.clientLinks {
		if e.links, err = newClientLinks(cl); err != nil {
			return row, err
		}
		defer e.links.close()
		endpoints = e.links.endpoints()
	}
	c, err := econn.NewClient(clientv3.Config{Endpoints: endpoints, DialTimeout: o.Timeout})
	if err != nil {
		return row, err
	}
	defer c.Close()
	defer e.Close()
	name := fmt.Sprintf("etcd-%s-%s-seed%d", s.Name, prim, o.Seed)
	copt := linearizability.Options{Timeout: o.CheckTimeout, Dir: o.Dir, Name: name}
	table := fmt.Sprintf("check-%s-seed%d", s.Name, o.Seed)
	if prim == linearizability.PrimitiveTokenBucket {
		f := fault.None
		if o.Fault.Etcd() && !o.Fault.Credits() {
			f = o.Fault
		}
		open := func(c *clientv3.Client) (linearizability.TBBackend, error) {
			t, err := etcdsut.NewTokenBucket(f, c, table)
			if err != nil {
				return nil, err
			}
			return etcdsut.Remote(t.Apply, o.Timeout), nil
		}
		var j faultrun.Job[model.TBInput[string], model.TBOutput]
		if j, err = job(e, s, o, c, copt, open); err == nil {
			err = faultrun.TB(e.Run, &row, j)
		}
	} else {
		f := fault.None
		if o.Fault.Etcd() && o.Fault.Credits() {
			f = o.Fault
		}
		open := func(c *clientv3.Client) (linearizability.CrBackend, error) {
			ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
			defer cancel()
			t, err := etcdsut.NewCredits(ctx, f, c, table)
			if err != nil {
				return nil, err
			}
			return etcdsut.Remote(t.Apply, o.Timeout), nil
		}
		var j faultrun.Job[model.CrInput[string], model.CrOutput[string]]
		if j, err = job(e, s, o, c, copt, open); err == nil {
			err = faultrun.Cr(e.Run, &row, j)
		}
	}
	if err != nil {
		return row, err
	}
	if row.MustStrike {
		row.Detail += fmt.Sprintf("; after the fault %d of %d calls answered, the first in %v", row.AfterOK, row.After, row.Recovery.Round(time.Millisecond))
	}
	row.Elapsed = time.Since(start)
	return row, nil
}

// job is the faultrun.Job of a primitive whose table open opens through a
// client: the recording's through c, the durability read's through a
// client of its own, made once the fault has healed, so that nothing the
// fault did to the recording's client can answer it.
func job[In, Out any](e *env, s Scenario, o Options, c *clientv3.Client, copt linearizability.Options, open func(*clientv3.Client) (linearizability.Backend[In, Out], error)) (faultrun.Job[In, Out], error) {
	b, err := open(c)
	if err != nil {
		return faultrun.Job[In, Out]{}, err
	}
	return faultrun.Job[In, Out]{
		Seed:    o.Seed,
		Check:   copt,
		Backend: b,
		Start: func() {
			var prepare func() error
			if s.start != nil {
				prepare = func() error { return s.start(e) }
			}
			e.Inject(prepare, func() error { return s.inject(e) })
		},
		Reopen: func() (linearizability.Backend[In, Out], func(), error) {
			fc, err := econn.NewClient(clientv3.Config{Endpoints: e.cluster.Endpoints(), DialTimeout: o.Timeout})
			if err != nil {
				return nil, nil, err
			}
			e.Defer(func() { fc.Close() })
			fb, err := open(fc)
			return fb, func() {}, err
		},
	}, nil
}
