package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/shard"
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
	scenarios []interleave.Scenario
	// generated marks the scenarios of the generated set (Systematic), whose
	// results are summed by prefix unless verbose.
	generated map[string]bool
	opt       interleave.Options
	replay    string
	progress  time.Duration
	coverage  bool
	verbose   bool
	failfast  bool
	// sitePairs: -site-pairs, the file that receives the interleaving
	// coverage of the run.
	sitePairs string
	// sitePairRuns: -site-pair-runs, the file that receives the first run
	// that covered each pair.
	sitePairRuns string
	// pkg: explore -pkg, the tests of a package of the user's.
	pkg *pkgConfig
	// targets: explore -targets, the campaign over code written elsewhere.
	targets *targetsConfig
	// backend: -backend, "memory" or "etcd" (the token bucket on etcd, at
	// the grain of its requests: backends/etcdexplore).
	backend string
	// procs: -procs, the processes that explore the scenarios
	// (explorepar.go); worker: -worker, this process is one of them.
	procs  int
	worker bool
	args   []string // the command line, for the workers
}

func parseExplore(args []string, stderr io.Writer) (exploreConfig, error) {
	var c exploreConfig
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { exploreHelp(fs, stderr) }
	scenario := fs.String("scenario", interleave.DefaultSelection, "scenarios to run: names or glob patterns, comma-separated; all (every set below), catalogue, generated, edges, owner, directed, pairs (the runs kept for coverage), or capped (the scenarios searched within a cap of preemptions)")
	strategy := fs.String("strategy", "dfs", "dfs, pct or random")
	bound := fs.Int("bound", interleave.DefaultBound, "dfs: the largest preemption bound (bounds 0..N in turn)")
	depth := fs.Int("depth", interleave.DefaultDepth, "pct: the bug depth d")
	budget := fs.String("budget", "", "per scenario: a number of schedules, a duration (10s), or both (5000,10s); dfs: none by default, pct and random: "+strconv.Itoa(interleave.DefaultSchedules)+" schedules")
	seed := fs.Uint64("seed", 1, "seed of pct and random")
	mutant := fs.String("mutant", "", "explore this mutant of internal/fault instead of the real table (scenarios of the other primitive are skipped)")
	replay := fs.String("replay", "", "replay this schedule of one -scenario (as a failure prints it) and print its trace")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "tollgate-explore"), "directory for porcupine's visualization of a failing history")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "interval between progress lines on stderr (0: none)")
	fs.BoolVar(&c.coverage, "coverage", false, "print the coverage table of the generated scenarios (markdown; spec/explore-coverage.md) and exit; at bound "+strconv.Itoa(interleave.CoverageBound)+" unless -bound is given")
	fs.BoolVar(&c.verbose, "v", false, "list every generated scenario in the results, not one line per prefix")
	fs.BoolVar(&c.failfast, "failfast", false, "stop at the first scenario that fails")
	fs.StringVar(&c.sitePairs, "site-pairs", "", "write the run's interleaving coverage to this `file`: every pair of access sites of the tables that some run executed in that order with a switch of threads between them (a measurement: it records every step's call site; scripts/explore-site-pairs.sh renders spec/explore-site-pairs.md from it)")
	shardFlag := fs.String("shard", "", "run only shard `i/n` (1-based, e.g. 2/4) of the selected scenarios, split by name: shards 1/n … n/n together run each scenario once")
	pkg := fs.String("pkg", "", "explore your own code: run the tests of this package (a directory, or a go list pattern in the current module) with it and every package it imports rewritten for exploration (no source changes; see explore/doc.go); -run, -tags, -dir, -strategy, -bound, -seed, -budget, -replay and -v apply")
	run := fs.String("run", "", "with -pkg: run only the tests matching this regexp (go test -run)")
	tags := fs.String("tags", "", "with -pkg: build tags")
	targetList := fs.String("targets", "", "run the campaign over code nobody here wrote (internal/targets): all, or names, comma-separated (xtime, uber, hashtriemap, xsync, semaphore, errgroup, singleflight, puddle, conc, expirable)")
	versions := fs.String("versions", "all", "with -targets: all, latest, or versions, comma-separated (one target)")
	teeth := fs.Bool("teeth", false, "with -targets: also run every tooth (a hand-written concurrency bug in a copy of the target), which the scenarios must find")
	out := fs.String("out", "", "with -targets: write targets.md and targets.json to this directory (default: print the table)")
	keep := fs.Bool("keep", false, "with -targets: keep each scenarios' module (to replay in it)")
	replays := fs.Bool("replays", false, "with -targets: replay every schedule the table shows with the command it prints, and fail when one does not reproduce")
	checkReplays := fs.Bool("check-replays", false, "with -targets and -out: explore nothing; replay the schedules that -out's table shows for these targets, and write it again with what each gave")
	fs.StringVar(&c.sitePairRuns, "site-pair-runs", "", "write, for every pair of access sites some run covered (as -site-pairs), the scenario and schedule of the first run that did to this `file` (with -procs 1): runs to replay, one a pair (scripts/explore-pair-runs.sh)")
	uncapped := fs.Bool("uncapped", false, "explore every scenario at -bound, past the cap of preemptions the scenario sets for the default run (a deeper search, for -site-pair-runs)")
	fs.IntVar(&c.procs, "procs", defaultProcs(), "explore the scenarios in this many processes at once, each one scenario at a time (1: in this process); the results are the same, in the same order")
	fs.BoolVar(&c.worker, "worker", false, "run as one of -procs's processes: read scenario indices on stdin, write results on stdout (internal)")
	fs.StringVar(&c.backend, "backend", "memory", "memory, or etcd: explore the etcd-backed tables (impl/etcd/...) at the grain of their requests, on a one-member etcd started for the run (needs the etcd program); the catalogue unless -scenario names others")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.args = args
	if *targetList != "" {
		b := 0
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "bound" {
				b = max(*bound, 1)
			}
		})
		tc, err := parseTargets(*targetList, *versions, *teeth, *run, *out, *keep, b)
		if tc != nil {
			tc.replays, tc.checkReplays = *replays, *checkReplays
		}
		return exploreConfig{targets: tc}, err
	}
	if *pkg != "" {
		return parsePkg(fs, pkgConfig{pkg: *pkg, run: *run, tags: *tags, replay: *replay, strategy: *strategy,
			bound: *bound, seed: *seed, dir: *dir, verbose: c.verbose}, *budget)
	}
	if *run != "" || *tags != "" {
		return c, fmt.Errorf("explore: -run and -tags go with -pkg")
	}
	boundSet := false
	fs.Visit(func(f *flag.Flag) { boundSet = boundSet || f.Name == "bound" })
	if fs.NArg() > 0 {
		return c, fmt.Errorf("explore: unexpected argument %q", fs.Arg(0))
	}
	var err error
	opt := interleave.Options{Strategy: interleave.Strategy(*strategy), Depth: *depth, Seed: *seed, Dir: *dir, Bound: *bound, Uncapped: *uncapped}
	if c.opt, err = exploreOptions(opt, *mutant, *budget, c.coverage && !boundSet); err != nil {
		return c, err
	}
	sh, err := shard.Parse(*shardFlag)
	if err != nil {
		return c, fmt.Errorf("explore: %w", err)
	}
	c.generated = map[string]bool{}
	for _, s := range interleave.Systematic() {
		c.generated[s.Name] = true
	}
	if c.coverage {
		return c, nil
	}
	if c.scenarios, err = interleave.Select(*scenario, c.opt.Fault, sh); err != nil {
		return c, err
	}
	scenarioSet := false
	fs.Visit(func(f *flag.Flag) { scenarioSet = scenarioSet || f.Name == "scenario" })
	if c.scenarios, err = onBackend(c, scenarioSet, sh); err != nil {
		return c, err
	}
	c.replay = *replay
	return c, checkReplay(c)
}

