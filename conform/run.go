package conform

import (
	"errors"
	"fmt"
	"github.com/tollgate/tollgate/model"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Suites, in the order they run.
const (
	SuiteVectors    = "vectors"
	SuiteRandom     = "random"
	SuiteConcurrent = "concurrent"
)

// AllSuites lists every suite.
var AllSuites = []string{SuiteVectors, SuiteRandom, SuiteConcurrent}

// Config is one conformance run.
type Config struct {
	// Argv is the driver command. Exactly one of Argv and Serve is set.
	Argv []string
	// Serve runs an in-process driver (tests).
	Serve func(in io.Reader, out io.Writer, logw io.Writer) error
	// Seed makes the random and concurrent suites reproducible.
	Seed uint64
	// Budget is the time each random and concurrent suite may take per
	// primitive (shrinking a failure may add to it).
	Budget time.Duration
	// Clients is the number of concurrent clients in the concurrent suite.
	Clients int
	// Suites to run (AllSuites when empty).
	Suites []string
	// Primitives restricts the run to some of the driver's primitives
	// ("tb", "cr"); empty means all it supports.
	Primitives []string
	// Vectors are extra vector files, run with the committed ones.
	Vectors []VectorFile
	// Timeout is the per-request timeout.
	Timeout time.Duration
	// StartTimeout is how long a fresh driver has to start and answer its
	// hello: starting a runtime (a BEAM, a JVM) on a loaded machine can take
	// far longer than any one answer should. 0 means DefaultStartTimeout,
	// or Timeout if that is longer.
	StartTimeout time.Duration
	// Dir receives the files written for failures (porcupine
	// visualizations); empty means the system's temporary directory.
	Dir string
	// Log receives the driver's stderr (nil: discarded, but its last lines
	// still appear in errors).
	Log io.Writer
	// Progress receives a line every ProgressEvery while a random or
	// concurrent suite runs (nil or 0: none).
	Progress      io.Writer
	ProgressEvery time.Duration

	protocol int      // the driver's version, once its hello is read
	ops      []string // the optional operations its hello lists (tb.admit)
}

// Validate reports a configuration that cannot run, naming the field.
func (c *Config) Validate() error {
	if (len(c.Argv) == 0) == (c.Serve == nil) {
		return errors.New("conform: exactly one driver is required (a command after --)")
	}
	if c.Budget <= 0 {
		return fmt.Errorf("conform: budget %v must be > 0", c.Budget)
	}
	if c.Clients < 1 || c.Clients > 64 {
		return fmt.Errorf("conform: clients %d must be in 1..64", c.Clients)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("conform: timeout %v must be > 0", c.Timeout)
	}
	if c.StartTimeout < 0 {
		return fmt.Errorf("conform: start timeout %v must be ≥ 0 (0: the default)", c.StartTimeout)
	}
	for _, p := range c.Primitives {
		if p != PrimTokenBucket && p != PrimCredits {
			return fmt.Errorf("conform: primitive %q is not one of %s, %s", p, PrimTokenBucket, PrimCredits)
		}
	}
	for _, s := range c.Suites {
		if !slices.Contains(AllSuites, s) {
			return fmt.Errorf("conform: suite %q is not one of %s", s, strings.Join(AllSuites, ", "))
		}
	}
	return nil
}

// SuiteResult is one row of the report table.
type SuiteResult struct {
	Suite  string // e.g. "tb/vectors"
	Cases  int
	Passed int
	Failed int
	// Unknown counts the vectors and random sessions stopped by an answer
	// "unknown" (neither passed nor failed).
	Unknown int
	Elapsed time.Duration
	// NotRun names the cases of the suite that never ran because the
	// driver broke first; they count in Cases, never in Passed.
	NotRun []string
	// Answered and Overtook count, in the concurrent suite, the driver's
	// answers and those among them that overtook an earlier request still
	// unanswered (Conn.Overlap): none means the driver ran every request
	// alone, and the suite could not see a race.
	Answered, Overtook int
	Failures           []*CaseFailure
	Err                error  // the suite could not run (the driver broke outside a case)
	Skipped            string // why the suite did not run
	// SkippedCases names the vectors not run because the driver's protocol
	// version lacks an operation they use (they count in no column).
	SkippedCases []string
	ShrinkLog    string
}

// Report is a whole run.
type Report struct {
	Driver     string // the driver's hello name
	Protocol   int    // the version the driver's hello answered
	Primitives []string
	Seed       uint64
	Results    []SuiteResult
	Err        error // the driver could not be started or did not say hello
}

// OK reports whether every suite ran and passed, and at least one case ran.
func (r *Report) OK() bool {
	if r.Err != nil {
		return false
	}
	for _, s := range r.Results {
		if s.Failed > 0 || s.Err != nil || len(s.NotRun) > 0 {
			return false
		}
	}
	return r.ran() > 0
}

// ran counts the cases that ran, whatever their outcome.
func (r *Report) ran() int {
	n := 0
	for _, s := range r.Results {
		n += s.Passed + s.Failed + s.Unknown
	}
	return n
}

// whyNothingRan says why a report with no case run ran none.
func (r *Report) whyNothingRan() string {
	var why []string
	for _, s := range r.Results {
		switch {
		case s.Skipped != "":
			why = append(why, s.Suite+" skipped: "+s.Skipped)
		case s.Err != nil:
			why = append(why, s.Suite+" could not run")
		}
	}
	if len(r.Primitives) == 0 {
		why = append([]string{"the driver's hello lists no primitives"}, why...)
	}
	if len(why) == 0 {
		why = append(why, "no suite was selected")
	}
	return strings.Join(why, "; ")
}

// Run runs the conformance suites against a driver.
func Run(cfg Config) *Report {
	rep := &Report{Seed: cfg.Seed}
	if err := cfg.Validate(); err != nil {
		rep.Err = err
		return rep
	}
	suites := cfg.Suites
	if len(suites) == 0 {
		suites = AllSuites
	}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(os.TempDir(), "tollgate-conform-failures")
	}
	conn, hello, err := connect(cfg)
	if err != nil {
		rep.Err = err
		return rep
	}
	conn.Close()
	rep.Driver, rep.Protocol, rep.Primitives = hello.Name, hello.Protocol, hello.Primitives
	cfg.protocol, cfg.ops = hello.Protocol, hello.Ops
	golden, err := GenerateVectors()
	if err != nil {
		rep.Err = err
		return rep
	}
	for _, prim := range []string{PrimTokenBucket, PrimCredits} {
		for _, suite := range AllSuites {
			if !slices.Contains(suites, suite) {
				continue
			}
			name := prim + "/" + suite
			if len(cfg.Primitives) > 0 && !slices.Contains(cfg.Primitives, prim) {
				continue
			}
			if !slices.Contains(hello.Primitives, prim) {
				rep.Results = append(rep.Results, SuiteResult{Suite: name, Skipped: "the driver does not support " + prim})
				continue
			}
			var res SuiteResult
			switch suite {
			case SuiteVectors:
				var files []VectorFile
				var skipped []string
				for _, f := range append(golden, cfg.Vectors...) {
					if f.Primitive != prim {
						continue
					}
					if cfg.protocol < ProtocolVersion {
						f, skipped = withoutReclaim(f, skipped)
					}
					files = append(files, f)
				}
				res = runSuite(cfg, name, func(conn *Conn, res *SuiteResult) { vectorSuite(conn, files, res) })
				res.SkippedCases = skipped
			case SuiteRandom:
				res = runSuite(cfg, name, func(conn *Conn, res *SuiteResult) { randomSuite(cfg, conn, prim, res) })
			case SuiteConcurrent:
				res = runSuite(cfg, name, func(conn *Conn, res *SuiteResult) { concurrentSuite(cfg, conn, prim, res) })
			}
			rep.Results = append(rep.Results, res)
		}
	}
	return rep
}

