package linearizability

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/model"
)

// FaultClock places a fault workload's fault on its recording's time base,
// so that the fault's instants order against every operation's Call and
// Return: a fault that struck no write in flight is seen (Spanning), and
// the history before the fault can be cut out (TBHistory.Before,
// CrHistory.Before).
//
// The workload's backend wrapper calls Begin and End around each call,
// hands the recording's Stamps to ShareStamps (it is a StampSharer) and
// passes on Omittable (it is an OmitMarker); the fault calls Strike just
// before it acts.
//
// Only a write the history will hold counts as in flight: a call the
// recorder marked omittable (it may leave it out) does not, so a strike
// always stamps an instant some recorded write spans (Spanning ≥ 1).
//
// A FaultClock is safe for concurrent use.
type FaultClock struct {
	ts       atomic.Pointer[Stamps]
	mu       sync.Mutex
	inflight int          // counted writes inside Begin…End
	omit     map[int]bool // clients whose current call may go unrecorded
	starts   []int64      // the strikes' instants
}

// ShareStamps is StampSharer's.
func (f *FaultClock) ShareStamps(ts *Stamps) { f.ts.Store(ts) }

// Omittable is OmitMarker's: while on, client's calls are not counted as
// writes in flight.
func (f *FaultClock) Omittable(client int, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.omit == nil {
		f.omit = map[int]bool{}
	}
	if on {
		f.omit[client] = true
	} else {
		delete(f.omit, client)
	}
}

// Begin marks the start of client's call of in, End its end; both are made
// inside the recorder's bracket of the call (after its Call stamp, before
// its Return stamp). counted, which End takes back, says whether the call
// is a write the history will hold, and so counts as in flight.
func (f *FaultClock) Begin(client int, in any) (counted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !IsWrite(in) || f.omit[client] {
		return false
	}
	f.inflight++
	return true
}

// End: see Begin.
func (f *FaultClock) End(counted bool) {
	if counted {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}
}

// Strike waits until a write is in flight and stamps that instant as a
// fault's start: that write's Call is before it and its Return after. It
// returns false, stamping nothing, if stop closes first (or no Stamps were
// shared).
func (f *FaultClock) Strike(stop <-chan struct{}) bool { return f.await(stop, true) }

// Await waits until a write is in flight, as Strike does, and stamps
// nothing: for a fault that acts in steps and strikes only at the one
// that does the harm.
func (f *FaultClock) Await(stop <-chan struct{}) bool { return f.await(stop, false) }

func (f *FaultClock) await(stop <-chan struct{}, stamp bool) bool {
	for {
		f.mu.Lock()
		if ts := f.ts.Load(); ts != nil && f.inflight > 0 {
			if stamp {
				f.starts = append(f.starts, ts.Stamp())
			}
			f.mu.Unlock()
			return true
		}
		f.mu.Unlock()
		select {
		case <-stop:
			return false
		case <-time.After(20 * time.Microsecond):
		}
	}
}

// Starts are the instants of the strikes, in order.
func (f *FaultClock) Starts() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.starts...)
}

// IsWrite reports whether in (a model.TBInput[string] or a
// model.CrInput[Payload]) may change the table: anything but a peek, a
// retry_after, an enqueued, a snapshot and a bounds.
func IsWrite(in any) bool {
	switch in := in.(type) {
	case model.TBInput[string]:
		return in.Kind != model.TBPeek && in.Kind != model.TBRetryAfter
	case model.CrInput[Payload]:
		return in.Kind != model.CrEnqueued && in.Kind != model.CrSnapshot && in.Kind != model.CrBounds
	}
	return false
}

// Spanning counts the writes among ops in flight at instant at: called
// before it, and returned after it or never known to.
func Spanning[In, Out any](ops []Op[In, Out], at int64) int {
	n := 0
	for _, op := range ops {
		if IsWrite(op.Input) && op.Call < at && (op.Unknown && !op.Settled || op.Return > at) {
			n++
		}
	}
	return n
}

// before is the history of ops as it stood at instant at: the operations
// called before it, those not returned by then of unknown outcome (they
// may take effect later, or never).
func before[In, Out any](ops []Op[In, Out], at int64) []Op[In, Out] {
	var out []Op[In, Out]
	for _, op := range ops {
		if op.Call >= at {
			continue
		}
		if op.Unknown && !op.Settled || op.Return > at {
			op.Unknown, op.Settled, op.Return, op.Output = true, false, 0, *new(Out)
		}
		out = append(out, op)
	}
	return out
}

// Before is h cut at instant at (see FaultClock): the operations called
// before it, those still in flight then of unknown outcome.
func (h TBHistory) Before(at int64) TBHistory {
	h.Ops = before(h.Ops, at)
	h.Marks = marksBefore(h.Marks, at)
	return h
}

// Before is h cut at instant at (see FaultClock): the operations called
// before it, those still in flight then of unknown outcome.
func (h CrHistory) Before(at int64) CrHistory {
	h.Ops = before(h.Ops, at)
	h.Marks = marksBefore(h.Marks, at)
	return h
}

func marksBefore(ms []Mark, at int64) []Mark {
	var out []Mark
	for _, m := range ms {
		if m.At < at {
			out = append(out, m)
		}
	}
	return out
}
