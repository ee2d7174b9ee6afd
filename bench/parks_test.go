package bench

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLockParksCountsABlockedLock: lockParks counts a goroutine that
// blocked in sync.Mutex.Lock, and nothing for one that took the lock
// uncontended or blocked elsewhere (a channel receive). It guards the
// stack filter, which must see sync.Mutex's frames through the runtime's
// inlining and internal/sync.
func TestLockParksCountsABlockedLock(t *testing.T) {
	runtime.SetBlockProfileRate(1)
	defer runtime.SetBlockProfileRate(0)

	before := lockParks()
	var mu sync.Mutex
	held := 0
	mu.Lock()
	held++ // uncontended: no park
	mu.Unlock()
	ch := make(chan struct{})
	go func() { time.Sleep(5 * time.Millisecond); close(ch) }()
	<-ch // a channel block: not a lock park
	if got := lockParks() - before; got != 0 {
		t.Fatalf("an uncontended lock and a channel receive counted %d lock parks, want 0", got)
	}

	mu.Lock()
	locked := make(chan struct{})
	go func() {
		mu.Lock() // blocks: the test holds mu
		held++
		mu.Unlock()
		close(locked)
	}()
	waitParkedInLock(t)
	mu.Unlock()
	<-locked
	if held != 2 {
		t.Fatalf("the lock was held %d times, want 2", held)
	}
	if got := lockParks() - before; got < 1 {
		t.Fatalf("a goroutine parked in Lock counted %d lock parks, want at least 1", got)
	}
}

// waitParkedInLock waits until a goroutine is parked in sync.Mutex.Lock, as
// the goroutine dump shows it, so that a loaded machine cannot make the
// test's Unlock come before the Lock it is meant to release.
func waitParkedInLock(t *testing.T) {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if strings.Contains(string(buf[:runtime.Stack(buf, true)]), "[sync.Mutex.Lock") {
			return
		}
	}
	t.Fatal("no goroutine parked in sync.Mutex.Lock within 10 s")
}

// TestCoresTableDividesCPUByWall: the busy-cores table of the report gives
// CPU time over wall time, the sleeps and the parks where the run counted
// them, for the two-goroutine cell only.
func TestCoresTableDividesCPUByWall(t *testing.T) {
	rs := []Result{
		{Case: Case{Group: "TB/work=admit/keys=1", Design: Tollgate, G: 2}, NsPerOp: 40, Extra: map[string]float64{"cpu-ns/op": 79.6, "sleeps/Mop": 6}},
		{Case: Case{Group: "TB/work=admit/keys=1", Design: MutexMap, G: 2}, NsPerOp: 60, Extra: map[string]float64{"cpu-ns/op": 75, "sleeps/Mop": 500, "lockwait-ns/op": 0.3, "lockparks/op": 0.00029}},
		{Case: Case{Group: "TB/work=admit/keys=1", Design: MutexMap, G: 8}, NsPerOp: 150, Extra: map[string]float64{"cpu-ns/op": 300}},
	}
	var buf bytes.Buffer
	writeCores(&buf, rs)
	out := buf.String()
	for _, want := range []string{
		"| tollgate | 40.0 | 79.6 | 1.99 | 6.0 | 0.00 | – |",
		"| mutex-per-bucket | 60.0 | 75.0 | 1.25 | 500.0 | 0.30 | 0.00029 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing row %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| 150.0 |") || strings.Contains(out, "CR/work") {
		t.Errorf("a cell other than TB/work=admit/keys=1 at 2 goroutines is listed:\n%s", out)
	}
}
