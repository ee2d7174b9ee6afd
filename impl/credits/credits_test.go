package credits_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

func reserve[P any](t *testing.T, tab *credits.Table[P], h *credits.Holder, c credits.Class) credits.Token {
	t.Helper()
	tok, r := tab.Reserve(h, c)
	if r != credits.OK {
		t.Fatalf("Reserve(%v) = %v", c, r)
	}
	return tok
}

func enqueue[P any](t *testing.T, tab *credits.Table[P], h *credits.Holder, tok credits.Token, p P) {
	t.Helper()
	if r := tab.EnqueueAt(0, h, tok, p); r != credits.OK {
		t.Fatalf("Enqueue(%v) = %v", tok, r)
	}
}

// TestSeedSentences checks the behavioural sentences of
// shared/seeds/credits.md.
func TestSeedSentences(t *testing.T) {
	t.Run("exactly 32 reserved requests, total: 26 general, 6 internal", seedBounds)
	t.Run("epoch is a unique reservation identity", seedEpochUnique)
	t.Run("enqueue matches only the reserving holder and epoch", seedEnqueueMatches)
	t.Run("a holder that dies after reserve leaves a sweepable reserved row", seedDeadHolderSwept)
	t.Run("a stale token cannot match a recycled slot", seedStaleToken)
	t.Run("take returns the payload; finish frees; the credit covers the whole window", seedTakeFinish)
	t.Run("finish also frees an enqueued row, exactly once", seedFinishEnqueued)
	t.Run("release frees a never-enqueued reservation, at most once", seedRelease)
	t.Run("enqueued lists oldest enqueue first", seedEnqueuedOrder)
}

// seedBounds is TestSeedSentences' case "exactly 32 reserved requests, total: 26 general, 6 internal".
func seedBounds(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	for i := range 26 {
		if tok := reserve(t, tab, h, credits.General); tok.Slot != i+1 {
			t.Fatalf("general reservation %d got slot %d", i, tok.Slot)
		}
	}
	if _, r := tab.Reserve(h, credits.General); r != credits.Exhausted {
		t.Fatalf("27th general = %v, want exhausted", r)
	}
	for i := range 6 {
		if tok := reserve(t, tab, h, credits.Internal); tok.Slot != 27+i {
			t.Fatalf("internal reservation %d got slot %d", i, tok.Slot)
		}
	}
	if _, r := tab.Reserve(h, credits.Internal); r != credits.Exhausted {
		t.Fatalf("7th internal = %v", r)
	}
	if b := credits.TableBounds(); b != (credits.Bounds{General: 26, Internal: 6, Total: 32}) {
		t.Fatalf("bounds = %+v", b)
	}
}

// seedEpochUnique is TestSeedSentences' case "epoch is a unique reservation identity".
func seedEpochUnique(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	seen := map[uint64]bool{}
	for range 100 {
		tok := reserve(t, tab, h, credits.General)
		if seen[tok.Epoch] {
			t.Fatalf("epoch %d issued twice", tok.Epoch)
		}
		seen[tok.Epoch] = true
		tab.Release(h, tok)
	}
}

// seedEnqueueMatches is TestSeedSentences' case "enqueue matches only the reserving holder and epoch".
func seedEnqueueMatches(t *testing.T) {
	tab := credits.New[string]()
	h, other := credits.NewHolder(), credits.NewHolder()
	tok := reserve(t, tab, h, credits.General)
	if r := tab.EnqueueAt(0, other, tok, "p"); r != credits.Lost {
		t.Fatalf("foreign holder enqueue = %v", r)
	}
	if r := tab.EnqueueAt(0, h, credits.Token{Slot: tok.Slot, Epoch: tok.Epoch + 1}, "p"); r != credits.Lost {
		t.Fatalf("wrong epoch enqueue = %v", r)
	}
	enqueue(t, tab, h, tok, "p")
	if r := tab.EnqueueAt(0, h, tok, "q"); r != credits.Lost {
		t.Fatalf("second enqueue = %v", r)
	}
}

