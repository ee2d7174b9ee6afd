package auto

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
)

// A Layer is one part of the kill oracle: some tests of one package, run
// from a test binary built once per campaign with every mutant compiled in.
type Layer struct {
	Name string
	// Pkg is the package whose tests run ("./fuzz"); "" means the
	// mutated package itself (the unit layer).
	Pkg  string
	Run  string   // -test.run
	Skip string   // -test.skip
	Args []string // further test flags
	// PerPrimitive adds -explore.primitive=credits or =tokenbucket when
	// every mutated file is of that table's package (impl/credits,
	// impl/tokenbucket): the other table's scenarios cannot see it.
	PerPrimitive bool
}

// primitiveArgs is the -explore.primitive flag for a layer with
// PerPrimitive and the mutated files, or nothing.
func primitiveArgs(l Layer, files []string) []string {
	if !l.PerPrimitive || len(files) == 0 {
		return nil
	}
	prim := ""
	for _, f := range files {
		p := ""
		switch {
		case strings.HasPrefix(f, "impl/credits/"):
			p = "credits"
		case strings.HasPrefix(f, "impl/tokenbucket/"):
			p = "tokenbucket"
		}
		if p == "" || (prim != "" && p != prim) {
			return nil
		}
		prim = p
	}
	return []string{"-explore.primitive=" + prim}
}

// Layers is the oracle profile, every layer of the suite in its fast form.
// Campaign runs them cheapest first (by the baseline's times) and stops at
// the first that fails.
var Layers = []Layer{
	{Name: "unit", Run: ".", Skip: slowUnit},
	{Name: "unit-slow", Run: slowUnit},
	{Name: "vectors", Pkg: "./conform", Run: "^(TestVectorsMatchModel|TestVectorsCoverEveryInvariant|TestGoDriverPasses|TestCrAnswerInvertsCrResponse|TestDivergeNamesTheInvariant)$"},
	{Name: "fuzz-seeds", Pkg: "./fuzz", Run: "^Fuzz"},
	{Name: "differential", Pkg: "./fuzz", Run: "^(TestRapidCredits|TestRapidTokenBucket|TestRapidHostile|TestRealImplementationPassesScripts)$",
		Args: []string{"-rapid.checks=1000", "-rapid.seed=1", "-rapid.nofailfile"}},
	{Name: "linearizability", Pkg: "./linearizability", Run: "^(TestShortTokenBucket|TestShortCredits|TestTokenBucketModelHandHistories|TestCreditsModelHandHistories)$",
		Args: []string{"-lin.budget=500ms", "-lin.seed=1"}},
	ExploreLayer,
}

// ExploreLayer is the explorer's layer: the default explore run
// (explore.DefaultRun, what `tollgate explore` runs with no flags), through
// TestDefaultExplore on the test binary the overlay built, narrowed to the
// scenarios of the mutated table (PerPrimitive). The mutant matrix's
// explore layer hunts with the same run (explore.Hunt).
var ExploreLayer = Layer{Name: "explore", Pkg: "./internal/interleave", Run: "^TestDefaultExplore$",
	Args: []string{"-explore.default"}, PerPrimitive: true}

// ConcurrencyLayers is the oracle of the concurrency operators: the
// default explore run alone, on the explorer's hooked copies of the
// mutated tables.
var ConcurrencyLayers = []Layer{ExploreLayer}

// slowUnit are the unit tests that take most of their package's time (a
// second each, against milliseconds for the rest): a layer of their own,
// so that the rest of the unit tests run first.
const slowUnit = "^(TestReclaimStormKeepsLiveBuckets|TestRetryAfterExact|TestSweepRacingEnqueue)$"

// Arm64Layer is the last layer, for conversion mutants only: the mutated
// package cross-compiled for arm64 must hold no fused multiply-add
// (scripts/arm64.sh's static check), since dropping a conversion changes
// rounding only where the compiler fuses.
const Arm64Layer = "arm64-fma"

// Config is one campaign.
type Config struct {
	Root    string   // module root
	Files   []string // the files to mutate, slash paths relative to Root
	Workers int
	Log     func(format string, args ...any)
	// Lines, when set, keeps only the mutants whose line it holds for the
	// file (changed-lines mode).
	Lines map[string]map[int]bool
	// Max, when positive, judges at most that many mutants, evenly spaced
	// in source order.
	Max int
	// Only, when set, keeps only the mutants it accepts.
	Only func(Mutant) bool
	// Set is the operators (Classic when empty).
	Set OpSet
	// Layers is the oracle (nil: Layers); MinTimeout the least time-out of
	// a layer (0: 3 s). Tests set them.
	Layers     []Layer
	MinTimeout time.Duration
}