// withoutReclaim returns f without the vectors that send tb.reclaim, which
// protocol 1 lacks, and appends their names to skipped.
func withoutReclaim(f VectorFile, skipped []string) (VectorFile, []string) {
	var keep []Vector
	for _, v := range f.Cases {
		if slices.ContainsFunc(v.Steps, func(s Step) bool { return s.Send.Op == OpReclaim }) {
			skipped = append(skipped, v.Name)
			continue
		}
		keep = append(keep, v)
	}
	f.Cases = keep
	return f, skipped
}

// DefaultStartTimeout is Config.StartTimeout's default.
const DefaultStartTimeout = 60 * time.Second

// startTimeout is the hello's budget (see Config.StartTimeout).
func (c Config) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return max(DefaultStartTimeout, c.Timeout)
}

// connect starts the driver and checks its hello: version 2, or version 1,
// which answers alike but has no tb.reclaim (spec/protocol.md §7).
func connect(cfg Config) (*Conn, Response, error) {
	var conn *Conn
	if cfg.Serve != nil {
		conn = StartFunc(cfg.Serve, cfg.Timeout)
	} else {
		var err error
		if conn, err = Start(cfg.Argv, cfg.Timeout, cfg.Log); err != nil {
			return nil, Response{}, err
		}
	}
	ans, err := conn.SendWithin(Request{Op: OpHello, Protocol: ProtocolVersion}, cfg.startTimeout())
	if err != nil {
		conn.Close()
		return nil, Response{}, fmt.Errorf("conform: hello: %w", err)
	}
	h := ans.Resp
	if !h.OK || h.Protocol < 1 || h.Protocol > ProtocolVersion {
		conn.Close()
		return nil, Response{}, fmt.Errorf("conform: hello: the driver answered %s; this harness speaks protocols 1 and %d", ans.Line, ProtocolVersion)
	}
	for _, p := range h.Primitives {
		if p != PrimTokenBucket && p != PrimCredits {
			conn.Close()
			return nil, Response{}, fmt.Errorf("conform: hello: unknown primitive %q in %s", p, ans.Line)
		}
	}
	return conn, h, nil
}

