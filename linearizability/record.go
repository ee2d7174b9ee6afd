package linearizability

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/sut"
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
	// Operation mix, as weights: take, peek, retry_after, reset, reset_all.
	Mix [5]int
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
	kinds := [5]model.TBKind{model.TBTake, model.TBPeek, model.TBRetryAfter, model.TBReset, model.TBResetAll}
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

// RecordTokenBucket runs w against a fresh table carrying faults and returns
// the history, sorted by call stamp. The scripts are drawn from seed (client
// i from its own stream) before any client starts, so the loop that runs
// them does little besides the operations; the interleaving is whatever the
// scheduler makes of them.
func RecordTokenBucket(w TBWorkload, faults fault.Fault, seed uint64) (TBHistory, error) {
	if err := w.Validate(); err != nil {
		return TBHistory{}, err
	}
	table := sut.NewTokenBucket[string](faults)
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
				out := table.Apply(in)
				ret := ts.Stamp()
				ops = append(ops, TBOp{Client: c, Input: in, Output: out, Call: call, Return: ret})
			}
			perClient[c] = ops
		}()
	}
	done.Wait()
	h := TBHistory{Workload: w.Name, Seed: seed}
	for c := range perClient {
		h.Ops = append(h.Ops, perClient[c]...)
		h.Marks = append(h.Marks, clockMarks[c]...)
	}
	sort.Slice(h.Ops, func(i, j int) bool { return h.Ops[i].Call < h.Ops[j].Call })
	sort.Slice(h.Marks, func(i, j int) bool { return h.Marks[i].At < h.Marks[j].At })
	return h, nil
}

// Credit-table holder actions (CrWorkload.Mix), in order.
const (
	ActEnqueue        = iota // enqueue a payload for the owner
	ActRelease               // give the reservation back
	ActExitHolding           // the holder dies holding its reservation; a sweep frees it
	ActExitMidEnqueue        // the holder dies while its enqueue is in flight
	ActStaleToken            // reuse the previous reservation's token, then release
	ActSweepRace             // the holder dies; a sweep spins against its enqueue (still under way) for the row
	ActReleaseRace           // a second thread of the holder spins release against its enqueue
	ActForeignRelease        // try to release the latest reservation of another holder, then release
	numActs
)

// CrWorkload describes a credit-table recording.
//
// Holders goroutines each run Rounds rounds: reserve a slot of one of
// Classes, hold it for up to Hold scheduler yields, then do one action drawn
// from Mix. A holder that dies starts again as a new holder (a new
// HolderID). An exit in the middle of an enqueue is made by a second
// goroutine of that holder (its own client id) while the enqueue runs, and
// with probability UnknownProb the enqueue's answer is dropped (recorded as
// unknown), as if the caller died before it arrived.
//
// Owners goroutines poll the table's Enqueued list (not recorded: not
// atomic) and take and finish what they find, racing each other; with
// probability DoubleFinishProb they finish twice (C8). Sweepers goroutines
// sweep whenever a holder has exited since their last sweep, racing the
// enqueues; a holder that died waits for such a sweep before it starts again
// as a new holder (awaitSweep). If CloseAfter > 0, the first owner closes the table (the owner
// dies) after finishing that many rows.
type CrWorkload struct {
	Name             string
	Holders          int
	Rounds           int
	Classes          []model.Class
	Hold             int
	Mix              [numActs]int
	UnknownProb      float64
	Owners           int
	Sweepers         int
	DoubleFinishProb float64
	CloseAfter       int
}

// Validate reports a workload that cannot run, naming the field and the rule.
func (w CrWorkload) Validate() error {
	bad := func(field string, v any, rule string) error {
		return fmt.Errorf("linearizability: workload %s: %s %v %s", w.Name, field, v, rule)
	}
	switch {
	case w.Holders < 1:
		return bad("holders", w.Holders, "must be >= 1")
	case w.Rounds < 1:
		return bad("rounds", w.Rounds, "must be >= 1")
	case len(w.Classes) == 0:
		return bad("classes", w.Classes, "must not be empty")
	case w.Hold < 0:
		return bad("hold", w.Hold, "must be >= 0")
	case w.Owners < 0 || w.Sweepers < 0:
		return bad("owners/sweepers", []int{w.Owners, w.Sweepers}, "must be >= 0")
	}
	for _, c := range w.Classes {
		if c != model.General && c != model.Internal {
			return bad("classes", c, "must hold only general and internal")
		}
	}
	total := 0
	for _, m := range w.Mix {
		if m < 0 {
			return bad("mix weight", m, "must be >= 0")
		}
		total += m
	}
	if total == 0 {
		return bad("mix", w.Mix, "must have a positive weight")
	}
	return nil
}