// seedDeadHolderSwept is TestSeedSentences' case "a holder that dies after reserve leaves a sweepable reserved row".
func seedDeadHolderSwept(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	reserve(t, tab, h, credits.General)
	if n := tab.Sweep(); n != 0 {
		t.Fatalf("swept %d rows of a live holder", n)
	}
	h.Exit()
	if n := tab.Sweep(); n != 1 {
		t.Fatalf("swept %d, want 1", n)
	}
	if s := tab.Snapshot(); s.General.Free != 26 {
		t.Fatalf("after sweep: %+v", s)
	}
}

// seedStaleToken is TestSeedSentences' case "a stale token cannot match a recycled slot".
func seedStaleToken(t *testing.T) {
	tab := credits.New[string]()
	a, b := credits.NewHolder(), credits.NewHolder()
	old := reserve(t, tab, a, credits.General)
	tab.Release(a, old)
	fresh := reserve(t, tab, a, credits.General)
	if fresh.Slot != old.Slot {
		t.Fatalf("slot not recycled: %d then %d", old.Slot, fresh.Slot)
	}
	if r := tab.EnqueueAt(0, a, old, "stale"); r != credits.Lost {
		t.Fatalf("stale enqueue = %v", r)
	}
	if tab.Release(a, old) {
		t.Fatal("stale release freed the recycled slot")
	}
	enqueue(t, tab, a, fresh, "p")
	if _, ok := tab.Take(old); ok {
		t.Fatal("stale take took the recycled slot's payload")
	}
	if tab.Finish(old) {
		t.Fatal("stale finish freed the recycled slot")
	}
	_ = b
}

// seedTakeFinish is TestSeedSentences' case "take returns the payload; finish frees; the credit covers the whole window".
func seedTakeFinish(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	tok := reserve(t, tab, h, credits.General)
	enqueue(t, tab, h, tok, "req")
	h.Exit() // the caller dies while its request is queued
	if n := tab.Sweep(); n != 0 {
		t.Fatalf("swept %d enqueued rows", n)
	}
	p, ok := tab.Take(tok)
	if !ok || p != "req" {
		t.Fatalf("Take = %q, %v", p, ok)
	}
	if n := tab.Sweep(); n != 0 {
		t.Fatalf("swept %d processing rows", n)
	}
	if s := tab.Snapshot(); s.General.Processing != 1 {
		t.Fatalf("snapshot while processing: %+v", s)
	}
	if !tab.Finish(tok) {
		t.Fatal("finish of a processing row failed")
	}
	if s := tab.Snapshot(); s.General.Free != 26 {
		t.Fatalf("after finish: %+v", s)
	}
}

// seedFinishEnqueued is TestSeedSentences' case "finish also frees an enqueued row, exactly once".
func seedFinishEnqueued(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	tok := reserve(t, tab, h, credits.Internal)
	enqueue(t, tab, h, tok, "p")
	if !tab.Finish(tok) || tab.Finish(tok) {
		t.Fatal("finish of an enqueued row did not free it exactly once")
	}
}

// seedRelease is TestSeedSentences' case "release frees a never-enqueued reservation, at most once".
func seedRelease(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	tok := reserve(t, tab, h, credits.General)
	if !tab.Release(h, tok) || tab.Release(h, tok) {
		t.Fatal("release did not free exactly once")
	}
	tok = reserve(t, tab, h, credits.General)
	enqueue(t, tab, h, tok, "p")
	if tab.Release(h, tok) {
		t.Fatal("release freed an enqueued row")
	}
}

// seedEnqueuedOrder is TestSeedSentences' case "enqueued lists oldest enqueue first".
func seedEnqueuedOrder(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	t1, t2, t3 := reserve(t, tab, h, credits.General), reserve(t, tab, h, credits.General), reserve(t, tab, h, credits.Internal)
	tab.EnqueueAt(30, h, t1, "late")
	tab.EnqueueAt(10, h, t3, "early")
	tab.EnqueueAt(20, h, t2, "middle")
	var got []string
	for _, e := range tab.Enqueued() {
		got = append(got, fmt.Sprint(e.Payload, "@", e.MarkedMs))
	}
	if strings.Join(got, " ") != "early@10 middle@20 late@30" {
		t.Fatalf("enqueued = %v", got)
	}
}

