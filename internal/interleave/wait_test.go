package interleave

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// TestWaitOpsChecked: a wait runs an admit's input, every wait of a
// scenario starts at one clock, and only the in-memory table has Wait.
func TestWaitOpsChecked(t *testing.T) {
	base := TokenBucketScenario("w", "", nil, nil,
		[]model.TBInput[string]{tbAdmit("k", 2, 1)}, []model.TBInput[string]{tbTake("k", 1, 2), tbAdmit("k", 2, 2)})
	for _, tc := range []struct {
		s    Scenario
		r    *Remote
		want string // "" when the program builds
	}{
		{base.WaitOps([2]int{0, 0}), nil, ""},
		{base.WaitOps([2]int{1, 0}), nil, "a wait runs an admit's input"},
		{base.WaitOps([2]int{1, 2}), nil, "no such operation"},
		{base.WaitOps([2]int{0, 0}, [2]int{1, 1}), nil, "the table has one clock"},
		{base.WaitOps([2]int{0, 0}).CancelWaits(1, 0), nil, ""},
		{base.WaitOps([2]int{0, 0}).CancelWaits(0, 1), nil, "which has none"},
		{base.WaitOps([2]int{0, 0}).CancelWaits(1, 1), nil, "want two threads"},
		{base.WaitOps([2]int{0, 0}), &Remote{Name: "etcd", TokenBucket: func() (linearizability.TBBackend, error) { return nil, nil }},
			"an operation of the in-memory table only"},
	} {
		_, err := tc.s.programOn(fault.None, tc.r)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.s.tb.waits, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: err %v, want one saying %q", tc.s.tb.waits, err, tc.want)
		}
	}
}

// TestWaitRoundsRecorded: a wait that sleeps is recorded as its rounds,
// each an admit of its thread; the trace names the operation a wait.
func TestWaitRoundsRecorded(t *testing.T) {
	s, ok := Lookup("sys-tb-slow-wait-peek")
	if !ok {
		t.Fatal("sys-tb-slow-wait-peek is not made")
	}
	p, err := s.program(fault.None)
	if err != nil {
		t.Fatal(err)
	}
	tp := p.(*tbProgram)
	if got := (&tbTracer{p: tp}).call(0, 0); !strings.HasPrefix(got, "wait ") || !strings.Contains(got, "from 1ms") {
		t.Errorf("the trace shows the wait as %q", got)
	}
	// One run, by hand: from one token at 0 ms, refilled a quarter of a
	// token a millisecond, a wait for 2 at 1 ms is refused with 3 ms
	// (1.25 tokens), sleeps them and takes at 4 ms with none left; the
	// empty schedule runs T0 to its end first.
	c := newController(tp.threads())
	c.install()
	defer c.remove()
	defer c.close()
	rp := replay(c, tp, nil, DefaultStepCap, "", s.Name)
	if rp.failure != nil {
		t.Fatalf("the run failed: %+v\n%s", rp.failure, rp.trace)
	}
	if !strings.Contains(rp.trace, "tick the clock: 0s → 3ms") {
		t.Errorf("the trace does not show the sleep moving the clock:\n%s", rp.trace)
	}
	var rounds []linearizability.TBOp
	for _, op := range tp.run.ops {
		if op.Client == 0 {
			rounds = append(rounds, op)
		}
	}
	want := []struct {
		now   int64
		ok    bool
		after int64
	}{{1, false, 3}, {4, true, 0}}
	if len(rounds) != len(want) {
		t.Fatalf("the wait recorded %d rounds, want %d: %+v", len(rounds), len(want), rounds)
	}
	for i, w := range want {
		op := rounds[i]
		if op.Input.Kind != model.TBAdmit || op.Input.NowMs != w.now || op.Output.OK != w.ok || op.Output.RetryAfterMs != w.after {
			t.Errorf("round %d: %s ⇒ %+v, want an admit at %d ms answering ok=%v wait %d", i, op.Input, op.Output, w.now, w.ok, w.after)
		}
		if op.Call >= op.Return || (i > 0 && op.Call <= rounds[i-1].Return) {
			t.Errorf("round %d: interval [%d, %d] after %+v", i, op.Call, op.Return, rounds[:i])
		}
	}
}
