package redischeck

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
	inject  func(e *env) error
}

// ClusterRecovery bounds how long after a cluster scenario's fault (its
// replica promoted, its slot moved) the table may take to acknowledge a
// call again: 10 node timeouts, far below the 60 s after which go-redis
// would reload a stale slot map on its own.
const ClusterRecovery = 10 * ClusterNodeTimeout

// ClusterNodeTimeout is the cluster scenarios' cluster-node-timeout: how
// long a primary may be unreachable before the cluster promotes its
// replica. Long enough that a loaded machine does not fail a node over on
// its own.
const ClusterNodeTimeout = time.Second

// env is a scenario's servers while it runs.
type env struct {
	primary, replica *redisserver.Server
	spare            *redisserver.Server // the new primary's replica after a failover
	target           *Target
	calls            *atomic.Int64
	total            int64 // the calls the recording is expected to make
	timeout          time.Duration
	stop             chan struct{}

	cluster  *redisserver.Cluster
	owner    int          // the index of the primary (and its replica) serving the table's slot
	slot     int          // the table's slot
	injected atomic.Int64 // when the fault was injected, in Unix nanoseconds (0: not yet)
	// after counts the calls begun once the fault was injected, and
	// afterOK those of them acknowledged.
	after, afterOK atomic.Int64
	firstOK        atomic.Int64 // when the first call begun after the fault was acknowledged
	note           string       // what the fault found, for the row's detail (lag)
	// clock places the fault on the recording's time base: every fault
	// acts only once a write is in flight (strike).
	clock linearizability.FaultClock
}

// strike waits until share of the expected calls are made and a write is
// in flight, and stamps the fault's start; false if the recording ended
// first (the row then fails: the fault never struck).
func (e *env) strike(share float64) bool {
	return e.at(share) && e.clock.Strike(e.stop)
}

// lag notes how far the replica r trailed its primary p just before a
// fault: r's offset read first, then p's, so the gap is an upper bound.
func (e *env) lag(p, r *redisserver.Server) {
	ri, err := r.Info("replication")
	if err != nil {
		e.note = "replica offset unknown: " + err.Error()
		return
	}
	pi, err := p.Info("replication")
	if err != nil {
		e.note = "primary offset unknown: " + err.Error()
		return
	}
	ro, _ := strconv.ParseInt(ri["slave_repl_offset"], 10, 64)
	po, _ := strconv.ParseInt(pi["master_repl_offset"], 10, 64)
	e.note = fmt.Sprintf("at the fault the replica was at most %d bytes behind (offsets %d of %d)", po-ro, ro, po)
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

// Scenarios are the fault workloads, in the order they run.
func Scenarios() []Scenario {
	return append([]Scenario{
		{Name: "none", What: "no fault (the baseline)", inject: func(*env) error { return nil }},
		{Name: "pause", What: "SIGSTOP for 3 call timeouts, then SIGCONT: the calls sent meanwhile run after it",
			inject: func(e *env) error {
				if !e.strike(0.3) {
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
				if !e.strike(0.3) {
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
				if !e.strike(0.3) {
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
		{Name: "cluster-failover", What: "on a Redis Cluster: CLUSTER FAILOVER on the replica of the table's primary at 30% of the calls (the primary stops writes until the replica has caught up, then they swap)", Cluster: true,
			inject: clusterFailover},
		{Name: "cluster-kill", What: "on a Redis Cluster: kill -9 of the table's primary at 30% of the calls; the cluster promotes its replica after the node timeout", Cluster: true, Lossy: true,
			inject: clusterKill},
		{Name: "cluster-pause", What: "on a Redis Cluster: SIGSTOP of the table's primary at 30% of the calls until the cluster has promoted its replica, then SIGCONT: the old primary rejoins as a replica", Cluster: true, Lossy: true,
			inject: clusterPause},
	}, powerLossScenarios()...)
}

func clusterReshard(e *env) error {
	if !e.strike(0.3) {
		return nil
	}
	from := e.cluster.Primaries[e.owner]
	to := e.cluster.Primaries[(e.owner+1)%len(e.cluster.Primaries)]
	if err := e.cluster.MoveSlot(e.slot, to, 1, 20*time.Millisecond); err != nil {
		return err
	}
	if !e.strike(0.6) {
		return nil
	}
	return e.cluster.MoveSlot(e.slot, from, 1, 20*time.Millisecond)
}

func clusterFailover(e *env) error {
	if !e.strike(0.3) {
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
	if !e.at(0.3) {
		return nil
	}
	e.lag(e.cluster.Primaries[e.owner], e.cluster.Replicas[e.owner])
	if !e.strike(0.3) {
		return nil
	}
	if err := e.cluster.Primaries[e.owner].Crash(); err != nil {
		return err
	}
	return e.promoted()
}

func clusterPause(e *env) error {
	if !e.at(0.3) {
		return nil
	}
	p := e.cluster.Primaries[e.owner]
	e.lag(p, e.cluster.Replicas[e.owner])
	if !e.strike(0.3) {
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
	if !e.strike(0.3) {
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
	if !e.strike(0.3) {
		return nil
	}
	if err := e.replica.Promote(); err != nil {
		return err
	}
	if !e.strike(0.34) {
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
		if !e.strike(0.3) {
			return nil
		}
		if err := e.primary.Crash(); err != nil {
			return err
		}
		time.Sleep(3 * e.timeout)
		return e.primary.Restart()
	}}

// Row is what one scenario found for one primitive.
type Row struct {
	Scenario, Primitive string
	Ops, UnknownOps     int
	SettledOps          int // unknown operations held to their interval (credits)
	// Result is porcupine's verdict: on the whole history, or in a lossy
	// scenario on the history before the fault (the operations called
	// before it, those in flight then of unknown outcome), since the
	// writes the fault loses make the rest unlinearizable by design.
	Result    linearizability.Result
	Invariant string
	// Whole is porcupine's verdict on the whole history of a lossy
	// scenario (informative: what the lost writes did to it).
	Whole linearizability.Result
	// Acked is the acknowledged writes the durability check followed
	// (takes, or enqueues), Lost those it found lost: a take whose token is
	// back in the bucket, an enqueue no owner ever took. Undecided are
	// those a call of unknown outcome leaves open (linearizability.Durability).
	Acked, Lost, Undecided int
	// Extra counts writes applied more often than made, counting every
	// call of unknown outcome as applied once: a take applied twice, an
	// enqueue in two rows. No scenario allows it, lossy or not.
	Extra  int
	Detail string // the durability check's finding
	Lossy  bool   // losses are the scenario's documented limit
	// MustLose: the scenario must lose an acknowledged write (a power
	// loss under appendfsync everysec or no); a row that lost none fails.
	MustLose bool
	// Struck reports that the fault was done (a scenario with a fault
	// that never struck fails); InFlight counts the writes in flight at
	// its start (at the least struck start of a fault of several): called
	// before it, returned after it or never. A fault that found none fails
	// the row.
	Struck   bool
	InFlight int
	// After counts the calls begun once the fault was injected, AfterOK
	// those of them acknowledged; Recovery is the time from the fault's end
	// to the first such acknowledgement (0: none came).
	After, AfterOK int
	Recovery       time.Duration
	mustRecover    bool // a cluster scenario: a call after the fault must be acknowledged within ClusterRecovery
	mustStrike     bool // a scenario with a fault
	Report         linearizability.Report
	Elapsed        time.Duration
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
// is: the fault struck writes in flight; no write applied twice; no
// acknowledged write lost, except in a lossy scenario, where losses are
// measured; a linearizable history (in a lossy scenario, before the
// fault); on a cluster, a table that answers again within ClusterRecovery
// of the fault's end.
func (r Row) Failure() string {
	if f := r.broken(); f != "" {
		return f
	}
	if r.MustLose {
		// A history that lost acknowledged writes is not linearizable
		// (later reads see them undone): porcupine's verdict is reported,
		// not required.
		return ""
	}
	if r.Result != linearizability.Ok {
		if r.Lossy {
			return string(r.Result) + " before the fault"
		}
		return string(r.Result)
	}
	return ""
}

// broken is Failure but for porcupine's verdict.
func (r Row) broken() string {
	switch {
	case r.mustStrike && !r.Struck:
		return "the fault never struck"
	case r.mustStrike && r.InFlight == 0:
		return "the fault found no write in flight"
	case r.mustRecover && (r.AfterOK == 0 || r.Recovery > ClusterRecovery):
		return fmt.Sprintf("no call answered within %v of the fault", ClusterRecovery)
	case r.Extra > 0:
		return fmt.Sprintf("%d writes applied twice", r.Extra)
	case r.MustLose && r.Lost == 0:
		return "a power loss under this setting must lose an acknowledged write, and lost none"
	case !r.Lossy && !r.MustLose && r.Lost > 0:
		return fmt.Sprintf("%d acknowledged writes lost", r.Lost)
	}
	return ""
}

// Options configure Run.
type Options struct {
	Timeout      time.Duration // each call's budget (default 250 ms)
	CheckTimeout time.Duration // porcupine's budget per history (default 20 s)
	Seed         uint64
	Fault        fault.Fault // a Redis mutant (fault.None: the real tables)
	Dir          string      // where failing histories are written
	Parent       string      // where the servers' directories go
}

func (o *Options) defaults() {
	if o.Timeout == 0 {
		// Not less: on a loaded 2-core machine a call can take 100 ms with
		// no fault at all, and every call that times out is one more
		// unknown outcome for porcupine to place.
		o.Timeout = 250 * time.Millisecond
	}
	if o.CheckTimeout == 0 {
		o.CheckTimeout = 20 * time.Second
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(os.TempDir(), "tollgate-redis-check")
	}
}

// Run runs scenario s for the primitives named ("tokenbucket", "credits";
// both when empty), each on servers of its own, and returns a row each.
// With a fault, only that fault's primitive runs.
func Run(s Scenario, prims []string, o Options) ([]Row, error) {
	o.defaults()
	if len(prims) == 0 {
		prims = []string{linearizability.PrimitiveTokenBucket, linearizability.PrimitiveCredits}
	}
	var rows []Row
	for _, p := range prims {
		if o.Fault != fault.None && o.Fault.Credits() != (p == linearizability.PrimitiveCredits) {
			continue
		}
		if s.StateLost && p == linearizability.PrimitiveCredits {
			continue
		}
		r, err := runOne(s, p, o)
		if err != nil {
			return rows, fmt.Errorf("redischeck: %s, %s: %w", s.Name, p, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func runOne(s Scenario, prim string, o Options) (Row, error) {
	start := time.Now()
	row := Row{Scenario: s.Name, Primitive: prim, Lossy: s.Lossy, MustLose: s.MustLose, mustStrike: s.Name != "none"}
	e := &env{timeout: o.Timeout, calls: new(atomic.Int64), stop: make(chan struct{})}
	if s.Cluster {
		cl, err := redisserver.StartCluster(o.Parent, 3, ClusterNodeTimeout)
		if err != nil {
			return row, err
		}
		defer cl.Stop()
		e.cluster = cl
		e.target = NewClusterTarget(cl.Addrs(), o.Timeout)
	} else {
		primary, err := redisserver.Start(o.Parent, s.serverOptions()...)
		if err != nil {
			return row, err
		}
		defer primary.Stop()
		e.primary = primary
		if s.Replica {
			if e.replica, err = primary.StartReplica(); err != nil {
				return row, err
			}
			defer e.replica.Stop()
		}
		e.target = NewTarget(primary.Addr, o.Timeout)
		e.target.Wait = s.Wait
	}
	defer e.target.Close()
	defer func() {
		if e.spare != nil {
			e.spare.Stop()
		}
	}()

	var injected error
	var wg sync.WaitGroup
	m0, a0, t0 := rconn.Redirects()
	inject := func() {
		if e.cluster != nil {
			if err := e.findTable(); err != nil {
				injected = err // reported once the recording ends
				return
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			injected = s.inject(e)
			e.injected.Store(time.Now().UnixNano())
		}()
	}
	// ended waits for the fault to end (a fault's inject returns once it
	// has healed: the server resumed, restarted or writable again, the
	// replica promoted).
	ended := func(err error) error {
		close(e.stop)
		wg.Wait()
		if err == nil && injected != nil {
			err = fmt.Errorf("injecting the fault: %w", injected)
		}
		return err
	}
	name := fmt.Sprintf("redis-%s-%s-seed%d", s.Name, prim, o.Seed)
	if o.Fault != fault.None {
		name = fmt.Sprintf("redis-%s-%s-%s-seed%d", s.Name, o.Fault, prim, o.Seed)
	}
	copt := linearizability.Options{Timeout: o.CheckTimeout, Dir: o.Dir, Name: name}
	// The durability read goes through a fresh target and table handle,
	// opened once the fault has ended: no connection, fence or Wait of the
	// recording's answers it.
	var fresh *Target
	defer func() {
		if fresh != nil {
			fresh.Close()
		}
	}()
	var whole linearizability.Report
	if prim == linearizability.PrimitiveTokenBucket {
		w := linearizability.FaultTBWorkload()
		e.total = int64(w.Clients * w.OpsPerClient)
		b, done, err := e.target.TB(o.Fault)
		if err != nil {
			return row, err
		}
		defer done()
		table := e.target.lastTable()
		warm(b, model.TBInput[string]{Kind: model.TBPeek, Key: "warm", Limits: w.Limits})
		inject()
		h, err := linearizability.RecordTokenBucket(w, counted[model.TBInput[string], model.TBOutput]{b, e}, o.Seed)
		if err = ended(err); err != nil {
			return row, err
		}
		h.Mutant = mutantName(o.Fault)
		row.Struck, row.InFlight = e.struck(h.Ops)
		fresh = e.target.Fresh()
		fb, fdone, err := reopen(func() (linearizability.TBBackend, func(), error) { return fresh.OpenTB(o.Fault, table) })
		if err != nil {
			return row, err
		}
		defer fdone()
		d, err := linearizability.TBDurability(w, h, fb)
		if err != nil {
			return row, err
		}
		row.setDurability(d)
		if whole, err = linearizability.CheckTokenBucket(h, copt); err != nil {
			return row, err
		}
		row.Report = whole
		if row.Lossy && row.Struck {
			copt.Name += "-before-fault"
			if row.Report, err = linearizability.CheckTokenBucket(h.Before(e.clock.Starts()[0]), copt); err != nil {
				return row, err
			}
		}
	} else {
		w := linearizability.FaultCrWorkload()
		e.total = int64(w.Holders * w.Rounds * 3)
		b, done, err := e.target.Cr(o.Fault)
		if err != nil {
			return row, err
		}
		defer done()
		table := e.target.lastTable()
		warm(b, model.CrInput[string]{Kind: model.CrSnapshot})
		inject()
		h, err := linearizability.RecordCredits(w, counted[model.CrInput[string], model.CrOutput[string]]{b, e}, o.Seed)
		if err = ended(err); err != nil {
			return row, err
		}
		h.Mutant = mutantName(o.Fault)
		row.Struck, row.InFlight = e.struck(h.Ops)
		fresh = e.target.Fresh()
		fb, fdone, err := reopen(func() (linearizability.CrBackend, func(), error) { return fresh.OpenCr(o.Fault, table) })
		if err != nil {
			return row, err
		}
		defer fdone()
		d, err := linearizability.CrDurability(h, fb)
		if err != nil {
			return row, err
		}
		row.setDurability(d)
		if whole, err = linearizability.CheckCredits(h, copt); err != nil {
			return row, err
		}
		row.Report = whole
		if row.Lossy && row.Struck {
			copt.Name += "-before-fault"
			if row.Report, err = linearizability.CheckCredits(h.Before(e.clock.Starts()[0]), copt); err != nil {
				return row, err
			}
		}
	}
	row.After, row.AfterOK = int(e.after.Load()), int(e.afterOK.Load())
	if ok := e.firstOK.Load(); ok != 0 {
		row.Recovery = time.Duration(ok - e.injected.Load())
	}
	if row.mustStrike {
		switch {
		case !row.Struck:
			row.Detail += "; THE FAULT NEVER STRUCK (the recording ended first)"
		case row.InFlight == 0:
			row.Detail += "; THE FAULT FOUND NO WRITE IN FLIGHT"
		default:
			row.Detail += fmt.Sprintf("; %d writes in flight at the fault", row.InFlight)
		}
	}
	if row.Lossy {
		row.Whole = whole.Result
		row.Detail += fmt.Sprintf("; porcupine on the %d operations called before the fault, the whole history %s", row.Report.Ops, whole.Result)
	}
	if e.note != "" {
		row.Detail += "; " + e.note
	}
	if s.Cluster {
		m, a, t := rconn.Redirects()
		row.Detail += fmt.Sprintf("; after the fault %d of %d calls answered, the first in %v; MOVED %d, ASK %d, TRYAGAIN %d followed", row.AfterOK, row.After, row.Recovery.Round(time.Millisecond), m-m0, a-a0, t-t0)
		row.mustRecover = true
	}
	row.Ops, row.UnknownOps, row.SettledOps = row.Report.Ops, row.Report.UnknownOps, row.Report.SettledOps
	row.Result, row.Invariant = row.Report.Result, row.Report.Invariant
	row.Elapsed = time.Since(start)
	return row, nil
}

func (r *Row) setDurability(d linearizability.Durability) {
	r.Acked, r.Lost, r.Extra, r.Undecided, r.Detail = d.Acked, d.Lost, d.Extra, d.Undecided, d.Detail
}

// struck reports whether the fault struck, and the fewest writes of ops in
// flight at any of its strikes.
func (e *env) struck(ops any) (bool, int) {
	starts := e.clock.Starts()
	if len(starts) == 0 {
		return false, 0
	}
	least := -1
	for _, at := range starts {
		var n int
		switch ops := ops.(type) {
		case []linearizability.TBOp:
			n = linearizability.Spanning(ops, at)
		case []linearizability.CrOp:
			n = linearizability.Spanning(ops, at)
		}
		if least < 0 || n < least {
			least = n
		}
	}
	return true, least
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
		return b, nil, fmt.Errorf("opening the table again for the durability read: %w", err)
	}
	return b, done, nil
}

func mutantName(f fault.Fault) string {
	if f == fault.None {
		return ""
	}
	return f.String()
}

// pace is the least time a call of a fault workload takes: each client
// waits out the rest after a quicker answer, so that a recording lasts long
// enough for its faults to land inside it (about 1,000 calls a second per
// client; on loopback a call takes some 50–150 µs).
const pace = time.Millisecond

// counted counts the calls made through a backend, and those begun after
// the fault and acknowledged, and paces them.
type counted[In, Out any] struct {
	b linearizability.Backend[In, Out]
	e *env
}

// ShareStamps hands the recording's stamps to the fault's clock.
func (c counted[In, Out]) ShareStamps(ts *linearizability.Stamps) { c.e.clock.ShareStamps(ts) }

func (c counted[In, Out]) Do(client int, in In) (Out, error) {
	start := time.Now()
	c.e.calls.Add(1)
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

// findTable sets the cluster scenario's slot and owner: the slot of the
// table the target made last, and the primary serving it.
func (e *env) findTable() error {
	name := e.target.lastTable()
	slot, err := e.cluster.Primaries[0].KeySlot("{" + name + "}")
	if err != nil {
		return err
	}
	owner, _, err := e.cluster.Primaries[0].SlotOwner(slot)
	if err != nil {
		return err
	}
	for i, p := range e.cluster.Primaries {
		if p.Addr == owner {
			e.slot, e.owner = slot, i
			return nil
		}
	}
	return fmt.Errorf("table %q: slot %d is served by %s, not a primary of the cluster", name, slot, owner)
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
