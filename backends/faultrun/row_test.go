package faultrun

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// TestLossyRowsStillChecked: a lossy scenario may lose acknowledged
// writes, but not apply one twice, not be unlinearizable before the fault,
// and not skip its fault or strike no write in flight.
func TestLossyRowsStillChecked(t *testing.T) {
	ok := Row{Scenario: "failover", Lossy: true, MustStrike: true, Struck: true, InFlight: 2, Result: linearizability.Ok, Lost: 9}
	if !ok.Pass() {
		t.Fatalf("a lossy row that lost writes and nothing else: %q", ok.Failure())
	}
	for name, r := range map[string]Row{
		"extra":          {Scenario: "failover", Lossy: true, MustStrike: true, Struck: true, InFlight: 2, Result: linearizability.Ok, Extra: 1},
		"illegal before": {Scenario: "failover", Lossy: true, MustStrike: true, Struck: true, InFlight: 2, Result: linearizability.Illegal},
		"never struck":   {Scenario: "failover", Lossy: true, MustStrike: true, Result: linearizability.Ok},
		"no write":       {Scenario: "failover", Lossy: true, MustStrike: true, Struck: true, Result: linearizability.Ok},
	} {
		if r.Pass() || r.Inconclusive() {
			t.Errorf("%s: a lossy row passed", name)
		}
	}
	unknown := ok
	unknown.Result = linearizability.Unknown
	if unknown.Pass() || !unknown.Inconclusive() {
		t.Errorf("a lossy row porcupine could not decide: pass %v, inconclusive %v", unknown.Pass(), unknown.Inconclusive())
	}
}

// TestRowVerdicts: a row that is not lossy fails on any loss; a negative
// control fails when it lost nothing and passes whatever porcupine says
// when it lost; a row that must recover fails when no call was answered in
// time after the fault.
func TestRowVerdicts(t *testing.T) {
	struck := Row{Scenario: "kill", MustStrike: true, Struck: true, InFlight: 1, Result: linearizability.Ok}
	for name, c := range map[string]struct {
		r    Row
		pass bool
	}{
		"clean":                {struck, true},
		"lost":                 {with(struck, func(r *Row) { r.Lost = 1 }), false},
		"control lost nothing": {with(struck, func(r *Row) { r.MustLose = true }), false},
		"control lost":         {with(struck, func(r *Row) { r.MustLose, r.Lost, r.Result = true, 2, linearizability.Illegal }), true},
		"recovered":            {with(struck, func(r *Row) { r.RecoverWithin, r.AfterOK, r.Recovery = time.Second, 3, time.Millisecond }), true},
		"recovered late":       {with(struck, func(r *Row) { r.RecoverWithin, r.AfterOK, r.Recovery = time.Second, 3, 2*time.Second }), false},
		"never answered":       {with(struck, func(r *Row) { r.RecoverWithin = time.Second }), false},
		"baseline":             {Row{Scenario: "none", Result: linearizability.Ok}, true},
	} {
		if c.r.Pass() != c.pass {
			t.Errorf("%s: pass %v (%q), want %v", name, c.r.Pass(), c.r.Failure(), c.pass)
		}
	}
}

func with(r Row, f func(*Row)) Row {
	f(&r)
	return r
}

// TestUnboundedFails: a row that broke a bound of its own (Job.Bound)
// fails, lossy or not.
func TestUnboundedFails(t *testing.T) {
	r := Row{Scenario: "partition-failover-minreplicas", Lossy: true, MustStrike: true, Struck: true, InFlight: 1, Result: linearizability.Ok, Lost: 3}
	if !r.Pass() {
		t.Fatalf("within its bound: %q", r.Failure())
	}
	r.Unbounded = "1 lost take acknowledged 3.2 s after the cut"
	if r.Pass() || r.Failure() != r.Unbounded {
		t.Fatalf("beyond its bound: pass %v, %q", r.Pass(), r.Failure())
	}
}

// TestThrottleAndWallOf: Throttle spaces calls of all clients together,
// and WallOf places a stamp taken between two of Track's samples between
// their times.
func TestThrottleAndWallOf(t *testing.T) {
	r := NewRun()
	var ts linearizability.Stamps
	r.stamps.Store(&ts)
	r.Track()
	r.Throttle(20 * time.Millisecond)
	start := time.Now()
	for range 5 {
		r.wait()
	}
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("5 throttled calls at 20 ms began within %v", d)
	}
	r.Throttle(0)
	quick := time.Now()
	for range 5 {
		r.wait()
	}
	if d := time.Since(quick); d > 10*time.Millisecond {
		t.Errorf("unthrottled, 5 calls took %v", d)
	}
	time.Sleep(5 * time.Millisecond)
	before := time.Now()
	s := ts.Stamp()
	after := time.Now()
	time.Sleep(5 * time.Millisecond)
	if err := r.End(nil); err != nil {
		t.Fatal(err)
	}
	lo, hi, ok := r.WallOf(s)
	if !ok || lo.After(after) || hi.Before(before) || hi.Sub(lo) > 50*time.Millisecond {
		t.Errorf("a stamp taken in [%v, %v] placed in [%v, %v] (ok %v)", before.Format("05.000000"), after.Format("05.000000"), lo.Format("05.000000"), hi.Format("05.000000"), ok)
	}
	if _, _, ok := r.WallOf(ts.Stamp()); ok {
		t.Error("a stamp after the last sample was placed")
	}
}

