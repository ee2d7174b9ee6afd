package credits

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
)

// TestConcurrentStorm: live holders reserve, enqueue and release on one
// table while an owner drains it, holders without a lease reserve and
// abandon, a sweeper frees those, and a reader takes snapshots. No slot is
// handed to two live reservations at once (C1, C2), no epoch repeats (C3),
// every payload is taken once, under its own token (C6, C7), no live
// reservation is swept (C10), every snapshot sums to the bounds (C14), and
// at the end every slot is free.
func TestConcurrentStorm(t *testing.T) {
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr, PoolSize: 32})
	defer c.Close()
	s := &storm{
		tab:      open(t, c),
		held:     map[int]Token{},
		epochs:   map[uint64]bool{},
		inflight: map[Token]string{},
		stop:     make(chan struct{}),
	}

	const live, doomed, rounds = 8, 2, 120
	var workers, background sync.WaitGroup
	for w := 0; w < live; w++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			s.liveHolder(w, rounds)
		}()
	}
	for w := 0; w < doomed; w++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			s.doomedHolder(rounds / 4)
		}()
	}
	for _, f := range []func(){s.sweeper, s.owner, s.reader} {
		background.Add(1)
		go func() {
			defer background.Done()
			f()
		}()
	}
	workers.Wait()
	close(s.stop)
	background.Wait()
	if _, err := s.tab.SweepAt(ctx, 1<<40); err != nil {
		t.Fatal(err)
	}
	for _, f := range s.failures {
		t.Error(f)
	}
	if sn := snap(t, s.tab); sn.General.Free != GeneralSlots || sn.Internal.Free != InternalSlots {
		t.Fatalf("at the end: %+v, want every slot free", sn)
	}
	if s.enqueued.Load() != s.taken.Load() || s.enqueued.Load() == 0 {
		t.Fatalf("%d enqueued, %d taken", s.enqueued.Load(), s.taken.Load())
	}
	t.Logf("%d epochs, %d payloads, %d reserves exhausted", len(s.epochs), s.taken.Load(), s.exhausted.Load())
}

// storm is TestConcurrentStorm's shared state: what the goroutines saw,
// under mu, and what they counted.
type storm struct {
	tab      *Table
	mu       sync.Mutex
	held     map[int]Token    // slot → the live reservation holding it
	epochs   map[uint64]bool  // every epoch issued
	inflight map[Token]string // enqueued and not yet finished
	failures []string

	enqueued, taken, exhausted atomic.Int64
	stop                       chan struct{} // closed when the holders are done
}

func (s *storm) fail(f string, a ...any) {
	s.mu.Lock()
	s.failures = append(s.failures, fmt.Sprintf(f, a...))
	s.mu.Unlock()
}

// issue records a reservation handed out: its epoch must be new (C3), and
// a live one's slot must not be held by another live one (C1, C2).
func (s *storm) issue(tok Token, isLive bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epochs[tok.Epoch] {
		s.failures = append(s.failures, fmt.Sprintf("epoch %d issued twice (C3)", tok.Epoch))
	}
	s.epochs[tok.Epoch] = true
	if !isLive {
		return
	}
	if other, ok := s.held[tok.Slot]; ok {
		s.failures = append(s.failures, fmt.Sprintf("slot %d handed out to %v while %v holds it", tok.Slot, tok, other))
	}
	s.held[tok.Slot] = tok
}

func (s *storm) unhold(tok Token) {
	s.mu.Lock()
	delete(s.held, tok.Slot)
	s.mu.Unlock()
}

