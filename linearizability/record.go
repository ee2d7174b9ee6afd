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
	// reclaim (with the workload's limits: T12).
	Mix [6]int
	// Yield calls runtime.Gosched between reading the clock and calling,
	// which widens the window in which a newer reading commits first.
	Yield bool
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

func (w TBWorkload) script(r *rand.Rand) []tbStep {
	kinds := [6]model.TBKind{model.TBTake, model.TBPeek, model.TBRetryAfter, model.TBReset, model.TBResetAll, model.TBReclaim}
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
	}
	return steps
}

// RecordTokenBucket runs w against b and returns the history, sorted by call
// stamp. The scripts are drawn from seed (client i from its own stream)
// before any client starts, so the loop that runs them does little besides
// the operations; the interleaving is whatever the scheduler makes of them.
// b must be fresh: every key starts absent. An error from b other than
// ErrUnknown and ErrNotRun stops the recording and is returned.
func RecordTokenBucket(w TBWorkload, b TBBackend, seed uint64) (TBHistory, error) {
	if err := w.Validate(); err != nil {
		return TBHistory{}, err
	}
	var broke brake
	var ts Stamps
	var clock atomic.Int64
	clock.Store(w.StartMs)
	scripts := make([][]tbStep, w.Clients)
	perClient := make([][]TBOp, w.Clients)
	clockMarks := make([][]Mark, w.Clients)
	for c := range scripts {
		scripts[c] = w.script(rand.New(rand.NewPCG(seed, uint64(c))))
		perClient[c] = make([]TBOp, 0, w.OpsPerClient)
	}
	var done sync.WaitGroup
	start := barrier{n: int64(w.Clients)}
	for c := range w.Clients {
		done.Add(1)
		go func() {
			defer done.Done()
			ops := perClient[c]
			start.wait()
			for _, s := range scripts[c] {
				if broke.stopped() {
					break
				}
				if s.advance {
					now := clock.Add(w.ClockStepMs)
					clockMarks[c] = append(clockMarks[c], Mark{Tag: "clock", At: ts.Stamp(), Text: fmt.Sprintf("clock → %dms", now)})
				}
				in := s.in
				in.NowMs = clock.Load() - s.staleBy
				if w.Yield {
					runtime.Gosched()
				}
				call := ts.Stamp()
				out, err := doRecovering(b, c, in)
				ret := ts.Stamp()
				op := TBOp{Client: c, Input: in, Output: out, Call: call, Return: ret}
				if err != nil {
					if !broke.unknown(err) {
						continue
					}
					op.Output, op.Unknown, op.Return = model.TBOutput{}, true, 0
				}
				ops = append(ops, op)
			}
			perClient[c] = ops
		}()
	}
	done.Wait()
	if err := broke.err(); err != nil {
		return TBHistory{}, err
	}
	h := TBHistory{Workload: w.Name, Seed: seed}
	for c := range perClient {
		h.Ops = append(h.Ops, perClient[c]...)
		h.Marks = append(h.Marks, clockMarks[c]...)
	}
	sort.Slice(h.Ops, func(i, j int) bool { return h.Ops[i].Call < h.Ops[j].Call })
	sort.Slice(h.Marks, func(i, j int) bool { return h.Marks[i].At < h.Marks[j].At })
	return h, nil
}
