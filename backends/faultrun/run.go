package faultrun

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Run is a scenario's recording while its fault is done: the calls made,
// the fault's clock, and what came after the fault. A wing's environment
// embeds it; its faults wait on At and strike through Clock.
type Run struct {
	Calls atomic.Int64
	Total int64         // the calls the recording is expected to make (set by TB and Cr)
	Stop  chan struct{} // closed when the recording ends
	// Ended, when not nil, is closed when the fault has ended: calls past
	// EndShare of Total wait for it, so that every recording has calls
	// begun after the fault however fast the others went through it.
	Ended    chan struct{}
	EndShare float64
	Injected atomic.Int64 // when the fault ended, in Unix nanoseconds (0: not yet)
	// After counts the calls begun once the fault was injected, and
	// AfterOK those of them acknowledged; FirstOK is when the first of
	// those was acknowledged.
	After, AfterOK, FirstOK atomic.Int64
	// Clock places the fault on the recording's time base: every fault
	// acts only once a write is in flight (FaultClock.Strike).
	Clock linearizability.FaultClock
	Note  string // what the fault did or found, for the row's detail

	wg       sync.WaitGroup
	faultErr error
	closers  []func()
	// noStrike is closed when no strike can come any more: the recording
	// ended, or its calls reached Ended's gate, past which every client
	// waits for the fault's end, so no write is left for a fault still
	// waiting to strike to find (it would wait for ever, and so would the
	// clients: a soak window hung so for 16 minutes).
	noStrike     chan struct{}
	noStrikeOnce sync.Once

	stamps atomic.Pointer[linearizability.Stamps] // the recording's (ShareStamps)
	// Throttle's spacing of calls, and the next call's earliest start
	every    atomic.Int64
	throttle sync.Mutex
	next     time.Time
	// Track's samples of the recording's time base against the wall clock
	ticks    sync.Mutex
	samples  []tick
	tracking chan struct{}
}

// tick is an instant of the recording's time base and when it was taken:
// not before lo, not after hi.
type tick struct {
	stamp  int64
	lo, hi time.Time
}

// NewRun returns a run whose recording has not begun.
func NewRun() *Run { return &Run{Stop: make(chan struct{}), noStrike: make(chan struct{})} }

// haltStrikes closes noStrike, once.
func (r *Run) haltStrikes() { r.noStrikeOnce.Do(func() { close(r.noStrike) }) }

// At waits until share of the expected calls are made; false if the
// recording ended first.
func (r *Run) At(share float64) bool {
	for r.Calls.Load() < int64(share*float64(r.Total)) {
		select {
		case <-r.Stop:
			return false
		case <-time.After(time.Millisecond):
		}
	}
	return true
}

// Strike waits until share of the expected calls are made and a write is
// in flight, and stamps the fault's start; false if the recording ended
// first (the row then fails: the fault never struck).
func (r *Run) Strike(share float64) bool { return r.At(share) && r.StrikeNow() }

// StrikeNow waits until a write is in flight and stamps the fault's start
// (Clock.Strike); false if the recording ended, or its calls reached
// Ended's gate, first (the row then fails: the fault never struck).
func (r *Run) StrikeNow() bool { return r.Clock.Strike(r.noStrike) }

// AwaitWrite waits, as StrikeNow does, until a write is in flight, and
// stamps no strike (Clock.Await).
func (r *Run) AwaitWrite() bool { return r.Clock.Await(r.noStrike) }

// Pace is the least time a call of a fault workload takes: each client
// waits out the rest after a quicker answer, so that a recording lasts long
// enough for its faults to land inside it (about 1,000 calls a second per
// client; on loopback a call takes some 50–150 µs).
const Pace = time.Millisecond

// counted counts the calls made through a backend, and those begun after
// the fault and acknowledged, and paces them.
type counted[In, Out any] struct {
	b linearizability.Backend[In, Out]
	r *Run
}

// ShareStamps hands the recording's stamps to the fault's clock.
func (c counted[In, Out]) ShareStamps(ts *linearizability.Stamps) {
	c.r.stamps.Store(ts)
	c.r.Clock.ShareStamps(ts)
}

// Omittable passes the recorder's marks on to the fault's clock.
func (c counted[In, Out]) Omittable(client int, on bool) { c.r.Clock.Omittable(client, on) }

