package sync_test

import (
	"fmt"
	"strings"
	stdsync "sync"
	"testing"
	"time"
	"unsafe"

	"github.com/tollgate/tollgate/explore"
	tsync "github.com/tollgate/tollgate/explore/sync"
)

// TestSizes: a twin has its standard type's size, so code that pads a
// structure around a mutex with unsafe.Sizeof builds rewritten (xsync's
// Map does).
func TestSizes(t *testing.T) {
	if a, b := unsafe.Sizeof(tsync.Mutex{}), unsafe.Sizeof(stdsync.Mutex{}); a != b {
		t.Errorf("Mutex is %d bytes, sync.Mutex %d", a, b)
	}
	if a, b := unsafe.Sizeof(tsync.RWMutex{}), unsafe.Sizeof(stdsync.RWMutex{}); a != b {
		t.Errorf("RWMutex is %d bytes, sync.RWMutex %d", a, b)
	}
	if a, b := unsafe.Sizeof(tsync.Once{}), unsafe.Sizeof(stdsync.Once{}); a != b {
		t.Errorf("Once is %d bytes, sync.Once %d", a, b)
	}
}

// mailbox hands one value from a producer to a consumer under a Cond;
// with lost set, the producer signals before it publishes, outside the
// lock's protection of the condition, so a consumer can wait forever.
type mailbox struct {
	mu   tsync.Mutex
	cond *tsync.Cond
	full bool
	v    int
	lost bool
}

func (m *mailbox) put(v int) int {
	if m.lost {
		m.cond.Signal()
	}
	m.mu.Lock()
	m.v, m.full = v, true
	m.mu.Unlock()
	if !m.lost {
		m.cond.Signal()
	}
	return v
}

func (m *mailbox) get() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for !m.full {
		m.cond.Wait()
	}
	return m.v
}

func mailboxSpec(lost bool) explore.Spec[*mailbox, string, int, int] {
	return explore.Spec[*mailbox, string, int, int]{
		New: func() *mailbox {
			m := &mailbox{lost: lost}
			m.cond = tsync.NewCond(&m.mu)
			return m
		},
		Threads: [][]string{{"put"}, {"get"}},
		Call: func(m *mailbox, op string) int {
			if op == "put" {
				return m.put(7)
			}
			return m.get()
		},
		Step:  func(s int, _ time.Time, op string) (int, int) { return 7, 7 },
		Twins: true,
	}
}

