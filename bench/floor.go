package bench

import (
	"fmt"
	"sync/atomic"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/internal/seam"
	"github.com/tollgate/tollgate/model"
)

// The floor: what any design pays that writes shared memory once per
// operation, measured in the same run as the designs. A take of tollgate's
// token bucket is one load and one 128-bit compare-and-swap of its key's
// word; a reserve+release of its credit table two compare-and-swaps of one
// slot's word. Their floors do exactly that and nothing else — no refill
// arithmetic, no key lookup, no check — so a ratio to a floor is what the
// design's own work costs on top of moving the cache line:
//
//   - floor-add: one atomic add per operation on the operation's word (the
//     cheapest write: it cannot fail);
//   - floor-cas128: one 128-bit load and a compare-and-swap loop on the
//     word (seam.Pair: CMPXCHG16B on amd64, LDAXP/STLXP on arm64), retried
//     on a lost race as a take is;
//   - floor-cas128x2: two such compare-and-swaps per operation on one
//     word, the shape of reserve then release;
//   - floor-load128: one 128-bit snapshot load of the key's word and
//     nothing written, a refusal's floor (tollgate's refusal confirms
//     its decision on such a snapshot);
//   - floor-handoff: the full cycle's floor, a request carried to one owner
//     goroutine and a reply carried back, each by a channel operation that
//     wakes the goroutine waiting on it, and nothing else: no credit bound,
//     no table, no select. Every owner design pays these two wake-ups per
//     request when the owner is idle.
//
// In a token-bucket group the word is the key's (one word for keys=1,
// shared by every goroutine; 10,000 for keys=10000), each on a cache line
// of its own. The group FLOOR/line=own measures the same operations with
// each goroutine on a line of its own: the cost with nothing shared, the
// limit a design that shares nothing approaches.

// Floor design names, as they appear in results.
const (
	FloorAdd       = "floor-add"
	FloorCAS64     = "floor-cas64"
	FloorCAS128    = "floor-cas128"
	FloorCAS128x2  = "floor-cas128x2"
	FloorHandoff   = "floor-handoff"
	FloorLoad128   = "floor-load128"
	floorLineBytes = 64
)

// floorWord is one word on a cache line of its own.
type floorWord struct {
	pair seam.Pair
	n    atomic.Uint64
	_    [floorLineBytes - 8]byte
}

// casOnce raises the pair's lo by one with a load and a compare-and-swap,
// retried until it wins.
func (w *floorWord) casOnce() {
	for {
		lo, hi := w.pair.Load()
		if w.pair.CompareAndSwap(lo, hi, lo+1, hi) {
			return
		}
	}
}

// cas64Once raises n by one with a load and a 64-bit compare-and-swap.
func (w *floorWord) cas64Once() {
	for {
		v := w.n.Load()
		if w.n.CompareAndSwap(v, v+1) {
			return
		}
	}
}

// floorOp is one floor operation on a word.
type floorOp struct {
	name string
	do   func(*floorWord)
}

var floorOps = []floorOp{
	{FloorAdd, func(w *floorWord) { w.n.Add(1) }},
	{FloorCAS64, (*floorWord).cas64Once},
	{FloorCAS128, (*floorWord).casOnce},
}

// floorBuckets is a floor as a token-bucket design: key k's word takes
// the operation; every take is admitted, or with refuse every take is
// refused.
type floorBuckets struct {
	words  []floorWord
	do     func(*floorWord)
	refuse bool
}

func (f *floorBuckets) TakeAt(_ int64, key uint64, _ any) bool {
	f.do(&f.words[key%uint64(len(f.words))])
	return !f.refuse
}

// load128 reads the word's 128-bit snapshot and writes nothing. The load
// is an assembly call (VMOVDQA on amd64 with AVX), which the compiler
// does not remove for its results being unused.
func (w *floorWord) load128() { w.pair.Load() }

// floorTBDesigns are the floors measured in the token-bucket groups,
// beside the designs: the admitting ones' writes (floor-cas64 is the
// floor of a design whose whole bucket fits in one 64-bit word, as
// go.uber.org/ratelimit's does), the refusing one's read.
func floorTBDesigns() []TBDesign {
	var ds []TBDesign
	for _, op := range floorOps {
		ds = append(ds, TBDesign{Name: op.name, AdmitOnly: true, New: func(_ model.Limits, keys int) Bucketer {
			return &floorBuckets{words: make([]floorWord, max(keys, 1)), do: op.do}
		}})
	}
	ds = append(ds, TBDesign{Name: FloorLoad128, RefuseOnly: true, New: func(_ model.Limits, keys int) Bucketer {
		return &floorBuckets{words: make([]floorWord, max(keys, 1)), do: (*floorWord).load128, refuse: true}
	}})
	return ds
}

// floorCr is reserve+release's floor: two compare-and-swaps per operation
// on one word shared by every goroutine.
type floorCr struct{ w *floorWord }

func (f floorCr) Cycle() bool { f.w.casOnce(); f.w.casOnce(); return true }

func newFloorCr() func() Admitter {
	w := new(floorWord)
	return func() Admitter { return floorCr{w} }
}

// floorOwnGroup is the group of the floors on a line per goroutine.
const floorOwnGroup = "FLOOR/line=own"

// floorOwnCases measures each floor operation with each goroutine on a
// cache line of its own, at each of gs.
func floorOwnCases(gs []int) []Case {
	var cs []Case
	for _, g := range gs {
		for _, op := range floorOps {
			cs = append(cs, Case{
				Name: fmt.Sprintf("%s/g=%d/design=%s", floorOwnGroup, g, op.name), Group: floorOwnGroup, Design: op.name, G: g,
				Run: func(b B) {
					words := make([]floorWord, g)
					parallel(b, g, func(wk int) opFunc {
						w := &words[wk]
						return func(int) bool { op.do(w); return true }
					})
				},
			})
		}
	}
	return cs
}

// handoff is the full cycle's floor: callers send their request to the
// owner on an unbuffered channel, and the owner replies on the request's
// channel.
type handoff struct {
	box  chan *request
	done chan struct{}
}

func startHandoff() Server {
	h := &handoff{box: make(chan *request), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for req := range h.box {
			req.done <- struct{}{}
		}
	}()
	return h
}

func (h *handoff) Call(_ *credits.Holder, req *request) (fullWaits int) {
	h.box <- req
	<-req.done
	return 0 // no credit bound
}

func (h *handoff) Stop() {
	close(h.box) // no Call is running
	<-h.done
}
