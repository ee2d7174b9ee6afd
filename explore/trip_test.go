package explore_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

// TestReplayMisfitSchedule: a schedule that names a thread the scenario
// does not have, or gives a thread more steps than it takes, is an error,
// not a pass; a prefix of a run's schedule is completed and replays.
func TestReplayMisfitSchedule(t *testing.T) {
	spec := counterSpec(false)
	for _, tc := range []struct{ schedule, want string }{
		{"5x3", "names thread 5, but the scenario has 2 threads"},
		{"0x100", "does not fit the scenario"},
		{"0x1.1x100", "does not fit the scenario"},
	} {
		_, f, err := explore.Replay(spec, tc.schedule, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Replay %s: failure %v, error %v; want an error saying %q", tc.schedule, f, err, tc.want)
		}
	}
	if _, f, err := explore.Replay(spec, "0x1", ""); err != nil || f != nil {
		t.Errorf("Replay of a prefix: failure %v, error %v; want a pass", f, err)
	}
}

// TestModelPanicIsAFailure: a panic in the model's Step, which porcupine
// calls on goroutines of its own, is a failure of the run that reached
// it, not a crash of the test binary.
func TestModelPanicIsAFailure(t *testing.T) {
	spec := counterSpec(false)
	spec.Step = func(n int, _ time.Time, op string) (int, int) {
		if op == "get" {
			panic("the model has no get")
		}
		return n + 1, n + 1
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "panic" || !strings.Contains(r.Failure.Detail, "the model panicked in Step on input get") ||
		!strings.Contains(r.Failure.Detail, "the model has no get") {
		t.Fatalf("want the model's panic as a failure: %s\n%v", r.Summary(), r.Failure)
	}
}

// TestHistoryInTraceSteps: a failure's history is stamped with the steps
// of its trace: the last operation returns at the trace's last step.
func TestHistoryInTraceSteps(t *testing.T) {
	r := explore.Explore(counterSpec(true), explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("the split counter passed: %s", r.Summary())
	}
	last := 0
	for _, m := range regexp.MustCompile(`(?m)^\s*(\d+) │`).FindAllStringSubmatch(r.Failure.Trace, -1) {
		last = max(last, atoi(t, m[1]))
	}
	ret := 0
	spans := regexp.MustCompile(`steps (\d+)–(\d+):`).FindAllStringSubmatch(r.Failure.Detail, -1)
	for _, m := range spans {
		ret = max(ret, atoi(t, m[2]))
	}
	if len(spans) != 2 || ret != last {
		t.Errorf("the history's operations (%d) end at step %d, the trace at step %d:\n%s\n%s", len(spans), ret, last, r.Failure.Detail, r.Failure.Trace)
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNoTemporaryDirectories: a failing exploration leaves nothing in the
// temporary directory; with Options.Dir its visualization is written
// there.
func TestNoTemporaryDirectories(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r := explore.Explore(counterSpec(true), explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("the split counter passed: %s", r.Summary())
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("a failing exploration left %v in the temporary directory", entries[0].Name())
	}
	dir := t.TempDir()
	r = explore.Explore(counterSpec(true), explore.Options{Dir: dir}, "")
	if r.Failure == nil || r.Failure.HTML == "" || !strings.HasPrefix(r.Failure.HTML, dir) {
		t.Fatalf("with Options.Dir, want the visualization there: %v", r.Failure)
	}
	if _, err := os.Stat(r.Failure.HTML); err != nil {
		t.Error(err)
	}
}

// TestCallThread: CallThread is told the thread of every operation, and
// len(Threads) for After's.
func TestCallThread(t *testing.T) {
	spec := counterSpec(false)
	call := spec.Call
	var seen [3]map[string]bool
	spec.Call = nil
	spec.CallThread = func(c *counter, thread int, op string) int {
		if seen[thread] == nil {
			seen[thread] = map[string]bool{}
		}
		seen[thread][op] = true
		return call(c, op)
	}
	if r := explore.Explore(spec, explore.Options{}, ""); r.Failure != nil || r.Err != nil {
		t.Fatalf("%s", r.Summary())
	}
	if !seen[0]["inc"] || !seen[1]["inc"] || !seen[2]["get"] || len(seen[2]) != 1 || len(seen[0]) != 1 {
		t.Errorf("threads' operations: %v", seen)
	}
	spec.Call = call
	if r := explore.Explore(spec, explore.Options{}, ""); r.Err == nil || !strings.Contains(r.Err.Error(), "both Call and CallThread") {
		t.Errorf("Call and CallThread both set: %s", r.Summary())
	}
}

// TestDefaultSchedules: PCT and Random without a budget run the number of
// schedules Options says.
func TestDefaultSchedules(t *testing.T) {
	for _, s := range []explore.Strategy{explore.PCT, explore.Random} {
		r := explore.Explore(counterSpec(false), explore.Options{Strategy: s, Seed: 1}, "")
		if r.Failure != nil || r.Schedules != explore.DefaultSchedules {
			t.Errorf("%s: %s; want %d schedules (DefaultSchedules)", s, r.Summary(), explore.DefaultSchedules)
		}
	}
}

// fatalTB records what Check fails with, and goes on.
type fatalTB struct {
	testing.TB
	msgs []string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}
func (f *fatalTB) Logf(string, ...any) {}

// TestReplayCommandKeepsTags: the replay command a failure prints has the
// build tags the test was built with (tollgate explore passes them).
func TestReplayCommandKeepsTags(t *testing.T) {
	if err := flag.Set("explore.tags", "integration,slow"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("explore.tags", "")
	tb := &fatalTB{TB: t}
	explore.Check(tb, counterSpec(true))
	if len(tb.msgs) != 1 || !regexp.MustCompile(`tollgate explore -pkg \S+ -tags integration,slow -run '\^TestReplayCommandKeepsTags\$' -replay [0-9x.]+`).MatchString(tb.msgs[0]) {
		t.Errorf("the failure does not give the replay command with -tags:\n%s", strings.Join(tb.msgs, "\n"))
	}
}

// TestTraceNamesPackageDirectory: a trace names each line by its file
// with the file's directory (lru.go of simplelru and lru.go of lru do not
// look alike).
func TestTraceNamesPackageDirectory(t *testing.T) {
	r := explore.Explore(counterSpec(true), explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("the split counter passed: %s", r.Summary())
	}
	if !strings.Contains(r.Failure.Trace, "@ explore/explore_test.go:24 c.mu.Lock()") {
		t.Errorf("the trace does not name explore/explore_test.go:24:\n%s", r.Failure.Trace)
	}
}

// TestStoreSwitch: plain stores are no switch points under the race
// detector, unless rt.SetStoreSwitch asks for them; then another thread
// may run before each, and there are more schedules.
func TestStoreSwitch(t *testing.T) {
	spec := explore.Spec[*[2]int, string, int, struct{}]{
		New:     func() *[2]int { return new([2]int) },
		Threads: [][]string{{"w"}, {"w"}},
		CallThread: func(a *[2]int, thread int, _ string) int {
			*rt.PlainWrite(&a[thread]) = 1
			*rt.PlainWrite(&a[thread]) = 2
			return 2
		},
		Step:  func(s struct{}, _ time.Time, _ string) (struct{}, int) { return s, 2 },
		Twins: true,
	}
	off := explore.Explore(spec, explore.Options{}, "")
	prev := rt.SetStoreSwitch(true)
	on := explore.Explore(spec, explore.Options{}, "")
	rt.SetStoreSwitch(prev)
	if off.Failure != nil || on.Failure != nil || on.Schedules <= off.Schedules {
		t.Errorf("stores as switch points: %s; not: %s; want more schedules with them", on.Summary(), off.Summary())
	}
}

// TestStuckThreadEndsTheRun: a thread that blocks where the explorer does
// not control it (a receive from a channel in this file, which the
// rewrite does not reach) would hang the exploration without a word; the
// watchdog ends the process instead, naming the scenario, the thread and,
// in the stacks it prints, the line the thread waits at. Run in a child
// process with the limit at one second.
func TestStuckThreadEndsTheRun(t *testing.T) {
	if os.Getenv("TOLLGATE_STUCK_CHILD") == "1" {
		never := make(chan int)
		spec := counterSpec(false)
		spec.Name = "stuck-on-a-real-channel"
		spec.Call = func(c *counter, op string) int {
			if op == "get" {
				return c.Get()
			}
			c.Inc()
			return <-never // a real receive: no switch point, nothing sends
		}
		explore.Explore(spec, explore.Options{}, "")
		t.Fatal("the exploration returned")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // without the watchdog the child hangs
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStuckThreadEndsTheRun$")
	// The child exits from the watchdog, before its TMPDIR check cleans up.
	cmd.Env = append(os.Environ(), "TOLLGATE_STUCK_CHILD=1", "TOLLGATE_EXPLORE_STUCK=1s", "TMPDIR="+t.TempDir())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("the child ended with %v after %v, want exit status 2:\n%s", err, time.Since(start), out)
	}
	for _, want := range []string{
		"no verdict for scenario stuck-on-a-real-channel: thread T0 has run",
		"explore/rt's Recv",
		"trip_test.go:", // the stuck receive's line, in the stacks
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%.3000s", want, out)
		}
	}
}
