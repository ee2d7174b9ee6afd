package mainjob

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tollgate/tollgate/backends/redischeck"
	"github.com/tollgate/tollgate/fuzz"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
)

// Run runs the job c describes (Resolve is applied first), writing its
// progress, the report of every failure (with the files written and the
// command that replays it) and the summary table to w, and returns the
// job's verdict. The error is a job that could not run; what it had
// printed by then is no verdict.
func Run(c Config, w io.Writer) (Verdict, error) {
	c, err := c.Resolve()
	if err != nil {
		return Illegal, err
	}
	if c.redis() && c.RedisAddr == "" {
		return Illegal, fmt.Errorf("check: -backend %s needs a server address", c.Backend)
	}
	if c.Backend == "etcd" && c.EtcdEndpoints == "" {
		return Illegal, fmt.Errorf("check: -backend etcd needs the cluster's endpoints")
	}
	f := c.fault()
	var redis *redischeck.Target
	// The workloads' calls get a generous budget (a loaded machine can
	// take 100 ms to answer); the fault workloads use CallTimeout.
	switch budget := max(c.CallTimeout, 2*time.Second); c.Backend {
	case "redis":
		redis = redischeck.NewTarget(c.RedisAddr, budget)
	case "redis-cluster":
		redis = redischeck.NewClusterTarget(strings.Split(c.RedisAddr, ","), budget)
	}
	var etcd *etcdTables
	if c.Backend == "etcd" {
		if etcd, err = newEtcdTables(strings.Split(c.EtcdEndpoints, ","), f, max(c.CallTimeout, 2*time.Second), c.Seed); err != nil {
			return Illegal, fmt.Errorf("check: %w", err)
		}
		defer etcd.close()
	}
	fmt.Fprintf(w, "tollgate check: %s, %s budget, seed %d, porcupine timeout %v per history\n", c.target(), c.Duration, c.Seed, c.Timeout)
	prims := c.primitives()
	per := c.Duration / time.Duration(len(prims))
	var rows []row
	v := Ok
	for _, prim := range prims {
		seq := time.Duration(float64(per) * c.SeqShare)
		r, sv := sequential(c, prim, f, seq, w)
		if c.SeqShare > 0 {
			rows = append(rows, r)
		}
		v = v.Merge(sv)
		if c.Workload != "" && !hasWorkload(prim, c.Workload) {
			continue
		}
		r, lv, err := histories(c, prim, f, redis, etcd, per-seq, w)
		if err != nil {
			return v, err
		}
		rows = append(rows, r)
		v = v.Merge(lv)
	}
	if c.remote() && c.Faults != "none" && c.Workload == "" {
		frows, fv, err := faultWorkloads(c, prims, f, w)
		if err != nil {
			return v, err
		}
		rows = append(rows, frows...)
		v = v.Merge(fv)
	}
	printSummary(w, rows)
	v = v.Merge(rowsVerdict(rows))
	line := resultLine(v, rows)
	if v == Ok && c.SeqShare == 0 {
		// No sequential check ran (-seq-share 0, or a remote backend):
		// claim none.
		line = strings.Replace(line, ", sequential check agreed", " (no sequential check ran)", 1)
	}
	fmt.Fprintln(w, "result: "+line)
	return v, nil
}

// rowsVerdict is the verdict the summary's rows read: a row whose result
// is Illegal or FAILED fails the job, one Unknown makes it Unknown at best,
// whatever the checks that made the rows concluded. It keeps the last
// line from ever saying Ok over a row that does not.
func rowsVerdict(rows []row) Verdict {
	v := Ok
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r.result, string(linearizability.Illegal)), strings.HasPrefix(r.result, "FAILED"):
			v = Illegal
		case strings.HasPrefix(r.result, string(linearizability.Unknown)):
			v = v.Merge(Unknown)
		}
	}
	return v
}

// resultLine is the last line of a job's output: its verdict, and for Ok
// what was checked, which is not every whole history when a fault row
// measured a documented loss (its history is checked before the fault).
func resultLine(v Verdict, rows []row) string {
	switch v {
	case Unknown:
		return "Unknown — no violation found, but some histories could not be checked in time (not a pass)"
	case Illegal:
		return "FAILED"
	}
	limits := 0
	for _, r := range rows {
		if strings.HasSuffix(r.result, " before the fault") {
			limits++
		}
	}
	if limits > 0 {
		return fmt.Sprintf("Ok — every check passed; %d fault rows lose acknowledged writes by design (measured above), their histories linearizable up to the fault", limits)
	}
	return "Ok — every history linearizable, sequential check agreed"
}

