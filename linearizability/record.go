package linearizability

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/tollgate/tollgate/model"
)

// Stamps is the one monotonic time base of a recording: a shared atomic
// counter. Stamp() before an operation and Stamp() after it bracket every
// memory access of the operation in Go's sequentially consistent order of
// atomics, so no two stamps can be reordered around an operation
// (porcupine#40). The zero value is ready to use; it is safe for concurrent
// use. The conformance harness stamps a driver's requests with it too.
type Stamps struct{ n atomic.Int64 }

// Stamp returns the next instant, larger than every instant returned before.
func (s *Stamps) Stamp() int64 { return s.n.Add(1) }

// barrier holds the goroutines of a recording until all of them are
// running, so that no client runs its script before the others have been
// scheduled (with two processors, goroutines started later would otherwise
// often begin after the first ones finished).
type barrier struct {
	n       int64
	arrived atomic.Int64
}

func (b *barrier) wait() {
	b.arrived.Add(1)
	for b.arrived.Load() < b.n {
		runtime.Gosched()
	}
}

// brake stops a recording when its backend breaks: the first such error is
// kept, and every client loop checks stopped before its next call.
type brake struct {
	first atomic.Pointer[error]
}

// unknown sorts a non-nil error from Backend.Do: it reports true for an
// unknown outcome (to be recorded as such), false for a call that was not
// made (nothing to record) or for a broken backend, which it also records
// as the reason to stop.
func (b *brake) unknown(err error) bool {
	switch {
	case errors.Is(err, ErrUnknown):
		return true
	case !errors.Is(err, ErrNotRun):
		b.first.CompareAndSwap(nil, &err)
	}
	return false
}

func (b *brake) stopped() bool { return b.first.Load() != nil }

func (b *brake) err() error {
	if e := b.first.Load(); e != nil {
		return *e
	}
	return nil
}

// TBWorkload describes a token-bucket recording: Clients goroutines each run
// OpsPerClient random operations over Keys keys.
type TBWorkload struct {
	Name         string
	Clients      int // goroutines, one client id each
	Keys         int // keys "k0" … ; 1 makes every operation contend on one bucket
	OpsPerClient int
	Limits       model.Limits
	Costs        []float64 // a take or retry_after picks one; must be valid for Limits
	// The shared clock starts at StartMs; before each operation a client
	// steps it by ClockStepMs with probability StepProb. Each client reads it
	// for every operation; with probability StaleProb it uses a reading up to
	// StaleSteps steps old instead (callers whose clock lags).
	StartMs     int64
	ClockStepMs int64
	StepProb    float64
	StaleProb   float64
	StaleSteps  int
	// Operation mix, as weights: take, peek, retry_after, reset, reset_all,
	// reclaim (with the workload's limits: T12), admit (a take that answers
	// a refusal's wait from the state that refused, T7).
	Mix [7]int
	// Yield calls runtime.Gosched between reading the clock and calling,
	// which widens the window in which a newer reading commits first.
	Yield bool
	// OwnKeys is the share of takes made on a key of their own
	// ("t<client>.<step>"), which no other operation touches: the store's
	// final state of that key says whether that one take applied, so a
	// durability check can judge it by its identity (TBDurability) rather
	// than by a count shared with other takes. 0 draws no more random
	// numbers, so a workload without it records what it always did.
	OwnKeys float64
}

// Validate reports a workload that cannot run, naming the field and the rule.
func (w TBWorkload) Validate() error {
	switch {
	case w.Clients < 1:
		return fmt.Errorf("linearizability: workload %s: clients %d must be >= 1", w.Name, w.Clients)
	case w.Keys < 1:
		return fmt.Errorf("linearizability: workload %s: keys %d must be >= 1", w.Name, w.Keys)
	case w.OpsPerClient < 1:
		return fmt.Errorf("linearizability: workload %s: ops per client %d must be >= 1", w.Name, w.OpsPerClient)
	case len(w.Costs) == 0:
		return fmt.Errorf("linearizability: workload %s: costs must not be empty", w.Name)
	case !(w.OwnKeys >= 0 && w.OwnKeys <= 1):
		return fmt.Errorf("linearizability: workload %s: own keys %v must be in [0, 1]", w.Name, w.OwnKeys)
	}
	total := 0
	for _, m := range w.Mix {
		if m < 0 {
			return fmt.Errorf("linearizability: workload %s: mix weight %d must be >= 0", w.Name, m)
		}
		total += m
	}
	if total == 0 {
		return fmt.Errorf("linearizability: workload %s: mix must have a positive weight", w.Name)
	}
	return nil
}

