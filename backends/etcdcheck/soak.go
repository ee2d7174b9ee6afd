package etcdcheck

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/backends/faultrun"
)

// The soak's faults (faultrun.Draw draws a window's from a seed): the
// fault table's, each on one member, and two of them overlapping on two
// different members, which may leave the cluster without a majority while
// they overlap (the calls then wait, unknown, or fail); and the loss of
// the answers of committed writes (answerloss.go). Every one is a fault
// etcd and the tables promise to survive, so every window is held to the
// whole promise: linearizable, no acknowledged write lost or applied
// twice, every fault struck a write in flight, and the table answers again
// within Recovery of the end. A member replacement is drawn alone (it
// needs a majority for each of its two changes).

// soakAtom is an Atom and what it does to a member: which picks it,
// among the members not in busy (those another fault of the window holds;
// −1 for a fault on no member), do and undo act, and told, if not nil,
// says what the fault did once undone. A fault that acts in steps stamps
// its strike itself (own), at the step that does the harm; any other is
// stamped when do begins.
type soakAtom struct {
	faultrun.Atom
	which    func(e *env, busy map[int]bool) (int, error)
	do, undo func(e *env, i int) error
	told     func(e *env) string
	own      bool
}

func holds(lo, hi time.Duration) [2]time.Duration { return [2]time.Duration{lo, hi} }

var etcdAtoms = []soakAtom{
	{faultrun.Atom{Name: "leader-kill", Hold: holds(500*time.Millisecond, 3*time.Second), On: "leader-process"}, leaderOf,
		func(e *env, i int) error { return e.cluster.Kill(i) }, func(e *env, i int) error { return e.cluster.Restart(i) }, nil, false},
	{faultrun.Atom{Name: "follower-kill", Hold: holds(500*time.Millisecond, 3*time.Second), On: "follower-process"}, followerOf,
		func(e *env, i int) error { return e.cluster.Kill(i) }, func(e *env, i int) error { return e.cluster.Restart(i) }, nil, false},
	{faultrun.Atom{Name: "leader-pause", Hold: holds(500*time.Millisecond, 3*time.Second), On: "leader-cpu"}, leaderOf,
		func(e *env, i int) error { return e.cluster.Pause(i) }, func(e *env, i int) error { return e.cluster.Resume(i) }, nil, false},
	{faultrun.Atom{Name: "leader-partition", Hold: holds(500*time.Millisecond, 3*time.Second), On: "leader-network"}, leaderOf,
		func(e *env, i int) error { return e.cluster.Isolate(i) }, func(e *env, i int) error { return e.cluster.Heal() }, nil, false},
	{faultrun.Atom{Name: "member-replace", On: "membership", Single: true}, followerOf,
		func(e *env, i int) error { return e.cluster.RemoveMember(i) }, func(e *env, i int) error { _, err := e.cluster.AddMember(); return err }, nil, false},
	// Held shorter than a call's time-out (the soak's is 250 ms), so that
	// the calls whose answers were dropped still wait when they learn it
	// (answerloss.go).
	{faultrun.Atom{Name: "answer-loss", Hold: holds(100*time.Millisecond, 200*time.Millisecond), On: "client-network", Single: true},
		func(*env, map[int]bool) (int, error) { return -1, nil },
		func(e *env, _ int) error { return e.links.deafen() }, func(e *env, _ int) error { return e.links.lose(e.Run) },
		func(e *env) string { return e.links.told() }, true},
}

// leaderOf picks the leader, waiting up to Recovery for one that no other
// fault holds (while the old leader is paused or cut off, the others elect
// one of their own).
func leaderOf(e *env, busy map[int]bool) (int, error) {
	deadline := time.Now().Add(Recovery)
	for {
		l, err := e.leader()
		if err == nil && !busy[l] {
			return l, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("the leader is member %d, which another fault holds", l)
			}
			return 0, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// followerOf picks a member that is neither the leader nor held by another
// fault.
func followerOf(e *env, busy map[int]bool) (int, error) {
	l, err := leaderOf(e, busy)
	if err != nil {
		return 0, err
	}
	for _, i := range e.cluster.Members() {
		if i != l && !busy[i] {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no follower free of the window's other fault")
}

// SoakAtoms are the faults an etcd soak draws from.
func SoakAtoms() []faultrun.Atom {
	var as []faultrun.Atom
	for _, a := range etcdAtoms {
		as = append(as, a.Atom)
	}
	return as
}

// soakEnd: the calls between the first strike and this share of them are
// spread over the faults' span (faultrun.Run.PaceFaults); the calls past
// endShare wait for the faults' end.
const soakEnd = 0.5

// SoakScenario is the scenario of window w: its faults struck and held as
// planned, the first at its share of the calls, the second After the
// first's strike, on another member, while the first holds.
func SoakScenario(w faultrun.Window) (Scenario, error) {
	acts, err := faultrun.Steps("etcdcheck", w, etcdAtoms, func(a soakAtom) faultrun.Atom { return a.Atom })
	if err != nil {
		return Scenario{}, err
	}
	s := Scenario{Name: w.Name(), What: w.String()}
	for _, a := range acts {
		s.clientLinks = s.clientLinks || a.Name == "answer-loss"
	}
	s.inject = func(e *env) error {
		if !e.At(w.Steps[0].Share) {
			return nil
		}
		end := e.PaceFaults(w.Span(), w.Steps[0].Share, soakEnd)
		defer end()
		var (
			mu    sync.Mutex
			busy  = map[int]bool{}
			notes []string
		)
		note := func(format string, args ...any) {
			mu.Lock()
			notes = append(notes, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		err := e.Overlap(w, func(k int, st faultrun.Step, struck func()) error {
			a := acts[k]
			mu.Lock()
			taken := maps.Clone(busy)
			mu.Unlock()
			i, err := a.which(e, taken)
			if err != nil {
				if k == 0 {
					return err
				}
				// The second fault found no member free of the first
				// (the leader it wants is the one the first holds): the
				// window runs on with the first alone, and says so.
				note("%s found no member to strike (%v)", st.Fault, err)
				return nil
			}
			mu.Lock()
			busy[i] = true
			mu.Unlock()
			defer func() {
				mu.Lock()
				delete(busy, i)
				mu.Unlock()
			}()
			// The member is chosen first: the fault acts at once after the
			// strike, while the write it found is still in flight.
			wait := e.StrikeNow
			if a.own {
				wait = e.AwaitWrite
			}
			if !wait() {
				return nil
			}
			e.faulting.Store(true)
			if err := a.do(e, i); err != nil {
				return err
			}
			if i >= 0 {
				note("%s struck member %d", st.Fault, i)
			}
			struck()
			e.hold(st.Hold)
			if err := a.undo(e, i); err != nil {
				return err
			}
			if a.told != nil {
				note("%s", a.told(e))
			}
			return nil
		})
		defer e.faulting.Store(false)
		e.Note = strings.Join(notes, "; ")
		if err != nil {
			return err
		}
		return e.healed()
	}
	return s, nil
}

// RunWindow runs soak window w on a cluster of its own and returns its
// row.
func RunWindow(w faultrun.Window, o Options) (Row, error) {
	s, err := SoakScenario(w)
	if err != nil {
		return Row{}, err
	}
	o.Seed = w.Seed
	o.Defaults(2*time.Second, "tollgate-etcd-check")
	row, err := runOne(s, w.Primitive, o)
	if err != nil {
		return row, fmt.Errorf("etcdcheck: %s: %w", w, err)
	}
	return row, nil
}
