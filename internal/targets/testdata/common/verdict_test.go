package target

import (
	"encoding/json"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
)

// verdict is one exploration's result, as the campaign reads it.
type verdict struct {
	Scenario    string  `json:"scenario"`
	Test        string  `json:"test,omitempty"`
	Strategy    string  `json:"strategy"`
	Seed        uint64  `json:"seed,omitempty"`
	Bound       int     `json:"bound,omitempty"`
	Verdict     string  `json:"verdict"` // holds, VIOLATED, no verdict, not run
	Kind        string  `json:"kind,omitempty"`
	Preemptions int     `json:"preemptions,omitempty"`
	Schedule    string  `json:"schedule,omitempty"`
	Schedules   int     `json:"schedules"`
	Total       int     `json:"total,omitempty"`
	Exhaustive  bool    `json:"exhaustive,omitempty"`
	Seconds     float64 `json:"seconds"`
	CPU         float64 `json:"cpu_seconds,omitempty"`
	Detail      string  `json:"detail,omitempty"`
}

// dfsCap caps DFS: a scenario whose schedules within the bound are more
// says "holds (N schedules)", not exhaustive.
const dfsCap = 100000

// explorations runs spec with DFS at bound 2 ($TOLLGATE_TARGET_BOUND when
// set), then PCT with seeds 1–5,
// and writes each verdict to $TOLLGATE_TARGET_RESULTS (one JSON object a
// line). A failure is reported in the test's log; it does not fail the
// test, since a violation is the campaign's finding, not an error.
//
// With -explore.replay=SCHEDULE it replays that schedule instead, through
// explore.Check, and prints its trace.
func explorations[T, In, Out, S any](t *testing.T, name string, spec explore.Spec[T, In, Out, S]) {
	explorationsAt(t, name, 0, spec)
}

// explorationsAt is explorations with DFS at bound (at most
// $TOLLGATE_TARGET_BOUND when set; 0: the default): for a scenario of four
// threads, whose schedules within bound 2 number in the millions.
func explorationsAt[T, In, Out, S any](t *testing.T, name string, bound int, spec explore.Spec[T, In, Out, S]) {
	spec.Name = name
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	if b, err := strconv.Atoi(os.Getenv("TOLLGATE_TARGET_BOUND")); err == nil && b > 0 {
		if bound == 0 || b < bound {
			bound = b
		}
	}
	if bound == 0 {
		bound = 2
	}
	opts := []explore.Options{{Strategy: explore.DFS, Bound: bound, Schedules: dfsCap}}
	for seed := uint64(1); seed <= 5; seed++ {
		opts = append(opts, explore.Options{Strategy: explore.PCT, Seed: seed, Schedules: 2000, Depth: 3})
	}
	for _, o := range opts {
		cpu := cpuSeconds()
		r := explore.Explore(spec, o, "go test -run '^"+t.Name()+"$' -args -explore.replay=%s")
		v := verdict{Scenario: name, Strategy: string(o.Strategy), Seed: o.Seed, Schedules: r.Schedules,
			Exhaustive: r.Exhaustive, Seconds: r.Elapsed.Seconds(), CPU: cpuSeconds() - cpu, Verdict: "holds"}
		if o.Strategy == explore.DFS {
			v.Bound = r.Bound
			for _, n := range r.PerBound {
				v.Total += n
			}
		}
		switch {
		case r.Err != nil:
			v.Verdict, v.Detail = "no verdict", r.Err.Error()
		case r.Failure != nil:
			v.Verdict, v.Kind, v.Preemptions, v.Schedule = "VIOLATED", r.Failure.Kind, r.Failure.Preemptions, r.Failure.Schedule
			t.Logf("%s %s seed %d:\n%s", name, o.Strategy, o.Seed, r.Failure.Report)
		}
		write(t, v)
	}
}

// needs explores spec as explorations does when the explorer can run
// it; when its first exploration ends without a verdict (a construct it
// does not control), the row says "not run: needs what" and the
// explorer's own words, and nothing more is explored.
func needs[T, In, Out, S any](t *testing.T, name, what string, spec explore.Spec[T, In, Out, S]) {
	spec.Name = name
	if !explore.Replaying() {
		if r := explore.Explore(spec, explore.Options{Strategy: explore.DFS, Bound: 1}, ""); r.Err != nil {
			notRun(t, name, "needs "+what+": "+r.Err.Error())
			return
		}
	}
	explorations(t, name, spec)
}

// notRun records a scenario the explorer cannot run yet, and why, as a
// row of the table: a construct it does not control, say.
func notRun(t *testing.T, name, why string) {
	t.Logf("%s: not run: %s", name, why)
	write(t, verdict{Scenario: name, Strategy: string(explore.DFS), Verdict: "not run", Detail: why})
}

// cpuSeconds is the CPU time the process has used, user and system: on
// a loaded machine the wall clock says little of the explorer's cost.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func write(t *testing.T, v verdict) {
	v.Test = t.Name()
	path := os.Getenv("TOLLGATE_TARGET_RESULTS")
	if path == "" {
		t.Logf("%+v", v)
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(v); err != nil {
		t.Fatal(err)
	}
}