func pick(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// tbStep is one pre-drawn step of a client's script. The clock reading is
// taken when the step runs (minus StaleBy for a lagging caller), so only the
// reading is left to the schedule.
type tbStep struct {
	advance bool  // step the shared clock first
	staleBy int64 // ms subtracted from the reading
	in      model.TBInput[string]
}

func (w TBWorkload) script(r *rand.Rand, client int) []tbStep {
	kinds := [7]model.TBKind{model.TBTake, model.TBPeek, model.TBRetryAfter, model.TBReset, model.TBResetAll, model.TBReclaim, model.TBAdmit}
	keys := make([]string, w.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	steps := make([]tbStep, w.OpsPerClient)
	for i := range steps {
		s := &steps[i]
		s.advance = w.ClockStepMs != 0 && r.Float64() < w.StepProb
		if w.StaleSteps > 0 && r.Float64() < w.StaleProb {
			s.staleBy = int64(1+r.IntN(w.StaleSteps)) * w.ClockStepMs
		}
		s.in = model.TBInput[string]{
			Kind:   kinds[pick(r, w.Mix[:])],
			Key:    keys[r.IntN(w.Keys)],
			Limits: w.Limits,
			Cost:   w.Costs[r.IntN(len(w.Costs))],
		}
		if w.OwnKeys > 0 && s.in.Kind == model.TBTake && r.Float64() < w.OwnKeys {
			s.in.Key = OwnKey(client, i)
		}
	}
	return steps
}

// RecordTokenBucket runs w against b and returns the history, sorted by call
// stamp. The scripts are drawn from seed (client i from its own stream)
// before any client starts, so the loop that runs them (runClients, shared
// with Record) does little besides the operations; the interleaving is
// whatever the scheduler makes of them. b must be fresh: every key starts
// absent. An error from b other than ErrUnknown and ErrNotRun stops the
// recording and is returned (a panic in b as one wrapping ErrPanicked).
func RecordTokenBucket(w TBWorkload, b TBBackend, seed uint64) (TBHistory, error) {
	if err := w.Validate(); err != nil {
		return TBHistory{}, err
	}
	r := &recording[model.TBInput[string], model.TBOutput]{b: b}
	var clock atomic.Int64
	clock.Store(w.StartMs)
	scripts := make([][]tbStep, w.Clients)
	clockMarks := make([][]Mark, w.Clients)
	for c := range scripts {
		scripts[c] = w.script(rand.New(rand.NewPCG(seed, uint64(c))), c)
	}
	shareStamps(b, &r.ts)
	// input runs on client c's goroutine only, so clockMarks[c] needs no lock.
	input := func(c int, s tbStep) model.TBInput[string] {
		if s.advance {
			now := clock.Add(w.ClockStepMs)
			clockMarks[c] = append(clockMarks[c], Mark{Tag: "clock", At: r.ts.Stamp(), Text: fmt.Sprintf("clock → %dms", now)})
		}
		in := s.in
		in.NowMs = clock.Load() - s.staleBy
		if w.Yield {
			runtime.Gosched()
		}
		return in
	}
	ops, err := runClients(r, scripts, input)
	if err != nil {
		return TBHistory{}, err
	}
	h := TBHistory{Workload: w.Name, Seed: seed, Ops: ops}
	for c := range clockMarks {
		h.Marks = append(h.Marks, clockMarks[c]...)
	}
	sort.Slice(h.Marks, func(i, j int) bool { return h.Marks[i].At < h.Marks[j].At })
	return h, nil
}

// OwnKey is the key of its own that step of client's script takes from
// (TBWorkload.OwnKeys).
func OwnKey(client, step int) string { return fmt.Sprintf("t%d.%d", client, step) }

// StampSharer is a backend that stamps instants of its own (a fault's start
// and end, say) on the recording's time base: the recorders hand it the
// recording's Stamps before the first call, so those instants order
// against every operation's Call and Return.
type StampSharer interface {
	ShareStamps(*Stamps)
}

// An OmitMarker is a backend told which calls a recorder may leave out of
// its history: Omittable(client, true) before such a call of client's,
// Omittable(client, false) after it. (The credit recorder's race helper
// records only its winning and its last call: a sweep that freed nothing
// and a refused release change nothing.) A fault's clock must not take
// such a call for a write in flight (FaultClock).
type OmitMarker interface {
	Omittable(client int, on bool)
}

// omittable marks client's next calls through b as ones the history may
// leave out (on) or not.
func omittable(b any, client int, on bool) {
	if m, ok := b.(OmitMarker); ok {
		m.Omittable(client, on)
	}
}

func shareStamps(b any, ts *Stamps) {
	if s, ok := b.(StampSharer); ok {
		s.ShareStamps(ts)
	}
}

// recording is what every recorder of this package shares while it runs:
// the backend, the one time base of its stamps, and the brake that stops
// it. Every call of a recording goes through call, so every recorder treats
// an error or a panic of the backend the same way.
type recording[In, Out any] struct {
	b     Backend[In, Out]
	ts    Stamps
	broke brake
}

// call performs in for client, bracketed by two stamps, through
// doRecovering (a panic in b stops the recording with ErrPanicked). It
// returns the operation to record; ok is false when there is nothing to
// record: the backend did not make the call (ErrNotRun), or it broke and the
// recording is stopping (r.broke holds why). An operation whose outcome
// cannot be known comes back Unknown, with the zero Output and Return 0,
// or its Return stamp kept when the backend settled it (ErrSettled).
func (r *recording[In, Out]) call(client int, in In) (op Op[In, Out], ok bool) {
	op = Op[In, Out]{Client: client, Input: in}
	op.Call = r.ts.Stamp()
	out, err := doRecovering(r.b, client, in)
	op.Return = r.ts.Stamp()
	if err == nil {
		op.Output = out
		return op, true
	}
	if !r.broke.unknown(err) {
		return op, false
	}
	op.Unknown = true
	if op.Settled = errors.Is(err, ErrSettled); !op.Settled {
		op.Return = 0
	}
	return op, true
}

// runClients is the one client loop of the recorders: client c runs
// scripts[c] in order on its own goroutine, every goroutine waits at the
// same barrier before its first call, input turns each step into the call's
// input on that goroutine just before the call, and each call goes through
// r.call. A client stops at its script's end or when the recording is
// stopping. It returns every recorded operation sorted by call stamp, or the
// error that broke the backend (then nothing is returned: a history cut
// short by a broken backend is not one to check).
func runClients[S, In, Out any](r *recording[In, Out], scripts [][]S, input func(client int, step S) In) ([]Op[In, Out], error) {
	perClient := make([][]Op[In, Out], len(scripts))
	var done sync.WaitGroup
	start := barrier{n: int64(len(scripts))}
	for c := range scripts {
		done.Add(1)
		go func() {
			defer done.Done()
			ops := make([]Op[In, Out], 0, len(scripts[c]))
			start.wait()
			for _, s := range scripts[c] {
				if r.broke.stopped() {
					break
				}
				if op, ok := r.call(c, input(c, s)); ok {
					ops = append(ops, op)
				}
			}
			perClient[c] = ops
		}()
	}
	done.Wait()
	if err := r.broke.err(); err != nil {
		return nil, err
	}
	var h []Op[In, Out]
	for _, ops := range perClient {
		h = append(h, ops...)
	}
	sort.Slice(h, func(i, j int) bool { return h[i].Call < h[j].Call })
	return h, nil
}