// TestSpecTable walks spec/credits.md's invariants not covered above.
func TestSpecTable(t *testing.T) {
	t.Run("C2 sequential reserve claims the lowest free slot", func(t *testing.T) {
		tab := credits.New[string]()
		h := credits.NewHolder()
		var toks []credits.Token
		for range 5 {
			toks = append(toks, reserve(t, tab, h, credits.General))
		}
		tab.Release(h, toks[3])
		tab.Release(h, toks[1])
		if tok := reserve(t, tab, h, credits.General); tok.Slot != 2 {
			t.Fatalf("got slot %d, want 2", tok.Slot)
		}
		if tok := reserve(t, tab, h, credits.General); tok.Slot != 4 {
			t.Fatalf("got slot %d, want 4", tok.Slot)
		}
	})
	t.Run("C3 epochs are unique across slots and reuse, non-zero and below 2^63", func(t *testing.T) {
		tab := credits.New[string]()
		h := credits.NewHolder()
		seen := map[uint64]credits.Token{}
		var held []credits.Token
		for i := range 5000 {
			c := credits.General
			if i%5 == 0 {
				c = credits.Internal
			}
			tok, r := tab.Reserve(h, c)
			if r == credits.Exhausted {
				for _, x := range held {
					tab.Release(h, x)
				}
				held = held[:0]
				continue
			}
			if tok.Epoch == 0 || tok.Epoch >= 1<<63 {
				t.Fatalf("reservation %d: epoch %#x is 0 or not below 2^63", i, tok.Epoch)
			}
			if prev, dup := seen[tok.Epoch]; dup {
				t.Fatalf("reservation %d: epoch %d issued twice (%v, then %v)", i, tok.Epoch, prev, tok)
			}
			seen[tok.Epoch] = tok
			if i%3 == 0 {
				tab.Release(h, tok) // the slot is reused at once
			} else {
				held = append(held, tok)
			}
		}
	})
	t.Run("C10 sweep frees only reserved rows of exited holders", func(t *testing.T) {
		tab := credits.New[string]()
		live, dead := credits.NewHolder(), credits.NewHolder()
		reserve(t, tab, live, credits.General)
		reserve(t, tab, dead, credits.General)
		e := reserve(t, tab, dead, credits.General)
		enqueue(t, tab, dead, e, "p")
		p := reserve(t, tab, dead, credits.Internal)
		enqueue(t, tab, dead, p, "q")
		tab.Take(p)
		dead.Exit()
		if n := tab.Sweep(); n != 1 {
			t.Fatalf("swept %d, want 1", n)
		}
		s := tab.Snapshot()
		want := credits.Snapshot{
			General:  credits.Counts{Free: 24, Reserved: 1, Enqueued: 1},
			Internal: credits.Counts{Free: 5, Processing: 1},
		}
		if s != want {
			t.Fatalf("snapshot %+v, want %+v", s, want)
		}
	})
	t.Run("C11 dead table", func(t *testing.T) {
		tab := credits.New[string]()
		h := credits.NewHolder()
		r1 := reserve(t, tab, h, credits.General)
		r2 := reserve(t, tab, h, credits.General)
		enqueue(t, tab, h, r2, "p")
		h.Exit()
		tab.Close()
		if _, r := tab.Reserve(credits.NewHolder(), credits.General); r != credits.NoTable {
			t.Fatalf("reserve = %v", r)
		}
		if r := tab.EnqueueAt(0, h, r1, "x"); r != credits.NoTable {
			t.Fatalf("enqueue = %v", r)
		}
		if _, ok := tab.Take(r2); ok {
			t.Fatal("take on a dead table")
		}
		if tab.Finish(r2) || tab.Release(h, r1) {
			t.Fatal("finish/release on a dead table")
		}
		if n := tab.Sweep(); n != 0 {
			t.Fatalf("sweep = %d", n)
		}
		if e := tab.Enqueued(); len(e) != 0 {
			t.Fatalf("enqueued = %v", e)
		}
		if s := tab.Snapshot(); s != (credits.Snapshot{Closed: true}) {
			t.Fatalf("snapshot = %+v", s)
		}
	})
	t.Run("C14 snapshot counts sum to the bounds", func(t *testing.T) {
		tab := credits.New[string]()
		h := credits.NewHolder()
		for range 10 {
			reserve(t, tab, h, credits.General)
		}
		s := tab.Snapshot()
		if s.General.Free+s.General.Reserved+s.General.Enqueued+s.General.Processing != 26 ||
			s.Internal.Free != 6 {
			t.Fatalf("snapshot %+v", s)
		}
	})
}

