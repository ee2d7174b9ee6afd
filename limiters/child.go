package limiters

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/tollgate/tollgate/internal/shard"
)

// Adapter is one library as the campaign drives it. Its package imports the
// library; the campaign compiles it once per version, in a generated module
// that pins that version (see Build), so the code here never names one.
type Adapter interface {
	// Module is the library's module path, as go list -m knows it.
	Module() string
	// Workloads are the runs of the campaign for the version linked in.
	Workloads(quick bool) []Workload
	// RunSteps runs a deterministic workload on a fresh limiter and returns
	// one event per call step, in step order. It must not depend on
	// anything but p and steps (it is how counterexamples replay and
	// shrink).
	RunSteps(p Params, steps []Step) ([]Event, error)
	// RunConcurrent runs a concurrent workload with seed. It returns the
	// events and, where the library's sequential behaviour is
	// deterministic, the L4 verdict (porcupine through the recorder in
	// package linearizability) and the linearization as sequential steps,
	// replayable by RunSteps (nil when there is none).
	RunConcurrent(w Workload, seed uint64, dir string) (evs []Event, lin *Lin, err error)
}

// Lin is the linearizability check of a concurrent history (L4).
type Lin struct {
	Result string `json:"result"` // Ok, Illegal, Unknown
	Detail string `json:"detail"`
	HTML   string `json:"html,omitempty"`
	// Steps replays the history as the linearization porcupine found, on
	// one goroutine (set only for Ok).
	Steps []Step `json:"steps,omitempty"`
	// Events are those steps' events, in the same order.
	Events []Event `json:"-"`
}

// Result is one row of the verdict table.
type Result struct {
	Library  string  `json:"library"`
	Version  string  `json:"version"`
	Workload string  `json:"workload"`
	Hunts    string  `json:"hunts"`
	Prop     string  `json:"prop"`
	Verdict  string  `json:"verdict"` // holds, VIOLATED, n/a, Unknown, error
	Seen     float64 `json:"seen"`
	Allowed  float64 `json:"allowed"`
	Detail   string  `json:"detail"`
	Calls    int     `json:"calls"`
	Cex      string  `json:"cex,omitempty"`    // counterexample file
	Shrunk   int     `json:"shrunk,omitempty"` // steps in the shrunk counterexample
	Replay   string  `json:"replay,omitempty"`
	Seed     uint64  `json:"seed,omitempty"`
}

// Verdicts.
const (
	Holds    = "holds"
	Violated = "VIOLATED"
	NA       = "n/a"
	Failed   = "error"
)

// Counterexample is a violation as written to disk: enough to replay it
// (Steps on RunSteps, for a deterministic one) and to draw it.
type Counterexample struct {
	Library  string  `json:"library"`
	Version  string  `json:"version"`
	Workload string  `json:"workload"`
	Hunts    string  `json:"hunts"`
	Prop     string  `json:"prop"`
	Seed     uint64  `json:"seed,omitempty"`
	Params   Params  `json:"params"`
	Steps    []Step  `json:"steps,omitempty"`
	Events   []Event `json:"events"`
	Finding  Finding `json:"finding"`
	// Original is how many steps the run had before shrinking; Recorded
	// says the events come from a concurrent run on the real clock (Steps,
	// when set, are its linearization).
	Original int    `json:"original_steps"`
	Recorded bool   `json:"recorded,omitempty"`
	Replay   string `json:"replay"`
}

