package mainjob

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/linearizability"
)

// TestResolveRejects: each bad field is refused with an error naming its
// flag and the rule, and the configuration handed back is the one passed
// in (nothing half-resolved).
func TestResolveRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"primitive", func(c *Config) { c.Primitive = "bucket" }, []string{"-primitive", "tokenbucket, credits or all"}},
		{"duration", func(c *Config) { c.Duration = -time.Second }, []string{"-duration", ">= 0"}},
		{"clients", func(c *Config) { c.Clients = -1 }, []string{"-clients -1 must be >= 0"}},
		{"keys", func(c *Config) { c.Keys = -2 }, []string{"-keys -2 must be >= 0"}},
		{"ops", func(c *Config) { c.Ops = -3 }, []string{"-ops -3 must be >= 0"}},
		{"seq-share high", func(c *Config) { c.SeqShare = 1 }, []string{"-seq-share", "[0, 1)"}},
		{"seq-share low", func(c *Config) { c.SeqShare = -0.1 }, []string{"-seq-share", "[0, 1)"}},
		{"timeout", func(c *Config) { c.Timeout = -1 }, []string{"-timeout", ">= 0"}},
		{"soak", func(c *Config) { c.Soak = -time.Minute }, []string{"-soak -1m0s must be >= 0"}},
		{"soak-window", func(c *Config) { c.SoakWindow = -2 }, []string{"-soak-window -2 must be >= 0"}},
		{"backend", func(c *Config) { c.Backend = "consul" }, []string{"-backend", "memory, redis, redis-cluster or etcd"}},
		{"etcd faults", func(c *Config) { c.Backend, c.Faults = "etcd", "pause" }, []string{"-faults", "no fault workload \"pause\" of -backend etcd"}},
		{"etcd mutant", func(c *Config) { c.Backend, c.Mutant = "etcd", "tb-plain-store" }, []string{"-mutant tb-plain-store", "not a mutant of the etcd tables"}},
		{"etcd mutant elsewhere", func(c *Config) { c.Backend, c.Mutant = "memory", "ecr-reserve-no-compare" }, []string{"-mutant ecr-reserve-no-compare", "needs -backend etcd"}},
		{"faults on a cluster", func(c *Config) { c.Backend, c.Faults = "redis-cluster", "pause" }, []string{"-faults pause", "runs with -backend redis, not redis-cluster"}},
		{"cluster faults on a server", func(c *Config) { c.Backend, c.Faults = "redis", "none,cluster-kill" }, []string{"-faults cluster-kill", "runs with -backend redis-cluster, not redis"}},
		{"faults", func(c *Config) { c.Backend, c.Faults = "redis", "pause,nope" }, []string{"-faults", `"nope"`, "known:"}},
		{"mutant unknown", func(c *Config) { c.Mutant = "no-such-mutant" }, []string{"-mutant"}},
		{"mutant backend", func(c *Config) { c.Mutant = "tb-plain-store"; c.Backend = "redis" }, []string{"-mutant tb-plain-store", "-backend memory"}},
		{"mutant primitive", func(c *Config) { c.Mutant, c.Primitive = "tb-plain-store", linearizability.PrimitiveCredits }, []string{"-mutant tb-plain-store", "not a credits mutant"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Defaults()
			c.edit(&in)
			got, err := in.Resolve()
			if err == nil {
				t.Fatalf("Resolve accepted %+v", in)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got != in {
				t.Errorf("Resolve changed the rejected configuration:\n got %+v\nwant %+v", got, in)
			}
		})
	}
}

// TestResolveCompletes: a mutant picks its primitive, the Redis backend
// drops the in-process sequential check, a zero seed comes from the clock,
// and a resolved configuration resolves to itself.
func TestResolveCompletes(t *testing.T) {
	c := Defaults()
	c.Mutant = "cr-release-no-holder"
	r, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.Primitive != linearizability.PrimitiveCredits || r.Seed == 0 || r.SeqShare != c.SeqShare {
		t.Errorf("resolved %+v: want primitive credits, a seed, seq-share kept", r)
	}
	if again, err := r.Resolve(); err != nil || again != r {
		t.Errorf("Resolve is not idempotent: %+v, %v", again, err)
	}
	c = Defaults()
	c.Backend, c.Seed = "redis", 7
	if r, err = c.Resolve(); err != nil || r.SeqShare != 0 || r.Seed != 7 {
		t.Errorf("redis: resolved %+v, %v: want seq-share 0, seed 7", r, err)
	}
}

// TestRunNeedsARedisServer: the Redis backend with no address is an error,
// not a verdict, and nothing is printed as if it had run.
func TestRunNeedsARedisServer(t *testing.T) {
	c := Defaults()
	c.Backend = "redis"
	var out strings.Builder
	if _, err := Run(c, &out); err == nil || !strings.Contains(err.Error(), "address") {
		t.Fatalf("Run = %v, want an error asking for an address", err)
	}
	if out.Len() != 0 {
		t.Errorf("Run printed %q before refusing", out.String())
	}
}

// TestNoRowOfNothing: however short the budget, every row of the summary
// checked something (a row of 0 histories would read as a pass).
func TestNoRowOfNothing(t *testing.T) {
	c := Defaults()
	c.Duration, c.Primitive, c.Seed, c.Progress, c.Out = 0, linearizability.PrimitiveTokenBucket, 1, 0, t.TempDir()
	var out strings.Builder
	if _, err := Run(c, &out); err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?m)^\s*tokenbucket\s+(sequential|porcupine)\s+(\d+)\s`).FindAllStringSubmatch(out.String(), -1)
	if len(rows) != 2 {
		t.Fatalf("want a sequential and a porcupine row:\n%s", out.String())
	}
	for _, r := range rows {
		if r[2] == "0" {
			t.Errorf("the %s row checked 0 histories:\n%s", r[1], out.String())
		}
	}
}

// TestNoClaimOfASkippedSequentialCheck: with no sequential check (-seq-share
// 0, as on the Redis and etcd backends), an Ok verdict does not say that a
// sequential check agreed.
func TestNoClaimOfASkippedSequentialCheck(t *testing.T) {
	c := Defaults()
	c.Duration, c.Primitive, c.Seed, c.Progress, c.Out, c.SeqShare = 0, linearizability.PrimitiveTokenBucket, 1, 0, t.TempDir(), 0
	var out strings.Builder
	v, err := Run(c, &out)
	if err != nil || v != Ok {
		t.Fatalf("Run = %v, %v\n%s", v, err, out.String())
	}
	if strings.Contains(out.String(), "sequential check agreed") {
		t.Errorf("no sequential check ran, but the output says one agreed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "result: Ok — every history linearizable (no sequential check ran)") {
		t.Errorf("the result line does not say that no sequential check ran:\n%s", out.String())
	}
}
