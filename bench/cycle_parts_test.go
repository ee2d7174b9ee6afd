package bench

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/internal/clock"
)

// BenchmarkCycleParts splits one request of the full cycle (CR/work=cycle)
// into what each design does besides carrying it between goroutines, on one
// goroutine with nothing contended, so that the cycle's ratios can be read
// as sums:
//
//	table             tollgate's table work for one request, as tableOwner
//	                  does it: Reserve, Enqueue (with the table's clock),
//	                  the owner's AppendEnqueued, Take, Finish
//	table-fixed-clock the same with EnqueueAt at a fixed time: the table
//	                  work less the clock read
//	clock             the table's clock read alone (clock.MonotonicMs)
//	mailbox-credit    the mailbox's credit: a load and compare-and-swap to
//	                  take it, an atomic add to return it
//	handoff           floor-handoff on one caller: a request to an owner
//	                  goroutine and a reply back, the two wake-ups both
//	                  designs pay when the owner is idle
//
// go test -run '^$' -bench CycleParts ./bench
func BenchmarkCycleParts(b *testing.B) {
	tableWork := func(b *testing.B, enqueue func(t *credits.Table[*request], h *credits.Holder, tok credits.Token, r *request) credits.Result) {
		t := credits.New[*request]()
		h := credits.NewHolder()
		defer h.Exit()
		r := &request{}
		var polled []credits.Entry[*request]
		b.ReportAllocs()
		for b.Loop() {
			tok, res := t.Reserve(h, credits.General)
			if res != credits.OK || enqueue(t, h, tok, r) != credits.OK {
				b.Fatal("a table with every slot free refused a reserve or enqueue")
			}
			polled = t.AppendEnqueued(polled[:0])
			for _, e := range polled {
				if _, ok := t.Take(e.Token); !ok || !t.Finish(e.Token) {
					b.Fatal("the owner could not take and finish a row it listed")
				}
			}
			clear(polled)
		}
	}
	b.Run("part=table", func(b *testing.B) {
		tableWork(b, func(t *credits.Table[*request], h *credits.Holder, tok credits.Token, r *request) credits.Result {
			return t.Enqueue(h, tok, r)
		})
	})
	b.Run("part=table-fixed-clock", func(b *testing.B) {
		tableWork(b, func(t *credits.Table[*request], h *credits.Holder, tok credits.Token, r *request) credits.Result {
			return t.EnqueueAt(1, h, tok, r)
		})
	})
	b.Run("part=clock", func(b *testing.B) {
		var sum int64
		for b.Loop() {
			sum += clock.MonotonicMs()
		}
		runtime.KeepAlive(sum)
	})
	b.Run("part=mailbox-credit", func(b *testing.B) {
		var inflight atomic.Int64
		for b.Loop() {
			n := inflight.Load()
			if n >= credits.GeneralSlots || !inflight.CompareAndSwap(n, n+1) {
				b.Fatal("one goroutine found the credits taken")
			}
			inflight.Add(-1)
		}
	})
	b.Run("part=handoff", func(b *testing.B) {
		s := startHandoff()
		defer s.Stop()
		r := &request{done: make(chan struct{})}
		for b.Loop() {
			s.Call(nil, r)
		}
	})
}
