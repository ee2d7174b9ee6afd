package bench

import (
	"errors"
	"os"
	"reflect"
	"regexp"
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
		{"run", func(c *Config) { c.Run = "(" }, `tollgate bench: -run = "(": not a regular expression`},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Defaults()
			c.edit(&in)
			got, err := in.Resolve()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Resolve(%+v) error %v, want %q", in, err, c.want)
			}
			if !reflect.DeepEqual(got, in) {
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
		{Defaults(), 40 * time.Millisecond, 6},
		{Config{Out: "o", Full: true}, 100 * time.Millisecond, 6},
		{Config{Out: "o", Full: true, Benchtime: time.Millisecond, Rounds: 1}, time.Millisecond, 1},
	} {
		r, err := c.in.Resolve()
		if err != nil || r.Benchtime != c.benchtime || r.Rounds != c.rounds {
			t.Errorf("Resolve(%+v) = %+v, %v; want benchtime %v, rounds %d", c.in, r, err, c.benchtime, c.rounds)
		}
		if again, err := r.Resolve(); err != nil || !reflect.DeepEqual(again, r) {
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

// TestRunRefusesNothing: a -run that selects no case is an error, and
// nothing is written (not even the directory).
func TestRunRefusesNothing(t *testing.T) {
	dir := t.TempDir() + "/out"
	var progress strings.Builder
	err := Run(Config{Out: dir, Run: "no-such-case", MemKeys: 1000}, &progress)
	if !errors.Is(err, ErrNothingSelected) || !strings.Contains(err.Error(), `-run "no-such-case" matches no case`) {
		t.Fatalf("Run = %v, want an error saying nothing matched", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Run made %s before refusing (%v)", dir, err)
	}
}

// TestRunDefaultsToANewDirectory: with no -out, a run writes into a new
// directory under the temporary directory and says which, so a bare
// `tollgate bench` never overwrites the committed bench/results. A
// selection at one goroutine count (no curve to draw) writes its results
// and no plot, rather than failing in the plotting library.
func TestRunDefaultsToANewDirectory(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var progress strings.Builder
	c := Config{Benchtime: time.Millisecond, Rounds: 1, Run: `TB/work=admit/keys=1/g=1/design=(tollgate|mutex-per-bucket)$`}
	if err := Run(c, &progress); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`writing to (\S+)`).FindStringSubmatch(progress.String())
	if m == nil || !strings.HasPrefix(m[1], os.Getenv("TMPDIR")) {
		t.Fatalf("progress names no new directory under $TMPDIR:\n%s", progress.String())
	}
	entries, err := os.ReadDir(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "RESULTS.md raw.txt" {
		t.Errorf("%s holds %v, want RESULTS.md and raw.txt and no plot of one goroutine count", m[1], names)
	}
}