func (c counted[In, Out]) Do(client int, in In) (Out, error) {
	if n := c.r.Calls.Add(1); c.r.Ended != nil && n > int64(c.r.EndShare*float64(c.r.Total)) {
		c.r.haltStrikes()
		<-c.r.Ended
	}
	c.r.wait()
	start := time.Now()
	after := c.r.Injected.Load() != 0
	counted := c.r.Clock.Begin(client, in)
	out, err := c.b.Do(client, in)
	c.r.Clock.End(counted)
	if after {
		c.r.After.Add(1)
		if err == nil {
			c.r.AfterOK.Add(1)
			c.r.FirstOK.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	time.Sleep(Pace - time.Since(start))
	return out, err
}

// Throttle spaces the calls begun from now on at least every apart, all
// clients together (0: each client paced by Pace alone again): a fault
// that must last a while in wall time (a partition outlasting
// min-replicas-max-lag) keeps the recording's calls going through it
// rather than letting them all run in its first milliseconds.
func (r *Run) Throttle(every time.Duration) { r.every.Store(int64(every)) }

// wait holds a call until Throttle's spacing lets it begin.
func (r *Run) wait() {
	every := time.Duration(r.every.Load())
	if every <= 0 {
		return
	}
	r.throttle.Lock()
	now := time.Now()
	at := r.next.Add(every)
	if at.Before(now) {
		at = now
	}
	r.next = at
	r.throttle.Unlock()
	time.Sleep(time.Until(at))
}

// Track samples the recording's time base against the wall clock every
// millisecond from now until the recording ends, so that WallOf can tell
// when an operation was called or returned (the history's stamps are
// only ordered).
func (r *Run) Track() {
	r.ticks.Lock()
	defer r.ticks.Unlock()
	if r.tracking != nil {
		return
	}
	r.tracking = make(chan struct{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(r.tracking)
		for {
			r.sample()
			select {
			case <-r.Stop:
				r.sample()
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
}

func (r *Run) sample() {
	if ts := r.stamps.Load(); ts != nil {
		r.ticks.Lock()
		lo := time.Now()
		s := ts.Stamp()
		r.samples = append(r.samples, tick{s, lo, time.Now()})
		r.ticks.Unlock()
	}
}

// WallOf bounds when the instant stamp of the recording's time base was
// taken, by Track's samples: not before lo and not after hi (ok false when
// no sample lies on one side of it).
func (r *Run) WallOf(stamp int64) (lo, hi time.Time, ok bool) {
	r.ticks.Lock()
	defer r.ticks.Unlock()
	i := sort.Search(len(r.samples), func(i int) bool { return r.samples[i].stamp > stamp })
	if i == 0 || i == len(r.samples) {
		return lo, hi, false
	}
	return r.samples[i-1].lo, r.samples[i].hi, true
}

// struck reports whether the fault struck, and the fewest writes of ops in
// flight at any of its strikes.
func struck[In, Out any](r *Run, ops []linearizability.Op[In, Out]) (bool, int) {
	starts := r.Clock.Starts()
	if len(starts) == 0 {
		return false, 0
	}
	least := -1
	for _, at := range starts {
		if n := linearizability.Spanning(ops, at); least < 0 || n < least {
			least = n
		}
	}
	return true, least
}

// Job is what a wing gives for one primitive's recording.
type Job[In, Out any] struct {
	Seed   uint64
	Mutant string // the history's mutant ("" for the real tables)
	// Check is porcupine's options; with row.Lossy the history before the
	// fault is checked too, under Check.Name + "-before-fault".
	Check linearizability.Options
	// Backend is the recording's.
	Backend linearizability.Backend[In, Out]
	// Start starts the fault (Run.Inject) once the recording is about to
	// begin.
	Start func()
	// Reopen opens the table again once the fault has ended, for the
	// durability read, and returns what closes it.
	Reopen func() (linearizability.Backend[In, Out], func(), error)
	// Bound, if not nil, holds the row to a bound of its own once the
	// durability read is done (a partition under min-replicas: when its
	// losses may have been acknowledged), reading the store through read:
	// it returns what it found for the row's detail and, if broken, why.
	Bound func(ops []linearizability.Op[In, Out], read linearizability.Backend[In, Out]) (found, broken string, err error)
}

// prim is one primitive's part of a run.
type prim[In, Out, H any] struct {
	record     func(linearizability.Backend[In, Out], uint64) (H, error)
	ops        func(H) []linearizability.Op[In, Out]
	mutant     func(*H, string)
	before     func(H, int64) H
	durability func(H, linearizability.Backend[In, Out]) (linearizability.Durability, error)
	check      func(H, linearizability.Options) (linearizability.Report, error)
}

// TB records, reads back and checks the fault token-bucket workload
// (linearizability.FaultTBWorkload) into row.
func TB(r *Run, row *Row, j Job[model.TBInput[string], model.TBOutput]) error {
	w := linearizability.FaultTBWorkload()
	r.Total = int64(w.Clients * w.OpsPerClient)
	return run(r, row, j, prim[model.TBInput[string], model.TBOutput, linearizability.TBHistory]{
		record: func(b linearizability.TBBackend, seed uint64) (linearizability.TBHistory, error) {
			return linearizability.RecordTokenBucket(w, b, seed)
		},
		ops:    func(h linearizability.TBHistory) []linearizability.TBOp { return h.Ops },
		mutant: func(h *linearizability.TBHistory, m string) { h.Mutant = m },
		before: linearizability.TBHistory.Before,
		durability: func(h linearizability.TBHistory, b linearizability.TBBackend) (linearizability.Durability, error) {
			return linearizability.TBDurability(w, h, b)
		},
		check: linearizability.CheckTokenBucket,
	})
}

// Cr is TB for the fault credit-table workload
// (linearizability.FaultCrWorkload).
func Cr(r *Run, row *Row, j Job[model.CrInput[string], model.CrOutput[string]]) error {
	w := linearizability.FaultCrWorkload()
	r.Total = int64(w.Holders * w.Rounds * 3)
	return run(r, row, j, prim[model.CrInput[string], model.CrOutput[string], linearizability.CrHistory]{
		record: func(b linearizability.CrBackend, seed uint64) (linearizability.CrHistory, error) {
			return linearizability.RecordCredits(w, b, seed)
		},
		ops:        func(h linearizability.CrHistory) []linearizability.CrOp { return h.Ops },
		mutant:     func(h *linearizability.CrHistory, m string) { h.Mutant = m },
		before:     linearizability.CrHistory.Before,
		durability: linearizability.CrDurability,
		check:      linearizability.CheckCredits,
	})
}

// run records j's history under the fault, reads the table back for the
// durability check, checks the history (and, in a lossy scenario, the
// history before the fault) and fills row.
func run[In, Out, H any](r *Run, row *Row, j Job[In, Out], p prim[In, Out, H]) error {
	j.Start()
	h, err := p.record(counted[In, Out]{j.Backend, r}, j.Seed)
	if err = r.End(err); err != nil {
		return err
	}
	p.mutant(&h, j.Mutant)
	row.Struck, row.InFlight = struck(r, p.ops(h))
	fb, done, err := j.Reopen()
	if err != nil {
		return fmt.Errorf("opening the table again for the durability read: %w", err)
	}
	defer done()
	d, err := p.durability(h, fb)
	if err != nil {
		return err
	}
	row.Acked, row.Lost, row.Extra, row.Undecided, row.Detail = d.Acked, d.Lost, d.Extra, d.Undecided, d.Detail
	if j.Bound != nil {
		found, broken, err := j.Bound(p.ops(h), fb)
		if err != nil {
			return err
		}
		if found != "" {
			row.Detail += "; " + found
		}
		row.Unbounded = broken
	}
	whole, err := p.check(h, j.Check)
	if err != nil {
		return err
	}
	row.Report = whole
	if row.Lossy && row.Struck {
		opt := j.Check
		opt.Name += "-before-fault"
		if row.Report, err = p.check(p.before(h, r.Clock.Starts()[0]), opt); err != nil {
			return err
		}
		row.Whole = whole.Result
		row.Detail += fmt.Sprintf("; porcupine on the %d operations called before the fault, the whole history %s", row.Report.Ops, whole.Result)
	}
	r.finish(row)
	return nil
}

// finish fills the row's counts of what came after the fault, and says in
// its detail what the fault struck.
func (r *Run) finish(row *Row) {
	row.After, row.AfterOK = int(r.After.Load()), int(r.AfterOK.Load())
	if ok := r.FirstOK.Load(); ok != 0 {
		row.Recovery = time.Duration(ok - r.Injected.Load())
	}
	if row.MustStrike {
		switch {
		case !row.Struck:
			row.Detail += "; THE FAULT NEVER STRUCK (the recording ended first)"
		case row.InFlight == 0:
			row.Detail += "; THE FAULT FOUND NO WRITE IN FLIGHT"
		default:
			row.Detail += fmt.Sprintf("; %d writes in flight at the fault", row.InFlight)
		}
	}
	if r.Note != "" {
		row.Detail += "; " + r.Note
	}
	row.Ops, row.UnknownOps, row.SettledOps = row.Report.Ops, row.Report.UnknownOps, row.Report.SettledOps
	row.Result, row.Invariant = row.Report.Result, row.Report.Invariant
}

// Inject starts the fault: prepare (if not nil) at once, then fault in a
// goroutine of its own, whose end stamps Injected and closes Ended. An
// error of either is reported by End, once the recording has ended.
func (r *Run) Inject(prepare, fault func() error) {
	if prepare != nil {
		if err := prepare(); err != nil {
			r.faultErr = err
			if r.Ended != nil {
				close(r.Ended)
			}
			return
		}
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.faultErr = fault()
		r.Injected.Store(time.Now().UnixNano())
		if r.Ended != nil {
			close(r.Ended)
		}
	}()
}

// End ends the recording (it closes Stop) and waits for the fault to end
// (a fault returns once it has healed); it returns err, the recording's
// error, or else the fault's.
func (r *Run) End(err error) error {
	close(r.Stop)
	r.haltStrikes()
	r.wg.Wait()
	if err == nil && r.faultErr != nil {
		err = fmt.Errorf("injecting the fault: %w", r.faultErr)
	}
	return err
}

// Defer adds f to what Close does, in reverse order.
func (r *Run) Defer(f func()) { r.closers = append(r.closers, f) }

// Close closes what the run opened (Defer), the last first.
func (r *Run) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}
