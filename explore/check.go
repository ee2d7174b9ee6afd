package explore

import (
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore/rt"
)

// Flags of the test binary, as tollgate explore passes them (go test
// -args -explore.bound=3 works too).
var (
	flagReplay    = flag.String("explore.replay", "", "replay this schedule (as a failure prints it) with a trace, instead of exploring")
	flagStrategy  = flag.String("explore.strategy", "", "dfs, pct or random (default: the Options', else dfs)")
	flagBound     = flag.Int("explore.bound", 0, "DFS preemption bound (default: the Options', else 2)")
	flagSeed      = flag.Uint64("explore.seed", 0, "PCT and random seed (default: the Options')")
	flagSchedules = flag.Int("explore.schedules", 0, "stop after this many schedules (default: the Options')")
	flagTime      = flag.Duration("explore.time", 0, "stop after this long (default: the Options')")
	flagDir       = flag.String("explore.dir", "", "write a failure's files (porcupine's visualization) to this directory (default: the Options')")
	flagTags      = flag.String("explore.tags", "", "the build tags the test was built with, for the replay command a failure prints")
)

// Check explores spec inside a test and fails t with the failure's report
// (schedule, trace, visualization, replay command), or with why no verdict
// could be given. opts, when given, is the exploration's Options; the
// -explore.* flags of the test binary override it. With -explore.replay it
// replays that schedule and logs its trace instead.
//
// The object's package must have been built rewritten for exploration, as
// tollgate explore -pkg builds it; under plain go test Check fails saying
// so.
func Check[T, In, Out, S any](t testing.TB, spec Spec[T, In, Out, S], opts ...Options) Result {
	t.Helper()
	if spec.Name == "" {
		spec.Name = t.Name()
	}
	requireRewritten(t, spec)
	var opt Options
	if len(opts) > 0 {
		opt = opts[0]
	}
	opt = withFlags(opt)
	replay := replayCommand(t)
	if *flagReplay != "" {
		// One schedule fits one scenario: replayed in every test the
		// binary runs, it would "pass" in those it does not fit.
		if f := flag.Lookup("test.run"); f == nil || f.Value.String() == "" {
			t.Fatalf("explore: -explore.replay %s without -run: a schedule replays one test's scenario; name the test with -run '^%s$'", *flagReplay, t.Name())
		}
		trace, f, err := Replay(spec, *flagReplay, opt.Dir)
		if err != nil {
			t.Fatalf("explore: replay %s: %v", *flagReplay, err)
		}
		if f != nil {
			t.Fatalf("%s", f.Report)
		}
		t.Logf("replay %s passes:\n%s", *flagReplay, trace)
		return Result{Name: spec.Name, Schedules: 1}
	}
	r := Explore(spec, opt, replay)
	switch {
	case r.Err != nil:
		t.Fatalf("explore %s: %s", spec.Name, r.Summary())
	case r.Failure != nil:
		t.Fatalf("explore %s: %s", spec.Name, r.Failure.Report)
	default:
		t.Logf("explore %s: %s (%d histories, %s)", spec.Name, r.Summary(), r.Histories, r.Elapsed.Round(time.Millisecond))
	}
	return r
}

// requireRewritten fails t when the package of spec's object was built
// without the rewrite (and spec does not call the twins itself).
func requireRewritten[T, In, Out, S any](t testing.TB, spec Spec[T, In, Out, S]) {
	t.Helper()
	if pkg := packageOf[T](); pkg != "" && !spec.Twins && !rt.IsRewritten(pkg) {
		t.Fatalf("explore: %s was built without the rewrite, so its atomics, locks and clock readings are not switch points: run\n\ttollgate explore -pkg %s -run '^%s$'\n(rewritten packages in this binary: %v)",
			pkg, testDir(), t.Name(), rt.Packages())
	}
}

// replayCommand is the command that replays a schedule of the calling
// test, with %s where the schedule goes.
func replayCommand(t testing.TB) string {
	tags := ""
	if *flagTags != "" {
		tags = " -tags " + shellQuote(*flagTags)
	}
	return fmt.Sprintf("tollgate explore -pkg %s%s -run %s -replay %%s", shellQuote(testDir()), tags, shellQuote("^"+t.Name()+"$"))
}

// Replaying reports whether the test binary was asked to replay a
// schedule (-explore.replay, as tollgate explore -replay passes it). A test
// that explores with Explore, to assert on what it finds, calls Check
// instead while replaying, so that the schedule's trace is printed.
func Replaying() bool { return *flagReplay != "" }

func withFlags(o Options) Options {
	if *flagStrategy != "" {
		o.Strategy = Strategy(*flagStrategy)
	}
	if *flagBound > 0 {
		o.Bound = *flagBound
	}
	if *flagSeed != 0 {
		o.Seed = *flagSeed
	}
	if *flagSchedules > 0 {
		o.Schedules = *flagSchedules
	}
	if *flagTime > 0 {
		o.Time = *flagTime
	}
	if *flagDir != "" {
		o.Dir = *flagDir
	}
	return o
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"$\\*?[]()|&;<>^{}~#!`") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// packageOf is the import path of T's package (through pointers), or ""
// for a type of no package.
func packageOf[T any]() string {
	ty := reflect.TypeFor[T]()
	for ty.Kind() == reflect.Pointer {
		ty = ty.Elem()
	}
	return ty.PkgPath()
}

// testDir is the directory of the test that called Check: go test runs a
// package's tests there, so it names the package for tollgate explore.
func testDir() string {
	for skip := 2; skip < 20; skip++ {
		_, file, _, ok := runtime.Caller(skip)
		if !ok {
			break
		}
		if strings.HasSuffix(file, "_test.go") {
			return filepath.Dir(file)
		}
	}
	return "."
}