// Outcome is what happened to one mutant.
type Outcome struct {
	Mutant Mutant
	Num    int
	Status string // "killed", "survived", "not-built"
	Layer  string // the layer that killed it
	Test   string // the first failing test, or the hang's detail
	Hang   bool   // killed by a confirmed hang, not a failure
	Time   time.Duration
}

// Result is a campaign's outcome.
type Result struct {
	Generated int
	Sampled   int  // when Max sampled: how many there were
	Partial   bool // Only chose the mutants
	Dropped   int  // candidates that did not compile
	Outcomes  []Outcome
	Baseline  map[string]time.Duration
	Order     []string
	Build     time.Duration
	Elapsed   time.Duration
	rounds    int // schema builds judged so far
}

type built struct {
	layer   Layer
	pkg     string
	bin     string
	dir     string // where the test binary runs (its package directory)
	base    time.Duration
	timeout time.Duration
}

// Campaign generates the mutants of cfg.Files and judges each with the
// oracle.
func Campaign(cfg Config) (*Result, error) {
	start := time.Now()
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	res := &Result{Baseline: map[string]time.Duration{}, Partial: cfg.Only != nil}
	mod, err := modulePath(cfg.Root)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "tollgate-automut-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	outcomes, loaded, err := generateMutants(cfg, res, logf)
	if err != nil {
		return nil, err
	}
	outcomes = sample(cfg, res, outcomes, logf)
	for i := range outcomes {
		outcomes[i].Num = i + 1
	}
	res.Generated = len(outcomes)
	res.Outcomes = outcomes
	ms := make([]Mutant, len(outcomes))
	for i, o := range outcomes {
		ms[i] = o.Mutant
	}
	rounds := Rounds(ms)
	for r, idx := range rounds {
		// Each round is one schema build (Rounds: opaque nodes).
		round := make([]Outcome, len(idx))
		for j, i := range idx {
			round[j] = outcomes[i]
		}
		dir := work
		if len(rounds) > 1 {
			logf("round %d of %d: %d mutants", r+1, len(rounds), len(round))
			if dir, err = os.MkdirTemp(work, "round-"); err != nil {
				return nil, err
			}
		}
		if err := judgeAll(cfg, mod, loaded, dir, round, res, logf); err != nil {
			return nil, err
		}
		res.rounds++
		for j, i := range idx {
			outcomes[i] = round[j]
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// generateMutants loads the packages of cfg.Files and generates their
// mutants of cfg.Set that cfg.Lines and cfg.Only keep.
func generateMutants(cfg Config, res *Result, logf func(string, ...any)) ([]Outcome, map[string]*Package, error) {
	byPkg := map[string][]string{}
	var pkgs []string
	for _, f := range cfg.Files {
		d := filepath.ToSlash(filepath.Dir(f))
		if byPkg[d] == nil {
			pkgs = append(pkgs, d)
		}
		byPkg[d] = append(byPkg[d], f)
	}
	sort.Strings(pkgs)
	var outcomes []Outcome
	loaded := map[string]*Package{}
	for _, dir := range pkgs {
		p, err := LoadPackage(cfg.Root, dir)
		if err != nil {
			return nil, nil, err
		}
		loaded[dir] = p
		n := 0
		for _, f := range byPkg[dir] {
			fm, dropped, err := p.GenerateSet(f, cmp.Or(cfg.Set, Classic))
			if err != nil {
				return nil, nil, err
			}
			res.Dropped += dropped
			for _, m := range fm {
				if (cfg.Lines == nil || cfg.Lines[f][m.Line]) && (cfg.Only == nil || cfg.Only(m)) {
					outcomes = append(outcomes, Outcome{Mutant: m})
					n++
				}
			}
		}
		logf("%s: %d mutants", dir, n)
	}
	return outcomes, loaded, nil
}

// sample keeps cfg.Max of outcomes, evenly spaced, when there are more.
func sample(cfg Config, res *Result, outcomes []Outcome, logf func(string, ...any)) []Outcome {
	if cfg.Max <= 0 || len(outcomes) <= cfg.Max {
		return outcomes
	}
	logf("judging %d of the %d mutants, evenly spaced (-max)", cfg.Max, len(outcomes))
	res.Sampled = len(outcomes)
	kept := make([]Outcome, cfg.Max)
	for i := range kept {
		kept[i] = outcomes[i*len(outcomes)/cfg.Max]
	}
	return kept
}

// judgeAll builds the schema binaries for every mutant (one overlay: the
// schema of each mutated file and the explorer's copy of each table file)
// and runs every mutant through the oracle.
func judgeAll(cfg Config, mod string, pkgs map[string]*Package, dir string, outs []Outcome, res *Result, logf func(string, ...any)) error {
	overlay, units, err := writeSchemas(cfg, mod, pkgs, dir, outs)
	if err != nil {
		return err
	}
	t0 := time.Now()
	layers, err := buildLayers(cfg, units, dir, overlay, logf)
	if err != nil {
		return err
	}
	res.Build += time.Since(t0)
	if err := runBaselines(cfg, layers, res, logf); err != nil {
		return err
	}
	sort.SliceStable(layers, func(i, j int) bool { return layers[i].base < layers[j].base })
	for _, l := range layers {
		if !slices.Contains(res.Order, l.layer.Name) {
			res.Order = append(res.Order, l.layer.Name)
		}
	}
	judgeParallel(cfg, layers, dir, outs, logf)
	return nil
}

// writeSchemas writes into dir the schema of each file the mutants of outs
// change, the explorer's copy of each table file among them, and the
// overlay naming them, and returns the overlay file and the mutated
// packages' directories.
func writeSchemas(cfg Config, mod string, pkgs map[string]*Package, dir string, outs []Outcome) (string, []string, error) {
	replace := map[string]string{}
	byFile := map[string][]int{}
	var files []string
	for i, o := range outs {
		if byFile[o.Mutant.File] == nil {
			files = append(files, o.Mutant.File)
		}
		byFile[o.Mutant.File] = append(byFile[o.Mutant.File], i)
	}
	mutated := map[string]bool{}
	for _, file := range files {
		idx := byFile[file]
		p := pkgs[filepath.ToSlash(filepath.Dir(file))]
		mutated[p.Dir] = true
		ms := make([]Mutant, len(idx))
		nums := make([]int, len(idx))
		for j, i := range idx {
			ms[j], nums[j] = outs[i].Mutant, outs[i].Num
		}
		schema := Schema(mod, p.Source(file), ms, nums)
		if err := writeReplace(replace, cfg.Root, dir, file, schema); err != nil {
			return "", nil, err
		}
		if ex, ok, err := generate.ExploredCopy(cfg.Root, file, schema); err != nil {
			return "", nil, fmt.Errorf("the explorer's copy of the schema of %s: %w", file, err)
		} else if ok {
			if err := writeReplace(replace, cfg.Root, dir, ex.Path, ex.Data); err != nil {
				return "", nil, err
			}
		}
	}
	overlay := filepath.Join(dir, "overlay.json")
	if err := writeOverlay(overlay, replace); err != nil {
		return "", nil, err
	}
	var units []string
	for d := range mutated {
		units = append(units, d)
	}
	sort.Strings(units)
	return overlay, units, nil
}

// baselineTimeout bounds a layer's baseline run. The default explore run
// on both tables took 15 m 28 s of wall time (1 m 48 s of CPU) at a load
// average of 20 to 50 on 2 cores (2026-12-05); 10 minutes cut it short.
const baselineTimeout = 30 * time.Minute

// runBaselines runs every layer with no mutant active: each must pass, and
// its time sets the layer's order and time-out.
func runBaselines(cfg Config, layers []built, res *Result, logf func(string, ...any)) error {
	for i := range layers {
		l := &layers[i]
		if d, ok := res.Baseline[l.layer.Name]; ok && res.rounds > 0 {
			// A later round of the same campaign (Rounds): the layer's
			// baseline was run on the first round's schema; this one
			// differs only in its opaque nodes, whose original branch is
			// the original statements (TestConcurrencyOperators checks
			// they type-check). Its time sets the time-out again.
			l.base = d
			l.timeout = max(cmp.Or(cfg.MinTimeout, 3*time.Second), 10*d)
			continue
		}
		ok, out, d, timedOut := runLayer(*l, 0, baselineTimeout)
		if timedOut {
			// Not a failure: the goroutine dump's tail would read like
			// one (a machine too busy to run the layer in time).
			return fmt.Errorf("the %s layer (%s) did not finish within %v with no mutant active (a machine too busy, or a hang):\n%s", l.layer.Name, l.pkg, baselineTimeout, tail(out, 40))
		}
		if !ok {
			return fmt.Errorf("the %s layer (%s) fails with no mutant active (the schema build changed behaviour, or the suite is broken):\n%s", l.layer.Name, l.pkg, tail(out, 40))
		}
		l.base = d
		l.timeout = max(cmp.Or(cfg.MinTimeout, 3*time.Second), 10*d)
		if prev, ok := res.Baseline[l.layer.Name]; !ok || d > prev {
			res.Baseline[l.layer.Name] = d
		}
		logf("baseline %-16s %-20s %v", l.layer.Name, l.pkg, d.Round(time.Millisecond))
	}
	return nil
}

// judgeParallel judges every mutant of outs with cfg.Workers workers, each
// through the layers of its package and the whole-suite layers.
func judgeParallel(cfg Config, layers []built, dir string, outs []Outcome, logf func(string, ...any)) {
	var mu sync.Mutex
	next, done := 0, 0
	var wg sync.WaitGroup
	for w := 0; w < max(cfg.Workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == len(outs) {
					mu.Unlock()
					return
				}
				o := &outs[next]
				next++
				mu.Unlock()
				pkg := "./" + filepath.ToSlash(filepath.Dir(o.Mutant.File))
				var mine []built
				for _, l := range layers {
					if l.layer.Pkg != "" || l.pkg == pkg {
						mine = append(mine, l)
					}
				}
				judge(cfg, o, mine, dir)
				mu.Lock()
				done++
				logf("[%d/%d] %-8s %-16s %6.1fs %s  %s", done, len(outs), o.Status, o.Layer, o.Time.Seconds(), o.Mutant.Where(), o.Mutant.ID())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// writeReplace and writeOverlay are the shared overlay writers of
// internal/mutants/build.
var (
	writeReplace = build.AddFile
	writeOverlay = build.WriteJSON
)

// buildLayers builds one test binary per layer with the overlay (none when
// overlay is ""), in dir: the unit layers once per mutated package, every
// other layer once.
func buildLayers(cfg Config, units []string, dir, overlay string, logf func(string, ...any)) ([]built, error) {
	oracle := cfg.Layers
	if oracle == nil {
		oracle = Layers
	}
	var out []built
	for _, l := range oracle {
		pkgs := []string{l.Pkg}
		if l.Pkg == "" {
			pkgs = nil
			for _, u := range units {
				pkgs = append(pkgs, "./"+u)
			}
		}
		for _, pkg := range pkgs {
			bin := filepath.Join(dir, l.Name+"_"+strings.ReplaceAll(strings.TrimPrefix(pkg, "./"), "/", "_")+".test")
			args := []string{"test", "-c", "-vet=off", "-o", bin, pkg}
			if overlay != "" {
				args = append(args[:3], append([]string{"-overlay", overlay}, args[3:]...)...)
			}
			cmd := exec.Command("go", args...)
			cmd.Dir = cfg.Root
			if b, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("building the %s layer (%s) with the schema build: %v\n%s", l.Name, pkg, err, tail(string(b), 40))
			}
			out = append(out, built{layer: l, pkg: pkg, bin: bin, dir: filepath.Join(cfg.Root, filepath.FromSlash(strings.TrimPrefix(pkg, "./")))})
			logf("built %s (%s)", l.Name, pkg)
		}
	}
	return out, nil
}

// runLayer runs one layer's binary with mutant num active.
func runLayer(b built, num int, timeout time.Duration, extra ...string) (ok bool, out string, d time.Duration, timedOut bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := layerCmd(ctx, b, num, timeout, extra)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	t0 := time.Now()
	err := cmd.Run()
	d = time.Since(t0)
	out = buf.String()
	timedOut = strings.Contains(out, "panic: test timed out after") || ctx.Err() != nil
	return err == nil, out, d, timedOut
}

// layerCmd is the command that runs b's binary with mutant num active
// and the test time-out timeout.
func layerCmd(ctx context.Context, b built, num int, timeout time.Duration, extra []string) *exec.Cmd {
	args := []string{"-test.run", b.layer.Run, "-test.count=1", "-test.failfast", "-test.timeout", timeout.String()}
	if b.layer.Skip != "" {
		args = append(args, "-test.skip", b.layer.Skip)
	}
	args = append(args, b.layer.Args...)
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Dir = b.dir
	// RAPID_NOFAILFILE: a mutant's failure must not leave a fail file in
	// the tree (fuzz/testdata/rapid).
	cmd.Env = append(os.Environ(), EnvActive+"="+strconv.Itoa(num), "RAPID_NOFAILFILE=1")
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// runDump runs one layer's binary with mutant num active and, if it is
// still running after d, has it print the stack of every goroutine and
// exit: the run that confirms a hang. go test's own time-out is no good
// for this: its panic stops the other goroutines to print their stacks
// but tries for a few milliseconds only, and on a loaded machine a
// goroutine spinning on a thread the kernel did not run in that time is
// printed as "running on other thread; stack unavailable" (1 run in 10 of
// TestCampaignOnFixture beside three busy loops and a -race test loop
// lost its hang so). A SIGQUIT under GOTRACEBACK=crash is passed from
// thread to thread, each printing the goroutine it runs, and the runtime
// waits for them. The child's core limit is 0: the abort that ends it
// leaves no core file in the package's directory. running names the
// tests that had started and not ended (from -test.v).
func runDump(b built, num int, d time.Duration, extra ...string) (ok bool, out string, timedOut bool, running string) {
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	cmd := layerCmd(ctx, b, num, d+30*time.Second, append(extra, "-test.v"))
	cmd.Env = append(cmd.Env, "GOTRACEBACK=crash")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return false, err.Error(), false, ""
	}
	noCore(cmd.Process.Pid)
	sent := make(chan bool, 1)
	t := time.AfterFunc(d, func() { sent <- cmd.Process.Signal(syscall.SIGQUIT) == nil })
	err := cmd.Wait()
	quitted := !t.Stop() && <-sent // the timer fired: wait for its signal's fate
	out = buf.String()
	timedOut = quitted || strings.Contains(out, "panic: test timed out after") || ctx.Err() != nil
	return err == nil, out, timedOut, unfinished(out)
}

// unfinished names the tests a -test.v output shows started and not
// ended, in the order they started.
func unfinished(out string) string {
	var started []string
	ended := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "=== RUN   "); ok {
			started = append(started, strings.TrimSpace(name))
		} else if m := endLine.FindStringSubmatch(line); m != nil {
			ended[m[1]] = true
		}
	}
	var names []string
	for _, n := range started {
		if !ended[n] {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "?"
	}
	return strings.Join(names, ", ")
}

var endLine = regexp.MustCompile(`^\s*--- (?:PASS|FAIL|SKIP): (\S+)`)

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// judge runs the layers in order on one mutant until one kills it.
//
// A time-out is not a kill by itself: a mutant can make a test slow
// without making it wrong. It counts as a kill (a hang) only when the
// layer times out again with three times the budget and the dump of
// every goroutine's stack taken then (runDump) shows one inside the mutated
// file, so the mutated code itself does not finish: the suite's own
// time-out would report it, as a failure naming that test. A time-out
// that does not confirm is noted and the next layer runs. A test that
// failed before the time-out kills the mutant by that failure.
func judge(cfg Config, o *Outcome, layers []built, dir string) {
	t0 := time.Now()
	defer func() { o.Time = time.Since(t0) }()
	o.Status = "survived"
	if o.Mutant.Fixed {
		o.Status = "not-built"
		o.Test = "its node cannot hold a run-time choice (a loop header); run it alone with --overlay"
		return
	}
	var notes []string
	for _, l := range layers {
		v := judgeLayer(l, o.Num, []string{o.Mutant.File})
		if v.Killed {
			o.Status, o.Layer, o.Test, o.Hang = "killed", l.layer.Name, v.Test, v.Hang
			return
		}
		if v.Note != "" {
			notes = append(notes, l.layer.Name+": "+v.Note)
		}
	}
	if o.Mutant.Op == "conversion" && (strings.HasPrefix(o.Mutant.File, "model/") || strings.HasPrefix(o.Mutant.File, "impl/tokenbucket/")) {
		if fused, err := arm64Fused(cfg.Root, dir, o.Mutant); err != nil {
			notes = append(notes, "arm64: "+err.Error())
		} else if fused != "" {
			o.Status, o.Layer, o.Test = "killed", Arm64Layer, "fused multiply-add in "+fused
			return
		}
	}
	o.Test = strings.Join(notes, "; ")
}

// A LayerVerdict is what one layer of the oracle made of one mutant.
type LayerVerdict struct {
	Layer  string
	Killed bool
	Test   string // the first failing test, or the hang's detail
	Hang   bool   // killed by a confirmed hang, not a failure
	Note   string // why a layer that timed out did not kill
	Time   time.Duration
}

// judgeLayer runs one layer on mutant num (0: whatever the binary holds)
// and judges it by judge's rules; files are the mutated files, where a
// confirmed hang must have a goroutine.
func judgeLayer(l built, num int, files []string) (v LayerVerdict) {
	t0 := time.Now()
	v.Layer = l.layer.Name
	defer func() { v.Time = time.Since(t0) }()
	extra := primitiveArgs(l.layer, files)
	ok, out, _, timedOut := runLayer(l, num, l.timeout, extra...)
	if m := failLine.FindStringSubmatch(out); timedOut && m != nil {
		// A test failed before the time-out (go test reports both): the
		// failure is the verdict, whatever hung after it. Examples, for
		// one, still run after -test.failfast saw a test fail.
		v.Killed, v.Test = true, m[1]
		return v
	}
	if timedOut {
		ok2, out2, timedOut2, running := runDump(l, num, 3*l.timeout, extra...)
		if !timedOut2 {
			if !ok2 {
				v.Killed, v.Test = true, firstFail(out2)
				return v
			}
			v.Note = "slow, not hung"
			return v
		}
		for _, f := range files {
			if frame := frameIn(out2, f); frame != "" {
				v.Killed, v.Hang = true, true
				v.Test = "hang: " + running + " in " + frame
				return v
			}
		}
		v.Note = "timed out with no goroutine in the mutated file"
		if strings.Contains(out2, "stack unavailable") {
			v.Note += " (the dump did not show every running goroutine's stack)"
		}
		return v
	}
	if !ok {
		v.Killed, v.Test = true, firstFail(out)
	}
	return v
}

func firstFail(out string) string {
	if m := failLine.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	if i := strings.Index(out, "panic: "); i >= 0 {
		line, _, _ := strings.Cut(out[i:], "\n")
		return line
	}
	return strings.TrimSpace(tail(out, 1))
}

// frameIn returns the first stack frame of the dump that lies in file (or
// in the explorer's copy of it), or "".
func frameIn(out, file string) string {
	base := "/" + filepath.Base(file) + ":"
	dirs := []string{"/" + filepath.Dir(file) + base, "/" + generate.ExploredDir + "/" + filepath.Base(filepath.Dir(file)) + base}
	for _, line := range strings.Split(out, "\n") {
		for _, d := range dirs {
			if strings.Contains(line, d) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// arm64Fused builds the mutated package alone (an overlay of the one
// mutant, no schema) for arm64 and returns the functions that hold a fused
// multiply-add, as scripts/arm64.sh does.
func arm64Fused(root, dir string, m Mutant) (string, error) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
	if err != nil {
		return "", err
	}
	sub, err := os.MkdirTemp(dir, "arm64-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(sub)
	replace := map[string]string{}
	if err := writeReplace(replace, root, sub, m.File, m.Apply(src)); err != nil {
		return "", err
	}
	overlay := filepath.Join(sub, "overlay.json")
	if err := writeOverlay(overlay, replace); err != nil {
		return "", err
	}
	bin := filepath.Join(sub, "pkg.arm64")
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-overlay", overlay, "-o", bin, "./"+filepath.Dir(m.File))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOARCH=arm64")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %s", err, tail(string(b), 5))
	}
	dump, err := exec.Command("go", "tool", "objdump", bin).Output()
	if err != nil {
		return "", err
	}
	fn := ""
	seen := map[string]bool{}
	var fused []string
	for _, line := range strings.Split(string(dump), "\n") {
		if rest, ok := strings.CutPrefix(line, "TEXT "); ok {
			fn, _, _ = strings.Cut(rest, " ")
			continue
		}
		if strings.Contains(line, "FMADD") || strings.Contains(line, "FMSUB") || strings.Contains(line, "FNMADD") || strings.Contains(line, "FNMSUB") {
			if strings.HasPrefix(fn, "github.com/tollgate/tollgate/") && !strings.Contains(fn, "_test.") && !seen[fn] {
				seen[fn] = true
				fused = append(fused, fn)
			}
		}
	}
	return strings.Join(fused, ", "), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// modulePath reads the module path from root's go.mod (the generator's
// reader of it).
var modulePath = generate.ModulePath
