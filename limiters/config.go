package limiters

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/tollgate/tollgate/internal/shard"
)

// Config is the whole input of `tollgate limiters`, a campaign or the
// replay of one counterexample. Start from Defaults. Each field but
// RedisAddr is one flag of the command.
type Config struct {
	// Libs are the libraries run (module paths), separated by commas.
	Libs string
	// Versions are the versions run per library, e.g.
	// "golang.org/x/time=v0.9.0+newest;go.uber.org/ratelimit=v0.3.1"
	// ("newest" names the newest); a library not listed runs every
	// version the module proxy serves.
	Versions string
	// Out is the directory for results.md, results.json, counterexamples
	// and plots ("": a new temporary directory).
	Out string
	// Seed seeds the concurrent workloads.
	Seed uint64
	// Quick makes the concurrent workloads smaller.
	Quick bool
	// Workload runs only the workload of this name ("" for every one).
	Workload string
	// Shard runs only the units of shard i/n (see Unit); "" for all.
	Shard string
	// Replay names one counterexample file to replay instead of running a
	// campaign; only Repo and RedisAddr matter then.
	Replay string
	// Expect lists verdicts that must come out (see ParseExpect).
	Expect string
	// Table prints every check, not only the summary by version.
	Table bool
	// Repo is the tollgate checkout the generated modules build against
	// (""; found by Resolve from the working directory).
	Repo string
	// RedisAddr is the redis-server a library that needs one runs against
	// (see NeedsRedis); the command starts a throwaway one.
	RedisAddr string
}

// Defaults is the configuration of a bare `tollgate limiters`: every
// library, every version, seed 1.
func Defaults() Config {
	var libs []string
	for _, t := range Targets {
		libs = append(libs, t.Module)
	}
	return Config{Libs: strings.Join(libs, ","), Seed: 1}
}

// Resolve checks c and returns it completed with the checkout to build
// against when Repo is empty. A replay reads no other flag, so only a
// campaign's flags are checked. An error names the flag and the rule it
// breaks, and comes with c unchanged; ExitCode maps it to ExitUsage.
func (c Config) Resolve() (Config, error) {
	in := c
	if c.Replay == "" {
		if err := c.check(); err != nil {
			return in, inputError{err}
		}
	}
	if c.Repo == "" {
		root, err := findRepo()
		if err != nil {
			return in, inputError{err}
		}
		c.Repo = root
	}
	return c, nil
}

// check checks a campaign's flags.
func (c Config) check() error {
	if _, err := shard.Parse(c.Shard); err != nil {
		return err
	}
	if _, err := c.modules(); err != nil {
		return err
	}
	if _, err := c.versions(); err != nil {
		return err
	}
	if _, err := ParseExpect(c.Expect); err != nil {
		return fmt.Errorf("-expect: %w", err)
	}
	return nil
}

// modules are the libraries of Libs, in order.
func (c Config) modules() ([]string, error) {
	var ms []string
	for _, m := range strings.Split(c.Libs, ",") {
		if m = strings.TrimSpace(m); m != "" {
			if _, err := TargetOf(m); err != nil {
				return nil, fmt.Errorf("-libs: %w", err)
			}
			ms = append(ms, m)
		}
	}
	return ms, nil
}

// versions are the versions of Versions, by module.
func (c Config) versions() (map[string][]string, error) {
	vs := map[string][]string{}
	if c.Versions == "" {
		return vs, nil
	}
	for _, part := range strings.Split(c.Versions, ";") {
		m, v, ok := strings.Cut(part, "=")
		if !ok || m == "" || v == "" {
			return nil, fmt.Errorf("-versions: %q must be MODULE=VERSION+VERSION…", part)
		}
		vs[strings.TrimSpace(m)] = strings.Split(strings.TrimSpace(v), "+")
	}
	return vs, nil
}

// plan is the campaign of a resolved c, its counterexamples written in
// dir/cex, its modules built in work.
func (c Config) plan(work, dir string) Plan {
	ms, _ := c.modules()
	vs, _ := c.versions()
	sh, _ := shard.Parse(c.Shard)
	p := Plan{Repo: c.Repo, Work: work, Dir: dir, Seed: c.Seed, Quick: c.Quick, Workload: c.Workload,
		Versions: vs, Modules: ms, Shard: sh, Replay: "go run ./cmd/tollgate limiters --replay"}
	if c.RedisAddr != "" {
		p.Env = append(p.Env, "TOLLGATE_REDIS_ADDR="+c.RedisAddr)
	}
	return p
}

// NeedsRedis reports whether the run c describes needs a redis-server
// (RedisAddr): a campaign of a library that runs on one, or the replay of
// such a library's counterexample (a file that cannot be read needs none;
// the replay reports it).
func (c Config) NeedsRedis() bool {
	if c.Replay != "" {
		cex, err := ReadCex(c.Replay)
		if err != nil {
			return false
		}
		t, err := TargetOf(cex.Library)
		return err == nil && t.Redis
	}
	ms, _ := c.modules()
	return slices.ContainsFunc(ms, func(m string) bool { t, _ := TargetOf(m); return t.Redis })
}

// findRepo asks the go command for the directory of the module
// github.com/tollgate/tollgate, found from the working directory.
func findRepo() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tollgate/tollgate")
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New("run it inside the tollgate checkout, or pass -repo DIR (go list -m github.com/tollgate/tollgate failed)")
	}
	return strings.TrimSpace(string(out)), nil
}

// inputError is an error of the input of a run (a flag, or a
// counterexample that cannot be replayed): ExitUsage.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }
