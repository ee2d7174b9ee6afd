package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
	"golang.org/x/sync/semaphore"
)

// Admitter is the interface the reserve+release workload measures: claim
// one unit of the general class's 26 and give it back, or refuse at once
// when all 26 are held. Nothing blocks.
type Admitter interface {
	// Cycle reserves and then releases one unit, reporting whether the
	// reserve was admitted.
	Cycle() bool
}

// CrDesign names a reserve+release design and builds one for a goroutine
// that shares it (New is called once per run; Caller once per goroutine).
type CrDesign struct {
	Name string
	New  func() func() Admitter
}

// Credit design names, as they appear in results.
const (
	ChanSem    = "chan-semaphore"
	XSyncSem   = "x-sync-weighted"
	MutexTable = "mutex-table"
	Mailbox    = "owner-mailbox"
)

// CrDesigns lists the reserve+release designs, tollgate first.
func CrDesigns() []CrDesign {
	return []CrDesign{
		{Name: Tollgate, New: newTollgateCr},
		{Name: ChanSem, New: newChanSem},
		{Name: XSyncSem, New: newXSync},
		{Name: MutexTable, New: newMutexTable},
	}
}

// tollgateCr reserves a general slot of impl/credits and releases it, each
// goroutine with its own Holder. A release that fails right after its own
// reserve (C9) is counted in lost; RunCr fails the run if any is.
type tollgateCr struct {
	t    *credits.Table[int]
	h    *credits.Holder
	lost *atomic.Int64
}

func newTollgateCr() func() Admitter {
	t := credits.New[int]()
	lost := new(atomic.Int64)
	return func() Admitter { return tollgateCr{t: t, h: credits.NewHolder(), lost: lost} }
}

func (d tollgateCr) Cycle() bool {
	tok, res := d.t.Reserve(d.h, credits.General)
	if res != credits.OK {
		return false
	}
	if !d.t.Release(d.h, tok) {
		d.lost.Add(1)
	}
	return true
}

// check reports a broken reservation: a release that failed, or a row
// still in use after every goroutine released what it reserved (C9, C14).
func (d tollgateCr) check() error { return checkCr(d.lost.Load(), d.t.Snapshot()) }

// checkCr is the check of a reserve+release run on a credit table: lost
// releases that failed, and the table's snapshot after the run.
func checkCr(lost int64, s credits.Snapshot) error {
	if lost > 0 {
		return fmt.Errorf("bench: C9 %d releases of a fresh reservation failed: another reserve took the same slot", lost)
	}
	if s.General.Free != credits.GeneralSlots {
		return fmt.Errorf("bench: C14 after every release the general class holds %+v, want all %d free", s.General, credits.GeneralSlots)
	}
	return nil
}

// chanSem is a buffered channel of capacity 26 used as a counting
// semaphore: a send acquires, a receive releases.
type chanSem chan struct{}

func newChanSem() func() Admitter {
	s := make(chanSem, credits.GeneralSlots)
	return func() Admitter { return s }
}

func (s chanSem) Cycle() bool {
	select {
	case s <- struct{}{}:
		<-s
		return true
	default:
		return false
	}
}

// xsync is golang.org/x/sync/semaphore.Weighted of size 26, with TryAcquire.
type xsync struct{ s *semaphore.Weighted }

func newXSync() func() Admitter {
	s := semaphore.NewWeighted(credits.GeneralSlots)
	return func() Admitter { return xsync{s} }
}

func (d xsync) Cycle() bool {
	if !d.s.TryAcquire(1) {
		return false
	}
	d.s.Release(1)
	return true
}

// mutexTable is the slot table of spec/credits.md for the reserve and
// release transitions only, every operation under one mutex: reserve the
// lowest free general slot under the next epoch, release it when the holder
// and epoch match. TestMutexTableMatchesModel checks it against the model.
type mutexTable struct {
	mu    sync.Mutex
	epoch uint64
	rows  [credits.Slots]struct {
		held   bool
		holder uint64
		epoch  uint64
	}
}

type mutexCaller struct {
	t *mutexTable
	h uint64
}

func newMutexTable() func() Admitter {
	t := new(mutexTable)
	var ids atomic.Uint64
	return func() Admitter { return mutexCaller{t: t, h: ids.Add(1)} }
}

// reserve claims the lowest free slot in first..last for holder h and
// returns its slot and epoch, or slot 0 when all are held.
func (t *mutexTable) reserve(h uint64, first, last int) (slot int, epoch uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for n := first; n <= last; n++ {
		if r := &t.rows[n-1]; !r.held {
			t.epoch++
			r.held, r.holder, r.epoch = true, h, t.epoch
			return n, t.epoch
		}
	}
	return 0, 0
}

// release frees slot when holder h holds it under epoch.
func (t *mutexTable) release(h uint64, slot int, epoch uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &t.rows[slot-1]
	if !r.held || r.holder != h || r.epoch != epoch {
		return false
	}
	r.held = false
	return true
}

func (c mutexCaller) Cycle() bool {
	slot, epoch := c.t.reserve(c.h, 1, credits.GeneralSlots)
	if slot == 0 {
		return false
	}
	if !c.t.release(c.h, slot, epoch) {
		panic("bench: a fresh reservation could not be released")
	}
	return true
}

// Full request cycle: callers hand a request to one owner and wait for its
// reply. Both designs below admit at most 26 requests at once (the general
// class) and reply on a per-caller channel that is reused across requests,
// so they differ only in how a request reaches the owner.

// request is a caller's request: the owner replies on done.
type request struct{ done chan struct{} }

// Server is one full-cycle design: Start launches its owner; Call carries
// one request from a caller to the owner and waits for the reply, and
// returns how many times it found all 26 credits in flight and yielded
// before it could send; Stop ends the owner.
type Server interface {
	Call(h *credits.Holder, req *request) (fullWaits int)
	Stop()
}

// CycleDesign names a full-cycle design.
type CycleDesign struct {
	Name  string
	Start func() Server
}

// CycleDesigns lists the full-cycle designs, tollgate first, and the
// cycle's floor (floor-handoff).
func CycleDesigns() []CycleDesign {
	return []CycleDesign{
		{Name: Tollgate, Start: startTableOwner},
		{Name: Mailbox, Start: startMailbox},
		{Name: OwnerPoll, Start: startOwnerCall},
		{Name: FloorHandoff, Start: startHandoff},
	}
}

// tableOwner is tollgate's design: a caller reserves a slot, enqueues its
// request into the row, and waits; the owner scans the enqueued rows, takes
// each, replies and finishes it. Instead of polling on a timer the owner
// sleeps on a doorbell, a channel of capacity one that a caller rings
// (without blocking) after its enqueue. The bell carries no request: the
// table stays the only channel, a late or repeated ring costs one extra
// scan, and a ring that finds the bell already rung is dropped, because the
// scan it asks for is already due. A ring always follows its enqueue, so a
// scan that starts after the owner empties the bell sees that row, and a row
// enqueued too late for the scan was rung for into the emptied bell.
type tableOwner struct {
	t      *credits.Table[*request]
	bell   chan struct{}
	stop   atomic.Bool
	done   chan struct{}
	polled []credits.Entry[*request] // reused by every scan (run's goroutine only)
}

func startTableOwner() Server {
	o := &tableOwner{t: credits.New[*request](), bell: make(chan struct{}, 1), done: make(chan struct{})}
	go o.run()
	return o
}

func (o *tableOwner) run() {
	defer close(o.done)
	for {
		<-o.bell
		if o.stop.Load() {
			return
		}
		// One scan per ring: a row enqueued after this scan passed its
		// slot was rung for after the bell was emptied above, so the bell
		// holds a ring for it.
		o.polled = o.t.AppendEnqueued(o.polled[:0])
		for _, e := range o.polled {
			req, ok := o.t.Take(e.Token)
			if !ok {
				continue
			}
			req.done <- struct{}{}
			o.t.Finish(e.Token)
		}
		clear(o.polled)
	}
}

func (o *tableOwner) Call(h *credits.Holder, req *request) (fullWaits int) {
	for {
		tok, res := o.t.Reserve(h, credits.General)
		if res == credits.Exhausted {
			fullWaits++
			runtime.Gosched() // all 26 in flight: wait for a finish
			continue
		}
		if res != credits.OK || o.t.Enqueue(h, tok, req) != credits.OK {
			panic("bench: a live table refused a reserve or enqueue")
		}
		select {
		case o.bell <- struct{}{}:
		default: // already rung: the owner will scan
		}
		<-req.done
		return fullWaits
	}
}

func (o *tableOwner) Stop() {
	o.stop.Store(true)
	close(o.bell) // wakes the owner, which sees stop; no Call is running
	<-o.done
}

// mailbox is the design the seed rejected: a caller takes one of 26
// credits (an atomic counter) and sends its request to the owner's mailbox
// channel; the owner receives, replies and returns the credit.
type mailbox struct {
	inflight atomic.Int64
	box      chan *request
	cancel   context.CancelFunc
	done     chan struct{}
}

func startMailbox() Server {
	ctx, cancel := context.WithCancel(context.Background())
	m := &mailbox{box: make(chan *request, credits.GeneralSlots), cancel: cancel, done: make(chan struct{})}
	go m.run(ctx)
	return m
}

func (m *mailbox) run(ctx context.Context) {
	defer close(m.done)
	for {
		select {
		case req := <-m.box:
			req.done <- struct{}{}
			m.inflight.Add(-1)
		case <-ctx.Done():
			return
		}
	}
}

func (m *mailbox) Call(_ *credits.Holder, req *request) (fullWaits int) {
	for {
		n := m.inflight.Load()
		if n >= credits.GeneralSlots {
			fullWaits++
			runtime.Gosched() // all 26 in flight: wait for a reply
			continue
		}
		if m.inflight.CompareAndSwap(n, n+1) {
			break
		}
	}
	m.box <- req
	<-req.done
	return fullWaits
}

func (m *mailbox) Stop() {
	m.cancel()
	<-m.done
}

// ownerCall is impl/credits' own Owner and Owner.Call, polling every
// 100 µs: what a user of the package gets, timer-bound rather than
// table-bound. Each call allocates its request and reply channel.
type ownerCall struct {
	o      *credits.Owner[struct{}, struct{}]
	cancel context.CancelFunc
}

// OwnerPoll is the design name of ownerCall.
const OwnerPoll = "tollgate-owner-100us"

const pollInterval = 100 * time.Microsecond

func startOwnerCall() Server {
	t := credits.New[*credits.Request[struct{}, struct{}]]()
	o := credits.NewOwner(t, pollInterval, func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = o.Run(ctx) }()
	return &ownerCall{o: o, cancel: cancel}
}

func (d *ownerCall) Call(h *credits.Holder, _ *request) (fullWaits int) {
	for {
		_, err := d.o.Call(context.Background(), h, credits.General, struct{}{})
		switch {
		case err == nil:
			return fullWaits
		case errors.Is(err, credits.ErrExhausted), errors.Is(err, credits.ErrNoOwner):
			fullWaits++
			runtime.Gosched() // all 26 in flight, or Run has not started yet
		default:
			panic(fmt.Sprintf("bench: Owner.Call: %v", err))
		}
	}
}

func (d *ownerCall) Stop() {
	d.cancel()
	<-d.o.Done()
}