// target says what c checks, for the first line of the output.
func (c Config) target() string {
	t := "the real implementations"
	if c.Mutant != "" {
		t = "mutant " + c.Mutant
	}
	switch c.Backend {
	case "redis":
		t += " on Redis (" + c.RedisAddr + ")"
	case "redis-cluster":
		t += " on a Redis Cluster (" + c.RedisAddr + ")"
	case "etcd":
		t += " on etcd (" + c.EtcdEndpoints + ")"
	}
	return t
}

// histories records and checks prim's concurrent histories for budget
// (linearizability.Run) and reports the first failure.
func histories(c Config, prim string, f fault.Fault, redis *redischeck.Target, etcd *etcdTables, budget time.Duration, w io.Writer) (row, Verdict, error) {
	p := linearizability.Plan{
		Primitive: prim, Duration: budget, Clients: c.Clients, Keys: c.Keys, Ops: c.Ops,
		Seed: c.Seed, Fault: f, Mutant: c.Mutant, Timeout: c.Timeout, Dir: c.Out,
		StopOnIllegal: c.Mutant != "", Workload: c.Workload,
	}
	if redis != nil {
		p.TB = func() (linearizability.TBBackend, func(), error) { return redis.TB(f) }
		p.Cr = func() (linearizability.CrBackend, func(), error) { return redis.Cr(f) }
	}
	if etcd != nil {
		p.TB, p.Cr = etcd.tb, etcd.cr
	}
	last := time.Now()
	t, err := linearizability.Run(p, func(t linearizability.Tally) {
		if c.Progress > 0 && time.Since(last) >= c.Progress {
			last = time.Now()
			fmt.Fprintf(w, "  %-11s histories %6d  operations %9d  unknown %6d  overlapping %8d  illegal %d  undecided %d  elapsed %5.1fs\n",
				prim, t.Histories, t.Ops, t.UnknownOps, t.Overlapping, t.Illegal, t.Unknown, t.Elapsed.Seconds())
		}
	})
	if err != nil {
		return row{}, Illegal, fmt.Errorf("check: %w", err)
	}
	r := row{primitive: prim, check: "porcupine", histories: t.Histories, ops: t.Ops, unknown: t.UnknownOps, overlapping: t.Overlapping,
		result: string(t.Result()), checkTime: t.CheckTime}
	v := verdictOf(t.Result())
	if v == Illegal {
		r.invariant = t.First.Invariant
	}
	if v != Ok {
		reportFailure(w, c, t)
	}
	return r, v, nil
}

func hasWorkload(prim, name string) bool {
	if prim == linearizability.PrimitiveTokenBucket {
		return slices.ContainsFunc(linearizability.TBWorkloads(), func(w linearizability.TBWorkload) bool { return w.Name == name })
	}
	return slices.ContainsFunc(linearizability.CrWorkloads(), func(w linearizability.CrWorkload) bool { return w.Name == name })
}

// sequential runs the differential machines of fuzz over random
// byte inputs (fuzz.RandomInput from the seed) for budget: the model and
// the implementation step side by side, answers compared after every
// operation; at least one input, however short the budget, as
// linearizability.Run records at least one history: a row of nothing
// checked would print as a pass. A failing input is written as a fuzz
// corpus file, and the command that replays it printed.
func sequential(c Config, prim string, f fault.Fault, budget time.Duration, w io.Writer) (row, Verdict) {
	r := row{primitive: prim, check: "sequential", overlapping: -1, unknown: -1, result: string(linearizability.Ok)}
	if c.SeqShare == 0 {
		return r, Ok // skipped, and not in the summary
	}
	target, run := "FuzzTokenBucket", fuzz.RunTokenBucketBytesOps
	if prim == linearizability.PrimitiveCredits {
		target, run = "FuzzCredits", fuzz.RunCreditsBytesOps
	}
	start := time.Now()
	for i := 0; i == 0 || time.Since(start) < budget; i++ {
		input := fuzz.RandomInput(c.Seed, i)
		r.histories++
		ops, fail := run(input, f, fuzz.Options{})
		r.ops += ops
		if fail == nil {
			continue
		}
		r.result, r.invariant = string(linearizability.Illegal), fail.Property
		r.checkTime = time.Since(start)
		fmt.Fprintf(w, "\nsequential check of %s FAILED (random input %d of seed %d), breaks %s:\n%s", prim, i, c.Seed, fail.Property, fail.Replay())
		name := fmt.Sprintf("check-seed%d-input%d", c.Seed, i)
		path := filepath.Join(c.Out, name)
		if err := os.MkdirAll(c.Out, 0o755); err == nil {
			err = os.WriteFile(path, fuzz.Format(input), 0o644)
			if err == nil {
				fmt.Fprintf(w, "input: %s\nreplay: cp %s fuzz/testdata/fuzz/%s/ && go test ./fuzz -run '^%s$/^%s$'", path, path, target, target, name)
				if c.Mutant != "" {
					fmt.Fprintf(w, " -diff.fault=%s", c.Mutant)
				}
				fmt.Fprintln(w)
			}
		}
		return r, Illegal
	}
	r.checkTime = time.Since(start)
	return r, Ok
}