// runSuite runs one suite on its own driver process, so a driver that breaks
// in one suite does not hide the results of the others.
func runSuite(cfg Config, name string, body func(*Conn, *SuiteResult)) SuiteResult {
	res := SuiteResult{Suite: name}
	start := time.Now()
	conn, _, err := connect(cfg)
	if err != nil {
		res.Err = err
		return res
	}
	body(conn, &res)
	if derr := conn.Close(); derr != nil && res.Failed == 0 {
		res.Err = derr
	}
	res.Elapsed = time.Since(start)
	return res
}

func vectorSuite(conn *Conn, files []VectorFile, res *SuiteResult) {
	var all []Vector
	for _, f := range files {
		all = append(all, f.Cases...)
	}
	res.Cases = len(all)
	for i, v := range all {
		f := runVector(conn, fmt.Sprintf("v%d", i+1), v)
		switch {
		case f == nil:
			res.Passed++
		case f.Unknown:
			res.Unknown++
		default:
			res.Failed++
			res.Failures = append(res.Failures, f)
			if f.Driver != nil { // the driver is gone
				for _, rest := range all[i+1:] {
					res.NotRun = append(res.NotRun, rest.Name)
				}
				return
			}
		}
	}
}

// progress returns a function that writes a progress line on cfg.Progress
// when ProgressEvery has passed since the last.
func progress(cfg Config, name string, res *SuiteResult) func() {
	start := time.Now()
	last := start
	return func() {
		if cfg.Progress == nil || cfg.ProgressEvery <= 0 || time.Since(last) < cfg.ProgressEvery {
			return
		}
		last = time.Now()
		fmt.Fprintf(cfg.Progress, "  %-14s sessions %6d  passed %6d  failed %d  unknown %d  elapsed %5.1fs of %v\n",
			name, res.Cases, res.Passed, res.Failed, res.Unknown, time.Since(start).Seconds(), cfg.Budget)
	}
}

func randomSuite(cfg Config, conn *Conn, prim string, res *SuiteResult) {
	deadline := time.Now().Add(cfg.Budget)
	tick := progress(cfg, res.Suite, res)
	n := 0
	prefix := func() string { n++; return fmt.Sprintf("r%d", n) }
	for i := uint64(0); time.Now().Before(deadline); i++ {
		r := rand.New(rand.NewPCG(cfg.Seed, i))
		length := 10 + r.IntN(60)
		var s *session
		if prim == PrimTokenBucket {
			s = genTB(r, length, slices.Contains(cfg.ops, OpAdmit))
			if cfg.protocol < ProtocolVersion {
				s.tb = slices.DeleteFunc(s.tb, func(in model.TBInput[string]) bool { return in.Kind == model.TBReclaim })
			}
		} else {
			s = genCr(r, length)
		}
		tick()
		res.Cases++
		f := replay(conn, prefix(), s)
		if f == nil {
			res.Passed++
			continue
		}
		if f.Unknown {
			res.Unknown++
			continue
		}
		res.Failed++
		before := len(f.Sent)
		if f.Driver == nil {
			var tries int
			_, f, tries = shrink(conn, prefix, s, f, 400)
			f.Shrunk = fmt.Sprintf("shrunk from %d to %d requests in %d replays, still breaking %s", before, len(f.Sent), tries, f.Breaks.Invariant)
		}
		f.Case = fmt.Sprintf("session %d", i)
		f.Seed = cfg.Seed
		res.Failures = append(res.Failures, f)
		return // one minimal failing session is the report
	}
}

