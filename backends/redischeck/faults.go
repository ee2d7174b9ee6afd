package redischeck

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Scenario is one fault workload: how the servers are set up, and what is
// done to them while a history is recorded. Faults are injected when a
// share of the recording's calls has been made, so they land mid-run
// whatever the machine's speed.
type Scenario struct {
	Name string
	// What says what the fault is, for the summary.
	What string
	// AOF starts the server with the append-only file, fsynced on every
	// write (redisserver.WithAOF).
	AOF bool
	// Fsync is the AOF's appendfsync policy ("": always, with AOF).
	Fsync string
	// OnLazyFS keeps the server's data on a lazyfs mount, for a power
	// loss (powerloss.go).
	OnLazyFS bool
	// MustLose marks the scenarios that must lose an acknowledged write:
	// a row that lost none fails (its fault did not reach what it was
	// meant to).
	MustLose bool
	// Replica starts a replica of the server as well.
	Replica bool
	// Wait is Target.Wait.
	Wait int
	// StateLost marks the scenarios that lose the server's whole state
	// (no persistence, or none synced): only the token bucket's row runs.
	// A credit table that finds its state gone refuses every call with
	// ErrStateLost rather than issue epochs again (spec/credits.md §10.5,
	// impl/redis/credits TestEvictedStateRefused), so there is no loss
	// of its to measure.
	StateLost bool
	// Lossy marks the scenarios where acknowledged writes may be lost by
	// design (asynchronous replication): their losses are measured and
	// reported, not failed.
	Lossy bool
	// Cluster runs the scenario on a Redis Cluster of 3 primaries with a
	// replica each (node timeout ClusterNodeTimeout) instead of one server;
	// the fault lands on the primary serving the table's slot. Such a
	// scenario also requires the table to answer again after the fault:
	// some call begun after it must be acknowledged.
	Cluster bool
	// ClusterProxied starts the cluster with every node behind proxies
	// (redisserver.ClusterThroughProxies), for a partition inside it
	// (clusterpartition.go).
	ClusterProxied bool
	// nodeTimeout is a cluster scenario's cluster-node-timeout (0:
	// ClusterNodeTimeout).
	nodeTimeout time.Duration
	// upset, when not nil, runs on a cluster scenario before the table's
	// pair is found: a test's failover that no fault made.
	upset func(e *env) error
	// failsOver marks the cluster scenarios whose fault may fail the
	// table's pair over; in any other, and for every other pair, a
	// failover is the cluster's own doing (unplanned).
	failsOver bool
	// Proxied starts the replica behind a proxy of its own
	// (redisserver.ThroughProxy), for a partition (partition.go).
	Proxied bool
	// MinReplicas starts the primary with min-replicas-to-write 1 and
	// min-replicas-max-lag PartitionLag.
	MinReplicas bool
	// unsetMinReplicas starts the primary of a MinReplicas row without
	// min-replicas-to-write, the row still held to its bound: the negative
	// control of TestPartitionMinReplicas.
	unsetMinReplicas bool
	// cutOff measures what the primary does while a partition holds its
	// clients, and holds the row to it (partitionBound).
	cutOff bool
	// hold is how long a cutOff row keeps its clients on the cut-off
	// primary (0: PartitionHold).
	hold time.Duration
	// Clock, when not 0, starts the primary with a steppable clock
	// (redisserver.WithSteppableClock) and is the step of the clock
	// scenarios (clock.go).
	Clock time.Duration
	// noStep keeps a clock scenario from stepping the clock: the negative
	// control of TestClockScenarios.
	noStep bool
	// bound replaces cluster-partition's ClusterPartitionBound: the
	// negative control of TestClusterPartitionScenarios.
	bound time.Duration
	// endShare, when not 0, makes the calls past that share of the
	// recording wait for the fault's end (faultrun.Run.Ended): a soak
	// window's.
	endShare float64
	inject   func(e *env) error
}

// ClusterNodeTimeout is the cluster scenarios' cluster-node-timeout: how
// long a primary may be unreachable before the cluster promotes its
// replica. Long enough that a loaded machine does not fail a node over on
// its own.
const ClusterNodeTimeout = time.Second