// crRecorder is one credit-table recording in progress.
type crRecorder struct {
	table   *sut.Credits[Payload]
	ts      Stamps
	holders atomic.Uint64                          // last HolderID handed out
	exits   atomic.Int64                           // exits so far (sweepers sweep when it moves)
	swept   atomic.Int64                           // exits counted before the start of the latest finished sweep
	latest  atomic.Pointer[model.CrInput[Payload]] // the latest reservation: its holder and token
	mu      sync.Mutex
	ops     []CrOp
}

// do applies in for client and records it; unknown drops the answer.
func (r *crRecorder) do(client int, in model.CrInput[Payload], unknown bool) model.CrOutput[Payload] {
	call := r.ts.Stamp()
	out := r.table.Apply(in)
	ret := r.ts.Stamp()
	op := CrOp{Client: client, Input: in, Output: out, Call: call, Return: ret}
	if unknown {
		op.Output, op.Unknown, op.Return = model.CrOutput[Payload]{}, true, 0
	}
	r.record(op)
	return out
}

func (r *crRecorder) record(op CrOp) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

func (r *crRecorder) newHolder() model.HolderID { return model.HolderID(r.holders.Add(1)) }

func (r *crRecorder) exit(client int, h model.HolderID) {
	r.do(client, model.CrInput[Payload]{Kind: model.CrExit, Holder: h}, false)
	r.exits.Add(1)
}

// awaitSweep waits, when the workload has sweepers, until a sweep has
// started and finished since every exit so far. This bounds the reserved
// rows of exited holders waiting for a sweep to about one per holder: the
// checker does not know which rows a sweep freed, only how many, so a sweep
// freeing k of d candidate rows leaves C(d, k) possible states, and with
// dozens of candidates the search does not finish.
func (r *crRecorder) awaitSweep(w CrWorkload) {
	if w.Sweepers == 0 {
		return
	}
	for e := r.exits.Load(); r.swept.Load() < e; {
		runtime.Gosched()
	}
}

func (r *crRecorder) holder(w CrWorkload, c int, rng *rand.Rand) {
	killer := w.Holders + c
	h := r.newHolder()
	var prev model.Token
	for round := range w.Rounds {
		class := w.Classes[rng.IntN(len(w.Classes))]
		res := r.do(c, model.CrInput[Payload]{Kind: model.CrReserve, Holder: h, Class: class}, false)
		if res.Result != model.OK {
			runtime.Gosched()
			continue
		}
		tok := res.Token
		act := pick(rng, w.Mix[:])
		if l := r.latest.Swap(&model.CrInput[Payload]{Holder: h, Token: tok}); act == ActForeignRelease && l != nil && l.Holder != h {
			// Right away, while the other holder may still hold it (C9).
			r.do(c, model.CrInput[Payload]{Kind: model.CrRelease, Holder: h, Token: l.Token}, false)
		}
		for range rng.IntN(w.Hold + 1) {
			runtime.Gosched()
		}
		enqueue := model.CrInput[Payload]{Kind: model.CrEnqueue, Holder: h, Token: tok,
			Payload: fmt.Sprintf("c%d.r%d", c, round), NowMs: int64(round)}
		release := model.CrInput[Payload]{Kind: model.CrRelease, Holder: h, Token: tok}
		switch act {
		case ActEnqueue:
			r.do(c, enqueue, false)
		case ActRelease:
			r.do(c, release, false)
		case ActExitHolding:
			r.exit(c, h)
			r.awaitSweep(w)
			h = r.newHolder()
		case ActExitMidEnqueue:
			var wg sync.WaitGroup
			wg.Add(1)
			go func(h model.HolderID) {
				defer wg.Done()
				r.exit(killer, h)
			}(h)
			r.do(c, enqueue, rng.Float64() < w.UnknownProb)
			wg.Wait()
			r.awaitSweep(w)
			h = r.newHolder()
		case ActSweepRace:
			r.race(c, killer, enqueue, true)
			r.awaitSweep(w)
			h = r.newHolder()
		case ActReleaseRace:
			r.race(c, killer, enqueue, false)
		case ActForeignRelease:
			r.do(c, release, false)
		case ActStaleToken:
			if prev.Epoch != 0 {
				stale := enqueue
				stale.Token = prev
				r.do(c, stale, false)
			}
			r.do(c, release, false)
		}
		prev = tok
	}
}

