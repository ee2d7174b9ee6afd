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
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/etcdsut"
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
	Name string
	// What says what the fault is, for the summary.
	What string
	// OnLazyFS keeps every member's data directory on a lazyfs mount, for
	// a power loss (powerloss.go).
	OnLazyFS bool
	// MustLose marks a negative control, which must lose an acknowledged
	// write: a row that lost none fails.
	MustLose bool
	start    func(e *env) error // before the recording (nil: nothing)
	inject   func(e *env) error
}

// Recovery bounds how long after a fault's end the table may take to
// acknowledge a call again.
const Recovery = 10 * time.Second

// env is a scenario's cluster while it runs.
type env struct {
	cluster  *etcdserver.Cluster
	calls    atomic.Int64
	total    int64 // the calls the recording is expected to make
	stop     chan struct{}
	injected atomic.Int64  // when the fault ended, in Unix nanoseconds (0: not yet)
	ended    chan struct{} // closed when the fault ended
	// after counts the calls begun once the fault was injected, and
	// afterOK those of them acknowledged.
	after, afterOK atomic.Int64
	firstOK        atomic.Int64 // when the first call begun after the fault's end was acknowledged
	faulting       atomic.Bool  // the fault is being done
	note           string       // what the fault did, for the row's detail
	// clock places the fault on the recording's time base: the fault acts
	// only once a write is in flight (strike).
	clock linearizability.FaultClock
}

// at waits until share of the expected calls are made; false if the
// recording ended first.
func (e *env) at(share float64) bool {
	for e.calls.Load() < int64(share*float64(e.total)) {
		select {
		case <-e.stop:
			return false
		case <-time.After(time.Millisecond):
		}
	}
	return true
}

