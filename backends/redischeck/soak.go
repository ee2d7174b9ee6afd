package redischeck

import (
	"fmt"
	"strings"
	"time"

	"github.com/tollgate/tollgate/backends/faultrun"
)

// The soak's faults (faultrun.Draw draws a window's from a seed). On one
// server, each window runs on a primary with the AOF fsynced on every
// write and a replica behind a proxy of its own, so that any two faults
// on different things can overlap: a partition during a pause, a crash
// during a partition. Every one of them is a fault the backend promises to
// survive, so every window is held to the whole promise: linearizable, no
// acknowledged write lost or applied twice, and every fault struck a write
// in flight. The lossy faults (a failover while the old primary takes
// writes) are the fault table's rows, measured there; a soak would only
// measure them again.
//
// On a Redis Cluster, the slot's faults (a reshard, a coordinated
// failover) may overlap a pause of a primary that serves neither end of
// them, shorter than the node timeout; the table must answer again within
// 10 node timeouts (Scenario.clusterRecovery).

// soakAtom is an Atom and what it does: act strikes (strike, once its
// target is chosen, at once before it acts) and holds the fault for hold,
// then undoes it and returns once it has healed.
type soakAtom struct {
	faultrun.Atom
	act func(e *env, hold time.Duration, strike func() bool) error
}

var serverAtoms = []soakAtom{
	{faultrun.Atom{Name: "pause", Hold: [2]time.Duration{250 * time.Millisecond, 1500 * time.Millisecond}, On: "primary"},
		func(e *env, hold time.Duration, strike func() bool) error {
			if !strike() {
				return nil
			}
			if err := e.primary.Pause(); err != nil {
				return err
			}
			time.Sleep(hold)
			return e.primary.Resume()
		}},
	{faultrun.Atom{Name: "crash", Hold: [2]time.Duration{100 * time.Millisecond, time.Second}, On: "primary"},
		func(e *env, hold time.Duration, strike func() bool) error {
			if !strike() {
				return nil
			}
			if err := e.primary.Crash(); err != nil {
				return err
			}
			time.Sleep(hold)
			return e.primary.Restart()
		}},
	{faultrun.Atom{Name: "client-pause", Hold: [2]time.Duration{250 * time.Millisecond, 1500 * time.Millisecond}, On: "primary"},
		func(e *env, hold time.Duration, strike func() bool) error {
			if !strike() {
				return nil
			}
			if err := e.primary.PauseWrites(hold); err != nil {
				return err
			}
			time.Sleep(hold)
			return e.primary.WaitWritable(hold + 10*e.timeout)
		}},
	{faultrun.Atom{Name: "partition", Hold: [2]time.Duration{500 * time.Millisecond, 3 * time.Second}, On: "link"},
		func(e *env, hold time.Duration, strike func() bool) error {
			if !strike() {
				return nil
			}
			if err := e.replica.Partition(); err != nil {
				return err
			}
			time.Sleep(hold)
			return e.replica.Heal()
		}},
	{faultrun.Atom{Name: "replica-pause", Hold: [2]time.Duration{250 * time.Millisecond, 2 * time.Second}, On: "replica"},
		func(e *env, hold time.Duration, strike func() bool) error {
			if !strike() {
				return nil
			}
			if err := e.replica.Pause(); err != nil {
				return err
			}
			time.Sleep(hold)
			return e.replica.Resume()
		}},
}

var clusterAtoms = []soakAtom{
	{faultrun.Atom{Name: "cluster-reshard", Hold: [2]time.Duration{0, time.Second}, On: "slot"},
		func(e *env, hold time.Duration, strike func() bool) error {
			from := e.cluster.Primaries[e.owner]
			to := e.cluster.Primaries[(e.owner+1)%len(e.cluster.Primaries)]
			if !strike() {
				return nil
			}
			if err := e.cluster.MoveSlot(e.slot, to, 1, 20*time.Millisecond); err != nil {
				return err
			}
			time.Sleep(hold)
			return e.cluster.MoveSlot(e.slot, from, 1, 20*time.Millisecond)
		}},
	{faultrun.Atom{Name: "cluster-failover", Hold: [2]time.Duration{0, time.Second}, On: "slot"},
		func(e *env, hold time.Duration, strike func() bool) error {
			if !strike() {
				return nil
			}
			if _, err := e.cluster.Replicas[e.owner].Query("CLUSTER", "FAILOVER"); err != nil {
				return err
			}
			if err := e.promoted(); err != nil {
				return err
			}
			time.Sleep(hold)
			return nil
		}},
	// The third primary serves neither the table's slot nor a reshard's
	// other end; stopped for less than half the node timeout, it is not
	// failed over.
	{faultrun.Atom{Name: "pause-other", Hold: [2]time.Duration{100 * time.Millisecond, ClusterNodeTimeout / 2}, On: "other"},
		func(e *env, hold time.Duration, strike func() bool) error {
			p := e.cluster.Primaries[(e.owner+2)%len(e.cluster.Primaries)]
			if !strike() {
				return nil
			}
			if err := p.Pause(); err != nil {
				return err
			}
			time.Sleep(hold)
			return p.Resume()
		}},
}

func soakAtoms(cluster bool) []soakAtom {
	if cluster {
		return clusterAtoms
	}
	return serverAtoms
}

// SoakAtoms are the faults a soak draws from, on one server or on a
// Redis Cluster.
func SoakAtoms(cluster bool) []faultrun.Atom {
	var as []faultrun.Atom
	for _, a := range soakAtoms(cluster) {
		as = append(as, a.Atom)
	}
	return as
}

// soakEnd is the share of the calls by which a window's faults should be
// over: the calls between the first strike and it are spread over the
// faults' span (faultrun.Run.PaceFaults), the calls past soakGate wait for
// the faults' end.
const (
	soakEnd  = 0.7
	soakGate = 0.85
)

// SoakScenario is the scenario of window w on one server, or on a Redis
// Cluster: its faults struck and held as planned, the first at its share
// of the calls, the second After the first's strike while it holds.
func SoakScenario(w faultrun.Window, cluster bool) (Scenario, error) {
	acts, err := faultrun.Steps("redischeck", w, soakAtoms(cluster), func(a soakAtom) faultrun.Atom { return a.Atom })
	if err != nil {
		return Scenario{}, err
	}
	var what []string
	for _, st := range w.Steps {
		what = append(what, st.Fault)
	}
	s := Scenario{Name: w.Name(), What: w.String(), Cluster: cluster, failsOver: cluster, endShare: soakGate}
	if !cluster {
		s.AOF, s.Replica, s.Proxied = true, true, true
	}
	s.inject = func(e *env) error {
		if !e.At(w.Steps[0].Share) {
			return nil
		}
		end := e.PaceFaults(w.Span(), w.Steps[0].Share, soakEnd)
		defer end()
		err := e.Overlap(w, func(i int, st faultrun.Step, struck func()) error {
			return acts[i].act(e, st.Hold, func() bool {
				ok := e.StrikeNow()
				struck()
				return ok
			})
		})
		if err != nil {
			return err
		}
		e.Note = "faults: " + strings.Join(what, " and ")
		if !cluster {
			// Every fault healed: the replica catches up (a crash restarted
			// the primary with a new replication id: a full resync).
			return e.replica.WaitReplicated(e.primary, 30*time.Second)
		}
		return nil
	}
	return s, nil
}

// RunWindow runs soak window w on servers of its own (one server with a
// replica, or a Redis Cluster) and returns its row.
func RunWindow(w faultrun.Window, cluster bool, o Options) (Row, error) {
	return runWindow(w, cluster, o, nil)
}

// runWindow is RunWindow, its scenario changed by tweak if not nil (a
// test's broken server).
func runWindow(w faultrun.Window, cluster bool, o Options, tweak func(*Scenario)) (Row, error) {
	s, err := SoakScenario(w, cluster)
	if err != nil {
		return Row{}, err
	}
	if tweak != nil {
		tweak(&s)
	}
	o.Seed = w.Seed
	o.Defaults(250*time.Millisecond, "tollgate-redis-check")
	row, err := runOne(s, w.Primitive, o)
	if err != nil {
		return row, fmt.Errorf("redischeck: %s: %w", w, err)
	}
	return row, nil
}
