package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/interleave"
)

// Exploring in several processes. The explorer installs one scheduler per
// process (hooked.Install), so one process explores one scenario at a
// time, on one core. With -procs N (by default the machine's cores, at
// most 4) explore starts N copies of itself with -worker and hands each
// the index of the next scenario as soon as it is free: the scenarios are
// the same, each explored as it would be alone (the larger first), and the
// results are printed in the selection's order. -procs 1 explores in this process;
// -replay and -backend etcd (one server) do too. With -site-pairs each
// worker writes the pairs of the scenarios it explored to a file of its
// own, and the run's file is their concatenation: a pair's runs are summed
// by whoever reads it (interleave.ReadSitePairs), as one process would have
// counted them, since each scenario is explored by one worker.

// workerEnv is added to the workers' environment (a test sets it to make
// its binary the command).
var workerEnv []string

// defaultProcs is -procs's default: 1 inside a test binary, whose
// executable is no tollgate command (started as one, it would run the
// tests again, each of which would start more), unless a test says how to
// make it one (workerEnv).
func defaultProcs() int {
	if testing.Testing() && workerEnv == nil {
		return 1
	}
	return min(runtime.NumCPU(), 4)
}

// parallel reports whether c's run goes to worker processes.
func parallel(c exploreConfig) bool {
	return c.procs > 1 && len(c.scenarios) > 1 && c.backend == "memory" && c.replay == ""
}

// wireResult is a scenario's result as a worker sends it: the fields the
// results table reads, and a failure as its rendered report.
type wireResult struct {
	Index      int
	Threads    int
	Ops        int
	Strategy   interleave.Strategy
	Bound      int
	Schedules  int
	Blocked    int
	Ended      int
	Histories  int
	Exhaustive bool
	Elapsed    time.Duration
	Err        string `json:",omitempty"`
	Kind       interleave.Kind
	Invariant  string
	Report     string `json:",omitempty"`
}

// exploreWorker explores the scenarios of c whose indices arrive on in,
// one a line, writing each result on out as a line of JSON.
func exploreWorker(c exploreConfig, in io.Reader, out io.Writer) int {
	enc := json.NewEncoder(out)
	if c.sitePairs != "" {
		c.opt.SitePairs = interleave.NewSitePairs()
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		i, err := strconv.Atoi(sc.Text())
		if err != nil || i < 0 || i >= len(c.scenarios) {
			fmt.Fprintf(os.Stderr, "explore -worker: bad scenario index %q\n", sc.Text())
			return exploreUsage
		}
		o := c.opt
		if c.progress > 0 {
			o.Progress = progressTo(os.Stderr, c.scenarios[i], c.progress)
		}
		r := interleave.Explore(c.scenarios[i], o)
		w := wireResult{Index: i, Threads: r.Threads, Ops: r.Ops, Strategy: r.Strategy, Bound: r.Bound,
			Schedules: r.Schedules, Blocked: r.Blocked, Ended: r.Ended, Histories: r.Histories,
			Exhaustive: r.Exhaustive, Elapsed: r.Elapsed}
		if r.Err != nil {
			w.Err = r.Err.Error()
		}
		if r.Failure != nil {
			w.Kind, w.Invariant, w.Report = r.Failure.Kind, r.Failure.Invariant, r.Failure.Report()
		}
		if err := enc.Encode(w); err != nil {
			return exploreUsage
		}
	}
	if c.sitePairs != "" {
		if err := writeSitePairs(c.sitePairs, c.opt.SitePairs); err != nil {
			fmt.Fprintf(os.Stderr, "explore -worker: -site-pairs: %v\n", err)
			return exploreUsage
		}
	}
	return explorePass
}

// exploreParallel explores c's scenarios in c.procs worker processes and
// returns their results in c's order (with failfast, those explored until
// a failure). A failure's report (the worker's rendering of it) goes to
// stdout as it arrives, as the in-process run prints it.
func exploreParallel(c exploreConfig, stdout, stderr io.Writer) ([]interleave.Result, bool, error) {
	if testing.Testing() && workerEnv == nil {
		return nil, false, errors.New("a test binary is no tollgate command: set workerEnv to start it as one")
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, false, err
	}
	args := append([]string{"explore"}, c.args...)
	args = append(args[:len(args):len(args)], "-procs", "1", "-worker")
	var pairFiles []string
	if c.sitePairs != "" {
		dir, err := os.MkdirTemp("", "tollgate-site-pairs-")
		if err != nil {
			return nil, false, err
		}
		defer os.RemoveAll(dir)
		for w := range min(c.procs, len(c.scenarios)) {
			pairFiles = append(pairFiles, filepath.Join(dir, fmt.Sprintf("worker-%d.txt", w)))
		}
	}
	d := &dispatch{c: c, order: handOutOrder(c), results: make([]*interleave.Result, len(c.scenarios)), stdout: stdout}
	// The workers' stderr (their progress lines) goes to stderr: directly
	// when it is a file, else through one lock (os/exec copies each
	// worker's output to a writer on a goroutine of its own).
	errw := stderr
	if _, ok := stderr.(*os.File); !ok {
		errw = &lockedWriter{w: stderr}
	}
	var wg sync.WaitGroup
	for w := range min(c.procs, len(c.scenarios)) {
		cmd := exec.Command(exe, args...)
		if pairFiles != nil { // the last -site-pairs on the command line is the one the worker takes
			cmd.Args = append(cmd.Args, "-site-pairs", pairFiles[w])
		}
		cmd.Env = append(os.Environ(), workerEnv...)
		cmd.Stderr = errw
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, false, err
		}
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return nil, false, err
		}
		if err := cmd.Start(); err != nil {
			return nil, false, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.serve(stdin, json.NewDecoder(pipe))
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				d.fail(fmt.Errorf("a worker: %w", err))
			}
		}()
	}
	wg.Wait()
	if d.err != nil {
		return nil, false, d.err
	}
	if pairFiles != nil {
		if err := concatFiles(c.sitePairs, pairFiles); err != nil {
			return nil, false, fmt.Errorf("-site-pairs: %w", err)
		}
	}
	var out []interleave.Result
	for _, r := range d.results {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, d.failed, nil
}