// TestCond: a mailbox under a Cond passes every schedule; one that
// signals before publishing is a lost wake-up, reported as a deadlock.
func TestCond(t *testing.T) {
	if r := explore.Explore(mailboxSpec(false), explore.Options{}, ""); r.Failure != nil || !r.Exhaustive {
		t.Fatalf("the mailbox fails: %s\n%v", r.Summary(), r.Failure)
	}
	r := explore.Explore(mailboxSpec(true), explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "deadlock" || !strings.Contains(r.Failure.Detail, "T1 waits to wait") {
		t.Fatalf("want the lost wake-up as a deadlock of T1, got %s", r.Summary())
	}
}

// TestUnlockOfUnlocked: as for sync.Mutex, unlocking a free twin is a
// failure, reported as a panic of the thread.
func TestUnlockOfUnlocked(t *testing.T) {
	spec := explore.Spec[*tsync.Mutex, string, bool, struct{}]{
		New:     func() *tsync.Mutex { return new(tsync.Mutex) },
		Threads: [][]string{{"unlock"}},
		Call:    func(m *tsync.Mutex, _ string) bool { m.Unlock(); return true },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, bool) { return s, true },
		Twins:   true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || !strings.Contains(r.Failure.Detail, "unlock of unlocked mutex") {
		t.Fatalf("want the unlock of a free mutex reported, got %s", r.Summary())
	}
}

// TestRWMutex: readers share, a writer excludes them; a read-modify-write
// under RLock loses an update.
func TestRWMutex(t *testing.T) {
	type box struct {
		mu   tsync.RWMutex
		n    int
		weak bool
	}
	spec := func(weak bool) explore.Spec[*box, string, int, int] {
		return explore.Spec[*box, string, int, int]{
			New:     func() *box { return &box{weak: weak} },
			Threads: [][]string{{"inc", "read"}, {"inc"}},
			After:   []string{"read"},
			Call: func(b *box, op string) int {
				if op == "read" {
					b.mu.RLock()
					defer b.mu.RUnlock()
					return b.n
				}
				if b.weak {
					b.mu.RLock()
					v := b.n
					b.mu.RUnlock()
					b.mu.Lock()
					b.n = v + 1
					b.mu.Unlock()
					return v + 1
				}
				b.mu.Lock()
				defer b.mu.Unlock()
				b.n++
				return b.n
			},
			Step: func(n int, _ time.Time, op string) (int, int) {
				if op == "read" {
					return n, n
				}
				return n + 1, n + 1
			},
			Twins: true,
		}
	}
	if r := explore.Explore(spec(false), explore.Options{}, ""); r.Failure != nil || !r.Exhaustive {
		t.Fatalf("the RWMutex counter fails: %s", r.Summary())
	}
	if r := explore.Explore(spec(true), explore.Options{}, ""); r.Failure == nil {
		t.Fatalf("the read-then-write counter passed: %s", r.Summary())
	}
}

// TestPoolIsDeterministic: under the explorer a Pool's Get always answers
// New(), whatever was put, so a schedule replays the same (a real pool's
// answers depend on the garbage collector and the processor).
func TestPoolIsDeterministic(t *testing.T) {
	type box struct{ n int }
	made := 0
	p := &tsync.Pool{New: func() any { made++; return &box{} }}
	spec := explore.Spec[*tsync.Pool, string, int, struct{}]{
		New:     func() *tsync.Pool { return p },
		Threads: [][]string{{"put-get"}, {"put-get"}},
		Call: func(p *tsync.Pool, _ string) int {
			p.Put(&box{n: 7})
			return p.Get().(*box).n
		},
		Step:  func(s struct{}, _ time.Time, _ string) (struct{}, int) { return s, 0 },
		Twins: true,
	}
	r := explore.Explore(spec, explore.Options{Strategy: explore.PCT, Seed: 1, Schedules: 200}, "")
	if r.Err != nil || r.Failure != nil {
		t.Fatalf("a pooled value came back under the explorer: %s", r.Summary())
	}
	if made == 0 {
		t.Fatal("New was never called")
	}
}

// counterMap counts in a Map's one key; with lost set it loads and then
// stores (two operations, a lost update between them), else it
// compare-and-swaps.
type counterMap struct {
	m    tsync.Map
	lost bool
}

func (c *counterMap) inc() int {
	for {
		v, ok := c.m.Load("k")
		n := 0
		if ok {
			n = v.(int)
		}
		if c.lost {
			c.m.Store("k", n+1)
			return n + 1
		}
		if !ok {
			if _, loaded := c.m.LoadOrStore("k", 1); !loaded {
				return 1
			}
			continue
		}
		if c.m.CompareAndSwap("k", n, n+1) {
			return n + 1
		}
	}
}

func counterMapSpec(lost bool) explore.Spec[*counterMap, string, int, int] {
	return explore.Spec[*counterMap, string, int, int]{
		New:     func() *counterMap { return &counterMap{lost: lost} },
		Threads: [][]string{{"inc"}, {"inc"}},
		Call:    func(c *counterMap, _ string) int { return c.inc() },
		Step:    func(s int, _ time.Time, _ string) (int, int) { return s + 1, s + 1 },
		Twins:   true,
	}
}

// TestMapLostUpdate: a Map's Load then Store of one key from two threads
// is a lost update, found at one preemption; with CompareAndSwap the
// counter passes every schedule.
func TestMapLostUpdate(t *testing.T) {
	if r := explore.Explore(counterMapSpec(false), explore.Options{}, ""); r.Failure != nil || !r.Exhaustive {
		t.Fatalf("the compare-and-swap counter fails: %s\n%v", r.Summary(), r.Failure)
	}
	r := explore.Explore(counterMapSpec(true), explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "linearizability" || r.Failure.Preemptions != 1 {
		t.Fatalf("want the load-then-store found as a linearizability failure at one preemption, got %s", r.Summary())
	}
}

// TestMapOperations: the twin's methods do what sync.Map's do, and Range
// visits keys in the order of their first Store.
func TestMapOperations(t *testing.T) {
	var m tsync.Map
	m.Store("b", 1)
	m.Store("a", 2)
	m.Store("c", 3)
	m.Store("b", 4)
	if v, ok := m.Load("b"); !ok || v != 4 {
		t.Errorf("Load(b) = %v, %v", v, ok)
	}
	if v, loaded := m.LoadOrStore("a", 9); !loaded || v != 2 {
		t.Errorf("LoadOrStore(a) = %v, %v", v, loaded)
	}
	if v, loaded := m.LoadOrStore("d", 5); loaded || v != 5 {
		t.Errorf("LoadOrStore(d) = %v, %v", v, loaded)
	}
	if !m.CompareAndSwap("d", 5, 6) || m.CompareAndSwap("d", 5, 7) {
		t.Error("CompareAndSwap")
	}
	if m.CompareAndDelete("c", 4) || !m.CompareAndDelete("c", 3) {
		t.Error("CompareAndDelete")
	}
	if v, loaded := m.Swap("a", 8); !loaded || v != 2 {
		t.Errorf("Swap(a) = %v, %v", v, loaded)
	}
	if v, loaded := m.LoadAndDelete("x"); loaded || v != nil {
		t.Errorf("LoadAndDelete(x) = %v, %v", v, loaded)
	}
	m.Delete("zz")
	var got []string
	m.Range(func(k, v any) bool { got = append(got, fmt.Sprint(k, "=", v)); return true })
	if s := strings.Join(got, " "); s != "b=4 a=8 d=6" {
		t.Errorf("Range: %s, want b=4 a=8 d=6", s)
	}
	got = nil
	m.Range(func(k, v any) bool { got = append(got, fmt.Sprint(k)); return false })
	if len(got) != 1 {
		t.Errorf("Range stopped by f visited %v", got)
	}
	m.Clear()
	if _, ok := m.Load("b"); ok {
		t.Error("Clear left b")
	}
}
