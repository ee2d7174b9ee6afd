package interleave

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tollgate/tollgate/explore/rt"
	"github.com/tollgate/tollgate/impl/credits"
	explored "github.com/tollgate/tollgate/internal/mutants/explored/credits"
)

// The Owner's scenarios. impl/credits's Owner is no table transition: Run
// is a loop on a ticker around a handler, Start runs it on a goroutine,
// Call waits in a select for the reply, the context or the owner's end.
// Its explored copy (internal/mutants/explored/credits/owner.go) is
// rewritten as tollgate explore rewrites code (explore/rewrite): its go
// statement, channels, select, ticker, context, sync.Once and atomics are
// switch points and happens-before edges of the run, and its plain
// accesses are checked by the race detector, over the explored table. So
// a run interleaves a caller, the owner's goroutine, its ticker and a
// stop at every switch point, within the bound.
//
// Each run checks C15 on the answers: a Call that answered without error
// got the handler's reply to its own request; a Call answered
// ErrOwnerGone was not served (a request the owner served before it
// stopped has its reply in its channel, and Call returns it); a Call made
// after its thread's Start returned, and before its stop, finds the owner
// running (never ErrNoOwner); stop returns Run's error, context.Canceled;
// Running answers true between a thread's Start and its stop and false
// after. Every goroutine has ended when the threads are done (a leak
// fails the run).

// ownerOp is one operation of an owner scenario's thread.
type ownerOp struct {
	kind string // "start", "call", "stop", "running"
	body int    // call: the request
}

// ownerPoll is the explored owner's poll: a ticker on the virtual clock.
const ownerPoll = time.Millisecond

// OwnerScenarios are the Owner's scenarios of the default run.
func OwnerScenarios() []Scenario {
	start, stop, running := ownerOp{kind: "start"}, ownerOp{kind: "stop"}, ownerOp{kind: "running"}
	call := func(b int) ownerOp { return ownerOp{kind: "call", body: b} }
	return []Scenario{
		ownerScenario("cr-owner-call-vs-stop",
			"a Call racing the owner's stop: its reply, the owner's end (Done), the table's close and running's store on the way out (C15)",
			true, []ownerOp{call(1)}, []ownerOp{stop}),
		ownerScenario("cr-owner-start-vs-call",
			"Start, then a Call that must find the owner running, while another thread reads Running as the owner starts (C15)",
			false, []ownerOp{start, call(1), stop}, []ownerOp{running}),
	}
}

// ownerScenario builds an owner scenario: started, the owner is started
// in the setup (its stop is the threads' stop).
func ownerScenario(name, race string, started bool, threads ...[]ownerOp) Scenario {
	return Scenario{Name: name, Race: race, Primitive: Credits, own: &ownerScript{started: started, threads: threads}}
}

type ownerScript struct {
	started bool
	threads [][]ownerOp
}

// ownerRun is one run's owner and what it answered.
type ownerRun struct {
	owner  *explored.Owner[int, int]
	stop   func() error
	served []int // the handler's requests, in order (the owner's goroutine)
	res    [][]ownerRes
}

type ownerRes struct {
	resp    int
	err     error
	running bool
	done    bool
}

// ownerOps is the program of an owner scenario.
func ownerOps(s Scenario) *Ops {
	sc := s.own
	r := &ownerRun{}
	o := &Ops{Name: s.Name, Threads: len(sc.threads), Replay: "tollgate explore -scenario " + s.Name + " -replay %s"}
	o.Begin = func() [][]func() {
		rt.StartClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		// The table's clock is the run's virtual one, as every other
		// clock reading of an explored run (spec/explore.md §4): the
		// Owner's Call enqueues with the table's own clock.
		tab := explored.New[*explored.Request[int, int]](explored.WithClock(func() int64 { return rt.Now().UnixMilli() }))
		r.served = r.served[:0]
		r.owner = explored.NewOwner(tab, ownerPoll, func(_ context.Context, req int) (int, error) {
			r.served = append(r.served, req)
			return 10 * req, nil
		})
		r.stop = nil
		if sc.started {
			r.stop = r.owner.Start(context.Background())
		}
		r.res = make([][]ownerRes, len(sc.threads))
		out := make([][]func(), len(sc.threads))
		for t, ops := range sc.threads {
			r.res[t] = make([]ownerRes, len(ops))
			h := credits.NewHolder()
			for i, op := range ops {
				res := &r.res[t][i]
				out[t] = append(out[t], func() {
					defer func() { res.done = true }()
					switch op.kind {
					case "start":
						r.stop = r.owner.Start(context.Background())
					case "call":
						res.resp, res.err = r.owner.Call(context.Background(), h, credits.General, op.body)
					case "stop":
						res.err = r.stop()
					case "running":
						res.running = r.owner.Running()
					}
				})
			}
		}
		return out
	}
	o.End = func(_ [][][2]int64, _ string) (Kind, string, []string) {
		rt.StopClock()
		if msg := r.check(sc); msg != "" {
			return KindInvariant, "C15: " + msg, nil
		}
		return "", "", nil
	}
	o.Outcome = func() string { return fmt.Sprint(r.res, r.served) }
	o.Call = func(t, i int) string {
		op := sc.threads[t][i]
		if op.kind == "call" {
			return fmt.Sprintf("Call(%d)", op.body)
		}
		return op.kind
	}
	o.Ret = func(t, i int) string {
		res, op := r.res[t][i], sc.threads[t][i]
		switch op.kind {
		case "call":
			if res.err != nil {
				return res.err.Error()
			}
			return fmt.Sprint(res.resp)
		case "running":
			return fmt.Sprint(res.running)
		case "stop":
			return fmt.Sprint(res.err)
		}
		return "ok"
	}
	return o
}

// check is the run's C15 verdict: "" when it holds.
func (r *ownerRun) check(sc *ownerScript) string {
	var bad []string
	for t, ops := range sc.threads {
		mine := sc.started // the owner runs for this thread: it started it, or the setup did
		for i, op := range ops {
			res := r.res[t][i]
			if !res.done {
				continue
			}
			switch op.kind {
			case "start":
				mine = true
			case "stop":
				if !errors.Is(res.err, context.Canceled) {
					bad = append(bad, fmt.Sprintf("thread %d: stop returned %v, not Run's context.Canceled", t, res.err))
				}
				mine = false
			case "running":
				if len(ops) > 1 && res.running != mine {
					bad = append(bad, fmt.Sprintf("thread %d: Running answered %v", t, res.running))
				}
			case "call":
				served := slices.Contains(r.served, op.body)
				switch {
				case res.err == nil:
					if !served || res.resp != 10*op.body {
						bad = append(bad, fmt.Sprintf("thread %d: Call(%d) answered %d, but the handler was not given it or answered otherwise", t, op.body, res.resp))
					}
				case errors.Is(res.err, explored.ErrOwnerGone):
					if served {
						bad = append(bad, fmt.Sprintf("thread %d: Call(%d) answered ErrOwnerGone, but the owner served it and replied before it stopped (the reply was in its channel)", t, op.body))
					}
				case errors.Is(res.err, explored.ErrNoOwner):
					if mine && !sc.started {
						bad = append(bad, fmt.Sprintf("thread %d: Call(%d) after its thread's Start returned answered ErrNoOwner: the owner was not running", t, op.body))
					}
				case errors.Is(res.err, explored.ErrNoTable):
				default:
					bad = append(bad, fmt.Sprintf("thread %d: Call(%d) answered %v", t, op.body, res.err))
				}
			}
		}
	}
	return strings.Join(bad, "; ")
}