func reportFailure(w io.Writer, c Config, t linearizability.Tally) {
	rep := t.First
	breaks := ""
	if rep.Invariant != "" {
		breaks = ", breaks " + rep.Invariant
	}
	fmt.Fprintf(w, "\n%s: %s history (workload %s, seed %d, %d operations)%s: %s\n",
		t.Primitive, rep.Result, t.FirstWorkload, t.FirstSeed, rep.Ops, breaks, rep.Detail)
	if rep.Result == linearizability.Unknown {
		fmt.Fprintf(w, "  porcupine gave up after %v; raise -timeout or lower -clients/-ops\n", c.Timeout)
	}
	if rep.HTMLPath != "" {
		fmt.Fprintf(w, "  visualization: %s\n  history:       %s\n  replay:        go run ./cmd/tollgate check --replay %s\n",
			rep.HTMLPath, rep.JSONPath, rep.JSONPath)
	}
	rerun := []string{"go run ./cmd/tollgate check", "--primitive " + t.Primitive, "--workload " + t.FirstWorkload,
		fmt.Sprintf("--seed %d", t.FirstSeed)}
	if c.Backend != "memory" {
		rerun = append(rerun, "--backend "+c.Backend)
	}
	if c.Mutant != "" {
		rerun = append(rerun, "--mutant "+c.Mutant)
	}
	fmt.Fprintf(w, "  record again:  %s  (same scripts; the interleaving is the scheduler's)\n", strings.Join(rerun, " "))
}

// faultWorkloads runs the fault workloads of redischeck, each on servers
// of its own, and returns a summary row for each and their verdict: a row
// whose history is not linearizable or that lost an acknowledged write
// fails, except in the scenarios whose losses are the backend's
// documented limit (asynchronous replication), which are measured; a
// history porcupine could not decide, with nothing lost, is Unknown.
func faultWorkloads(c Config, prims []string, f fault.Fault, w io.Writer) ([]row, Verdict, error) {
	if c.Backend == "etcd" {
		return etcdFaultWorkloads(c, prims, w)
	}
	var rows []row
	v := Ok
	for _, s := range redischeck.Scenarios() {
		if !c.ranFault(s) {
			continue
		}
		got, err := redischeck.Run(s, prims, redischeck.Options{Timeout: c.CallTimeout, CheckTimeout: c.Timeout, Seed: c.Seed, Fault: f, Dir: c.Out})
		if err != nil {
			return rows, v, fmt.Errorf("check: %w", err)
		}
		for _, r := range got {
			res := string(r.Result)
			if r.Lossy {
				res += " before the fault"
			}
			if f := r.Failure(); f != "" && !r.Inconclusive() {
				res = "FAILED: " + f
			}
			if r.MustLose && r.Pass() {
				// A negative control that lost as it must: its history is
				// not linearizable, and that is the row's point.
				res = "Ok: lost as it must (history " + string(r.Result) + ")"
			}
			rows = append(rows, row{primitive: r.Primitive, check: "fault " + r.Scenario, histories: 1, ops: r.Ops, unknown: r.UnknownOps,
				overlapping: r.Report.Overlapping, result: res, invariant: r.Invariant, checkTime: r.Report.CheckTime, durability: r.Detail})
			settled := ""
			if r.SettledOps > 0 {
				settled = fmt.Sprintf(" (%d settled)", r.SettledOps)
			}
			fmt.Fprintf(w, "  fault %-14s %-11s operations %5d  unknown %4d%s  %s; %s (%v)\n", r.Scenario, r.Primitive, r.Ops, r.UnknownOps, settled, res, r.Detail, r.Elapsed.Round(time.Millisecond))
			switch {
			case r.Pass():
			case r.Inconclusive():
				v = v.Merge(Unknown)
			default:
				v = Illegal
				if r.Report.JSONPath != "" {
					fmt.Fprintf(w, "    history: %s\n    replay:  go run ./cmd/tollgate check --replay %s\n", r.Report.JSONPath, r.Report.JSONPath)
				}
			}
		}
	}
	return rows, v, nil
}