// parsePkg checks explore -pkg's flags: the catalogue's own (-scenario,
// -mutant, -coverage, -shard, -failfast) do not apply.
func parsePkg(fs *flag.FlagSet, p pkgConfig, budget string) (exploreConfig, error) {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "scenario", "mutant", "coverage", "shard", "failfast", "depth", "progress":
			err = fmt.Errorf("explore: -%s does not apply with -pkg (it is for tollgate's own scenarios)", f.Name)
		case "bound":
			if p.bound < 1 {
				err = fmt.Errorf("explore: -bound %d: with -pkg it must be at least 1", p.bound)
			}
		}
	})
	if err != nil {
		return exploreConfig{}, err
	}
	if fs.NArg() > 0 {
		return exploreConfig{}, fmt.Errorf("explore: unexpected argument %q", fs.Arg(0))
	}
	visited := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { visited[f.Name] = true })
	if !visited["bound"] {
		p.bound = 0 // the test's Options, else interleave.DefaultBound
	}
	if !visited["strategy"] {
		p.strategy = ""
	}
	if !visited["seed"] {
		p.seed = 0
	}
	if !visited["dir"] {
		p.dir = "" // the test's Options: no files unless it sets Dir
	}
	if p.replay != "" && p.run == "" {
		return exploreConfig{}, fmt.Errorf("explore: -replay %s needs -run naming the one test it replays: a schedule fits one scenario, and in every other test it would replay something else", p.replay)
	}
	switch p.strategy {
	case "", "dfs", "pct", "random":
	default:
		return exploreConfig{}, fmt.Errorf("explore: -strategy %q: want dfs, pct or random", p.strategy)
	}
	if p.replay != "" {
		// A generated scenario's failure replays as REF@SCHEDULE
		// (explore.CheckScenarios): the test reads the reference.
		schedule := p.replay
		if _, after, ok := strings.Cut(schedule, "@"); ok {
			schedule = after
		}
		if _, err := interleave.ParseSchedule(schedule); err != nil {
			return exploreConfig{}, err
		}
	}
	if p.budget, err = interleave.ParseBudget(budget); err != nil {
		return exploreConfig{}, err
	}
	return exploreConfig{pkg: &p}, nil
}

