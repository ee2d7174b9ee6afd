package counter

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The teeth of the timer and context targets: a hand-written concurrency
// bug in a copy of x/sync's semaphore and of x/time's rate, each found by
// the scenario of the test that passes on the real code, and replayed.
// The test of the patched copy is that scenario's file itself, moved into
// the copied package (its own tests renamed so they do not run), with a
// TestTooth that must find the bug.

// semaphoreTooth: a waiter at the front of the queue whose context is
// cancelled leaves without waking the waiters behind it, though the
// tokens they want are free (golang/go#56229's fix taken out).
var semaphoreTooth = struct{ old, new string }{
	old: `			// If we're at the front and there are extra tokens left, notify other waiters.
			if isFront && s.size > s.cur {
				s.notifyWaiters()
			}
`,
	new: `			_ = isFront // tooth: the waiters behind it are not woken
`,
}

// rateTooth: a Wait whose context is cancelled while it waits for its
// token reports that it may proceed (only another thread can cancel it
// then: a deadline it could not meet is refused before the wait).
var rateTooth = struct{ old, new string }{
	old: `		r.Cancel()
		return ctx.Err()
`,
	new: `		r.Cancel()
		return nil // tooth: a cancelled wait may proceed
`,
}

// toothTail is the TestTooth of a patched copy: spec must fail, and its
// schedule replay the failure.
const toothTail = `

func TestTooth(t *testing.T) {
	if !rt.IsRewritten(%q) {
		t.Fatal("not rewritten")
	}
	spec := %s
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("TOOTH NOT FOUND: %%s", r.Summary())
	}
	_, again, err := explore.Replay(spec, r.Failure.Schedule, "")
	if err != nil || again == nil || again.Kind != r.Failure.Kind {
		t.Fatalf("replay of %%s: %%v, %%v", r.Failure.Schedule, again, err)
	}
	t.Logf("TOOTH FOUND (%%s, replayed):\n%%s", r.Failure.Kind, r.Failure.Report)
}
`

// scenarioInto is the test file file of this package moved into package
// pkg of the tooth module: its package clause and its import of the
// target replaced, the target's qualifier dropped, its tests renamed so
// that only the TestTooth added (of spec, a Go expression) runs.
func scenarioInto(t *testing.T, file, pkg, importPath, spec string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, r := range [][2]string{
		{"package counter\n", "package " + pkg + "\n"},
		{"\t" + fmt.Sprintf("%q", importPath) + "\n", ""},
		{pkg + ".", ""},
		{"func Test", "func test"},
	} {
		if !strings.Contains(src, r[0]) {
			t.Fatalf("%s has no %q: the scenario cannot move into the copy", file, r[0])
		}
		src = strings.ReplaceAll(src, r[0], r[1])
	}
	return src + fmt.Sprintf(toothTail, "example.com/tooth/"+pkg, spec)
}

// TestSemaphoreToothFound: TestSemaphoreAcquireCancelled's scenario finds
// the waiter left waiting (a deadlock: T1 waits for a token that is
// free) in a copy of x/sync's semaphore without the wake-up.
func TestSemaphoreToothFound(t *testing.T) {
	test := scenarioInto(t, "semaphore_test.go", "semaphore", "golang.org/x/sync/semaphore",
		`semSpec([][]string{{"acquire 2 ctx"}, {"acquire 1", "release 1"}, {"cancel"}})`)
	toothFoundIn(t, "golang.org/x/sync", "semaphore", "semaphore.go", semaphoreTooth.old, semaphoreTooth.new, test)
}

// TestRateToothFound: TestLimiterWaitCancelled's scenario finds the
// cancelled wait that proceeds before its token in a copy of x/time's
// rate.
func TestRateToothFound(t *testing.T) {
	test := scenarioInto(t, "xtime_wait_test.go", "rate", "golang.org/x/time/rate",
		`waitSpec([][]string{{"wait"}, {"wait"}, {"cancel"}})`)
	toothFoundIn(t, "golang.org/x/time", "rate", "rate.go", rateTooth.old, rateTooth.new, test)
}
