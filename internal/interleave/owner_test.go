package interleave

import (
	"context"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	explored "github.com/tollgate/tollgate/internal/mutants/explored/credits"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestOwnerScenarios explores the Owner's scenarios on the real code,
// exhaustively within the default bound (1 under -race): C15 holds, no
// data race, no leak. (A plain store of running in begin or serve, a Call
// that answers ErrOwnerGone with its reply waiting, or running set on
// serve's goroutine fails one of them; so does each of the family's
// mutants: spec/explore.md §11.)
func TestOwnerScenarios(t *testing.T) {
	ss := OwnerScenarios()
	if len(ss) == 0 {
		t.Fatal("no Owner scenario")
	}
	// Bound 1 in go test (the default explore run, which CI runs, explores
	// them at DefaultBound); DefaultBound with -long, but for the race
	// detector, which slows the explorer tenfold.
	bound := 1
	if testlong.Enabled() && !raceEnabled {
		bound = DefaultBound
	}
	for _, s := range ss {
		r := Explore(s, Options{Strategy: DFS, Bound: bound, Fault: fault.None})
		if r.Err != nil || r.Failure != nil {
			if r.Failure != nil {
				t.Log(r.Failure.Report())
			}
			t.Fatalf("%s: %s", s.Name, r.Summary())
		}
		if !r.Exhaustive {
			t.Errorf("%s: not exhaustive at bound %d (%d schedules)", s.Name, bound, r.Schedules)
		}
	}
}

// TestOwnerCallVerdicts: the per-call part of the Owner scenarios' C15
// verdict, on answers made up for it: each wrong answer is named, each
// right one passes. (The explored runs' side is TestOwnerScenarios; the
// mutants of the explored owner that each check kills are listed in
// spec/explore.md §11.)
func TestOwnerCallVerdicts(t *testing.T) {
	call := func(ctx, hand string) ownerOp { return ownerOp{kind: "call", body: 1, ctx: ctx, hand: hand} }
	hp := &explored.HandlerPanic{Value: ownerPanic(1)}
	for _, c := range []struct {
		name             string
		op               ownerOp
		res              ownerRes
		served           bool
		through, started bool
		bad              bool
	}{
		{"answered", call("bg", "answer"), ownerRes{resp: 10}, true, true, true, false},
		{"answered unserved", call("bg", "answer"), ownerRes{resp: 10}, false, false, false, true},
		{"wrong answer", call("bg", "answer"), ownerRes{resp: 20}, true, false, false, true},
		{"panic answered nil", call("bg", "panic"), ownerRes{}, true, false, false, true},
		{"panic answered", call("bg", "panic"), ownerRes{err: hp}, true, true, true, false},
		{"panic with another value", call("bg", "panic"), ownerRes{err: &explored.HandlerPanic{Value: "x"}}, true, false, false, true},
		{"panic, owner gone", call("bg", "panic"), ownerRes{err: explored.ErrOwnerGone}, true, false, false, true},
		{"cancelled", call("cancelled", "answer"), ownerRes{err: context.Canceled}, false, true, true, false},
		{"cancelled, served", call("cancelled", "answer"), ownerRes{err: context.Canceled}, true, false, false, true},
		{"cancelled, owner gone", call("cancelled", "answer"), ownerRes{err: explored.ErrOwnerGone}, false, false, false, true},
		{"deadline", call("deadline", "answer"), ownerRes{err: context.DeadlineExceeded}, true, true, true, false},
		{"refused", call("deadline", "answer"), ownerRes{err: explored.ErrDeadline}, false, true, true, false},
		{"refused, served", call("deadline", "answer"), ownerRes{err: explored.ErrDeadline}, true, false, false, true},
		{"refused without a deadline", call("bg", "answer"), ownerRes{err: explored.ErrDeadline}, false, false, false, true},
		{"ctx error without a context", call("bg", "answer"), ownerRes{err: context.Canceled}, false, false, false, true},
		{"owner gone", call("bg", "answer"), ownerRes{err: explored.ErrOwnerGone}, false, false, false, false},
		{"owner gone while it ran", call("bg", "answer"), ownerRes{err: explored.ErrOwnerGone}, false, true, true, true},
		{"no table while it ran", call("bg", "answer"), ownerRes{err: explored.ErrNoTable}, false, true, true, true},
		{"no owner", call("bg", "answer"), ownerRes{err: explored.ErrNoOwner}, false, false, false, false},
		{"no owner after Start", call("bg", "answer"), ownerRes{err: explored.ErrNoOwner}, false, false, true, true},
	} {
		r := &ownerRun{}
		if c.served {
			r.served = []int{1}
		}
		c.res.done = true
		if msg := r.checkCall(c.op, c.res, c.through, c.started); (msg != "") != c.bad {
			t.Errorf("%s: verdict %q, want bad %v", c.name, msg, c.bad)
		}
	}
}

// TestStoppedFrame: the owner family races a Call of every context and
// handler (but a cancelled context with a panic, whose handler never runs)
// against a stop in a second thread, each explored exhaustively within
// one preemption whatever bound the run asks for (Within).
func TestStoppedFrame(t *testing.T) {
	byName := map[string]Scenario{}
	for _, s := range ownerFamily() {
		byName[s.Name] = s
	}
	for _, ctx := range []string{"bg", "cancelled", "deadline"} {
		for _, hand := range []string{"answer", "panic"} {
			name := "cr-owner-gen-stopped-" + ctx + "-" + hand
			s, ok := byName[name]
			if ctx == "cancelled" && hand == "panic" {
				if ok {
					t.Errorf("%s is made: its handler never runs", name)
				}
				continue
			}
			if !ok || len(s.own.threads) != 2 || s.own.threads[1][0].kind != "stop" || s.most != 1 {
				t.Errorf("%s: not made as a call against a stop within 1 preemption", name)
			}
		}
	}
	s := byName["cr-owner-gen-stopped-cancelled-answer"]
	if r := Explore(s, Options{}); r.Failure != nil || !r.Exhaustive || r.Bound != 1 {
		t.Errorf("%s at the default bound: %s, bound %d; want exhaustive within bound 1", s.Name, r.Summary(), r.Bound)
	}
}