// env is a scenario's servers while it runs, and its recording
// (faultrun.Run: its faults wait on At and strike through Strike).
type env struct {
	*faultrun.Run
	primary, replica *redisserver.Server
	spare            *redisserver.Server // the new primary's replica after a failover
	target           *Target
	timeout          time.Duration

	cluster *redisserver.Cluster
	owner   int    // the index of the primary (and its replica) serving the table's slot
	slot    int    // the table's slot
	adopted string // a failover the cluster made before the fault (findTable)

	cut cutOff // what a partition's cut-off primary did (partition.go)

	bound     time.Duration // Scenario.bound
	clockStep time.Duration // a clock scenario's step (clock.go)
	noStep    bool
	clk       clockFault // what it did
}

// lag notes how far the replica r trailed its primary p just before a
// fault: r's offset read first, then p's, so the gap is an upper bound.
func (e *env) lag(p, r *redisserver.Server) {
	ri, err := r.Info("replication")
	if err != nil {
		e.Note = "replica offset unknown: " + err.Error()
		return
	}
	pi, err := p.Info("replication")
	if err != nil {
		e.Note = "primary offset unknown: " + err.Error()
		return
	}
	ro, _ := strconv.ParseInt(ri["slave_repl_offset"], 10, 64)
	po, _ := strconv.ParseInt(pi["master_repl_offset"], 10, 64)
	e.Note = fmt.Sprintf("at the fault the replica was at most %d bytes behind (offsets %d of %d)", po-ro, ro, po)
}

// Scenarios are the fault workloads, in the order they run.
func Scenarios() []Scenario {
	return append([]Scenario{
		{Name: "none", What: "no fault (the baseline)", inject: func(*env) error { return nil }},
		{Name: "pause", What: "SIGSTOP for 3 call timeouts, then SIGCONT: the calls sent meanwhile run after it",
			inject: func(e *env) error {
				if !e.Strike(0.3) {
					return nil
				}
				if err := e.primary.Pause(); err != nil {
					return err
				}
				time.Sleep(3 * e.timeout)
				return e.primary.Resume()
			}},
		{Name: "crash", What: "kill -9, restart from the AOF (appendfsync always) after 2 call timeouts", AOF: true,
			inject: func(e *env) error {
				if !e.Strike(0.3) {
					return nil
				}
				if err := e.primary.Crash(); err != nil {
					return err
				}
				time.Sleep(2 * e.timeout)
				return e.primary.Restart()
			}},
		{Name: "client-pause", What: "CLIENT PAUSE WRITE for 3 call timeouts",
			inject: func(e *env) error {
				if !e.Strike(0.3) {
					return nil
				}
				if err := e.primary.PauseWrites(3 * e.timeout); err != nil {
					return err
				}
				// PauseWrites returns once the server has the command; the
				// pause ends 3 timeouts after that at the latest. A write
				// on a connection of its own then proves it over: the
				// server holds every write until the pause ends.
				time.Sleep(3 * e.timeout)
				return e.primary.WaitWritable(10 * e.timeout)
			}},
		{Name: "failover-crash", What: "kill -9 of the primary at 30% of the calls, the replica promoted (REPLICAOF NO ONE) at once, clients moved to it: what replication lag alone loses", Replica: true, Lossy: true,
			inject: failoverCrash},
		{Name: "failover", What: "the replica promoted (REPLICAOF NO ONE) at 30% of the calls while the primary still takes writes; at 34% the primary is killed and clients move to the new primary", Replica: true, Lossy: true,
			inject: failover},
		{Name: "failover-wait", What: "as failover, every write followed by WAIT 1 (a write not acknowledged by the replica is unknown)", Replica: true, Wait: 1,
			inject: failover},
		{Name: "cluster-reshard", What: "on a Redis Cluster: the table's slot moved to another primary at 30% of the calls (MIGRATE key by key, ASK and TRYAGAIN meanwhile) and back at 60%", Cluster: true,
			inject: clusterReshard},
		{Name: "cluster-failover", What: "on a Redis Cluster: CLUSTER FAILOVER on the replica of the table's primary at 30% of the calls (the primary stops writes until the replica has caught up, then they swap)", Cluster: true, failsOver: true,
			inject: clusterFailover},
		{Name: "cluster-kill", What: "on a Redis Cluster: kill -9 of the table's primary at 30% of the calls; the cluster promotes its replica after the node timeout", Cluster: true, failsOver: true, Lossy: true,
			inject: clusterKill},
		{Name: "cluster-pause", What: "on a Redis Cluster: SIGSTOP of the table's primary at 30% of the calls until the cluster has promoted its replica, then SIGCONT: the old primary rejoins as a replica", Cluster: true, failsOver: true, Lossy: true,
			inject: clusterPause},
	}, append(append(append(partitionScenarios(), powerLossScenarios()...), clockScenarios()...), clusterPartitionScenarios()...)...)
}