// liveHolder is live holder w: with a lease past every sweep, it reserves
// rounds times, releasing every third reservation and enqueueing the rest
// (neither may find its row swept, C10).
func (s *storm) liveHolder(w, rounds int) {
	tab := s.tab
	h := NewHolder()
	if _, err := tab.RenewAt(ctx, 1<<40, h, MaxLeaseMs); err != nil { // live for the sweeps at 1<<40
		s.fail("renew: %v", err)
		return
	}
	for i := 0; i < rounds; i++ {
		tok, r, err := tab.Reserve(ctx, h, Class(1+(w+i)%3/2))
		if err != nil {
			s.fail("reserve: %v", err)
			return
		}
		if r != OK {
			s.exhausted.Add(1) // the other holders have every slot of the class
			continue
		}
		s.issue(tok, true)
		if i%3 == 0 {
			s.unhold(tok)
			if ok, err := tab.Release(ctx, h, tok); !ok || err != nil {
				s.fail("release of a live reservation %v: %v %v (swept? C10)", tok, ok, err)
			}
			continue
		}
		p := fmt.Sprintf("w%d/%d/%v", w, i, tok)
		s.mu.Lock()
		s.inflight[tok] = p
		s.mu.Unlock()
		if r, err := tab.EnqueueAt(ctx, int64(i), h, tok, p); r != OK || err != nil {
			s.fail("enqueue of a live reservation %v: %v %v", tok, r, err)
		}
		s.enqueued.Add(1)
	}
}

// doomedHolder reserves internal slots rounds times as fresh holders with
// no lease, abandoning each reservation to the sweeper.
func (s *storm) doomedHolder(rounds int) {
	for i := 0; i < rounds; i++ {
		tok, r, err := s.tab.Reserve(ctx, NewHolder(), Internal)
		if err != nil {
			s.fail("reserve: %v", err)
			return
		}
		if r == OK {
			s.issue(tok, false)
		}
	}
}

// sweeper sweeps at 1<<40 until stopped.
func (s *storm) sweeper() {
	for {
		if _, err := s.tab.SweepAt(ctx, 1<<40); err != nil {
			s.fail("sweep: %v", err)
		}
		select {
		case <-s.stop:
			return
		default:
		}
	}
}

// owner lists the enqueued rows and takes and finishes each, checking the
// payload is the one enqueued under its token (C6, C7), until stopped
// with nothing left listed.
func (s *storm) owner() {
	for {
		es, err := s.tab.Enqueued(ctx)
		if err != nil {
			s.fail("enqueued: %v", err)
			return
		}
		for _, e := range es {
			s.takeListed(e)
		}
		select {
		case <-s.stop:
			if len(es) == 0 {
				return
			}
		default:
		}
	}
}

// takeListed takes and finishes listed row e.
func (s *storm) takeListed(e Entry) {
	p, ok, err := s.tab.Take(ctx, e.Token)
	if err != nil || !ok {
		s.fail("take of a listed row %v: %v %v", e.Token, ok, err)
		return
	}
	s.mu.Lock()
	want, found := s.inflight[e.Token]
	delete(s.inflight, e.Token)
	delete(s.held, e.Token.Slot)
	s.mu.Unlock()
	if !found || p != want || e.Payload != want {
		s.fail("take of %v returned %q (listed %q), enqueued %q (C6, C7)", e.Token, p, e.Payload, want)
	}
	s.taken.Add(1)
	if ok, err := s.tab.Finish(ctx, e.Token); !ok || err != nil {
		s.fail("finish %v: %v %v", e.Token, ok, err)
	}
}

// reader takes snapshots until stopped; each must sum to the bounds (C14).
func (s *storm) reader() {
	for {
		sn, err := s.tab.Snapshot(ctx)
		if err != nil {
			s.fail("snapshot: %v", err)
			return
		}
		if sn.General.Free+sn.General.Reserved+sn.General.Enqueued+sn.General.Processing != GeneralSlots ||
			sn.Internal.Free+sn.Internal.Reserved+sn.Internal.Enqueued+sn.Internal.Processing != InternalSlots {
			s.fail("snapshot %+v does not sum to the bounds (C14)", sn)
		}
		select {
		case <-s.stop:
			return
		default:
		}
	}
}
