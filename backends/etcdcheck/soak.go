package etcdcheck

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/backends/faultrun"
)

// The soak's faults (faultrun.Draw draws a window's from a seed): the
// fault table's, each on one member, and two of them overlapping on two
// different members, which may leave the cluster without a majority while
// they overlap (the calls then wait, unknown, or fail). Every one is a
// fault etcd promises to survive, so every window is held to the whole
// promise: linearizable, no acknowledged write lost or applied twice,
// every fault struck a write in flight, and the table answers again
// within Recovery of the end. A member replacement is drawn alone (it
// needs a majority for each of its two changes).

// soakAtom is an Atom and what it does to a member: which picks it,
// among the members not in busy (those another fault of the window holds),
// do and undo act.
type soakAtom struct {
	faultrun.Atom
	which    func(e *env, busy map[int]bool) (int, error)
	do, undo func(e *env, i int) error
}

func holds(lo, hi time.Duration) [2]time.Duration { return [2]time.Duration{lo, hi} }

var etcdAtoms = []soakAtom{
	{faultrun.Atom{Name: "leader-kill", Hold: holds(500*time.Millisecond, 3*time.Second), On: "leader-process"}, leaderOf,
		func(e *env, i int) error { return e.cluster.Kill(i) }, func(e *env, i int) error { return e.cluster.Restart(i) }},
	{faultrun.Atom{Name: "follower-kill", Hold: holds(500*time.Millisecond, 3*time.Second), On: "follower-process"}, followerOf,
		func(e *env, i int) error { return e.cluster.Kill(i) }, func(e *env, i int) error { return e.cluster.Restart(i) }},
	{faultrun.Atom{Name: "leader-pause", Hold: holds(500*time.Millisecond, 3*time.Second), On: "leader-cpu"}, leaderOf,
		func(e *env, i int) error { return e.cluster.Pause(i) }, func(e *env, i int) error { return e.cluster.Resume(i) }},
	{faultrun.Atom{Name: "leader-partition", Hold: holds(500*time.Millisecond, 3*time.Second), On: "leader-network"}, leaderOf,
		func(e *env, i int) error { return e.cluster.Isolate(i) }, func(e *env, i int) error { return e.cluster.Heal() }},
	{faultrun.Atom{Name: "member-replace", On: "membership", Single: true}, followerOf,
		func(e *env, i int) error { return e.cluster.RemoveMember(i) }, func(e *env, i int) error { _, err := e.cluster.AddMember(); return err }},
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
	byName := map[string]soakAtom{}
	for _, a := range etcdAtoms {
		byName[a.Name] = a
	}
	var acts []soakAtom
	for _, st := range w.Steps {
		a, ok := byName[st.Fault]
		if !ok {
			return Scenario{}, fmt.Errorf("etcdcheck: soak window %d: no fault %q", w.Index, st.Fault)
		}
		acts = append(acts, a)
	}
	if len(acts) == 0 {
		return Scenario{}, fmt.Errorf("etcdcheck: soak window %d has no fault", w.Index)
	}
	s := Scenario{Name: w.Name(), What: w.String()}
	s.inject = func(e *env) error {
		first := w.Steps[0]
		if !e.At(first.Share) {
			return nil
		}
		end := e.PaceFaults(w.Span(), first.Share, soakEnd)
		defer end()
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			busy   = map[int]bool{}
			errs   []string
			notes  []string
			struck = make(chan struct{})
			once   sync.Once
		)
		fail := func(st faultrun.Step, err error) {
			mu.Lock()
			errs = append(errs, st.Fault+": "+err.Error())
			mu.Unlock()
		}
		do := func(a soakAtom, st faultrun.Step, signal bool) {
			defer wg.Done()
			if signal {
				defer once.Do(func() { close(struck) })
			}
			mu.Lock()
			taken := map[int]bool{}
			for k, v := range busy {
				taken[k] = v
			}
			mu.Unlock()
			i, err := a.which(e, taken)
			if err != nil {
				if signal {
					fail(st, err)
					return
				}
				// The second fault found no member free of the first
				// (the leader it wants is the one the first holds): the
				// window runs on with the first alone, and says so.
				mu.Lock()
				notes = append(notes, fmt.Sprintf("%s found no member to strike (%v)", st.Fault, err))
				mu.Unlock()
				return
			}
			mu.Lock()
			busy[i] = true
			mu.Unlock()
			// The member is chosen first: the fault acts at once after the
			// strike, while the write it found is still in flight.
			if !e.Clock.Strike(e.Stop) {
				return
			}
			e.faulting.Store(true)
			if err := a.do(e, i); err != nil {
				fail(st, err)
				return
			}
			mu.Lock()
			notes = append(notes, fmt.Sprintf("%s struck member %d", st.Fault, i))
			mu.Unlock()
			if signal {
				once.Do(func() { close(struck) })
			}
			e.hold(st.Hold)
			if err := a.undo(e, i); err != nil {
				fail(st, err)
			}
			mu.Lock()
			delete(busy, i)
			mu.Unlock()
		}
		wg.Add(1)
		go do(acts[0], first, true)
		if len(w.Steps) > 1 {
			select {
			case <-struck:
				time.Sleep(w.Steps[1].After)
				wg.Add(1)
				go do(acts[1], w.Steps[1], false)
			case <-e.Stop:
			}
		}
		wg.Wait()
		defer e.faulting.Store(false)
		e.Note = strings.Join(notes, "; ")
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
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
