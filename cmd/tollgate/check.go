package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/fuzz"
	"github.com/tollgate/tollgate/internal/diff"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/redischeck"
	"github.com/tollgate/tollgate/redisserver"
)

func init() {
	register(command{
		name:    "check",
		summary: "record concurrent histories of both primitives and check them with porcupine (the main job)",
		run:     func(args []string) int { return runCheck(args, os.Stdout, os.Stderr) },
	})
}

// Exit codes of check.
const (
	exitOK      = 0
	exitIllegal = 1 // some history is not linearizable, or the sequential check failed
	exitUsage   = 2
	exitUnknown = 3 // no violation, but some check timed out: not a pass
)

// checkConfig is the parsed command line of check.
type checkConfig struct {
	duration, timeout, progressEvery time.Duration
	clients, keys, ops               int
	seed                             uint64
	primitive, mutant, workload, out string
	replay                           string
	seqShare                         float64
	backend, redisAddr, faults       string
	callTimeout                      time.Duration
}

func parseCheck(args []string, stderr io.Writer) (checkConfig, error) {
	var c checkConfig
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: tollgate check [flags]

Records concurrent histories of the token bucket and the credit table (goroutines
running random operation scripts against the lock-free implementations), checks
each with porcupine against the sequential model, and runs a short sequential
differential check (model.Step against the implementation, internal/diff). On a
violation it writes porcupine's HTML visualization and the raw history (JSON),
prints both paths and a replay command, and exits 1. A checker timeout is
reported as Unknown (exit 3), never as a pass.

flags:
`)
		fs.PrintDefaults()
	}
	fs.DurationVar(&c.duration, "duration", time.Minute, "total budget, split evenly between the primitives")
	fs.IntVar(&c.clients, "clients", 0, "goroutines per token-bucket history / holders per credit-table history (0: each workload's own, 2–8)")
	fs.IntVar(&c.keys, "keys", 0, "keys of the multi-key token-bucket workloads (0: each workload's own, 16 for many-keys)")
	fs.IntVar(&c.ops, "ops", 0, "operations per client (token bucket) / rounds per holder (credit table) (0: each workload's own)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the operation scripts (0: from the clock); history i uses seed+i")
	fs.StringVar(&c.primitive, "primitive", "all", "tokenbucket, credits or all")
	fs.StringVar(&c.mutant, "mutant", "", "run against this mutant of internal/fault instead of the real table, e.g. tb-plain-store")
	fs.StringVar(&c.workload, "workload", "", "run only this workload (see the linearizability package docs)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "porcupine's budget per history; on expiry the history is Unknown")
	fs.StringVar(&c.out, "out", filepath.Join(os.TempDir(), "tollgate-check"), "directory for the files of failing histories")
	fs.StringVar(&c.replay, "replay", "", "check a history file written by an earlier run instead of recording")
	fs.Float64Var(&c.seqShare, "seq-share", 0.1, "share of each primitive's budget spent on the sequential differential check (0 to skip it)")
	fs.DurationVar(&c.progressEvery, "progress", 2*time.Second, "interval between progress lines (0: none)")
	fs.StringVar(&c.backend, "backend", "memory", "memory (the tables of impl/ in this process) or redis (impl/redis on a redis-server)")
	fs.StringVar(&c.redisAddr, "redis", "", "with -backend redis: the server for the workloads (empty: a throwaway redis-server); the fault workloads always start their own on loopback")
	fs.StringVar(&c.faults, "faults", "all", "with -backend redis: the fault workloads to run after the others, comma-separated, or all, or none")
	fs.DurationVar(&c.callTimeout, "call-timeout", 250*time.Millisecond, "with -backend redis: each call's budget; a call not answered in it has an unknown outcome")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("check: unexpected argument %q", fs.Arg(0))
	}
	switch {
	case c.primitive != "all" && c.primitive != linearizability.PrimitiveTokenBucket && c.primitive != linearizability.PrimitiveCredits:
		return c, fmt.Errorf("check: -primitive %q must be tokenbucket, credits or all", c.primitive)
	case c.duration < 0:
		return c, fmt.Errorf("check: -duration %v must be >= 0", c.duration)
	case c.clients < 0 || c.keys < 0 || c.ops < 0:
		return c, fmt.Errorf("check: -clients, -keys and -ops must be >= 0")
	case c.seqShare < 0 || c.seqShare >= 1:
		return c, fmt.Errorf("check: -seq-share %v must be in [0, 1)", c.seqShare)
	case c.timeout < 0:
		return c, fmt.Errorf("check: -timeout %v must be >= 0", c.timeout)
	}
	if c.backend != "memory" && c.backend != "redis" {
		return c, fmt.Errorf("check: -backend %q must be memory or redis", c.backend)
	}
	if c.backend == "redis" {
		c.seqShare = 0 // the differential check runs in process
		if c.faults != "all" && c.faults != "none" {
			for _, name := range strings.Split(c.faults, ",") {
				if _, ok := scenario(name); !ok {
					return c, fmt.Errorf("check: -faults: no fault workload %q (known: %s)", name, scenarioNames())
				}
			}
		}
	}
	if c.mutant != "" {
		f, err := fault.Parse(c.mutant)
		if err != nil {
			return c, fmt.Errorf("check: -mutant: %w", err)
		}
		if f.Redis() != (c.backend == "redis") {
			return c, fmt.Errorf("check: -mutant %s is a mutant of the %s tables: it needs -backend %s", f, map[bool]string{true: "Redis", false: "in-process"}[f.Redis()], map[bool]string{true: "redis", false: "memory"}[f.Redis()])
		}
		switch {
		case c.primitive == "all" && f.Credits():
			c.primitive = linearizability.PrimitiveCredits
		case c.primitive == "all":
			c.primitive = linearizability.PrimitiveTokenBucket
		case (c.primitive == linearizability.PrimitiveCredits) != f.Credits():
			return c, fmt.Errorf("check: -mutant %s is not a %s mutant", c.mutant, c.primitive)
		}
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	return c, nil
}

// row is one line of the summary table.
type row struct {
	primitive, check string
	histories, ops   int    // histories checked (for the sequential check, random inputs) and their operations
	unknown          int    // operations whose outcome was unknown (-1: not applicable)
	durability       string // a fault workload's check of acknowledged writes
	overlapping      int    // operations that overlapped another (-1: not applicable)
	result           string
	invariant        string // the spec ID the first failure breaks ("" when none failed)
	checkTime        time.Duration
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	c, err := parseCheck(args, stderr)
	if err == flag.ErrHelp {
		return exitUsage
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	if c.replay != "" {
		return replayCheck(c, stdout, stderr)
	}
	prims := []string{linearizability.PrimitiveTokenBucket, linearizability.PrimitiveCredits}
	if c.primitive != "all" {
		prims = []string{c.primitive}
	}
	var faults fault.Fault
	target := "the real implementations"
	if c.mutant != "" {
		f, _ := fault.Parse(c.mutant)
		faults = f
		target = "mutant " + c.mutant
	}
	var target0 *redischeck.Target
	if c.backend == "redis" {
		target += " on Redis"
		addr := c.redisAddr
		if addr == "" {
			srv, err := redisserver.Start(os.TempDir())
			if err != nil {
				fmt.Fprintln(stderr, "check:", err)
				return exitUsage
			}
			defer srv.Stop()
			stopOnSignal(srv)
			addr = srv.Addr
		}
		target += " (" + addr + ")"
		// The workloads' calls get a generous budget (a loaded machine can
		// take 100 ms to answer); the fault workloads use -call-timeout.
		target0 = redischeck.NewTarget(addr, max(c.callTimeout, 2*time.Second))
	}
	fmt.Fprintf(stdout, "tollgate check: %s, %s budget, seed %d, porcupine timeout %v per history\n", target, c.duration, c.seed, c.timeout)
	per := c.duration / time.Duration(len(prims))
	var rows []row
	code := exitOK
	for _, prim := range prims {
		seqBudget := time.Duration(float64(per) * c.seqShare)
		r, failed := sequentialCheck(c, prim, faults, seqBudget, stdout)
		if c.seqShare > 0 {
			rows = append(rows, r)
		}
		if failed {
			code = exitIllegal
		}
		p := linearizability.Plan{
			Primitive: prim, Duration: per - seqBudget, Clients: c.clients, Keys: c.keys, Ops: c.ops,
			Seed: c.seed, Fault: faults, Mutant: c.mutant, Timeout: c.timeout, Dir: c.out,
			StopOnIllegal: c.mutant != "", Workload: c.workload,
		}
		if target0 != nil {
			p.TB = func() (linearizability.TBBackend, func(), error) { return target0.TB(faults) }
			p.Cr = func() (linearizability.CrBackend, func(), error) { return target0.Cr(faults) }
		}
		if c.workload != "" && !hasWorkload(prim, c.workload) {
			continue
		}
		last := time.Now()
		t, err := linearizability.Run(p, func(t linearizability.Tally) {
			if c.progressEvery > 0 && time.Since(last) >= c.progressEvery {
				last = time.Now()
				fmt.Fprintf(stdout, "  %-11s histories %6d  operations %9d  overlapping %8d  illegal %d  unknown %d  elapsed %5.1fs\n",
					prim, t.Histories, t.Ops, t.Overlapping, t.Illegal, t.Unknown, t.Elapsed.Seconds())
			}
		})
		if err != nil {
			fmt.Fprintln(stderr, "check:", err)
			return exitUsage
		}
		lin := row{primitive: prim, check: "porcupine", histories: t.Histories, ops: t.Ops, unknown: t.UnknownOps, overlapping: t.Overlapping,
			result: string(t.Result()), checkTime: t.CheckTime}
		if t.Result() == linearizability.Illegal {
			lin.invariant = t.First.Invariant
		}
		rows = append(rows, lin)
		switch t.Result() {
		case linearizability.Illegal:
			code = exitIllegal
			reportFailure(stdout, c, t)
		case linearizability.Unknown:
			if code == exitOK {
				code = exitUnknown
			}
			reportFailure(stdout, c, t)
		}
	}
	if c.backend == "redis" && c.faults != "none" && c.workload == "" {
		frows, fcode := faultRows(c, prims, faults, stdout, stderr)
		rows = append(rows, frows...)
		switch {
		case fcode == exitUsage:
			return exitUsage
		case fcode == exitIllegal:
			code = exitIllegal
		case fcode == exitUnknown && code == exitOK:
			code = exitUnknown
		}
	}
	printSummary(stdout, rows)
	switch code {
	case exitOK:
		fmt.Fprintln(stdout, "result: Ok — every history linearizable, sequential check agreed")
	case exitUnknown:
		fmt.Fprintln(stdout, "result: Unknown — no violation found, but some histories could not be checked in time (not a pass)")
	default:
		fmt.Fprintln(stdout, "result: FAILED")
	}
	return code
}

func hasWorkload(prim, name string) bool {
	if prim == linearizability.PrimitiveTokenBucket {
		for _, w := range linearizability.TBWorkloads() {
			if w.Name == name {
				return true
			}
		}
		return false
	}
	for _, w := range linearizability.CrWorkloads() {
		if w.Name == name {
			return true
		}
	}
	return false
}

// sequentialCheck runs the differential machines of internal/diff over
// random byte inputs (diff.RandomInput from the seed) for budget: the model
// and the implementation step side by side, answers compared after every
// operation. A failing input is written as a fuzz corpus file.
func sequentialCheck(c checkConfig, prim string, faults fault.Fault, budget time.Duration, stdout io.Writer) (row, bool) {
	r := row{primitive: prim, check: "sequential", overlapping: -1, unknown: -1, result: string(linearizability.Ok)}
	if budget <= 0 {
		return r, false
	}
	target, run := "FuzzTokenBucket", diff.RunTokenBucketBytesOps
	if prim == linearizability.PrimitiveCredits {
		target, run = "FuzzCredits", diff.RunCreditsBytesOps
	}
	start := time.Now()
	for i := 0; i == 0 || time.Since(start) < budget; i++ {
		input := diff.RandomInput(c.seed, i)
		r.histories++
		ops, fail := run(input, faults, diff.Options{})
		r.ops += ops
		if fail == nil {
			continue
		}
		r.result, r.invariant = string(linearizability.Illegal), fail.Property
		r.checkTime = time.Since(start)
		fmt.Fprintf(stdout, "\nsequential check of %s FAILED (random input %d of seed %d), breaks %s:\n%s", prim, i, c.seed, fail.Property, fail.Replay())
		name := fmt.Sprintf("check-seed%d-input%d", c.seed, i)
		path := filepath.Join(c.out, name)
		if err := os.MkdirAll(c.out, 0o755); err == nil {
			err = os.WriteFile(path, fuzz.Format(input), 0o644)
			if err == nil {
				fmt.Fprintf(stdout, "input: %s\nreplay: cp %s fuzz/testdata/fuzz/%s/ && go test ./fuzz -run '^%s$/^%s$'", path, path, target, target, name)
				if c.mutant != "" {
					fmt.Fprintf(stdout, " -diff.fault=%s", c.mutant)
				}
				fmt.Fprintln(stdout)
			}
		}
		return r, true
	}
	r.checkTime = time.Since(start)
	return r, false
}

func reportFailure(w io.Writer, c checkConfig, t linearizability.Tally) {
	rep := t.First
	breaks := ""
	if rep.Invariant != "" {
		breaks = ", breaks " + rep.Invariant
	}
	fmt.Fprintf(w, "\n%s: %s history (workload %s, seed %d, %d operations)%s: %s\n",
		t.Primitive, rep.Result, t.FirstWorkload, t.FirstSeed, rep.Ops, breaks, rep.Detail)
	if rep.Result == linearizability.Unknown {
		fmt.Fprintf(w, "  porcupine gave up after %v; raise -timeout or lower -clients/-ops\n", c.timeout)
	}
	if rep.HTMLPath != "" {
		fmt.Fprintf(w, "  visualization: %s\n  history:       %s\n  replay:        go run ./cmd/tollgate check --replay %s\n",
			rep.HTMLPath, rep.JSONPath, rep.JSONPath)
	}
	rerun := []string{"go run ./cmd/tollgate check", "--primitive " + t.Primitive, "--workload " + t.FirstWorkload,
		fmt.Sprintf("--seed %d", t.FirstSeed)}
	if c.mutant != "" {
		rerun = append(rerun, "--mutant "+c.mutant)
	}
	fmt.Fprintf(w, "  record again:  %s  (same scripts; the interleaving is the scheduler's)\n", strings.Join(rerun, " "))
}

func printSummary(w io.Writer, rows []row) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "primitive\tcheck\thistories\toperations\tunknown\toverlapping\tresult\tbreaks\tcheck time\t")
	var notes []string
	for _, r := range rows {
		over, breaks, unknown := "-", "-", "-"
		if r.overlapping >= 0 {
			over = fmt.Sprint(r.overlapping)
		}
		if r.unknown >= 0 {
			unknown = fmt.Sprint(r.unknown)
		}
		if r.invariant != "" {
			breaks = r.invariant
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%v\t\n", r.primitive, r.check, r.histories, r.ops, unknown, over, r.result, breaks, r.checkTime.Round(time.Millisecond))
		if r.durability != "" {
			notes = append(notes, fmt.Sprintf("  %s %s: %s", r.primitive, r.check, r.durability))
		}
	}
	tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintln(w, "acknowledged writes, checked directly after each fault workload:")
		fmt.Fprintln(w, strings.Join(notes, "\n"))
	}
	fmt.Fprintln(w, "(histories: for the sequential check, random inputs, each one sequence of operations; overlapping: operations whose call-return")
	fmt.Fprintln(w, "interval met another's, i.e. whose order the checker had to find; breaks: the spec invariant the first failure breaks)")
}

// replayCheck checks a saved history again: the check of a recorded history
// is deterministic, so this reproduces a verdict exactly.
func replayCheck(c checkConfig, stdout, stderr io.Writer) int {
	saved, err := linearizability.LoadHistory(c.replay)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	base := strings.TrimSuffix(filepath.Base(c.replay), ".json")
	opt := linearizability.Options{Timeout: c.timeout, Dir: filepath.Dir(c.replay), Name: base + "-replay"}
	var rep linearizability.Report
	var seed uint64
	var mut string
	if saved.TokenBucket != nil {
		seed, mut = saved.TokenBucket.Seed, saved.TokenBucket.Mutant
		rep, err = linearizability.CheckTokenBucket(*saved.TokenBucket, opt)
	} else {
		seed, mut = saved.Credits.Seed, saved.Credits.Mutant
		rep, err = linearizability.CheckCredits(*saved.Credits, opt)
	}
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if mut == "" {
		mut = "none (the real implementation)"
	}
	breaks := ""
	if rep.Invariant != "" {
		breaks = ", breaks " + rep.Invariant
	}
	fmt.Fprintf(stdout, "%s history %s (seed %d, mutant %s): %d operations (%d overlapping another), %s%s in %v\n",
		rep.Primitive, c.replay, seed, mut, rep.Ops, rep.Overlapping, rep.Result, breaks, rep.CheckTime.Round(time.Millisecond))
	if rep.Detail != "" {
		fmt.Fprintln(stdout, " ", rep.Detail)
	}
	if rep.HTMLPath != "" {
		fmt.Fprintf(stdout, "  visualization: %s\n", rep.HTMLPath)
	}
	switch rep.Result {
	case linearizability.Illegal:
		return exitIllegal
	case linearizability.Unknown:
		return exitUnknown
	}
	return exitOK
}

func scenario(name string) (redischeck.Scenario, bool) {
	for _, s := range redischeck.Scenarios() {
		if s.Name == name {
			return s, true
		}
	}
	return redischeck.Scenario{}, false
}

func scenarioNames() string {
	var names []string
	for _, s := range redischeck.Scenarios() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// faultRows runs the fault workloads of redischeck, each on servers of its
// own, and returns a summary row for each and the exit code they call for:
// a row whose history is not linearizable or that lost an acknowledged
// write fails, except in the scenarios whose losses are the backend's
// documented limit (asynchronous replication), which are measured.
func faultRows(c checkConfig, prims []string, f fault.Fault, stdout, stderr io.Writer) ([]row, int) {
	var rows []row
	code := exitOK
	for _, s := range redischeck.Scenarios() {
		if c.faults != "all" && !slices.Contains(strings.Split(c.faults, ","), s.Name) {
			continue
		}
		got, err := redischeck.Run(s, prims, redischeck.Options{Timeout: c.callTimeout, CheckTimeout: c.timeout, Seed: c.seed, Fault: f, Dir: c.out})
		if err != nil {
			fmt.Fprintln(stderr, "check:", err)
			return rows, exitUsage
		}
		for _, r := range got {
			res := string(r.Result)
			if r.Lossy {
				res += " (limit)"
			}
			rows = append(rows, row{primitive: r.Primitive, check: "fault " + r.Scenario, histories: 1, ops: r.Ops, unknown: r.UnknownOps,
				overlapping: r.Report.Overlapping, result: res, invariant: r.Invariant, checkTime: r.Report.CheckTime, durability: r.Detail})
			fmt.Fprintf(stdout, "  fault %-14s %-11s operations %5d  unknown %4d  %s; %s (%v)\n", r.Scenario, r.Primitive, r.Ops, r.UnknownOps, res, r.Detail, r.Elapsed.Round(time.Millisecond))
			switch {
			case !r.Pass() && r.Result == linearizability.Unknown && r.Lost == 0:
				if code == exitOK {
					code = exitUnknown
				}
			case !r.Pass():
				code = exitIllegal
				if r.Report.JSONPath != "" {
					fmt.Fprintf(stdout, "    history: %s\n    replay:  go run ./cmd/tollgate check --replay %s\n", r.Report.JSONPath, r.Report.JSONPath)
				}
			}
		}
	}
	return rows, code
}
