package bench

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/model"
)

// Workload is a token bucket workload.
type Workload string

// The workloads. Admit and Refuse use an injected, fixed clock; Mixed reads
// the real clock (the same reading for every design) and admits a few
// percent of takes, so it is the one where fairness means something.
const (
	Admit  Workload = "admit"  // every take succeeds: capacity 1e15 tokens
	Refuse Workload = "refuse" // every take is refused: the bucket is empty
	Mixed  Workload = "mixed"  // 1e6/keys tokens per second per key, capacity one ms of refill
)

// admitNowMs is the injected clock reading of the Admit and Refuse
// workloads.
const admitNowMs = 1000

// Limits returns the bucket limits of workload w over keys keys.
func (w Workload) Limits(keys int) model.Limits {
	switch w {
	case Admit:
		return model.Limits{Capacity: 1e15, RefillPerSecond: 1}
	case Refuse:
		return model.Limits{Capacity: 1, RefillPerSecond: 1e-9}
	case Mixed:
		// One millisecond of refill as burst (at least 10): about 1e6
		// admissions per second over all keys, a few percent of takes.
		rate := 1e6 / float64(keys)
		return model.Limits{Capacity: max(10, rate/1000), RefillPerSecond: rate}
	}
	panic(fmt.Sprintf("bench: unknown workload %q", w))
}

// keyRing is the number of precomputed keys each goroutine cycles through.
const keyRing = 4096

// keySeq returns goroutine w's key sequence over keys distinct keys, with
// the keys boxed once for the designs that look them up in a sync.Map.
func keySeq(w, keys int) ([]uint64, []any) {
	ks := make([]uint64, keyRing)
	bs := make([]any, keyRing)
	x := uint64(w)*0x9e3779b97f4a7c15 + 1
	for i := range ks {
		// splitmix64
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		ks[i] = z % uint64(keys)
		bs[i] = ks[i]
	}
	return ks, bs
}

var clockStart = time.Now()

// realMs is the real clock of the Mixed workload, in milliseconds.
func realMs() int64 { return int64(time.Since(clockStart) / time.Millisecond) }

// retrier is a design that can count its lost compare-and-swap races.
type retrier interface{ casRetries() uint64 }

func (d *tollgateTB) casRetries() uint64 { return d.t.CASRetries() }

// RunTB measures design d on workload w over keys keys with g goroutines.
// Every key is taken once (Refuse and Mixed: until refused) before timing,
// so the run measures steady state, not first insertion.
func RunTB(b B, d TBDesign, w Workload, keys, g int) {
	lim := w.Limits(keys)
	inst := d.New(lim, keys)
	setupTB(inst, w, keys)
	var before uint64
	r, counting := inst.(retrier)
	if counting {
		before = r.casRetries()
	}
	st := parallel(b, g, tbOps(inst, w, keys))
	if countsRetries && counting {
		b.ReportMetric(float64(r.casRetries()-before)/float64(b.N()), "casretries/op")
	}
	if w == Admit {
		if err := conserved(inst, lim, keys, st.admitted); err != nil {
			fail(b, "%s/%s/keys=%d/g=%d with b.N=%d: %v", d.Name, w, keys, g, b.N(), err)
		}
	}
}

// tbOps builds each goroutine's operation for workload w.
func tbOps(inst Bucketer, w Workload, keys int) func(wk int) opFunc {
	return func(wk int) opFunc {
		ks, bs := keySeq(wk, keys)
		if w == Mixed {
			return func(i int) bool { return inst.TakeAt(realMs(), ks[i%keyRing], bs[i%keyRing]) }
		}
		return func(i int) bool { return inst.TakeAt(admitNowMs, ks[i%keyRing], bs[i%keyRing]) }
	}
}

// tokenCounter is a design that can report a bucket's tokens without
// taking any.
type tokenCounter interface {
	tokens(nowMs int64, key uint64) float64
}

func (d *tollgateTB) tokens(nowMs int64, key uint64) float64 {
	v, err := d.t.PeekAt(nowMs, key, d.lim)
	if err != nil {
		panic(fmt.Sprintf("bench: tollgate rejected valid limits: %v", err))
	}
	return v
}

func (d *mutexMap) tokens(nowMs int64, key uint64) float64 {
	v, ok := d.m.Load(key)
	if !ok {
		return d.lim.Capacity
	}
	mb := v.(*mutexBucket)
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return model.Refill(mb.b, d.lim, nowMs)
}

