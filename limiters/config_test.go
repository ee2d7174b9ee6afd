package limiters

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResolveRejects: each bad flag is refused with an error naming it and
// the rule, the configuration handed back is the one passed in, and the
// exit code is ExitUsage.
func TestResolveRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"libs", func(c *Config) { c.Libs = "golang.org/x/time,example.com/nope" }, []string{"-libs", `"example.com/nope" must be one of`}},
		{"versions", func(c *Config) { c.Versions = "golang.org/x/time" }, []string{"-versions", "MODULE=VERSION+VERSION"}},
		{"versions empty", func(c *Config) { c.Versions = "golang.org/x/time=v0.9.0;=v0.1.0" }, []string{"-versions", `"=v0.1.0"`}},
		{"expect", func(c *Config) { c.Expect = "golang.org/x/time:steady=holds" }, []string{"-expect", "MODULE@VERSION:WORKLOAD:PROP=VERDICT"}},
		{"shard", func(c *Config) { c.Shard = "0/3" }, []string{"-shard 0/3", "i must be in 1..n"}},
		{"shard form", func(c *Config) { c.Shard = "2" }, []string{"-shard 2", "want i/n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Defaults()
			in.Repo = "/checkout"
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
			if code := ExitCode(Fail, err); code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
		})
	}
}

// TestResolveCompletes: an empty Repo is the checkout the test runs in, a
// given one is kept, a resolved configuration resolves to itself, and a
// replay reads no campaign flag.
func TestResolveCompletes(t *testing.T) {
	c := Defaults()
	c.Versions, c.Shard, c.Expect = "golang.org/x/time=v0.9.0+newest", "2/4", "golang.org/x/time@newest:steady:L1=holds"
	r, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if r.Repo != filepath.Dir(wd) {
		t.Errorf("Repo = %q, want the checkout %q", r.Repo, filepath.Dir(wd))
	}
	if again, err := r.Resolve(); err != nil || again != r {
		t.Errorf("Resolve is not idempotent: %+v, %v", again, err)
	}
	c = Config{Replay: "x.json", Libs: "example.com/nope", Repo: "/checkout"}
	if r, err := c.Resolve(); err != nil || r != c {
		t.Errorf("replay: %+v, %v; want it unchanged", r, err)
	}
}

// TestExitCode: an input error is a usage error whatever the outcome, any
// other error a failure, and only a Pass without an error exits 0.
func TestExitCode(t *testing.T) {
	input := inputError{errors.New("-libs: nope")}
	for _, c := range []struct {
		name string
		o    Outcome
		err  error
		want int
	}{
		{"pass", Pass, nil, ExitOK},
		{"fail", Fail, nil, ExitFailed},
		{"run error", Fail, errors.New("limiters: go build"), ExitFailed},
		{"run error after a pass", Pass, errors.New("limiters: go build"), ExitFailed},
		{"input error", Fail, input, ExitUsage},
		{"input error, wrapped", Pass, errors.Join(errors.New("replay"), input), ExitUsage},
		{"unknown outcome", Outcome(7), nil, ExitFailed},
	} {
		if got := ExitCode(c.o, c.err); got != c.want {
			t.Errorf("%s: ExitCode(%v, %v) = %d, want %d", c.name, c.o, c.err, got, c.want)
		}
	}
}

// TestPlan: the flags reach the campaign, and the children get -shard
// only for a part of it.
func TestPlan(t *testing.T) {
	c := Config{Libs: "go.uber.org/ratelimit, github.com/go-redis/redis_rate/v10", Versions: "go.uber.org/ratelimit=v0.3.0+newest",
		Seed: 7, Quick: true, Workload: "steady", Shard: "2/3", Repo: "/checkout", RedisAddr: "127.0.0.1:1"}
	p := c.plan("/work", "/out/cex")
	if !slices.Equal(p.Modules, []string{"go.uber.org/ratelimit", "github.com/go-redis/redis_rate/v10"}) ||
		!slices.Equal(p.Versions["go.uber.org/ratelimit"], []string{"v0.3.0", "newest"}) ||
		!slices.Equal(p.Env, []string{"TOLLGATE_REDIS_ADDR=127.0.0.1:1"}) || p.Repo != "/checkout" {
		t.Errorf("plan %+v", p)
	}
	want := []string{"-mode", "run", "-seed", "7", "-dir", "/out/cex", "-replay-cmd", p.Replay, "-quick", "-workload", "steady", "-shard", "2/3"}
	if got := p.childArgs(); !slices.Equal(got, want) {
		t.Errorf("child args %q, want %q", got, want)
	}
	c.Shard, c.Quick, c.Workload = "", false, ""
	want = []string{"-mode", "run", "-seed", "7", "-dir", "/out/cex", "-replay-cmd", p.Replay}
	if got := c.plan("/work", "/out/cex").childArgs(); !slices.Equal(got, want) {
		t.Errorf("whole campaign: child args %q, want %q", got, want)
	}
}

// TestNeedsRedis: a campaign needs a server when a library of it runs on
// one; a replay when its counterexample's library does.
func TestNeedsRedis(t *testing.T) {
	dir := t.TempDir()
	cex := func(lib string) string {
		path, err := writeCex(dir, &Counterexample{Library: lib, Version: "v1.0.0", Workload: "w", Prop: PropBound}, "replay")
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		c    Config
		want bool
	}{
		{Defaults(), true},
		{Config{Libs: "golang.org/x/time,go.uber.org/ratelimit"}, false},
		{Config{Libs: "github.com/go-redis/redis_rate/v10"}, true},
		{Config{Libs: "github.com/go-redis/redis_rate/v10", Replay: cex("golang.org/x/time")}, false},
		{Config{Replay: cex("github.com/go-redis/redis_rate/v10")}, true},
		{Config{Replay: filepath.Join(dir, "none.json")}, false},
	} {
		if got := c.c.NeedsRedis(); got != c.want {
			t.Errorf("%+v: NeedsRedis = %v, want %v", c.c, got, c.want)
		}
	}
}