// race runs enqueue on this goroutine against a second goroutine (client
// helper) that hammers the same row: with sweep, the helper first records
// the holder's exit, then sweeps until a sweep frees a row or the enqueue has
// returned; otherwise it releases the token until a release frees it or the
// enqueue has returned. Exactly one of the two may win the row (C5, C9,
// C10). Only the helper's winning call and its last call are recorded: a
// sweep that freed nothing and a refused release change nothing in the
// model, so leaving the others out loses nothing, and it keeps the history
// short.
func (r *crRecorder) race(client, helper int, enqueue model.CrInput[Payload], sweep bool) {
	var ready, done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if sweep {
			r.exit(helper, enqueue.Holder)
		}
		in := model.CrInput[Payload]{Kind: model.CrRelease, Holder: enqueue.Holder, Token: enqueue.Token}
		if sweep {
			in = model.CrInput[Payload]{Kind: model.CrSweep}
		}
		ready.Store(true)
		for {
			last := done.Load()
			call := r.ts.Stamp()
			out := r.table.Apply(in)
			ret := r.ts.Stamp()
			if won := out.Count > 0 || (!sweep && out.OK); won || last {
				r.record(CrOp{Client: helper, Input: in, Output: out, Call: call, Return: ret})
				if won {
					return
				}
			}
			if last {
				return
			}
		}
	}()
	for !ready.Load() {
		runtime.Gosched()
	}
	r.do(client, enqueue, false)
	done.Store(true)
	wg.Wait()
}

func (r *crRecorder) owner(w CrWorkload, c int, rng *rand.Rand, stop *atomic.Bool, closer bool) {
	finished := 0
	for {
		stopping := stop.Load()
		entries := r.table.Table.Enqueued()
		for _, e := range entries {
			tok := model.Token{Slot: e.Token.Slot, Epoch: e.Token.Epoch}
			got := r.do(c, model.CrInput[Payload]{Kind: model.CrTake, Token: tok}, false)
			if !got.OK {
				continue
			}
			runtime.Gosched()
			fin := model.CrInput[Payload]{Kind: model.CrFinish, Token: tok}
			r.do(c, fin, false)
			if rng.Float64() < w.DoubleFinishProb {
				r.do(c, fin, false)
			}
			finished++
			if closer && w.CloseAfter > 0 && finished == w.CloseAfter {
				r.do(c, model.CrInput[Payload]{Kind: model.CrClose}, false)
				return
			}
		}
		if stopping && len(entries) == 0 {
			return
		}
		runtime.Gosched()
	}
}

func (r *crRecorder) sweeper(c int, stop *atomic.Bool) {
	seen := int64(0)
	for {
		stopping := stop.Load()
		if n := r.exits.Load(); n != seen {
			seen = n
			r.do(c, model.CrInput[Payload]{Kind: model.CrSweep}, false)
			r.swept.Store(n)
			continue
		}
		if stopping {
			return
		}
		runtime.Gosched()
	}
}

// RecordCredits runs w against a fresh credit table carrying faults and
// returns the history, sorted by call stamp.
func RecordCredits(w CrWorkload, faults fault.Fault, seed uint64) (CrHistory, error) {
	if err := w.Validate(); err != nil {
		return CrHistory{}, err
	}
	r := &crRecorder{table: sut.NewCredits[Payload](faults)}
	var stop atomic.Bool
	var holders, others sync.WaitGroup
	start := barrier{n: int64(w.Holders + w.Owners + w.Sweepers)}
	for c := range w.Holders {
		holders.Add(1)
		go func() {
			defer holders.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			start.wait()
			r.holder(w, c, rng)
		}()
	}
	base := 2 * w.Holders
	for i := range w.Owners {
		others.Add(1)
		go func() {
			defer others.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(base+i)))
			start.wait()
			r.owner(w, base+i, rng, &stop, i == 0)
		}()
	}
	for i := range w.Sweepers {
		others.Add(1)
		go func() {
			defer others.Done()
			start.wait()
			r.sweeper(base+w.Owners+i, &stop)
		}()
	}
	holders.Wait()
	stop.Store(true)
	others.Wait()
	h := CrHistory{Workload: w.Name, Seed: seed, Ops: r.ops}
	sort.Slice(h.Ops, func(i, j int) bool { return h.Ops[i].Call < h.Ops[j].Call })
	return h, nil
}
