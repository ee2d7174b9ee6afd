package redisserver

import (
	"strconv"
	"testing"
	"time"
)

// TestStepClock: StepClock moves the server's TIME, inside a script too,
// forward and back while it runs, and across a restart; a server started
// without it refuses to step.
func TestStepClock(t *testing.T) {
	s := StartT(t, WithSteppableClock())
	skew := func(want time.Duration) {
		t.Helper()
		got, err := s.ClockSkew()
		if err != nil {
			t.Fatal(err)
		}
		if d := got - want; d < -time.Second || d > time.Second {
			t.Fatalf("TIME runs %v ahead of the machine's clock, want %v", got, want)
		}
		r, err := s.QueryList("EVAL", "return redis.call('TIME')", "0")
		if err != nil {
			t.Fatal(err)
		}
		if len(r) != 2 {
			t.Fatalf("TIME in a script: %q", r)
		}
		n, err := strconv.ParseInt(r[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		sec := time.Unix(n, 0)
		if d := time.Until(sec) - want; d < -2*time.Second || d > 2*time.Second {
			t.Fatalf("TIME in a script reads %v, want the machine's clock %+v", sec, want)
		}
	}
	skew(0)
	for _, d := range []time.Duration{time.Hour, -time.Minute, 0, 10 * time.Second} {
		if err := s.StepClock(d); err != nil {
			t.Fatal(err)
		}
		skew(d)
	}
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	skew(10 * time.Second)
	plain := StartT(t)
	if err := plain.StepClock(time.Hour); err == nil {
		t.Error("a server started without WithSteppableClock stepped its clock")
	}
}