// TestDefectsPanic: C12. Misuse that would corrupt state panics loudly,
// never masquerading as a result, even on a dead table.
func TestDefectsPanic(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	good := reserve(t, tab, h, credits.General)
	cases := map[string]func(){
		"class 0":          func() { tab.Reserve(h, 0) },
		"class 3":          func() { tab.Reserve(h, 3) },
		"nil holder":       func() { tab.Reserve(nil, credits.General) },
		"slot 0":           func() { tab.Take(credits.Token{Slot: 0, Epoch: 1}) },
		"slot 33":          func() { tab.Finish(credits.Token{Slot: 33, Epoch: 1}) },
		"zero token":       func() { tab.Release(h, credits.Token{}) },
		"epoch 0":          func() { tab.EnqueueAt(0, h, credits.Token{Slot: good.Slot}, "p") },
		"nil holder (enq)": func() { tab.EnqueueAt(0, nil, good, "p") },
		"nil holder (rel)": func() { tab.Release(nil, good) },
		"nil holder, closed": func() {
			dead := credits.New[string]()
			dead.Close()
			dead.Release(nil, good)
		},
		"dead table slot": func() { dead := credits.New[string](); dead.Close(); dead.Take(credits.Token{Slot: 99, Epoch: 1}) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				if msg := fmt.Sprint(r); !strings.Contains(msg, "defect") {
					t.Fatalf("panic %q does not say it is a defect", msg)
				}
			}()
			f()
		})
	}
}

// TestModelAgreesFixed runs fixed scripts through the model and the
// implementation (via internal/sut) and compares every output.
func TestModelAgreesFixed(t *testing.T) {
	type in = model.CrInput[int]
	tok := func(slot int, epoch uint64) model.Token { return model.Token{Slot: slot, Epoch: epoch} }
	scripts := [][]in{
		{ // reserve, enqueue, take, finish, recycle, stale token
			{Kind: model.CrReserve, Holder: 1, Class: model.General},
			{Kind: model.CrEnqueue, Holder: 1, Token: tok(1, 1), Payload: 10, NowMs: 5},
			{Kind: model.CrEnqueued},
			{Kind: model.CrTake, Token: tok(1, 1)},
			{Kind: model.CrTake, Token: tok(1, 1)},
			{Kind: model.CrFinish, Token: tok(1, 1)},
			{Kind: model.CrReserve, Holder: 2, Class: model.General},
			{Kind: model.CrFinish, Token: tok(1, 1)},
			{Kind: model.CrRelease, Holder: 1, Token: tok(1, 2)},
			{Kind: model.CrRelease, Holder: 2, Token: tok(1, 2)},
			{Kind: model.CrSnapshot},
		},
		{ // exits, sweeps, exhaustion, close
			{Kind: model.CrReserve, Holder: 1, Class: model.Internal},
			{Kind: model.CrReserve, Holder: 2, Class: model.Internal},
			{Kind: model.CrEnqueue, Holder: 2, Token: tok(28, 2), Payload: 7, NowMs: 1},
			{Kind: model.CrExit, Holder: 1},
			{Kind: model.CrExit, Holder: 2},
			{Kind: model.CrSweep},
			{Kind: model.CrReserve, Holder: 3, Class: model.Internal},
			{Kind: model.CrReserve, Holder: 3, Class: model.Internal},
			{Kind: model.CrReserve, Holder: 3, Class: model.Internal},
			{Kind: model.CrReserve, Holder: 3, Class: model.Internal},
			{Kind: model.CrReserve, Holder: 3, Class: model.Internal},
			{Kind: model.CrReserve, Holder: 3, Class: model.Internal},
			{Kind: model.CrSnapshot},
			{Kind: model.CrBounds},
			{Kind: model.CrClose},
			{Kind: model.CrReserve, Holder: 3, Class: model.General},
			{Kind: model.CrTake, Token: tok(28, 2)},
			{Kind: model.CrSweep},
			{Kind: model.CrEnqueued},
			{Kind: model.CrSnapshot},
		},
	}
	for i, script := range scripts {
		var m model.Credits[int]
		s := sut.NewCredits[int](fault.None)
		for j, op := range script {
			var want model.CrOutput[int]
			m, want = m.Step(op)
			if got := s.Apply(op); !got.Equal(want) {
				t.Fatalf("script %d step %d %+v: impl %+v, model %+v", i, j, op, got, want)
			}
		}
	}
}