// exploreOptions completes opt from the flags -mutant and -budget and
// checks it; coverageBound: -coverage without -bound.
func exploreOptions(opt interleave.Options, mutant, budget string, coverageBound bool) (interleave.Options, error) {
	var err error
	if mutant != "" {
		if opt.Fault, err = fault.Parse(mutant); err != nil {
			return opt, fmt.Errorf("explore: -mutant: %w", err)
		}
	}
	if err := opt.Check(); err != nil {
		return opt, err
	}
	if coverageBound {
		opt.Bound = interleave.CoverageBound
	}
	if opt.Bound == 0 {
		opt.Bound = -1 // bound 0 itself, not the default
	}
	opt.Budget, err = interleave.ParseBudget(budget)
	return opt, err
}

// checkReplay checks -replay: one scenario and a schedule.
func checkReplay(c exploreConfig) error {
	if c.replay == "" {
		return nil
	}
	if len(c.scenarios) != 1 {
		return fmt.Errorf("explore: -replay needs exactly one -scenario")
	}
	_, err := interleave.ParseSchedule(c.replay)
	return err
}

func runExplore(args []string, stdout, stderr io.Writer) int {
	c, err := parseExplore(args, stderr)
	if err == flag.ErrHelp {
		return explorePass
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	switch {
	case c.pkg != nil:
		return runExplorePkg(*c.pkg, stdout, stderr)
	case c.targets != nil:
		return runTargets(c.targets, stdout, stderr)
	case c.coverage:
		return exploreCoverage(c, stdout, stderr)
	}
	// The explorer allocates a little at every step and keeps little: a
	// process's heap stays under 70 MB. Collecting at 4 times the live
	// heap rather than twice cut the default run's CPU by about 15%
	// (2026-12-06, 2 cores: 118-120 s of user time against 96-107 s,
	// 63-64 s of wall time against 51-57 s, each process's peak RSS 66
	// MB against 129 MB). GOGC, when set, is the user's.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if c.backend == "etcd" {
		stop, err := startEtcd(&c)
		if err != nil {
			fmt.Fprintf(stderr, "explore -backend etcd: %v\n", err)
			return exploreUsage
		}
		defer stop()
	}
	if c.replay != "" {
		return exploreReplay(c, stdout, stderr)
	}
	if c.worker {
		return exploreWorker(c, os.Stdin, stdout)
	}
	target := "the real tables"
	if c.opt.Fault != fault.None {
		target = "mutant " + c.opt.Fault.String()
	}
	if c.backend == "etcd" {
		target += " on etcd, a step per request"
	}
	fmt.Fprintf(stdout, "tollgate explore: %d scenarios, %s, strategy %s\n", len(c.scenarios), target, c.opt.Strategy)
	var progress func(interleave.Scenario) func(interleave.Result)
	if c.progress > 0 {
		progress = func(s interleave.Scenario) func(interleave.Result) { return progressTo(stderr, s, c.progress) }
	}
	if err := c.collectSitePairs(); err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	report := func(r interleave.Result) {
		switch {
		case r.Err != nil:
			fmt.Fprintf(stdout, "\n%s: %v\n", r.Scenario, r.Err)
		case r.Failure != nil:
			fmt.Fprintf(stdout, "\n%s\n", r.Failure.Report())
		}
	}
	var results []interleave.Result
	var failed bool
	if parallel(c) {
		results, failed, err = exploreParallel(c, stdout, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "explore -procs %d: %v\n", c.procs, err)
			return exploreUsage
		}
	} else {
		results, failed = interleave.Run(c.scenarios, c.opt, c.failfast, progress, report)
	}
	exploreTable(stdout, results, c)
	if err := c.writeSitePairFiles(stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	if failed {
		return exploreViolation
	}
	return explorePass
}

