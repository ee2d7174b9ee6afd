package bench

import (
	"strings"
	"testing"
	"time"
)

// TestResolveRejects: each bad field is refused with an error naming its
// flag and the rule, and the configuration handed back is the one passed
// in (nothing half-resolved).
func TestResolveRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"benchtime", func(c *Config) { c.Benchtime = -time.Second }, "tollgate bench: -benchtime = -1s: must not be negative"},
		{"rounds", func(c *Config) { c.Rounds = -2 }, "tollgate bench: -rounds = -2: must not be negative"},
		{"memkeys", func(c *Config) { c.MemKeys = -5 }, "tollgate bench: -memkeys = -5: must not be negative"},
		{"out", func(c *Config) { c.Out = "" }, "tollgate bench: -out is empty"},
		{"run", func(c *Config) { c.Run = "(" }, `tollgate bench: -run = "(": not a regular expression`},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Defaults()
			c.edit(&in)
			got, err := in.Resolve()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Resolve(%+v) error %v, want %q", in, err, c.want)
			}
			if got != in {
				t.Errorf("Resolve changed the rejected configuration:\n got %+v\nwant %+v", got, in)
			}
		})
	}
}

// TestResolveCompletes: the benchmark time and rounds of a bare run, of
// -full, and given ones kept; a resolved configuration resolves to itself.
func TestResolveCompletes(t *testing.T) {
	for _, c := range []struct {
		in        Config
		benchtime time.Duration
		rounds    int
	}{
		{Defaults(), 40 * time.Millisecond, 3},
		{Config{Out: "o", Full: true}, 100 * time.Millisecond, 3},
		{Config{Out: "o", Full: true, Benchtime: time.Millisecond, Rounds: 1}, time.Millisecond, 1},
	} {
		r, err := c.in.Resolve()
		if err != nil || r.Benchtime != c.benchtime || r.Rounds != c.rounds {
			t.Errorf("Resolve(%+v) = %+v, %v; want benchtime %v, rounds %d", c.in, r, err, c.benchtime, c.rounds)
		}
		if again, err := r.Resolve(); err != nil || again != r {
			t.Errorf("Resolve is not idempotent: %+v, %v", again, err)
		}
	}
}

// TestRunNeedsARedisServer: -redis with no address is an error, and
// nothing is measured or written.
func TestRunNeedsARedisServer(t *testing.T) {
	dir := t.TempDir() + "/out"
	var progress strings.Builder
	err := Run(Config{Out: dir, Redis: true, Run: "nothing"}, &progress)
	if err == nil || !strings.Contains(err.Error(), "-redis needs a redis-server address") {
		t.Fatalf("Run = %v, want an error asking for an address", err)
	}
	if progress.Len() != 0 {
		t.Errorf("Run printed %q before refusing", progress.String())
	}
}