func concurrentSuite(cfg Config, conn *Conn, prim string, res *SuiteResult) {
	a0, o0 := conn.Overlap() // hello
	defer func() { a, o := conn.Overlap(); res.Answered, res.Overtook = a-a0, o-o0 }()
	deadline := time.Now().Add(cfg.Budget)
	tick := progress(cfg, res.Suite, res)
	// Sessions grow from small to large, so the first failure is a small one.
	for i := 0; time.Now().Before(deadline); i++ {
		shape := concurrentShape{clients: min(cfg.Clients, 2+i/2), opsPerClient: min(40, 6+3*i)}
		if prim == PrimCredits {
			// One partition: keep the history small enough to check quickly.
			// Measured on the Go driver, 80 sessions per shape: 6 clients x 5
			// rounds checks in at most 0.1 s; 8 x 6 reached porcupine's 20 s
			// timeout (Unknown) once.
			shape = concurrentShape{clients: min(cfg.Clients, 6, 2+i/2), opsPerClient: min(5, 2+i/2)}
		}
		tick()
		seed := cfg.Seed + uint64(i)
		name := fmt.Sprintf("%s-concurrent-seed%d-%d", prim, cfg.Seed, i)
		var f *CaseFailure
		if prim == PrimTokenBucket {
			f = runConcurrentTB(conn, fmt.Sprintf("c%d", i), seed, shape, cfg.Dir, name, cfg.protocol < ProtocolVersion, slices.Contains(cfg.ops, OpAdmit))
		} else {
			f = runConcurrentCr(conn, fmt.Sprintf("c%d", i), seed, shape, cfg.Dir, name)
		}
		res.Cases++
		if f == nil {
			res.Passed++
			continue
		}
		f.Case = fmt.Sprintf("session %d (%d clients x %d ops)", i, shape.clients, shape.opsPerClient)
		f.Seed = cfg.Seed
		res.Failed++
		res.Failures = append(res.Failures, f)
		return
	}
}

// Print writes the report table and every failure in protocol form.
func (r *Report) Print(w io.Writer, replay string) {
	if r.Err != nil {
		fmt.Fprintf(w, "FAIL: %v\n", r.Err)
		return
	}
	fmt.Fprintf(w, "driver %q, primitives %s, seed %d\n", r.Driver, strings.Join(r.Primitives, ","), r.Seed)
	if r.Protocol < ProtocolVersion {
		fmt.Fprintf(w, "the driver speaks protocol %d: no tb.reclaim is sent, and the vectors that need it are skipped\n", r.Protocol)
	}
	fmt.Fprintln(w)
	r.printTable(w)
	if r.ran() == 0 {
		fmt.Fprintf(w, "\nno case ran: %s\n", r.whyNothingRan())
	}
	for _, s := range r.Results {
		printOverlap(w, s)
	}
	for _, s := range r.Results {
		r.printSuite(w, s)
		for _, f := range s.Failures {
			printFailure(w, s.Suite, f)
			if replay != "" && s.Suite != "" && !strings.HasSuffix(s.Suite, SuiteVectors) {
				fmt.Fprintf(w, "    replay: %s\n", fmt.Sprintf(replay, f.Seed, strings.SplitN(s.Suite, "/", 2)[1]))
			}
		}
	}
	if r.OK() {
		fmt.Fprintln(w, "\nPASS")
	} else {
		fmt.Fprintln(w, "\nFAIL")
	}
}

// printTable prints one line per suite: its counts and time, or why it
// was skipped.
func (r *Report) printTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "suite\tcases\tpassed\tfailed\tunknown\ttime\t")
	for _, s := range r.Results {
		if s.Skipped != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t (skipped: %s)\n", s.Suite, s.Skipped)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", s.Suite, s.Cases, s.Passed, s.Failed, s.Unknown, s.Elapsed.Round(time.Millisecond))
	}
	tw.Flush()
}

// printOverlap says, of a concurrent suite that ran, how many of its
// operations overtook a request sent before them, warning when none did.
func printOverlap(w io.Writer, s SuiteResult) {
	if !strings.HasSuffix(s.Suite, "/"+SuiteConcurrent) || s.Skipped != "" || s.Answered == 0 {
		return
	}
	if s.Overtook == 0 {
		fmt.Fprintf(w, "\nwarning: %s: no operation overlapped another in the driver (of %d answers, none overtook a request sent before it): it seems to run requests one at a time, so the suite could see no race (spec/protocol.md §2)\n", s.Suite, s.Answered)
	} else {
		fmt.Fprintf(w, "\n%s: %d of %d operations overlapped another in the driver (answered before a request sent earlier)\n", s.Suite, s.Overtook, s.Answered)
	}
}

// printSuite prints what a suite could not do: the cases it skipped for
// the driver's protocol, those it did not run, and its error.
func (r *Report) printSuite(w io.Writer, s SuiteResult) {
	if len(s.SkippedCases) > 0 {
		fmt.Fprintf(w, "\n%s: %d cases skipped (tb.reclaim is not in protocol %d): %s\n", s.Suite, len(s.SkippedCases), r.Protocol, strings.Join(s.SkippedCases, " "))
	}
	if len(s.NotRun) > 0 {
		fmt.Fprintf(w, "\n%s: %d of %d cases not run (the driver broke first): %s\n", s.Suite, len(s.NotRun), s.Cases, strings.Join(s.NotRun, " "))
	}
	if s.Err != nil {
		fmt.Fprintf(w, "\n%s: ERROR %v\n", s.Suite, s.Err)
	}
}

// printFailure prints one failed case of suite: its heading (the
// invariants it covers and the one it breaks), how it was shrunk, the
// requests sent, what the driver answered against what was wanted, the
// part of the history that shows it, and its visualization.
func printFailure(w io.Writer, suite string, f *CaseFailure) {
	fmt.Fprintf(w, "\n--- FAIL %s: %s", suite, f.Case)
	if len(f.Covers) > 0 {
		fmt.Fprintf(w, " [%s]", strings.Join(f.Covers, " "))
	}
	if f.Breaks.Invariant != "" {
		fmt.Fprintf(w, ": breaks %s", f.Breaks.Invariant)
	}
	fmt.Fprintln(w)
	if f.Shrunk != "" {
		fmt.Fprintf(w, "    (%s)\n", f.Shrunk)
	}
	if f.Breaks.Detail != "" {
		fmt.Fprintf(w, "    %s\n", f.Breaks.Detail)
	}
	printSent(w, f.Sent)
	printAnswer(w, f)
	if len(f.Part) > 0 {
		fmt.Fprintf(w, "    %s\n", partHeading(f.PartOf))
		for _, l := range f.Part {
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
	if f.Artifact != "" {
		fmt.Fprintf(w, "    visualization: %s\n", f.Artifact)
	}
}

// printSent lists a failed case's requests, with the legend of symbolic
// epochs when they use any.
func printSent(w io.Writer, sent []string) {
	if len(sent) == 0 {
		return
	}
	legend := ""
	if strings.Contains(strings.Join(sent, ""), `"$e`) {
		legend = ` (epochs "$eN" stand for the epoch the N-th successful cr.reserve answered)`
	}
	fmt.Fprintf(w, "    requests%s:\n", legend)
	for _, l := range sent {
		fmt.Fprintf(w, "      %s\n", l)
	}
}

// printAnswer prints the driver's error, or what it answered (and the line
// it wrote) against what was wanted.
func printAnswer(w io.Writer, f *CaseFailure) {
	if f.Driver != nil {
		fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(f.Driver.Error(), "\n", "\n    "))
		return
	}
	if f.Want != "" {
		fmt.Fprintf(w, "    want: %s\n", f.Want)
	}
	fmt.Fprintf(w, "    got:  %s\n", f.Got)
	if f.GotLine != "" {
		fmt.Fprintf(w, "    (driver wrote: %s)\n", f.GotLine)
	}
}
