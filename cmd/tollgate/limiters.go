package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/limiters"
)

func init() {
	register(command{
		name:    "limiters",
		summary: "check x/time/rate, uber ratelimit and redis_rate, every released version, against spec/limiters.md",
		run:     func(args []string) int { return runLimiters(args, os.Stdout, os.Stderr) },
	})
}

// errLimitersFlags is a command line the flag package could not parse (or
// -h); it has said why.
var errLimitersFlags = errors.New("limiters: bad flags")

// parseLimiters parses limiters' flags into the campaign's configuration,
// resolved: checked, and completed with the checkout to build against.
func parseLimiters(args []string, stderr io.Writer) (limiters.Config, error) {
	c := limiters.Defaults()
	fs := flag.NewFlagSet("limiters", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: tollgate limiters [flags]

Builds every released version of each library (or those of -versions) in a
generated module of its own, runs the library's workloads against it and
checks the properties of spec/limiters.md (L1–L4). Prints the verdicts by
version and each violation with its shrunk calls and the command that
replays it; writes results.md, results.json and cex/ (a counterexample and
a plot per violation) to -out. redis_rate runs on a throwaway redis-server.
A violation is explained when limiters/known.go reads it (a known library
bug or documented behaviour) or an -expect verdict names it; any other
fails the run, as a violation fails check.

-shard i/n runs the i-th of n parts of the campaign, for n machines or CI
jobs sharing it. The unit of work is one workload on one library version,
named MODULE@VERSION:WORKLOAD (an -expect key without its property), and a
unit is in a shard by its name alone: shards 1/n … n/n together run every
unit once. Each shard still builds every version, and writes the results of
its own units; -expect checks only the verdicts of those units.

	tollgate limiters -shard 2/4 -out results-2

-replay FILE rebuilds the counterexample's version and re-runs it; it exits
0 only if the violation reproduces.

flags:
`)
		fs.PrintDefaults()
		helpTail(stderr, "limiters")
	}
	fs.StringVar(&c.Libs, "libs", c.Libs, "libraries (module paths), comma separated")
	fs.StringVar(&c.Versions, "versions", "", "versions per library, e.g. 'golang.org/x/time=v0.9.0+v0.16.0;go.uber.org/ratelimit=v0.3.1' (\"newest\" names the newest; default: every version the module proxy serves)")
	fs.StringVar(&c.Out, "out", "", "directory for results.md, results.json, counterexamples and plots (default: a new temporary directory)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the concurrent workloads")
	fs.BoolVar(&c.Quick, "quick", false, "smaller concurrent workloads")
	fs.StringVar(&c.Workload, "workload", "", "run only the workload of this name")
	fs.StringVar(&c.Shard, "shard", "", "run only shard `i/n` (1-based, e.g. 2/4) of the campaign's units (one workload on one version each), split by name: shards 1/n … n/n together run each unit once")
	fs.StringVar(&c.Replay, "replay", "", "replay one counterexample file and exit")
	fs.StringVar(&c.Expect, "expect", "", "verdicts that must come out, e.g. 'golang.org/x/time@v0.9.0:tiny-rate:L1=VIOLATED,golang.org/x/time@newest:tiny-rate:L1=holds'; exit 1 on a mismatch")
	fs.BoolVar(&c.Table, "table", false, "also print every check (library, version, workload, property, seen / allowed, verdict), not only the summary by version")
	fs.StringVar(&c.Repo, "repo", "", "the tollgate checkout the generated modules build against (default: found from the working directory)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return c, err
		}
		return c, errLimitersFlags
	}
	return c.Resolve()
}

// runLimiters is `tollgate limiters`: limiters.Run, on a throwaway
// redis-server when a library needs one.
func runLimiters(args []string, stdout, stderr io.Writer) int {
	c, err := parseLimiters(args, stderr)
	if err == flag.ErrHelp {
		return limiters.ExitOK
	}
	if err != nil {
		if err != errLimitersFlags {
			fmt.Fprintln(stderr, "tollgate limiters:", err)
		}
		return limiters.ExitUsage
	}
	if c.NeedsRedis() {
		srv, err := redisserver.Start(os.TempDir())
		if err != nil {
			fmt.Fprintln(stderr, "tollgate limiters:", err)
			return limiters.ExitFailed
		}
		defer srv.Stop()
		stopOnSignal(srv, "redis-server "+srv.Addr)
		c.RedisAddr = srv.Addr
	}
	o, err := limiters.Run(c, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "tollgate limiters:", err)
	}
	return limiters.ExitCode(o, err)
}
