package redischeck

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// The partition scenarios: the replica reaches its primary through a proxy
// of its own (redisserver.ThroughProxy), and at 30% of the calls the link
// between them is cut both ways (redisserver.Partition): every byte is
// held and no connection closed, as when the network drops their packets,
// so neither side is told. The clients stay on the primary's side until
// the failover rows move them to the replica, promoted on its side at the
// cut.
//
//   - partition: no promotion; the cut heals after PartitionCut and the
//     replica catches up. The primary keeps every write: linearizable,
//     nothing lost.
//   - partition-failover: the replica promoted at the cut while the
//     clients go on writing to the cut-off primary for PartitionHold,
//     then moved: every write the old primary acknowledged after the cut
//     (and any it had not yet sent) is lost. The limit, measured.
//   - partition-failover-minreplicas: as partition-failover, the primary
//     started with min-replicas-to-write 1 and min-replicas-max-lag
//     PartitionLag: it refuses writes (NOREPLICAS, a refusal that ran
//     nothing: never unknown) once its replica's acknowledgements are
//     older than that, so only writes acknowledged within
//     redisserver.MinReplicasBound(PartitionLag) of the cut may be lost.
//     The row holds it to that bound (partitionBound).
//   - partition-failover-wait: as partition-failover, every call followed
//     by WAIT 1 (Target.Wait), the clients on the cut-off primary for
//     PartitionWaitHold: a call whose WAIT times out across the cut
//     is unknown, never failed; linearizable, nothing acknowledged lost.
func partitionScenarios() []Scenario {
	hold := fmt.Sprintf("clients go on writing to the cut-off primary for %v, then move to the replica", PartitionHold)
	return []Scenario{
		{Name: "partition", What: fmt.Sprintf("the replica's link to the primary (through a proxy) cut both ways at 30%% of the calls, packets held, no promotion; healed after %v, the replica catches up", PartitionCut),
			Replica: true, Proxied: true, inject: partition},
		{Name: "partition-failover", What: "the replica's link cut both ways at 30% of the calls and the replica promoted on its side (REPLICAOF NO ONE); " + hold + ": what the cut-off primary acknowledges is lost",
			Replica: true, Proxied: true, Lossy: true, cutOff: true, inject: partitionFailover},
		{Name: "partition-failover-minreplicas", What: fmt.Sprintf("as partition-failover, the primary with min-replicas-to-write 1, min-replicas-max-lag %v: it refuses writes (NOREPLICAS) once the replica's acknowledgements are that old, so no write acknowledged later than %v after the cut may be lost", PartitionLag, redisserver.MinReplicasBound(PartitionLag)),
			Replica: true, Proxied: true, MinReplicas: true, Lossy: true, cutOff: true, inject: partitionFailover},
		{Name: "partition-failover-wait", What: fmt.Sprintf("as partition-failover, every call followed by WAIT 1 (a call the replica did not acknowledge is unknown), the clients on the cut-off primary for %v", PartitionWaitHold),
			Replica: true, Proxied: true, Wait: 1, cutOff: true, hold: PartitionWaitHold, inject: partitionFailover},
	}
}

const (
	// PartitionLag is min-replicas-max-lag in partition-failover-minreplicas.
	PartitionLag = time.Second
	// PartitionHold is how long the failover rows keep their clients on
	// the cut-off primary: a second longer than MinReplicasBound of
	// PartitionLag, so that the refusal lands inside it.
	PartitionHold = 4 * time.Second
	// PartitionWaitHold is PartitionHold of partition-failover-wait:
	// every call on the cut-off primary waits out its WAIT and is unknown,
	// and a credit history with 80 of them (a 4 s hold) was more than
	// porcupine could decide in a minute on a loaded machine; there is no
	// refusal to wait for.
	PartitionWaitHold = time.Second
	// PartitionCut is how long the partition row's cut lasts.
	PartitionCut = 2 * time.Second
	// probeEvery is how often the old primary is asked to take a write
	// while it is cut off, to time its refusal.
	probeEvery = 10 * time.Millisecond
)

// partitionShare is the share of the expected calls made during a cut:
// the calls are throttled so that they spread over it (faultrun.Throttle).
const partitionShare = 0.4

// cutOff is what the old primary did while the partition held its
// clients: measured on the server itself.
type cutOff struct {
	hold     time.Duration // how long the clients stay on the cut-off primary
	at       time.Time     // the cut
	bound    time.Duration // the min-replicas bound (0: none)
	refused  time.Duration // when it first refused a write (NOREPLICAS) after the cut (0: never)
	ran      int64         // write functions (FCALL) it ran after the cut
	late     int64         // of them after readAt
	readAt   time.Duration // when, after the cut, the count at the bound was read
	rejected int64         // write functions it refused (NOREPLICAS)
	measured bool
}