// TestCyclingStorm: C1, C4, C7, C14, C16. 64 goroutines cycle reserve →
// enqueue → take → finish (and reserve → release) on one table while a
// checker watches: no class ever holds more than its bound, every payload
// is taken exactly once and none is lost, and snapshot counts always sum to
// the bounds.
func TestCyclingStorm(t *testing.T) {
	if msg := cyclingStorm(credits.New[int](), 64, 300); msg != "" {
		t.Fatal(msg)
	}
}

// TestCyclingStormSeesBrokenTables: the storm's checks have teeth. A
// reserve that claims with a plain store lets two callers share a slot.
// (The class split off by one is sequential and is caught by
// TestClassBoundSeesOffByOne; on two cores the storm rarely holds 26
// general slots at once.)
func TestCyclingStormSeesBrokenTables(t *testing.T) {
	build.Need(t)
	for _, f := range []fault.Fault{fault.Named("cr-reserve-no-cas")} {
		// Until one storm sees it, for at least 50 storms and at most 30 s: a
		// race is not certain in one storm, least of all beside other jobs.
		caught := ""
		start := time.Now()
		round := 0
		for ; caught == "" && (round < 50 || time.Since(start) < 30*time.Second); round++ {
			caught = cyclingStorm(sut.NewCrTable[int](f), 64, 300)
		}
		if caught == "" {
			t.Errorf("%v: %d storms saw nothing wrong", f, round)
		} else {
			t.Logf("%v caught: %s", f, caught)
		}
	}
}

// generalCapacity counts the general reservations a table grants.
func generalCapacity(tab sut.CrTable[int]) int {
	h := credits.NewHolder()
	n := 0
	for {
		tok, r := tab.Reserve(h, credits.General)
		if r != credits.OK {
			return n
		}
		if tok.Slot > 26 {
			return -tok.Slot // a general reservation on an internal slot
		}
		n++
	}
}

// TestClassBoundSeesOffByOne: C1 with teeth: the real table grants exactly
// 26 general reservations, all on general slots; the off-by-one split hands
// out an internal slot.
func TestClassBoundSeesOffByOne(t *testing.T) {
	build.Need(t)
	if n := generalCapacity(credits.New[int]()); n != 26 {
		t.Fatalf("granted %d general reservations, want 26", n)
	}
	if n := generalCapacity(sut.NewCrTable[int](fault.Named("cr-class-off-by-one"))); n != -27 {
		t.Fatalf("the off-by-one table answered %d; the check would not see it", n)
	}
}

