package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path"
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
	// generated marks the scenarios of the generated set (Systematic), whose
	// results are summed by prefix unless verbose.
	generated map[string]bool
	opt       explore.Options
	replay    string
	progress  time.Duration
	coverage  bool
	verbose   bool
	failfast  bool
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

-scenario takes names, comma-separated, glob patterns of names (sys-tb-compact-*),
or: all (the default: the catalogue, then the generated set), catalogue, generated.

scenarios of the catalogue:
`)
		for _, s := range explore.Catalogue() {
			fmt.Fprintf(stderr, "  %-26s %s\n", s.Name, s.Race)
		}
		sys := explore.Systematic()
		fmt.Fprintf(stderr, `
generated scenarios (spec/explore.md §10):
  %s … %s
      the generated set: %d systematic scenarios, every pair of operations
      of each table from each prefix (sys-cr-PREFIX-OP-OP, sys-tb-PREFIX-OP-OP);
      -coverage prints which pairs met on which kinds of word; %d more are
      held back (made, replayable by name, not run: spec/explore.md)
  gen-credits-N, gen-tokenbucket-N
      a random scenario (seed N)

directed runs (one schedule each, deeper than the bound; run them with -replay):
`, sys[0].Name, sys[len(sys)-1].Name, len(sys), len(explore.Held()))
		for _, d := range explore.Directed() {
			fmt.Fprintf(stderr, "  -scenario %s -replay %s\n", d.Scenario.Name, d.Schedule)
		}
		fmt.Fprint(stderr, "\nflags:\n")
		fs.PrintDefaults()
	}
	scenario := fs.String("scenario", "all", "scenarios to run: names or glob patterns, comma-separated; all, catalogue or generated")
	strategy := fs.String("strategy", "dfs", "dfs, pct or random")
	bound := fs.Int("bound", explore.DefaultBound, "dfs: the largest preemption bound (bounds 0..N in turn)")
	depth := fs.Int("depth", explore.DefaultDepth, "pct: the bug depth d")
	budget := fs.String("budget", "", "per scenario: a number of schedules, a duration (10s), or both (5000,10s); dfs: none by default, pct and random: "+strconv.Itoa(explore.DefaultSchedules)+" schedules")
	seed := fs.Uint64("seed", 1, "seed of pct and random")
	mutant := fs.String("mutant", "", "explore this mutant of internal/fault instead of the real table (scenarios of the other primitive are skipped)")
	replay := fs.String("replay", "", "replay this schedule of one -scenario (as a failure prints it) and print its trace")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "tollgate-explore"), "directory for porcupine's visualization of a failing history")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "interval between progress lines on stderr (0: none)")
	fs.BoolVar(&c.coverage, "coverage", false, "print the coverage table of the generated scenarios (markdown; spec/explore-coverage.md) and exit; at bound "+strconv.Itoa(explore.CoverageBound)+" unless -bound is given")
	fs.BoolVar(&c.verbose, "v", false, "list every generated scenario in the results, not one line per prefix")
	fs.BoolVar(&c.failfast, "failfast", false, "stop at the first scenario that fails")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	boundSet := false
	fs.Visit(func(f *flag.Flag) { boundSet = boundSet || f.Name == "bound" })
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
	if c.coverage && !boundSet {
		*bound = explore.CoverageBound
	}
	c.opt.Bound = *bound
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
	c.generated = map[string]bool{}
	for _, s := range explore.Systematic() {
		c.generated[s.Name] = true
	}
	if c.coverage {
		return c, nil
	}
	sets := map[string]bool{}
	for _, name := range strings.Split(*scenario, ",") {
		name = strings.TrimSpace(name)
		ss, set, err := selectScenarios(name)
		if err != nil {
			return c, err
		}
		for _, s := range ss {
			if *mutant != "" && (s.Primitive == explore.Credits) != f.Credits() {
				if set {
					continue
				}
				return c, fmt.Errorf("explore: scenario %s is a %s scenario; -mutant %s is not a %s mutant", s.Name, s.Primitive, f, s.Primitive)
			}
			if !sets[s.Name] {
				sets[s.Name] = true
				c.scenarios = append(c.scenarios, s)
			}
		}
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

// selectScenarios resolves one word of -scenario: a set (all, catalogue,
// generated), a glob pattern over the catalogue and the generated set, or
// one name (explore.Lookup: the catalogue, a directed run, a generated
// scenario, gen-credits-N, gen-tokenbucket-N). set reports a set or a
// pattern, whose scenarios of the other primitive -mutant skips.
func selectScenarios(name string) (ss []explore.Scenario, set bool, err error) {
	switch name {
	case "all":
		return append(explore.Catalogue(), explore.Systematic()...), true, nil
	case "catalogue":
		return explore.Catalogue(), true, nil
	case "generated":
		return explore.Systematic(), true, nil
	}
	if strings.ContainsAny(name, "*?[") {
		if _, err := path.Match(name, ""); err != nil {
			return nil, false, fmt.Errorf("explore: -scenario %q: %v", name, err)
		}
		for _, s := range append(explore.Catalogue(), explore.Systematic()...) {
			if ok, _ := path.Match(name, s.Name); ok {
				ss = append(ss, s)
			}
		}
		if len(ss) == 0 {
			return nil, true, fmt.Errorf("explore: no scenario matches %q (tollgate explore -h lists them)", name)
		}
		return ss, true, nil
	}
	if s, ok := explore.Lookup(name); ok {
		return []explore.Scenario{s}, false, nil
	}
	return nil, false, fmt.Errorf("explore: no scenario %q (tollgate explore -h lists them)", name)
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
	if c.coverage {
		cov, err := explore.ComputeCoverage(max(c.opt.Bound, 0))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exploreViolation
		}
		fmt.Fprint(stdout, cov.Markdown())
		if len(cov.Failures) > 0 {
			return exploreViolation
		}
		return explorePass
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
		if code != explorePass && c.failfast {
			break
		}
	}
	rows := make([]resultRow, 0, len(results))
	for _, r := range results {
		rows = append(rows, resultRow{Result: r, n: 1})
	}
	if !c.verbose {
		rows = groupGenerated(rows, c.generated)
	}
	fmt.Fprintln(stdout)
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tthreads\toperations\tschedules\texhaustive\tresult\ttime")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%v\n", r.Scenario, r.threads(), r.ops(), r.Schedules, r.exhaustive(), r.result(), r.Elapsed.Round(time.Millisecond))
	}
	w.Flush()
	return code
}

// resultRow is one line of the results: one scenario's, or the sum of the
// generated scenarios of one prefix.
type resultRow struct {
	explore.Result
	n, complete, failed int // scenarios summed; how many were exhaustive; failed
	threadsMin, opsMin  int // the fewest threads and operations of those summed
}

func (r resultRow) threads() string { return span(r.threadsMin, r.Threads, r.n) }
func (r resultRow) ops() string     { return span(r.opsMin, r.Ops, r.n) }

func span(lo, hi, n int) string {
	if n == 1 || lo == hi {
		return strconv.Itoa(hi)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func (r resultRow) exhaustive() string {
	switch {
	case r.Strategy != explore.DFS:
		return "-"
	case r.n > 1 && r.complete < r.n:
		return fmt.Sprintf("%d of %d (bound %d)", r.complete, r.n, r.Bound)
	case r.n > 1 || r.Exhaustive:
		return fmt.Sprintf("yes (bound %d)", r.Bound)
	}
	return "no"
}

func (r resultRow) result() string {
	switch {
	case r.n > 1 && r.failed > 0:
		return fmt.Sprintf("%d of %d failed", r.failed, r.n)
	case r.n > 1:
		return fmt.Sprintf("pass (%d scenarios)", r.n)
	case r.Err != nil:
		return "error"
	case r.Failure != nil:
		v := string(r.Failure.Kind) + " violation"
		if r.Failure.Invariant != "" {
			v += " (" + r.Failure.Invariant + ")"
		}
		return v
	}
	return "pass"
}

// groupGenerated sums the rows of the generated scenarios into one per
// prefix (sys-cr-own-* sums every scenario whose name starts so), at the
// place of the prefix's first; a failed scenario keeps a line of its own
// too, after its prefix's.
func groupGenerated(rows []resultRow, generated map[string]bool) []resultRow {
	var out []resultRow
	index := map[string]int{}
	for _, r := range rows {
		if !generated[r.Scenario] {
			out = append(out, r)
			continue
		}
		parts := strings.SplitN(r.Scenario, "-", 4)
		name := strings.Join(parts[:3], "-") + "-*"
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, resultRow{Result: explore.Result{Scenario: name, Strategy: r.Strategy, Threads: r.Threads, Ops: r.Ops},
				threadsMin: r.Threads, opsMin: r.Ops})
		}
		g := &out[i]
		g.n++
		g.Threads, g.threadsMin = max(g.Threads, r.Threads), min(g.threadsMin, r.Threads)
		g.Ops, g.opsMin = max(g.Ops, r.Ops), min(g.opsMin, r.Ops)
		g.Schedules += r.Schedules
		g.Elapsed += r.Elapsed
		g.Bound = max(g.Bound, r.Bound)
		if r.Exhaustive {
			g.complete++
		}
		if r.Err != nil || r.Failure != nil {
			g.failed++
			out = append(out, r)
		}
	}
	return out
}