func clusterReshard(e *env) error {
	if !e.Strike(0.3) {
		return nil
	}
	from := e.cluster.Primaries[e.owner]
	to := e.cluster.Primaries[(e.owner+1)%len(e.cluster.Primaries)]
	if err := e.cluster.MoveSlot(e.slot, to, 1, 20*time.Millisecond); err != nil {
		return err
	}
	if !e.Strike(0.6) {
		return nil
	}
	return e.cluster.MoveSlot(e.slot, from, 1, 20*time.Millisecond)
}

func clusterFailover(e *env) error {
	if !e.Strike(0.3) {
		return nil
	}
	if _, err := e.cluster.Replicas[e.owner].Query("CLUSTER", "FAILOVER"); err != nil {
		return err
	}
	return e.promoted()
}

// promoted waits until the replica of the table's primary is a primary of
// a whole cluster again, for 10 node timeouts at most.
func (e *env) promoted() error {
	return e.cluster.WaitPrimary(e.cluster.Replicas[e.owner], 10*e.cluster.NodeTimeout)
}

func clusterKill(e *env) error {
	if !e.At(0.3) {
		return nil
	}
	e.lag(e.cluster.Primaries[e.owner], e.cluster.Replicas[e.owner])
	if !e.Strike(0.3) {
		return nil
	}
	if err := e.cluster.Primaries[e.owner].Crash(); err != nil {
		return err
	}
	return e.promoted()
}

func clusterPause(e *env) error {
	if !e.At(0.3) {
		return nil
	}
	p := e.cluster.Primaries[e.owner]
	e.lag(p, e.cluster.Replicas[e.owner])
	if !e.Strike(0.3) {
		return nil
	}
	if err := p.Pause(); err != nil {
		return err
	}
	err := e.promoted()
	if rerr := p.Resume(); err == nil {
		err = rerr
	}
	return err
}

func failoverCrash(e *env) error {
	if !e.Strike(0.3) {
		return nil
	}
	if err := e.primary.Crash(); err != nil {
		return err
	}
	if err := e.replica.Promote(); err != nil {
		return err
	}
	e.target.SetAddr(e.replica.Addr)
	return nil
}

func failover(e *env) error {
	if !e.Strike(0.3) {
		return nil
	}
	if err := e.replica.Promote(); err != nil {
		return err
	}
	if !e.Strike(0.34) {
		return nil
	}
	if err := e.primary.Crash(); err != nil {
		return err
	}
	e.target.SetAddr(e.replica.Addr)
	// The new primary gets a replica of its own, as the old primary would
	// rejoin once restarted: until it has synced, WAIT 1 times out.
	r, err := e.replica.StartReplica()
	if err != nil {
		return err
	}
	e.spare = r
	return nil
}

// crashNoAOF is the negative control of crash: the same fault on a server
// without persistence, which must fail the durability check.
var crashNoAOF = Scenario{Name: "crash-no-aof", What: "kill -9 and restart without persistence (negative control; the token bucket only: a credit table refuses once its state is gone)", StateLost: true,
	inject: func(e *env) error {
		if !e.Strike(0.3) {
			return nil
		}
		if err := e.primary.Crash(); err != nil {
			return err
		}
		time.Sleep(3 * e.timeout)
		return e.primary.Restart()
	}}

// Row is what one scenario found for one primitive.
type Row = faultrun.Row

// Options configure Run (the call budget's default is 250 ms).
type Options = faultrun.Options