// cyclingStorm runs the storm and returns the first violation, or "".
func cyclingStorm(tab sut.CrTable[int], workers, cycles int) string {
	s := &cycling{tab: tab}
	stop := make(chan struct{})
	var wg, checker sync.WaitGroup
	for w := range workers {
		wg.Go(func() { s.worker(w, cycles) })
	}
	checker.Go(func() { s.check(stop) })
	wg.Wait()
	close(stop)
	checker.Wait()
	if s.failure != "" {
		return s.failure
	}
	n := 0
	s.taken.Range(func(any, any) bool { n++; return true })
	if int64(n) != s.enqueued.Load() {
		return fmt.Sprintf("C7: %d payloads enqueued, %d taken", s.enqueued.Load(), n)
	}
	if sn := tab.Snapshot(); sn.General.Free != 26 || sn.Internal.Free != 6 {
		return fmt.Sprintf("slots leaked after the storm: %+v", sn)
	}
	return ""
}

// cycling is cyclingStorm's shared state.
type cycling struct {
	tab      sut.CrTable[int]
	held     [3]atomic.Int64 // by class; incremented after a successful reserve
	taken    sync.Map        // payload → true
	next     atomic.Int64
	enqueued atomic.Int64
	mu       sync.Mutex
	failure  string // the first violation seen
}

// cyclingBound is each class's bound on reservations held at once (C1).
var cyclingBound = [3]int64{0, 26, 6}

func (s *cycling) fail(format string, args ...any) {
	s.mu.Lock()
	if s.failure == "" {
		s.failure = fmt.Sprintf(format, args...)
	}
	s.mu.Unlock()
}

// recovered reports a panic of the table as a violation. A table broken
// enough (a mutant's) can corrupt its rows until one of its own methods
// panics, say on an enqueued row with no payload box: that is a violation
// seen, reported like the others, not a crash of the test binary.
func (s *cycling) recovered() {
	if r := recover(); r != nil {
		s.fail("the table panicked: %v", r)
	}
}

// worker is holder w's cycles: reserve in its class (internal for every
// fourth worker), within the class's bound and on its slots (C1); release
// every third reservation (C9), enqueue the others (C5) and act as their
// owner.
func (s *cycling) worker(w, cycles int) {
	defer s.recovered()
	h := credits.NewHolder()
	c := credits.General
	if w%4 == 0 {
		c = credits.Internal
	}
	for i := range cycles {
		tok, r := s.tab.Reserve(h, c)
		if r != credits.OK {
			continue
		}
		if n := s.held[c].Add(1); n > cyclingBound[c] {
			s.fail("C1: %d %v reservations held at once (bound %d)", n, c, cyclingBound[c])
		}
		if (c == credits.General) != (tok.Slot <= 26) {
			s.fail("C1: %v reservation got slot %d", c, tok.Slot)
		}
		if i%3 == 0 {
			s.held[c].Add(-1)
			if !s.tab.Release(h, tok) {
				s.fail("C9: release of own reservation %v failed", tok)
			}
			continue
		}
		s.enqueueAndTake(h, c, tok, i)
	}
}

// enqueueAndTake enqueues a fresh payload into the worker's reservation
// and acts as the owner of its own row, racing other owners' takes of
// theirs (and stale takes of ours): the take gets the payload, once (C6,
// C7), and the finish frees the row (C8).
func (s *cycling) enqueueAndTake(h *credits.Holder, c credits.Class, tok credits.Token, i int) {
	p := int(s.next.Add(1))
	if s.tab.EnqueueAt(int64(i), h, tok, p) != credits.OK {
		s.fail("C5: enqueue of own reservation %v failed", tok)
		return
	}
	s.enqueued.Add(1)
	got, ok := s.tab.Take(tok)
	if !ok || got != p {
		s.fail("C6/C7: take of %v = %d, %v; enqueued %d", tok, got, ok, p)
		return
	}
	if _, dup := s.taken.LoadOrStore(got, true); dup {
		s.fail("C7: payload %d taken twice", got)
	}
	if _, ok := s.tab.Take(tok); ok {
		s.fail("C7: payload of %v taken a second time", tok)
	}
	s.held[c].Add(-1)
	if !s.tab.Finish(tok) {
		s.fail("C8: finish of %v failed", tok)
	}
}