// LinkedVersion is the version of module linked into this binary (after
// replace directives), or "(devel)" when it is the main module's own.
func LinkedVersion(module string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == module {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
}

// Child is the main function of a generated per-version module: it runs
// the adapter's workloads (run) or replays a counterexample (replay) and
// writes JSON results, one per line, to stdout.
func Child(a Adapter) {
	os.Exit(child(a, os.Args[1:], os.Stdout, os.Stderr))
}

func child(a Adapter, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("limiters-child", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "run", "run or replay")
	seed := fs.Uint64("seed", 1, "seed of the concurrent workloads")
	dir := fs.String("dir", os.TempDir(), "where counterexamples are written")
	only := fs.String("workload", "", "run only this workload")
	quick := fs.Bool("quick", false, "smaller concurrent workloads")
	cexPath := fs.String("cex", "", "counterexample file to replay")
	replayCmd := fs.String("replay-cmd", "go run ./cmd/tollgate limiters --replay", "command prefix printed to replay a counterexample")
	shardFlag := fs.String("shard", "", "run only the workloads whose Unit is in shard i/n")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	enc := json.NewEncoder(stdout)
	version := LinkedVersion(a.Module())
	switch *mode {
	case "run":
		sh, err := shard.Parse(*shardFlag)
		if err != nil {
			fmt.Fprintln(stderr, "limiters:", err)
			return 2
		}
		ws, err := Select(a.Module(), version, a.Workloads(*quick), *only, sh)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		for _, w := range ws {
			for _, r := range runWorkload(a, version, w, *seed, *dir, *replayCmd) {
				r.Seen, r.Allowed = finite(r.Seen), finite(r.Allowed)
				if err := enc.Encode(r); err != nil {
					fmt.Fprintln(stderr, err)
					return 1
				}
			}
		}
		return 0
	case "replay":
		r, err := replay(a, version, *cexPath)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		r.Seen, r.Allowed = finite(r.Seen), finite(r.Allowed)
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "limiters: mode %q must be run or replay\n", *mode)
	return 2
}

// runWorkload runs w and checks each of its properties; a violation is
// shrunk (deterministic workloads) and written as a counterexample.
func runWorkload(a Adapter, version string, w Workload, seed uint64, dir, replayCmd string) []Result {
	base := Result{Library: a.Module(), Version: version, Workload: w.Name, Hunts: w.Hunts}
	fail := func(err error) []Result {
		var out []Result
		for _, p := range w.Props {
			r := base
			r.Prop, r.Verdict, r.Detail = p, Failed, err.Error()
			out = append(out, r)
		}
		return out
	}
	var evs []Event
	var lin *Lin
	var err error
	steps := w.Steps
	if w.Concurrent() {
		base.Seed = seed
		evs, lin, err = safeConcurrent(a, w, seed, dir)
	} else {
		evs, err = safeSteps(a, w.Params, steps)
	}
	if err != nil {
		return fail(err)
	}
	var out []Result
	for _, prop := range w.Props {
		r := base
		r.Prop, r.Calls = prop, len(evs)
		if prop == PropLinearizes {
			switch {
			case lin == nil:
				r.Verdict, r.Detail = NA, "no deterministic sequential behaviour to compare with"
			case lin.Result == "Ok":
				r.Verdict, r.Detail = Holds, lin.Detail
			case lin.Result == "Illegal":
				r.Verdict, r.Detail, r.Cex = Violated, lin.Detail, lin.HTML
			default:
				r.Verdict, r.Detail = lin.Result, lin.Detail
			}
			out = append(out, r)
			continue
		}
		f, err := Check(prop, w.Params, evs)
		if err != nil {
			r.Verdict, r.Detail = Failed, err.Error()
			out = append(out, r)
			continue
		}
		r.Seen, r.Allowed, r.Detail = f.Seen, f.Allowed, f.Detail
		switch {
		case f.NA:
			r.Verdict = NA
		case f.Holds:
			r.Verdict = Holds
		default:
			r.Verdict = Violated
			cex := Counterexample{Library: a.Module(), Version: version, Workload: w.Name, Hunts: w.Hunts, Prop: prop,
				Params: w.Params, Original: len(steps), Seed: base.Seed}
			seqSteps := steps
			if w.Concurrent() {
				cex.Recorded = true
				cex.Events, cex.Finding = windowOf(prop, w.Params, f, evs)
				seqSteps = nil
				if lin != nil && lin.Steps != nil {
					// The linearization replays on one goroutine with
					// the recorded answers; shrink that.
					if lf, _ := Check(prop, w.Params, lin.Events); !lf.Holds {
						seqSteps = lin.Steps
						cex.Original = len(lin.Steps)
					}
				}
			}
			if seqSteps != nil {
				seqSteps = truncate(a, prop, w.Params, seqSteps)
				small := Shrink(seqSteps, func(s []Step) bool {
					e, err := safeSteps(a, w.Params, s)
					if err != nil {
						return false
					}
					ff, _ := Check(prop, w.Params, e)
					return !ff.Holds && !ff.NA
				})
				e, _ := safeSteps(a, w.Params, small)
				cex.Steps, cex.Events = small, e
				cex.Finding, _ = Check(prop, w.Params, e)
				r.Shrunk = len(small)
			}
			path, err := writeCex(dir, &cex, replayCmd)
			if err != nil {
				r.Detail += "; " + err.Error()
			}
			r.Cex, r.Replay = path, cex.Replay
		}
		out = append(out, r)
	}
	return out
}

func safeSteps(a Adapter, p Params, steps []Step) (evs []Event, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the library panicked: %v", v)
		}
	}()
	return a.RunSteps(p, steps)
}

func safeConcurrent(a Adapter, w Workload, seed uint64, dir string) (evs []Event, lin *Lin, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the library panicked: %v", v)
		}
	}()
	return a.RunConcurrent(w, seed, dir)
}

func cexName(c *Counterexample) string {
	lib := c.Library[strings.LastIndex(c.Library, "/")+1:]
	return fmt.Sprintf("%s@%s-%s-%s.json", lib, c.Version, c.Workload, c.Prop)
}