// Run runs scenario s for the primitives named ("tokenbucket", "credits";
// both when empty), each on servers of its own, and returns a row each.
// With a fault, only that fault's primitive runs.
func Run(s Scenario, prims []string, o Options) ([]Row, error) {
	// Not less than 250 ms a call: on a loaded 2-core machine a call can
	// take 100 ms with no fault at all, and every call that times out is
	// one more unknown outcome for porcupine to place.
	o.Defaults(250*time.Millisecond, "tollgate-redis-check")
	runs := func(p string) bool {
		credits := p == linearizability.PrimitiveCredits
		return (o.Fault == fault.None || o.Fault.Credits() == credits) && !(s.StateLost && credits)
	}
	return faultrun.Rows("redischeck", s.Name, prims, runs, func(p string) (Row, error) { return runOne(s, p, o) })
}

// runOne runs scenario s for the primitive prim on servers of its own.
func runOne(s Scenario, prim string, o Options) (Row, error) {
	start := time.Now()
	row := Row{Scenario: s.Name, Primitive: prim, Lossy: s.Lossy, MustLose: s.MustLose, MustStrike: s.Name != "none"}
	if s.Cluster {
		row.RecoverWithin = s.clusterRecovery()
	}
	e := &env{Run: faultrun.NewRun(), timeout: o.Timeout, clockStep: s.Clock, noStep: s.noStep, bound: s.bound}
	if s.Proxied {
		// The calls past 80% wait for the partition's end: every
		// recording has calls after it, however the throttle went.
		e.Ended, e.EndShare = make(chan struct{}), 0.8
	}
	if s.endShare != 0 {
		e.Ended, e.EndShare = make(chan struct{}), s.endShare
	}
	if s.MinReplicas {
		e.cut.bound = redisserver.MinReplicasBound(PartitionLag)
	}
	e.cut.hold = PartitionHold
	if s.hold != 0 {
		e.cut.hold = s.hold
	}
	stop, err := e.start(s, o)
	defer stop()
	if err != nil {
		return row, err
	}
	m0, a0, t0 := rconn.Redirects()
	name := fmt.Sprintf("redis-%s-%s-seed%d", s.Name, prim, o.Seed)
	if o.Fault != fault.None {
		name = fmt.Sprintf("redis-%s-%s-%s-seed%d", s.Name, o.Fault, prim, o.Seed)
	}
	defer e.Close()
	check := linearizability.Options{Timeout: o.CheckTimeout, Dir: o.Dir, Name: name}
	if prim == linearizability.PrimitiveTokenBucket {
		var j faultrun.Job[model.TBInput[string], model.TBOutput]
		j, err = job(e, s, o, check, e.target.TB, func(t *Target, table string) (linearizability.TBBackend, func(), error) {
			return t.OpenTB(o.Fault, table)
		},
			model.TBInput[string]{Kind: model.TBPeek, Key: "warm", Limits: linearizability.FaultTBWorkload().Limits})
		if err == nil {
			err = faultrun.TB(e.Run, &row, j)
		}
	} else {
		var j faultrun.Job[model.CrInput[string], model.CrOutput[string]]
		j, err = job(e, s, o, check, e.target.Cr, func(t *Target, table string) (linearizability.CrBackend, func(), error) {
			return t.OpenCr(o.Fault, table)
		},
			model.CrInput[string]{Kind: model.CrSnapshot})
		if err == nil {
			err = faultrun.Cr(e.Run, &row, j)
		}
	}
	if e.adopted != "" {
		row.Detail += "; " + e.adopted
	}
	if s.Cluster {
		err = e.unplanned(s, &row, err)
	}
	if err != nil {
		return row, err
	}
	if s.Cluster {
		m, a, t := rconn.Redirects()
		row.Detail += fmt.Sprintf("; after the fault %d of %d calls answered, the first in %v; MOVED %d, ASK %d, TRYAGAIN %d followed", row.AfterOK, row.After, row.Recovery.Round(time.Millisecond), m-m0, a-a0, t-t0)
	}
	row.Elapsed = time.Since(start)
	return row, nil
}

