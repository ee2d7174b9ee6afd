package target

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/tollgate/tollgate/explore"
)

// verdict is one exploration's result, as the campaign reads it.
type verdict struct {
	Scenario    string  `json:"scenario"`
	Strategy    string  `json:"strategy"`
	Seed        uint64  `json:"seed,omitempty"`
	Bound       int     `json:"bound,omitempty"`
	Verdict     string  `json:"verdict"` // holds, VIOLATED, no verdict
	Kind        string  `json:"kind,omitempty"`
	Preemptions int     `json:"preemptions,omitempty"`
	Schedule    string  `json:"schedule,omitempty"`
	Schedules   int     `json:"schedules"`
	Exhaustive  bool    `json:"exhaustive,omitempty"`
	Seconds     float64 `json:"seconds"`
	Detail      string  `json:"detail,omitempty"`
}

// explorations runs spec with DFS at bound 2 ($TOLLGATE_TARGET_BOUND when
// set), then PCT with seeds 1–5,
// and writes each verdict to $TOLLGATE_TARGET_RESULTS (one JSON object a
// line). A failure is reported in the test's log; it does not fail the
// test, since a violation is the campaign's finding, not an error.
//
// With -explore.replay=SCHEDULE it replays that schedule instead, through
// explore.Check, and prints its trace.
func explorations[T, In, Out, S any](t *testing.T, name string, spec explore.Spec[T, In, Out, S]) {
	spec.Name = name
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	bound := 2
	if b, err := strconv.Atoi(os.Getenv("TOLLGATE_TARGET_BOUND")); err == nil && b > 0 {
		bound = b
	}
	opts := []explore.Options{{Strategy: explore.DFS, Bound: bound}}
	for seed := uint64(1); seed <= 5; seed++ {
		opts = append(opts, explore.Options{Strategy: explore.PCT, Seed: seed, Schedules: 2000, Depth: 3})
	}
	for _, o := range opts {
		r := explore.Explore(spec, o, "go test -run '^"+t.Name()+"$' -args -explore.replay=%s")
		v := verdict{Scenario: name, Strategy: string(o.Strategy), Seed: o.Seed, Schedules: r.Schedules,
			Exhaustive: r.Exhaustive, Seconds: r.Elapsed.Seconds(), Verdict: "holds"}
		if o.Strategy == explore.DFS {
			v.Bound = r.Bound
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

func write(t *testing.T, v verdict) {
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