func (d *sharded) tokens(nowMs int64, key uint64) float64 {
	s := &d.shards[maphash.Comparable(d.seed, key)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	return model.Refill(s.m[key], d.lim, nowMs)
}

// conserved checks, after an Admit run, that every admitted take removed
// its token (T1) and none was lost to a concurrent one: with the clock
// fixed nothing refills, so the tokens missing from all buckets must equal
// the takes admitted, counting the one setup take per key. Designs that
// cannot report tokens are not checked.
func conserved(inst Bucketer, lim model.Limits, keys, admitted int) error {
	tc, ok := inst.(tokenCounter)
	if !ok {
		return nil
	}
	missing := 0.0
	for k := range uint64(keys) {
		missing += lim.Capacity - tc.tokens(admitNowMs, k)
	}
	if want := float64(keys + admitted); missing != want {
		return fmt.Errorf("bench: T1 lost update: the buckets lack %v tokens but %v takes were admitted (%d in setup)", missing, want, keys)
	}
	return nil
}

// setupTB takes once from every key (Refuse and Mixed: until refused, at
// most 100 times), so a run measures buckets that exist.
func setupTB(inst Bucketer, w Workload, keys int) {
	for k := range uint64(keys) {
		if w == Admit {
			inst.TakeAt(admitNowMs, k, k)
			continue
		}
		now := int64(admitNowMs)
		if w == Mixed {
			now = realMs()
		}
		for n := 0; n < 100 && inst.TakeAt(now, k, k); n++ {
		}
	}
}

func (d tollgateCr) casRetries() uint64 { return d.t.CASRetries() }

// RunCr measures reserve+release of design d with g goroutines.
func RunCr(b B, d CrDesign, g int) {
	caller := d.New()
	var probe Admitter
	parallel(b, g, func(int) opFunc {
		a := caller()
		probe = a
		return func(int) bool { return a.Cycle() }
	})
	if r, ok := probe.(retrier); ok && countsRetries {
		b.ReportMetric(float64(r.casRetries())/float64(b.N()), "casretries/op")
	}
	if c, ok := probe.(checker); ok {
		if err := c.check(); err != nil {
			fail(b, "%s/g=%d with b.N=%d: %v", d.Name, g, b.N(), err)
		}
	}
}

// checker is a design that can check its own state after a run.
type checker interface{ check() error }

func (o *tableOwner) casRetries() uint64 { return o.t.CASRetries() }

// paddedCount is a count on a cache line of its own.
type paddedCount struct {
	n int
	_ [56]byte
}

// RunCycle measures the full request cycle of design d with g callers and
// one owner: an operation is one request served and replied to.
func RunCycle(b B, d CycleDesign, g int) {
	s := d.Start()
	defer s.Stop()
	waits := make([]paddedCount, g) // one line per caller: no shared write
	parallel(b, g, func(w int) opFunc {
		h := credits.NewHolder()
		req := &request{done: make(chan struct{}, 1)}
		return func(int) bool { waits[w].n += s.Call(h, req); return true }
	})
	total := 0
	for _, c := range waits {
		total += c.n
	}
	b.ReportMetric(float64(total)/float64(b.N()), "fullwaits/op")
	if r, ok := s.(retrier); ok && countsRetries {
		b.ReportMetric(float64(r.casRetries())/float64(b.N()), "casretries/op")
	}
}

// Case is one benchmark of the suite.
type Case struct {
	// Name is the sub-benchmark path, in benchstat's key=value form, e.g.
	// "TB/work=admit/keys=1/g=8/design=tollgate".
	Name string
	// Group is Name without the goroutine count and design: the cases a
	// ratio row and a plot compare.
	Group  string
	Design string
	G      int
	Run    func(b B)
}

// Goroutines is the full list of goroutine counts.
var Goroutines = []int{1, 2, 4, 8, 16, 64}

// Suite lists the cases: the quick set by default, the whole matrix with
// full.
func Suite(full bool) []Case {
	gs, keySets := []int{1, 2, 8, 64}, []int{1, 10000}
	works := []Workload{Admit, Refuse, Mixed}
	if full {
		gs, keySets = Goroutines, []int{1, 16, 10000}
	}
	var cs []Case
	for _, w := range works {
		for _, keys := range keySets {
			if !full && keys != 1 && w != Admit {
				continue // quick: many keys only for the admitting workload
			}
			group := fmt.Sprintf("TB/work=%s/keys=%d", w, keys)
			for _, g := range gs {
				for _, d := range append(TBDesigns(), floorTBDesigns()...) {
					if d.AdmitOnly && w != Admit || d.RefuseOnly && w != Refuse || d.Name == XRateSingle && keys != 1 {
						continue
					}
					cs = append(cs, Case{
						Name: fmt.Sprintf("%s/g=%d/design=%s", group, g, d.Name), Group: group, Design: d.Name, G: g,
						Run: func(b B) { RunTB(b, d, w, keys, g) },
					})
				}
			}
		}
	}
	for _, g := range gs {
		for _, d := range append(CrDesigns(), CrDesign{Name: FloorCAS128x2, New: newFloorCr}) {
			cs = append(cs, Case{
				Name: fmt.Sprintf("CR/work=reserve-release/g=%d/design=%s", g, d.Name), Group: "CR/work=reserve-release", Design: d.Name, G: g,
				Run: func(b B) { RunCr(b, d, g) },
			})
		}
	}
	for _, g := range gs {
		for _, d := range CycleDesigns() {
			cs = append(cs, Case{
				Name: fmt.Sprintf("CR/work=cycle/g=%d/design=%s", g, d.Name), Group: "CR/work=cycle", Design: d.Name, G: g,
				Run: func(b B) { RunCycle(b, d, g) },
			})
		}
	}
	return append(cs, floorOwnCases(gs)...)
}

// Env describes the machine a run measured, for the results' header.
func Env() string {
	return fmt.Sprintf("goos: %s\ngoarch: %s\ncpus: %d\ngomaxprocs: %d\ngo: %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
}

// fail fails b with a message that says what broke.
func fail(b B, format string, args ...any) {
	b.Fatal(fmt.Sprintf(format, args...))
}