// check takes snapshots and listings until stop is closed: every
// snapshot sums to the bounds (C14), no listed row lacks its payload (C4).
func (s *cycling) check(stop <-chan struct{}) {
	defer s.recovered()
	for {
		select {
		case <-stop:
			return
		default:
		}
		sn := s.tab.Snapshot()
		if sn.General.Free+sn.General.Reserved+sn.General.Enqueued+sn.General.Processing != 26 ||
			sn.Internal.Free+sn.Internal.Reserved+sn.Internal.Enqueued+sn.Internal.Processing != 6 {
			s.fail("C14: snapshot %+v does not sum to the bounds", sn)
		}
		for _, e := range s.tab.Enqueued() {
			if e.Payload == 0 {
				s.fail("C4: enqueued row %v without a payload", e.Token)
			}
		}
	}
}

// TestSweepRacingEnqueue: C4, C10. Holders reserve, then exit either just
// before or just after enqueueing, while sweepers run flat out. A sweep must
// never free a row that carries a payload, so every enqueued payload is
// still there for the owner to take.
func TestSweepRacingEnqueue(t *testing.T) {
	for round := range 30 {
		tab := credits.New[int]()
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						tab.Sweep()
					}
				}
			})
		}
		var callers sync.WaitGroup
		results := make([]struct {
			tok credits.Token
			ok  bool
		}, 26)
		for i := range 26 {
			callers.Go(func() {
				h := credits.NewHolder()
				tok := reserve(t, tab, h, credits.General)
				if i%2 == 0 {
					h.Exit() // dies before enqueue: the enqueue may now lose to a sweep
				}
				results[i].tok, results[i].ok = tok, tab.EnqueueAt(0, h, tok, i+1) == credits.OK
				h.Exit() // dies after enqueue: the row must survive
			})
		}
		callers.Wait()
		close(stop)
		wg.Wait()
		for i, r := range results {
			p, took := tab.Take(r.tok)
			if r.ok && (!took || p != i+1) {
				t.Fatalf("round %d: enqueued payload %d of %v was swept (take = %d, %v)", round, i+1, r.tok, p, took)
			}
			if !r.ok && took {
				t.Fatalf("round %d: a lost enqueue left payload %d", round, p)
			}
		}
	}
}

// TestAppendEnqueued: AppendEnqueued lists what Enqueued lists, after what
// dst held, sorting only what it appended (C13), and reuses dst's storage.
func TestAppendEnqueued(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	for i, mark := range []int64{30, 10, 20} {
		tok := reserve(t, tab, h, credits.General)
		if r := tab.EnqueueAt(mark, h, tok, fmt.Sprint("p", i)); r != credits.OK {
			t.Fatalf("enqueue %d = %v", i, r)
		}
	}
	want := tab.Enqueued()
	prefix := credits.Entry[string]{MarkedMs: 99, Payload: "kept"}
	buf := make([]credits.Entry[string], 1, 8)
	buf[0] = prefix
	got := tab.AppendEnqueued(buf)
	if len(got) != 1+len(want) || got[0] != prefix || &got[0] != &buf[0] {
		t.Fatalf("AppendEnqueued = %v, want %v then %v in the same storage", got, prefix, want)
	}
	for i, e := range want {
		if got[1+i] != e {
			t.Fatalf("entry %d = %v, want %v", i, got[1+i], e)
		}
	}
	if want[0].MarkedMs != 10 || want[2].MarkedMs != 30 {
		t.Fatalf("Enqueued not ordered by mark: %v", want)
	}
	if allocs := testing.AllocsPerRun(100, func() { got = tab.AppendEnqueued(got[:0]) }); allocs != 0 {
		t.Fatalf("AppendEnqueued into a buffer of room allocated %v times", allocs)
	}
}