// start starts the scenario's servers and the target of its calls, and
// returns what stops them.
func (e *env) start(s Scenario, o Options) (stop func(), err error) {
	var stops []func()
	stop = func() {
		if e.spare != nil {
			e.spare.Stop()
		}
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if s.Cluster {
		var copts []redisserver.ClusterOption
		if s.ClusterProxied {
			copts = append(copts, redisserver.ClusterThroughProxies())
		}
		cl, err := redisserver.StartCluster(o.Parent, 3, s.clusterNodeTimeout(), copts...)
		if err != nil {
			return stop, err
		}
		stops = append(stops, cl.Stop)
		e.cluster = cl
		e.target = NewClusterTarget(cl.Addrs(), o.Timeout)
		stops = append(stops, func() { e.target.Close() })
		return stop, nil
	}
	primary, err := redisserver.Start(o.Parent, s.serverOptions()...)
	if err != nil {
		return stop, err
	}
	stops = append(stops, primary.Stop)
	e.primary = primary
	if s.Replica {
		var ropts []redisserver.Option
		if s.Proxied {
			ropts = append(ropts, redisserver.ThroughProxy())
		}
		if e.replica, err = primary.StartReplica(ropts...); err != nil {
			return stop, err
		}
		stops = append(stops, e.replica.Stop)
	}
	e.target = NewTarget(primary.Addr, o.Timeout)
	e.target.Wait = s.Wait
	stops = append(stops, func() { e.target.Close() })
	return stop, nil
}

// job is the faultrun.Job of a primitive whose table open makes on the
// scenario's target, warmed by calls of warmIn before the recording, and
// reopen opens again on a fresh target for the durability read.
func job[In, Out any](e *env, s Scenario, o Options, check linearizability.Options, open func(fault.Fault) (linearizability.Backend[In, Out], func(), error), reopenOn func(*Target, string) (linearizability.Backend[In, Out], func(), error), warmIn In) (faultrun.Job[In, Out], error) {
	b, done, err := open(o.Fault)
	if err != nil {
		return faultrun.Job[In, Out]{}, err
	}
	e.Defer(done)
	table := e.target.lastTable()
	// On a cluster the fault lands on the primary serving the table's
	// slot: found once the table is made.
	var prepare func() error
	if e.cluster != nil {
		prepare = e.findTable
		if s.upset != nil {
			prepare = func() error {
				if err := s.upset(e); err != nil {
					return err
				}
				return e.findTable()
			}
		}
	}
	var bound func([]linearizability.Op[In, Out], linearizability.Backend[In, Out]) (string, string, error)
	if s.cutOff {
		bound = func(ops []linearizability.Op[In, Out], read linearizability.Backend[In, Out]) (string, string, error) {
			return partitionBound(e, ops, read)
		}
	}
	if s.Clock != 0 {
		bound = func([]linearizability.Op[In, Out], linearizability.Backend[In, Out]) (string, string, error) {
			found, broken := clockBound(e)
			return found, broken, nil
		}
	}
	return faultrun.Job[In, Out]{
		Bound:   bound,
		Seed:    o.Seed,
		Mutant:  mutantName(o.Fault),
		Check:   check,
		Backend: b,
		Start: func() {
			warm(b, warmIn)
			e.Inject(prepare, func() error { return s.inject(e) })
		},
		// The durability read goes through a fresh target and table
		// handle, opened once the fault has ended: no connection, fence or
		// Wait of the recording's answers it.
		Reopen: func() (linearizability.Backend[In, Out], func(), error) {
			fresh := e.target.Fresh()
			e.Defer(func() { fresh.Close() })
			return reopen(func() (linearizability.Backend[In, Out], func(), error) { return reopenOn(fresh, table) })
		},
	}, nil
}

// reopen opens a table again (opening's retries), for the durability read.
func reopen[B any](open func() (B, func(), error)) (B, func(), error) {
	var done func()
	b, err := opening(func() (B, error) {
		b, d, err := open()
		done = d
		return b, err
	})
	if err != nil {
		return b, nil, err
	}
	return b, done, nil
}

func mutantName(f fault.Fault) string {
	if f == fault.None {
		return ""
	}
	return f.String()
}

// findTable sets the cluster scenario's slot and owner: the slot of the
// table the target made last, and the pair whose primary serves it. No
// fault has struck yet, so a slot served by a pair's replica is a failover
// the cluster made on its own (a starved machine): findTable takes it in
// (redisserver.Cluster.Adopt), says so in the row, and the fault strikes
// the pair's new primary.
func (e *env) findTable() error {
	name := e.target.lastTable()
	slot, owner, err := e.tableSlot()
	if err != nil {
		return err
	}
	for i, p := range e.cluster.Primaries {
		r := e.cluster.Replicas[i]
		if owner != p.Addr && owner != r.Addr {
			continue
		}
		e.slot, e.owner = slot, i
		// The pair failed over if its replica serves the slot, or if the
		// view read lags a failover: its replica is a primary, or the
		// primary it names replicates.
		if owner == p.Addr && role(r) != "master" && role(p) != "slave" {
			return nil
		}
		if err := e.cluster.Adopt(i, 10*e.cluster.NodeTimeout); err != nil {
			return fmt.Errorf("table %q: before the fault, the cluster failed over the pair serving slot %d on its own, and the pair did not settle: %w", name, slot, err)
		}
		e.adopted = fmt.Sprintf("before the fault the cluster failed the table's pair over on its own (a primary unanswered on the bus for the node timeout, %v, makes it do so); the fault struck the new primary, %s", e.cluster.NodeTimeout, e.cluster.Primaries[i].Addr)
		return nil
	}
	nodes, _ := e.cluster.Primaries[0].Query("CLUSTER", "NODES")
	return fmt.Errorf("table %q: slot %d is served by %s (%s), as %s sees:\n%s", name, slot, owner, e.cluster.Describe(owner), e.cluster.Primaries[0].Addr, nodes)
}

// tableSlot is the slot of the table the target made last, and the
// address of the primary serving it as Primaries[0] sees it.
func (e *env) tableSlot() (slot int, owner string, err error) {
	slot, err = e.cluster.Primaries[0].KeySlot("{" + e.target.lastTable() + "}")
	if err != nil {
		return 0, "", err
	}
	owner, _, err = e.cluster.Primaries[0].SlotOwner(slot)
	return slot, owner, err
}

// role is node s's replication role ("master", "slave"), "" when it
// does not answer.
func role(s *redisserver.Server) string {
	info, err := s.Info("replication")
	if err != nil {
		return ""
	}
	return info["role"]
}

// unplanned looks, once the recording and its checks are done, for a
// failover the scenario did not make: a pair whose replica is a primary,
// other than the table's pair in a scenario that fails it over. Such a
// failover is the cluster's own doing on a starved machine, and may lose
// writes the scenario promised to keep: a failed row, or an error, is
// then not the table's, and unplanned says so in the error it returns; a
// row that passed notes it. err is the run's error, returned unchanged
// when there was none.
func (e *env) unplanned(s Scenario, row *Row, err error) error {
	var pairs []string
	for i, r := range e.cluster.Replicas {
		if i == e.owner && s.failsOver {
			continue
		}
		if role(r) == "master" {
			pairs = append(pairs, fmt.Sprintf("pair %d (%s promoted over %s)", i, r.Addr, e.cluster.Primaries[i].Addr))
		}
	}
	if len(pairs) == 0 {
		return err
	}
	what := fmt.Sprintf("the cluster failed over %s on its own during the recording, no fault of the scenario's: a node unanswered on the bus for the node timeout (%v), as on a starved machine", strings.Join(pairs, ", "), e.cluster.NodeTimeout)
	switch {
	case err != nil:
		return fmt.Errorf("%w (meanwhile %s)", err, what)
	case !row.Pass():
		return fmt.Errorf("the row's verdict does not count: %s; it failed with: %s", what, row.Failure())
	}
	row.Detail += "; " + what
	return nil
}

// clusterRecovery bounds how long after cluster scenario s's fault (its
// replica promoted, its slot moved) the table may take to acknowledge a
// call again: 10 of its node timeouts, far below the 60 s after which
// go-redis would reload a stale slot map on its own.
func (s Scenario) clusterRecovery() time.Duration { return 10 * s.clusterNodeTimeout() }

// clusterNodeTimeout is the cluster-node-timeout scenario s starts its
// cluster with.
func (s Scenario) clusterNodeTimeout() time.Duration {
	if s.nodeTimeout != 0 {
		return s.nodeTimeout
	}
	return ClusterNodeTimeout
}

// warm opens connections before the recording: 4 calls on each of 8
// goroutines, at once. A client that sends a timed-out call again on its
// own (mutant rtb-retry-on-timeout) then finds established connections to
// send it on; a new one would time out in its handshake first, and the
// copy would never be sent.
func warm[In, Out any](b linearizability.Backend[In, Out], in In) {
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = b.Do(0, in)
		}()
	}
	wg.Wait()
}