// progressTo is a scenario's Options.Progress: a line on w every so often.
func progressTo(w io.Writer, s interleave.Scenario, every time.Duration) func(interleave.Result) {
	last := time.Now()
	return func(r interleave.Result) {
		if time.Since(last) < every {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "explore %s: %d schedules (bound %d), %v\n", s.Name, r.Schedules, r.Bound, r.Elapsed.Round(time.Millisecond))
	}
}

func exploreCoverage(c exploreConfig, stdout, stderr io.Writer) int {
	cov, err := interleave.ComputeCoverage(max(c.opt.Bound, 0))
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

func exploreReplay(c exploreConfig, stdout, stderr io.Writer) int {
	s := c.scenarios[0]
	rep, err := interleave.ReplayRemote(s, c.opt.Remote, c.opt.Fault, c.replay, c.opt.Dir)
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

// exploreTable writes the results, the generated scenarios summed by
// prefix unless -v.
func exploreTable(stdout io.Writer, results []interleave.Result, c exploreConfig) {
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
}

// exploreHelp writes explore's usage: the scenarios and the flags.
func exploreHelp(fs *flag.FlagSet, stderr io.Writer) {
	fmt.Fprint(stderr, `usage: tollgate explore -pkg DIR [-run REGEXP] [-replay SCHEDULE] [-tags TAGS] [-dir DIR] [-strategy S] [-bound N] [-seed N] [-budget B] [-v]
       tollgate explore [-scenario NAMES] [flags]     (tollgate's own tables)
       tollgate explore -targets NAMES [-versions V] [-teeth] [-out DIR]

Explore your own code: -pkg runs the tests of the package in DIR (or a go list
pattern of the current module) with it and every package it imports rewritten
for exploration, through the go command's -overlay (the source is not changed):
each test calls interleave.Check with a Spec (explore/doc.go). A failure prints
its schedule and the command that replays it with a trace (-run naming the
test, -replay the schedule). -tags are go test's build tags; -dir keeps
porcupine's visualization of a failing history (none is written without it).
From another module: build this command from a checkout of tollgate
(go install ./cmd/tollgate) and require github.com/tollgate/tollgate with a
replace line pointing at the checkout, as examples/explore/go.mod does.

Without -pkg it runs the scenarios of the interleaving explorer (internal/interleave, spec/explore.md)
against the real table code, every seam operation a switch point: exhaustively
within a preemption bound (dfs), or with PCT or a random walk. Every run's history
is checked by porcupine against the model. A violation prints the schedule, a
per-thread trace and the replay command, writes porcupine's visualization, and
exits 1.

-scenario takes names, comma-separated, glob patterns of names (sys-tb-compact-*),
or: all (the default: the catalogue, then the generated set, then the directed runs),
catalogue, generated, directed.

scenarios of the catalogue:
`)
	for _, s := range interleave.Catalogue() {
		fmt.Fprintf(stderr, "  %-26s %s\n", s.Name, s.Race)
	}
	sys := interleave.Systematic()
	fmt.Fprintf(stderr, `
generated scenarios (spec/explore.md §10):
  %s … %s
      the generated set: %d systematic scenarios, every pair of operations
      of each table from each prefix (sys-cr-PREFIX-OP-OP, sys-tb-PREFIX-OP-OP);
      -coverage prints which pairs met on which kinds of word; %d more are
      held back (made, replayable by name, not run: spec/explore.md)
  gen-credits-N, gen-tokenbucket-N
      a random scenario (seed N)

directed runs (-scenario directed; part of all): one schedule each, deeper
than the bound, replayed once (trace one with -scenario NAME -replay SCHEDULE):
`, sys[0].Name, sys[len(sys)-1].Name, len(sys), len(interleave.Held()))
	for _, d := range interleave.Directed() {
		fmt.Fprintf(stderr, "  -scenario %s -replay %s\n", d.Scenario.Name, d.Schedule)
	}
	fmt.Fprint(stderr, "\nflags:\n")
	fs.PrintDefaults()
	helpTail(stderr, "explore")
}

// resultRow is one line of the results: one scenario's, or the sum of the
// generated scenarios of one prefix.
type resultRow struct {
	interleave.Result
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
	case r.Strategy == interleave.FixedSchedule:
		return "directed (1 schedule)"
	case r.Strategy != interleave.DFS:
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
			out = append(out, resultRow{Result: interleave.Result{Scenario: name, Strategy: r.Strategy, Threads: r.Threads, Ops: r.Ops},
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
		g.Exhaustive = g.complete == g.n // a prefix of one scenario says so too
		if r.Err != nil || r.Failure != nil {
			g.failed++
			out = append(out, r)
		}
	}
	return out
}

// collectSitePairs gives the run a collector of site pairs when -site-pairs
// or -site-pair-runs asks for one.
func (c *exploreConfig) collectSitePairs() error {
	if c.sitePairs == "" && c.sitePairRuns == "" {
		return nil
	}
	c.opt.SitePairs = interleave.NewSitePairs()
	if c.sitePairRuns != "" {
		if parallel(*c) {
			return fmt.Errorf("explore: -site-pair-runs needs -procs 1: the first run of a pair is one process's")
		}
		c.opt.SitePairs.KeepRuns()
	}
	return nil
}

// writeSitePairFiles writes what -site-pairs and -site-pair-runs ask for.
func (c *exploreConfig) writeSitePairFiles(stdout io.Writer) error {
	if c.sitePairs != "" {
		if !parallel(*c) { // the workers wrote theirs, and exploreParallel joined them
			if err := writeSitePairs(c.sitePairs, c.opt.SitePairs); err != nil {
				return fmt.Errorf("explore: -site-pairs: %w", err)
			}
		}
		n, err := countSitePairs(c.sitePairs)
		if err != nil {
			return fmt.Errorf("explore: -site-pairs: %w", err)
		}
		fmt.Fprintf(stdout, "interleaving coverage: %d site pairs written to %s\n", n, c.sitePairs)
	}
	if c.sitePairRuns != "" {
		if err := writeSitePairRuns(c.sitePairRuns, c.opt.SitePairs); err != nil {
			return fmt.Errorf("explore: -site-pair-runs: %w", err)
		}
	}
	return nil
}

// writeSitePairs writes the pairs sp collected to path, paths relative to
// the working directory.
// countSitePairs is how many pairs the file at path, written by
// -site-pairs, holds.
func countSitePairs(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	pairs, err := interleave.ReadSitePairs(f)
	return len(pairs), err
}

func writeSitePairs(path string, sp *interleave.SitePairs) error {
	return writeSiteFile(path, sp, interleave.WriteSitePairs)
}

// writeSitePairRuns writes the first run of every pair sp collected to
// path, paths relative to the working directory.
func writeSitePairRuns(path string, sp *interleave.SitePairs) error {
	return writeSiteFile(path, sp, interleave.WriteSitePairRuns)
}

func writeSiteFile(path string, sp *interleave.SitePairs, write func(io.Writer, []interleave.SitePair, string) error) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f, sp.Pairs(), wd); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