func writeCex(dir string, c *Counterexample, replayCmd string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, cexName(c))
	c.Replay = replayCmd + " " + path
	c.Finding.Seen, c.Finding.Allowed = finite(c.Finding.Seen), finite(c.Finding.Allowed)
	data, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o644)
}

// ReadCex reads a counterexample file.
func ReadCex(path string) (Counterexample, error) {
	var c Counterexample
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("limiters: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("limiters: %s: %w", path, err)
	}
	c.Params.Fix()
	switch {
	case c.Library == "":
		return c, fmt.Errorf("limiters: %s: library must be set", path)
	case c.Version == "":
		return c, fmt.Errorf("limiters: %s: version must be set", path)
	case c.Prop == "":
		return c, fmt.Errorf("limiters: %s: prop must be set", path)
	}
	return c, nil
}

// replay re-runs a counterexample: a deterministic one on a fresh limiter
// of the linked version, step by step; a recorded concurrent one with no
// sequential steps is re-checked as recorded (its schedule cannot be
// re-run).
func replay(a Adapter, version, path string) (Result, error) {
	c, err := ReadCex(path)
	if err != nil {
		return Result{}, err
	}
	if c.Library != a.Module() || c.Version != version {
		return Result{}, fmt.Errorf("limiters: %s is for %s@%s, this binary links %s@%s", path, c.Library, c.Version, a.Module(), version)
	}
	r := Result{Library: c.Library, Version: version, Workload: c.Workload, Hunts: c.Hunts, Prop: c.Prop, Cex: path, Replay: c.Replay, Seed: c.Seed}
	evs := c.Events
	how := "re-checked the recorded history (a schedule on the real clock cannot be re-run)"
	if c.Steps != nil {
		evs, err = safeSteps(a, c.Params, c.Steps)
		if err != nil {
			return Result{}, err
		}
		how = fmt.Sprintf("re-ran %d steps on a fresh limiter", len(c.Steps))
	}
	f, err := Check(c.Prop, c.Params, evs)
	if err != nil {
		return Result{}, err
	}
	r.Calls, r.Seen, r.Allowed = len(evs), f.Seen, f.Allowed
	r.Verdict, r.Detail = Holds, how+": the property holds; the counterexample does not replay"
	if !f.Holds && !f.NA {
		r.Verdict, r.Detail = Violated, how+": "+f.Detail
	}
	return r, nil
}

// truncate cuts a failing deterministic run after the last step its
// finding depends on (the steps after it cannot change earlier answers),
// so that shrinking starts small; it keeps every step when the cut run
// does not fail the same way.
func truncate(a Adapter, prop string, p Params, steps []Step) []Step {
	evs, err := safeSteps(a, p, steps)
	if err != nil {
		return steps
	}
	f, _ := Check(prop, p, evs)
	if f.Holds {
		return steps
	}
	last := -1
	for _, e := range evs {
		in := false
		switch prop {
		case PropBound:
			in = e.OK && e.LoNs >= f.FromNs && e.LoNs <= f.ToNs
		case PropPacer:
			in = e.RetNs >= f.FromNs && e.RetNs <= f.ToNs
		case PropRefusal:
			in = e.Step == evs[f.From].Step
		}
		if in {
			last = max(last, e.Step)
		}
	}
	if last < 0 || last+1 >= len(steps) {
		return steps
	}
	cut := steps[:last+1]
	if e, err := safeSteps(a, p, cut); err == nil {
		if g, _ := Check(prop, p, e); !g.Holds {
			return cut
		}
	}
	return steps
}

// windowOf keeps, of a recorded concurrent history that breaks prop, only
// the calls of the worst window (L1: the admitted calls counted in it; L3:
// the returns in it), stamps and readings as recorded. A sub-history breaks
// the property at least as badly (with fewer calls, no call's newest
// reading can grow), which windowOf checks; it returns the whole history
// when the check says otherwise.
func windowOf(prop string, p Params, f Finding, evs []Event) ([]Event, Finding) {
	newest := Newest(evs)
	var keep []Event
	for i, e := range evs {
		switch prop {
		case PropBound:
			if e.OK && e.LoNs >= f.FromNs && newest[i] <= f.ToNs {
				keep = append(keep, e)
			}
		case PropPacer:
			if e.RetNs >= f.FromNs && e.RetNs <= f.ToNs {
				keep = append(keep, e)
			}
		}
	}
	if len(keep) == 0 || len(keep) == len(evs) {
		return evs, f
	}
	for i := range keep {
		keep[i].Step = i
	}
	if g, err := Check(prop, p, keep); err == nil && !g.Holds {
		return keep, g
	}
	return evs, f
}