// concatFiles writes the files from, one after the other, to path.
func concatFiles(path string, from []string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, f := range from {
		in, err := os.Open(f)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// handOutOrder is the order in which c's scenarios are handed to the
// workers: the larger ones (more threads, then more operations) first, so
// that the run does not end waiting for one that began last; with
// -failfast, the selection's order.
func handOutOrder(c exploreConfig) []int {
	order := make([]int, len(c.scenarios))
	for i := range order {
		order[i] = i
	}
	if !c.failfast {
		size := func(s interleave.Scenario) int { return 16*s.Threads() + s.Ops() }
		slices.SortStableFunc(order, func(a, b int) int { return size(c.scenarios[b]) - size(c.scenarios[a]) })
	}
	return order
}

// dispatch hands scenarios to the workers one at a time and gathers their
// results; its methods are safe for concurrent use by the workers'
// goroutines.
type dispatch struct {
	c       exploreConfig
	order   []int
	stdout  io.Writer
	mu      sync.Mutex
	next    int                  // the next index into order to hand out
	results []*interleave.Result // by scenario, nil until explored
	failed  bool                 // some scenario failed
	err     error                // the first worker error; no scenario is handed out after it
}

// take returns the next scenario to explore, or false when none is left
// (or a worker failed, or a scenario did under -failfast).
func (d *dispatch) take() (int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.next >= len(d.order) || d.err != nil || (d.failed && d.c.failfast) {
		return 0, false
	}
	d.next++
	return d.order[d.next-1], true
}

// fail records a worker's error; the first one is the run's.
func (d *dispatch) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
	}
}

// serve feeds one worker scenario indexes on stdin and reads its results
// from dec until no scenario is left or the worker fails.
func (d *dispatch) serve(stdin io.Writer, dec *json.Decoder) {
	for {
		i, ok := d.take()
		if !ok {
			return
		}
		if _, err := fmt.Fprintln(stdin, i); err != nil {
			d.fail(fmt.Errorf("a worker: %w", err))
			return
		}
		var w wireResult
		if err := dec.Decode(&w); err != nil || w.Index != i {
			d.fail(fmt.Errorf("a worker's result for %s: %v (index %d)", d.c.scenarios[i].Name, err, w.Index))
			return
		}
		d.record(i, fromWire(d.c.scenarios[i], w), w)
	}
}

// record keeps scenario i's result r and prints its error or failure
// report (w's) as it comes.
func (d *dispatch) record(i int, r interleave.Result, w wireResult) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.results[i] = &r
	d.failed = d.failed || r.Err != nil || r.Failure != nil
	switch {
	case w.Err != "":
		fmt.Fprintf(d.stdout, "\n%s: %s\n", r.Scenario, w.Err)
	case w.Report != "":
		fmt.Fprintf(d.stdout, "\n%s\n", w.Report)
	}
}

// fromWire is the Result a worker sent for s. A failure keeps its kind and
// invariant (what the table shows); its report was printed as it came.
func fromWire(s interleave.Scenario, w wireResult) interleave.Result {
	r := interleave.Result{Scenario: s.Name, Threads: w.Threads, Ops: w.Ops, Strategy: w.Strategy, Bound: w.Bound,
		Schedules: w.Schedules, Blocked: w.Blocked, Ended: w.Ended, Histories: w.Histories,
		Exhaustive: w.Exhaustive, Elapsed: w.Elapsed}
	if w.Err != "" {
		r.Err = errors.New(w.Err)
	}
	if w.Report != "" {
		r.Failure = &interleave.Failure{Kind: w.Kind, Invariant: w.Invariant, Thread: -1, Detail: w.Report}
	}
	return r
}

// lockedWriter serializes the writes of several goroutines to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