// hold keeps a fault for d, or until the recording ends.
func (e *env) hold(d time.Duration) {
	select {
	case <-e.stop:
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
	if !e.at(0.3) {
		return nil
	}
	i, err := which()
	if err != nil {
		return err
	}
	// The member is chosen first: the fault acts at once after the strike,
	// while the write it found is still in flight.
	if !e.clock.Strike(e.stop) {
		return nil
	}
	e.faulting.Store(true)
	if err := do(i); err != nil {
		return err
	}
	e.note = fmt.Sprintf("struck member %d", i)
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
type Row struct {
	Scenario, Primitive string
	Ops, UnknownOps     int
	Result              linearizability.Result // porcupine's verdict
	Invariant           string
	// Acked is the acknowledged writes the durability check followed
	// (takes, or enqueues), Lost those it found lost, Undecided those a
	// call of unknown outcome leaves open; Extra counts writes applied
	// more often than made (linearizability.Durability).
	Acked, Lost, Extra, Undecided int
	Detail                        string
	// Struck reports that the fault was done, InFlight the writes in
	// flight at its start (called before it, returned after it or never):
	// a scenario whose fault never struck, or found no write in flight,
	// fails.
	Struck   bool
	InFlight int
	// After counts the calls begun once the fault ended, AfterOK those of
	// them acknowledged; Recovery is the time from the fault's end to the
	// first such acknowledgement.
	After, AfterOK int
	Recovery       time.Duration
	Report         linearizability.Report
	Elapsed        time.Duration
	// MustLose: a negative control, which must lose an acknowledged write.
	MustLose bool
}

// Pass reports whether the row is what the backend promises (Failure
// says what it is not).
func (r Row) Pass() bool { return r.Failure() == "" }

// Inconclusive reports a row that fails only because porcupine could not
// decide its history in time: Unknown, not a pass.
func (r Row) Inconclusive() bool {
	return r.Result == linearizability.Unknown && r.broken() == ""
}

// Failure says why the row is not what the backend promises, "" when it
// is: the fault struck writes in flight, the history is linearizable, no
// acknowledged write was lost or applied twice, and the table answered
// again within Recovery of the fault's end. A negative control (MustLose)
// is what it must be when it lost an acknowledged write: its history is
// then not linearizable, and porcupine's verdict is reported, not
// required.
func (r Row) Failure() string {
	if f := r.broken(); f != "" {
		return f
	}
	if r.MustLose {
		return ""
	}
	if r.Result != linearizability.Ok {
		return string(r.Result)
	}
	return ""
}

func (r Row) broken() string {
	fault := r.Scenario != "none"
	switch {
	case fault && !r.Struck:
		return "the fault never struck"
	case fault && r.InFlight == 0:
		return "the fault found no write in flight"
	case fault && (r.AfterOK == 0 || r.Recovery > Recovery):
		return fmt.Sprintf("no call answered within %v of the fault", Recovery)
	case r.MustLose && r.Lost == 0:
		return "a negative control that lost no acknowledged write"
	case r.MustLose:
		return ""
	case r.Extra > 0:
		return fmt.Sprintf("%d writes applied twice", r.Extra)
	case r.Lost > 0:
		return fmt.Sprintf("%d acknowledged writes lost", r.Lost)
	}
	return ""
}

// Options configure Run.
type Options struct {
	Timeout      time.Duration // each call's budget (default 2 s)
	CheckTimeout time.Duration // porcupine's budget per history (default 20 s)
	Seed         uint64
	Dir          string // where failing histories are written
	Parent       string // where the members' directories go
	// Fault is the etcd mutant to run instead of the real tables
	// (fault.None: the real ones); a primitive it is not a mutant of runs
	// the real table.
	Fault fault.Fault
}

func (o *Options) defaults() {
	if o.Timeout == 0 {
		// Longer than an election (4 election timeouts of 500 ms at most,
		// on a loaded machine), so that a call sent while the cluster
		// elects is answered after it rather than left unknown.
		o.Timeout = 2 * time.Second
	}
	if o.CheckTimeout == 0 {
		o.CheckTimeout = 20 * time.Second
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(os.TempDir(), "tollgate-etcd-check")
	}
}

// Run runs scenario s for the primitives named ("tokenbucket", "credits";
// both when empty), each on a cluster of its own, and returns a row each.
func Run(s Scenario, prims []string, o Options) ([]Row, error) {
	o.defaults()
	if len(prims) == 0 {
		prims = []string{linearizability.PrimitiveTokenBucket, linearizability.PrimitiveCredits}
	}
	var rows []Row
	for _, p := range prims {
		r, err := runOne(s, p, o)
		if err != nil {
			return rows, fmt.Errorf("etcdcheck: %s, %s: %w", s.Name, p, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func runOne(s Scenario, prim string, o Options) (Row, error) {
	start := time.Now()
	row := Row{Scenario: s.Name, Primitive: prim, MustLose: s.MustLose}
	cl, err := etcdserver.StartCluster(o.Parent, 3, s.clusterOptions()...)
	if err != nil {
		return row, err
	}
	defer cl.Stop()
	e := &env{cluster: cl, stop: make(chan struct{}), ended: make(chan struct{})}
	c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: o.Timeout})
	if err != nil {
		return row, err
	}
	defer c.Close()

	var injected error
	var wg sync.WaitGroup
	inject := func() {
		if s.start != nil {
			if err := s.start(e); err != nil {
				injected = err // reported once the recording ends
				close(e.ended)
				return
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			injected = s.inject(e)
			e.injected.Store(time.Now().UnixNano())
			close(e.ended)
		}()
	}
	// The durability read goes through a client of its own, made once the
	// fault has healed (strike waits for it): nothing the fault did to the
	// recording's client can answer it.
	fresh := func() (*clientv3.Client, error) {
		return econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: o.Timeout})
	}
	name := fmt.Sprintf("etcd-%s-%s-seed%d", s.Name, prim, o.Seed)
	copt := linearizability.Options{Timeout: o.CheckTimeout, Dir: o.Dir, Name: name}
	table := fmt.Sprintf("check-%s-seed%d", s.Name, o.Seed)
	if prim == linearizability.PrimitiveTokenBucket {
		w := linearizability.FaultTBWorkload()
		e.total = int64(w.Clients * w.OpsPerClient)
		f := fault.None
		if o.Fault.Etcd() && !o.Fault.Credits() {
			f = o.Fault
		}
		t, err := etcdsut.NewTokenBucket(f, c, table)
		if err != nil {
			return row, err
		}
		b := etcdsut.Remote(t.Apply, o.Timeout)
		inject()
		h, err := linearizability.RecordTokenBucket(w, counted[model.TBInput[string], model.TBOutput]{b, e}, o.Seed)
		close(e.stop)
		wg.Wait()
		if err != nil {
			return row, err
		}
		if injected != nil {
			return row, fmt.Errorf("injecting the fault: %w", injected)
		}
		row.Struck, row.InFlight = struck(e, h.Ops)
		fc, err := fresh()
		if err != nil {
			return row, err
		}
		defer fc.Close()
		ft, err := etcdsut.NewTokenBucket(f, fc, table)
		if err != nil {
			return row, fmt.Errorf("opening the table again for the durability read: %w", err)
		}
		d, err := linearizability.TBDurability(w, h, etcdsut.Remote(ft.Apply, o.Timeout))
		if err != nil {
			return row, err
		}
		row.setDurability(d)
		if row.Report, err = linearizability.CheckTokenBucket(h, copt); err != nil {
			return row, err
		}
	} else {
		w := linearizability.FaultCrWorkload()
		e.total = int64(w.Holders * w.Rounds * 3)
		ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
		f := fault.None
		if o.Fault.Etcd() && o.Fault.Credits() {
			f = o.Fault
		}
		t, err := etcdsut.NewCredits(ctx, f, c, table)
		cancel()
		if err != nil {
			return row, err
		}
		b := etcdsut.Remote(t.Apply, o.Timeout)
		inject()
		h, err := linearizability.RecordCredits(w, counted[model.CrInput[string], model.CrOutput[string]]{b, e}, o.Seed)
		close(e.stop)
		wg.Wait()
		if err != nil {
			return row, err
		}
		if injected != nil {
			return row, fmt.Errorf("injecting the fault: %w", injected)
		}
		row.Struck, row.InFlight = struck(e, h.Ops)
		fc, err := fresh()
		if err != nil {
			return row, err
		}
		defer fc.Close()
		ctx, cancel = context.WithTimeout(context.Background(), o.Timeout)
		ft, err := etcdsut.NewCredits(ctx, f, fc, table)
		cancel()
		if err != nil {
			return row, fmt.Errorf("opening the table again for the durability read: %w", err)
		}
		d, err := linearizability.CrDurability(h, etcdsut.Remote(ft.Apply, o.Timeout))
		if err != nil {
			return row, err
		}
		row.setDurability(d)
		if row.Report, err = linearizability.CheckCredits(h, copt); err != nil {
			return row, err
		}
	}
	row.After, row.AfterOK = int(e.after.Load()), int(e.afterOK.Load())
	if ok := e.firstOK.Load(); ok != 0 {
		row.Recovery = time.Duration(ok - e.injected.Load())
	}
	if e.note != "" {
		row.Detail += "; " + e.note
	}
	if s.Name != "none" {
		switch {
		case !row.Struck:
			row.Detail += "; THE FAULT NEVER STRUCK (the recording ended first)"
		case row.InFlight == 0:
			row.Detail += "; THE FAULT FOUND NO WRITE IN FLIGHT"
		default:
			row.Detail += fmt.Sprintf("; %d writes in flight at the fault", row.InFlight)
		}
		row.Detail += fmt.Sprintf("; after the fault %d of %d calls answered, the first in %v", row.AfterOK, row.After, row.Recovery.Round(time.Millisecond))
	}
	row.Ops, row.UnknownOps = row.Report.Ops, row.Report.UnknownOps
	row.Result, row.Invariant = row.Report.Result, row.Report.Invariant
	row.Elapsed = time.Since(start)
	return row, nil
}

func (r *Row) setDurability(d linearizability.Durability) {
	r.Acked, r.Lost, r.Extra, r.Undecided, r.Detail = d.Acked, d.Lost, d.Extra, d.Undecided, d.Detail
}

// struck reports whether the fault struck, and the writes of ops in flight
// at its start.
func struck[In, Out any](e *env, ops []linearizability.Op[In, Out]) (bool, int) {
	starts := e.clock.Starts()
	if len(starts) == 0 {
		return false, 0
	}
	return true, linearizability.Spanning(ops, starts[0])
}

// pace is the least time a call of a fault workload takes, so that a
// recording lasts long enough for its faults to land inside it.
const pace = time.Millisecond

// counted counts the calls made through a backend, and those begun after
// the fault's end and acknowledged, and paces them.
type counted[In, Out any] struct {
	b linearizability.Backend[In, Out]
	e *env
}

// ShareStamps hands the recording's stamps to the fault's clock.
func (c counted[In, Out]) ShareStamps(ts *linearizability.Stamps) { c.e.clock.ShareStamps(ts) }

// endShare is the share of a recording's calls that may begin before the
// fault has ended: the calls after it wait for the end, so that every
// recording has calls begun after the fault (Row.After), however fast the
// others went through it.
const endShare = 0.6

func (c counted[In, Out]) Do(client int, in In) (Out, error) {
	if c.e.calls.Add(1) > int64(endShare*float64(c.e.total)) {
		<-c.e.ended
	}
	start := time.Now()
	after := c.e.injected.Load() != 0
	c.e.clock.Begin(in)
	out, err := c.b.Do(client, in)
	c.e.clock.End(in)
	if after {
		c.e.after.Add(1)
		if err == nil {
			c.e.afterOK.Add(1)
			c.e.firstOK.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	time.Sleep(pace - time.Since(start))
	return out, err
}
