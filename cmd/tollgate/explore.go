package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/internal/explore"
	"github.com/tollgate/tollgate/internal/fault"
)

func init() {
	register(command{
		name:    "explore",
		summary: "explore the interleavings of the real tables' code, step by step (exhaustive within a preemption bound, or PCT)",
		run:     func(args []string) int { return runExplore(args, os.Stdout, os.Stderr) },
	})
}

// Exit codes of explore.
const (
	explorePass      = 0
	exploreViolation = 1
	exploreUsage     = 2
)

type exploreConfig struct {
	scenarios []explore.Scenario
	opt       explore.Options
	replay    string
	progress  time.Duration
}

func parseExplore(args []string, stderr io.Writer) (exploreConfig, error) {
	var c exploreConfig
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: tollgate explore [flags]

Runs the scenarios of the interleaving explorer (internal/explore, spec/explore.md)
against the real table code, every seam operation a switch point: exhaustively
within a preemption bound (dfs), or with PCT or a random walk. Every run's history
is checked by porcupine against the model. A violation prints the schedule, a
per-thread trace and the replay command, writes porcupine's visualization, and
exits 1.

scenarios:
`)
		for _, s := range explore.Catalogue() {
			fmt.Fprintf(stderr, "  %-26s %s\n", s.Name, s.Race)
		}
		fmt.Fprint(stderr, "  gen-credits-N, gen-tokenbucket-N  a generated scenario (seed N)\n\ndirected runs (one schedule each, deeper than the bound; run them with -replay):\n")
		for _, d := range explore.Directed() {
			fmt.Fprintf(stderr, "  -scenario %s -replay %s\n", d.Scenario.Name, d.Schedule)
		}
		fmt.Fprint(stderr, "\nflags:\n")
		fs.PrintDefaults()
	}
	scenario := fs.String("scenario", "all", "scenarios to run, comma-separated, or all")
	strategy := fs.String("strategy", "dfs", "dfs, pct or random")
	bound := fs.Int("bound", explore.DefaultBound, "dfs: the largest preemption bound (bounds 0..N in turn)")
	depth := fs.Int("depth", explore.DefaultDepth, "pct: the bug depth d")
	budget := fs.String("budget", "", "per scenario: a number of schedules, a duration (10s), or both (5000,10s); dfs: none by default, pct and random: "+strconv.Itoa(explore.DefaultSchedules)+" schedules")
	seed := fs.Uint64("seed", 1, "seed of pct and random")
	mutant := fs.String("mutant", "", "explore this mutant of internal/fault instead of the real table (scenarios of the other primitive are skipped)")
	replay := fs.String("replay", "", "replay this schedule of one -scenario (as a failure prints it) and print its trace")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "tollgate-explore"), "directory for porcupine's visualization of a failing history")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "interval between progress lines on stderr (0: none)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("explore: unexpected argument %q", fs.Arg(0))
	}
	c.opt = explore.Options{Strategy: explore.Strategy(*strategy), Depth: *depth, Seed: *seed, Dir: *dir, Bound: *bound}
	switch c.opt.Strategy {
	case explore.DFS, explore.PCT, explore.Random:
	default:
		return c, fmt.Errorf("explore: -strategy %q must be dfs, pct or random", *strategy)
	}
	if *bound < 0 || *depth < 1 {
		return c, fmt.Errorf("explore: -bound must be >= 0 and -depth >= 1")
	}
	if *bound == 0 {
		c.opt.Bound = -1 // bound 0 itself, not the default
	}
	if *budget != "" {
		for _, part := range strings.Split(*budget, ",") {
			part = strings.TrimSpace(part)
			if n, err := strconv.Atoi(part); err == nil && n > 0 {
				c.opt.Budget.Schedules = n
			} else if d, err := time.ParseDuration(part); err == nil && d > 0 {
				c.opt.Budget.Time = d
			} else {
				return c, fmt.Errorf("explore: -budget %q: %q is neither a positive number of schedules nor a duration", *budget, part)
			}
		}
	}
	var f fault.Fault
	if *mutant != "" {
		var err error
		if f, err = fault.Parse(*mutant); err != nil {
			return c, fmt.Errorf("explore: -mutant: %w", err)
		}
		if f.Redis() {
			return c, fmt.Errorf("explore: -mutant: %s is a mutant of %s; the explorer drives in-memory tables only", f, f.Package())
		}
		c.opt.Fault = f
	}
	var names []string
	if *scenario == "all" {
		for _, s := range explore.Catalogue() {
			names = append(names, s.Name)
		}
	} else {
		names = strings.Split(*scenario, ",")
	}
	for _, name := range names {
		s, err := lookupScenario(strings.TrimSpace(name))
		if err != nil {
			return c, err
		}
		if *mutant != "" && (s.Primitive == explore.Credits) != f.Credits() {
			if *scenario == "all" {
				continue
			}
			return c, fmt.Errorf("explore: scenario %s is a %s scenario; -mutant %s is not a %s mutant", s.Name, s.Primitive, f, s.Primitive)
		}
		c.scenarios = append(c.scenarios, s)
	}
	c.replay = *replay
	if c.replay != "" {
		if len(c.scenarios) != 1 {
			return c, fmt.Errorf("explore: -replay needs exactly one -scenario")
		}
		if _, err := explore.ParseSchedule(c.replay); err != nil {
			return c, err
		}
	}
	return c, nil
}

// lookupScenario finds a catalogue scenario or makes a generated one.
func lookupScenario(name string) (explore.Scenario, error) {
	if s, ok := explore.Lookup(name); ok {
		return s, nil
	}
	for _, p := range []explore.Primitive{explore.Credits, explore.TokenBucket} {
		if rest, ok := strings.CutPrefix(name, "gen-"+string(p)+"-"); ok {
			if seed, err := strconv.ParseUint(rest, 10, 64); err == nil {
				return explore.Generate(p, seed), nil
			}
		}
	}
	return explore.Scenario{}, fmt.Errorf("explore: no scenario %q (tollgate explore -h lists them)", name)
}

func runExplore(args []string, stdout, stderr io.Writer) int {
	c, err := parseExplore(args, stderr)
	if err == flag.ErrHelp {
		return exploreUsage
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	if c.replay != "" {
		s := c.scenarios[0]
		rep, err := explore.ReplayDir(s, c.opt.Fault, c.replay, c.opt.Dir)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exploreUsage
		}
		if rep.Failure != nil {
			fmt.Fprintln(stdout, rep.Failure.Report())
			return exploreViolation
		}
		fmt.Fprintf(stdout, "scenario %s, mutant %s, schedule %s (%d preemptions): no violation\n\n%s\noutcome: %s\n",
			s.Name, c.opt.Fault, rep.Schedule, rep.Preemptions, rep.Trace, rep.Outcome)
		return explorePass
	}
	target := "the real tables"
	if c.opt.Fault != fault.None {
		target = "mutant " + c.opt.Fault.String()
	}
	fmt.Fprintf(stdout, "tollgate explore: %d scenarios, %s, strategy %s\n", len(c.scenarios), target, c.opt.Strategy)
	var results []explore.Result
	code := explorePass
	for _, s := range c.scenarios {
		opt := c.opt
		last := time.Now()
		if c.progress > 0 {
			opt.Progress = func(r explore.Result) {
				if time.Since(last) < c.progress {
					return
				}
				last = time.Now()
				fmt.Fprintf(stderr, "explore %s: %d schedules (bound %d), %v\n", s.Name, r.Schedules, r.Bound, r.Elapsed.Round(time.Millisecond))
			}
		}
		r := explore.Explore(s, opt)
		results = append(results, r)
		switch {
		case r.Err != nil:
			fmt.Fprintf(stdout, "\n%s: %v\n", s.Name, r.Err)
			code = exploreViolation
		case r.Failure != nil:
			fmt.Fprintf(stdout, "\n%s\n", r.Failure.Report())
			code = exploreViolation
		}
	}
	fmt.Fprintln(stdout)
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tthreads\toperations\tschedules\texhaustive\tresult\ttime")
	for _, r := range results {
		exh := "-"
		if r.Strategy == explore.DFS {
			exh = "no"
			if r.Exhaustive {
				exh = fmt.Sprintf("yes (bound %d)", r.Bound)
			}
		}
		result := "pass"
		switch {
		case r.Err != nil:
			result = "error"
		case r.Failure != nil:
			result = string(r.Failure.Kind) + " violation"
			if r.Failure.Invariant != "" {
				result += " (" + r.Failure.Invariant + ")"
			}
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\t%v\n", r.Scenario, r.Threads, r.Ops, r.Schedules, exh, result, r.Elapsed.Round(time.Millisecond))
	}
	w.Flush()
	return code
}