// partition cuts the replica's link, holds it for PartitionCut and heals
// it, then waits until the replica has caught up with the primary.
func partition(e *env) error {
	if !e.Strike(0.3) {
		return nil
	}
	if err := e.replica.Partition(); err != nil {
		return err
	}
	e.Throttle(PartitionCut / time.Duration(partitionShare*float64(e.Total)))
	time.Sleep(PartitionCut)
	e.Throttle(0)
	if err := e.replica.Heal(); err != nil {
		return err
	}
	if err := e.replica.WaitReplicated(e.primary, 20*time.Second); err != nil {
		return err
	}
	e.Note = fmt.Sprintf("cut for %v; healed, the replica caught up", PartitionCut)
	return nil
}

// partitionFailover cuts the replica's link, promotes the replica on its
// side, keeps the clients on the old primary for the row's hold while
// measuring what it runs and refuses, then moves them to the new primary
// and heals the link (the old primary then only learns its replica left).
func partitionFailover(e *env) error {
	e.Track() // from the start: a take lost at the cut returned before it
	if !e.Strike(0.3) {
		return nil
	}
	if err := e.replica.Partition(); err != nil {
		return err
	}
	e.cut.at = time.Now()
	before, err := fcalls(e.primary)
	if err != nil {
		return err
	}
	if err := e.replica.Promote(); err != nil {
		return err
	}
	e.Throttle(e.cut.hold / time.Duration(partitionShare*float64(e.Total)))
	if e.target.Wait > 0 {
		// WAIT 1 on the new primary needs a replica of its own.
		r, err := e.replica.StartReplica()
		if err != nil {
			return err
		}
		e.spare = r
	}
	refused := firstRefusal(e.primary, "tollgate:probe", "NOREPLICAS", e.cut.at, e.cut.at.Add(e.cut.hold))
	var atBound calls
	if e.cut.bound > 0 {
		// Read at the bound (when exactly, noted: a loaded machine may
		// read it late, and the count is then of calls after that).
		time.Sleep(time.Until(e.cut.at.Add(e.cut.bound)))
		if atBound, err = fcalls(e.primary); err != nil {
			return err
		}
		e.cut.readAt = time.Since(e.cut.at)
	}
	time.Sleep(time.Until(e.cut.at.Add(e.cut.hold)))
	e.Throttle(0)
	e.target.SetAddr(e.replica.Addr)
	// The clients' connections to the old primary are closed; a command
	// it had read before the close may still run: its count is read a
	// moment later.
	time.Sleep(50 * time.Millisecond)
	after, err := fcalls(e.primary)
	if err != nil {
		return err
	}
	e.cut.refused = refused()
	e.cut.ran, e.cut.rejected = after.calls-before.calls, after.rejected-before.rejected
	if e.cut.bound > 0 {
		e.cut.late = after.calls - atBound.calls
	}
	e.cut.measured = true
	e.Note = e.cut.String()
	return e.replica.Heal()
}

func (c cutOff) String() string {
	s := fmt.Sprintf("the cut-off primary ran %d write calls after the cut", c.ran)
	if c.bound > 0 {
		s += fmt.Sprintf(" (%d later than %v after it, its count read at the bound %v)", c.late, c.readAt.Round(time.Millisecond), c.bound)
	}
	s += fmt.Sprintf(" and refused %d (NOREPLICAS: not run, so not recorded, never unknown)", c.rejected)
	if c.refused > 0 {
		s += fmt.Sprintf("; it refused writes from %v after the cut", c.refused.Round(time.Millisecond))
	} else {
		s += "; it never refused a write"
	}
	return s
}

// calls is a server's count of write functions run and refused.
type calls struct{ calls, rejected int64 }

// fcalls reads s's count of FCALLs run and refused (INFO commandstats;
// FCALL_RO, the tables' reads, is counted apart).
func fcalls(s *redisserver.Server) (calls, error) {
	info, err := s.Info("commandstats")
	if err != nil {
		return calls{}, fmt.Errorf("INFO commandstats: %w", err)
	}
	var c calls
	for _, f := range strings.Split(info["cmdstat_fcall"], ",") {
		k, v, _ := strings.Cut(f, "=")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "calls":
			c.calls = n
		case "rejected_calls":
			c.rejected = n
		}
	}
	return c, nil
}

// firstRefusal asks s to take a write (SET key) every probeEvery until
// it refuses one with an error that contains refusal (NOREPLICAS,
// CLUSTERDOWN) or until is reached, in the background; the function
// returned waits for it and says when, after from, the first refusal
// came (0: none came).
func firstRefusal(s *redisserver.Server, key, refusal string, from, until time.Time) func() time.Duration {
	var (
		mu      sync.Mutex
		refused time.Duration
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		for time.Now().Before(until) {
			if _, err := s.Query("SET", key, "1"); err != nil && strings.Contains(err.Error(), refusal) {
				mu.Lock()
				refused = time.Since(from)
				mu.Unlock()
				return
			}
			time.Sleep(probeEvery)
		}
	}()
	return func() time.Duration {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return refused
	}
}

// partitionBound is the failover rows' own check (faultrun.Job.Bound):
// when were the lost writes acknowledged, and, under min-replicas, did the
// cut-off primary hold to its bound. On the server: it ran no write call
// after the bound (its own count of FCALLs run, read at the bound, when
// exactly noted, and again at the move), and it refused a write
// (NOREPLICAS) while cut off. In the history: each lost take on a key of
// its own (found by reading its key) was acknowledged no later than the
// bound after the cut, by the wall clock (faultrun.Run.WallOf, to a
// millisecond or two). The credit table's losses are not placed one by
// one; the server's count covers them, since every acknowledged write the
// failover loses was run by the cut-off primary.
func partitionBound[In, Out any](e *env, ops []linearizability.Op[In, Out], read linearizability.Backend[In, Out]) (found, broken string, err error) {
	if !e.cut.measured {
		return "the cut-off primary was not measured", "", nil
	}
	var breaks []string
	if b := e.cut.bound; b > 0 {
		if e.cut.late > 0 {
			breaks = append(breaks, fmt.Sprintf("the cut-off primary ran %d write calls later than %v after the cut", e.cut.late, e.cut.readAt.Round(time.Millisecond)))
		}
		if e.cut.readAt > b+time.Second {
			breaks = append(breaks, fmt.Sprintf("the cut-off primary's count at the bound %v was read only %v after the cut", b, e.cut.readAt.Round(time.Millisecond)))
		}
		if e.cut.refused == 0 {
			breaks = append(breaks, fmt.Sprintf("the cut-off primary never refused a write in the %v it was cut off", e.cut.hold))
		}
	}
	if tb, ok := any(ops).([]linearizability.TBOp); ok {
		lost, first, last, err := lostTakes(e, tb, any(read).(linearizability.TBBackend))
		if err != nil {
			return "", "", err
		}
		if lost > 0 {
			found = fmt.Sprintf("%d lost takes on keys of their own, acknowledged from %v to %v after the cut", lost, first.Round(time.Millisecond), last.Round(time.Millisecond))
		} else {
			found = "no take on a key of its own lost"
		}
		if b := e.cut.bound; b > 0 && lost > 0 && last > b {
			breaks = append(breaks, fmt.Sprintf("a lost take was acknowledged %v after the cut, later than the bound %v", last.Round(time.Millisecond), b))
		}
	}
	return found, strings.Join(breaks, "; "), nil
}

// lostTakes reads the key of every acknowledged take on a key of its own
// and returns how many did not apply, and the earliest and latest any of
// them was acknowledged relative to the cut (the latest an upper bound).
func lostTakes(e *env, ops []linearizability.TBOp, read linearizability.TBBackend) (lost int, first, last time.Duration, err error) {
	w := linearizability.FaultTBWorkload()
	shared := map[string]bool{}
	for k := range w.Keys {
		shared[fmt.Sprintf("k%d", k)] = true
	}
	for _, op := range ops {
		if op.Input.Kind != model.TBTake || shared[op.Input.Key] || op.Unknown || !op.Output.OK {
			continue
		}
		out, err := linearizability.Known(read, model.TBInput[string]{Kind: model.TBPeek, Key: op.Input.Key, Limits: w.Limits, NowMs: w.StartMs})
		if err != nil {
			return 0, 0, 0, err
		}
		if out.Tokens < w.Limits.Capacity {
			continue // applied
		}
		lo, hi, ok := e.WallOf(op.Return)
		if !ok {
			return 0, 0, 0, fmt.Errorf("the lost take on %s returned outside the tracked time", op.Input.Key)
		}
		from, to := lo.Sub(e.cut.at), hi.Sub(e.cut.at)
		if lost == 0 || from < first {
			first = from
		}
		if lost == 0 || to > last {
			last = to
		}
		lost++
	}
	return lost, first, last, nil
}