// peeks is a backend that answers every call at once; the test's calls
// are peeks, which write nothing.
type peeks struct{}

func (peeks) Do(int, model.TBInput[string]) (model.TBOutput, error) { return model.TBOutput{}, nil }

// TestStrikeGivesUpAtTheGate: a fault waiting to strike while the calls
// find no write in flight, with Ended's gate set (a soak window's): once
// the calls reach the gate, every client waits for the fault's end, so no
// write can come; the strike gives up (the row then fails: the fault never
// struck) and the recording ends. Before, the strike waited for a write
// and the clients for the fault: a soak window hung for 16 minutes.
func TestStrikeGivesUpAtTheGate(t *testing.T) {
	r := NewRun()
	var ts linearizability.Stamps
	r.Clock.ShareStamps(&ts)
	r.Total, r.Ended, r.EndShare = 20, make(chan struct{}), 0.5
	struck := make(chan bool, 1)
	r.Inject(nil, func() error {
		struck <- r.Strike(0.1)
		return nil
	})
	c := counted[model.TBInput[string], model.TBOutput]{b: peeks{}, r: r}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range r.Total {
			if _, err := c.Do(0, model.TBInput[string]{Kind: model.TBPeek, Key: "k"}); err != nil {
				t.Error(err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the calls still wait for the fault's end, and the fault for a write to strike, after 30 s")
	}
	if err := r.End(nil); err != nil {
		t.Fatal(err)
	}
	if <-struck {
		t.Error("the fault struck with no write in flight")
	}
}

// A fault row or a soak window is run again only when its fault found no
// write in flight and nothing else is wrong with it: a loss, a write applied twice,
// a fault that never struck or an illegal history is reported as it is.
func TestOnlyMissedWrites(t *testing.T) {
	missed := Row{Scenario: "leader-pause+leader-partition", MustStrike: true, Struck: true, Result: linearizability.Ok}
	if !OnlyMissedWrites(missed) {
		t.Errorf("%+v: a fault that found no write in flight, nothing else wrong, is not injected again", missed)
	}
	for name, r := range map[string]Row{
		"passed":       {Scenario: "kill", MustStrike: true, Struck: true, InFlight: 2, Result: linearizability.Ok},
		"lost":         {Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Ok, Lost: 1},
		"twice":        {Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Ok, Extra: 1},
		"never struck": {Scenario: "kill", MustStrike: true, Result: linearizability.Ok},
		"illegal":      {Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Illegal},
	} {
		if OnlyMissedWrites(r) {
			t.Errorf("%s: %+v would be injected again, hiding %q", name, r, r.Failure())
		}
	}
}

// TestRowsInjectAgain: Rows runs a row again while its fault found no write
// in flight and nothing else is wrong, at most StrikeTries times in all,
// says so in the row, and never runs again a row that passed or failed
// otherwise.
func TestRowsInjectAgain(t *testing.T) {
	ok := Row{Scenario: "kill", MustStrike: true, Struck: true, InFlight: 2, Result: linearizability.Ok}
	missed := Row{Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Ok}
	lost := Row{Scenario: "kill", MustStrike: true, Struck: true, InFlight: 1, Result: linearizability.Ok, Lost: 1}
	for _, c := range []struct {
		name  string
		tries []Row
		runs  int
		pass  bool
		again bool
	}{
		{"passed at once", []Row{ok}, 1, true, false},
		{"a loss at once", []Row{lost, ok}, 1, false, false},
		{"missed, then passed", []Row{missed, ok}, 2, true, true},
		{"missed, then a loss", []Row{missed, lost, ok}, 2, false, true},
		{"missed every time", []Row{missed, missed, missed, ok}, StrikeTries, false, true},
	} {
		runs := 0
		rows, err := Rows("w", "kill", []string{linearizability.PrimitiveCredits}, func(string) bool { return true }, func(string) (Row, error) {
			runs++
			return c.tries[runs-1], nil
		})
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: %v, %d rows", c.name, err, len(rows))
		}
		r := rows[0]
		if runs != c.runs || r.Pass() != c.pass || strings.Contains(r.Detail, "injected again") != c.again {
			t.Errorf("%s: %d runs, pass %v, detail %q; want %d runs, pass %v, said again %v", c.name, runs, r.Pass(), r.Detail, c.runs, c.pass, c.again)
		}
	}
}
