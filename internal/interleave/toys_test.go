package interleave

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// A toy is a small lock-free (or not) program on internal/seam/hooked for
// testing the controller without the tables.
type toy struct {
	name string
	n    int
	// build allocates the toy's words (in direct mode) and fills r.
	build func(c *controller, r *toyRun)
	cur   *toyRun
}

type toyRun struct {
	bodies  []func()
	outs    [][]string // every thread's outputs
	check   func() *Failure
	summary func() string
}

func (p *toy) threads() int { return p.n }

func (p *toy) begin(c *controller) []func() {
	r := &toyRun{outs: make([][]string, p.n)}
	p.build(c, r)
	p.cur = r
	return r.bodies
}

func (p *toy) end(c *controller, outcome bool) (*Failure, string) {
	var f *Failure
	if p.cur.check != nil {
		f = p.cur.check()
	}
	if !outcome {
		return f, ""
	}
	var b strings.Builder
	for t, o := range p.cur.outs {
		fmt.Fprintf(&b, "T%d%v ", t, o)
	}
	if p.cur.summary != nil {
		b.WriteString(p.cur.summary())
	}
	return f, b.String()
}

func (p *toy) tracer() tracer { return nil }

// counterToy: n threads each increment a shared counter incs times. With
// cas false an increment is a load then a store (a lost update); with cas
// true it is a compare-and-swap loop (correct).
func counterToy(n, incs int, cas bool) *toy {
	name := "load-store counter"
	if cas {
		name = "cas counter"
	}
	return &toy{name: name, n: n, build: func(c *controller, r *toyRun) {
		x := new(hooked.Pointer[int])
		zero := 0
		x.Store(&zero)
		for t := 0; t < n; t++ {
			r.bodies = append(r.bodies, func() {
				for k := 0; k < incs; k++ {
					c.operation(liveNone, func() {
						for {
							old := x.Load()
							v := *old + 1
							if !cas {
								x.Store(&v)
								r.outs[t] = append(r.outs[t], fmt.Sprint(v))
								return
							}
							if x.CompareAndSwap(old, &v) {
								r.outs[t] = append(r.outs[t], fmt.Sprint(v))
								return
							}
						}
					})
				}
			})
		}
		r.check = func() *Failure {
			if got := *x.Load(); got != n*incs {
				return &Failure{Kind: KindInvariant, Thread: -1, Detail: fmt.Sprintf("counter is %d after %d increments: lost update", got, n*incs)}
			}
			return nil
		}
		r.summary = func() string { return fmt.Sprint("x=", *x.Load()) }
	}}
}

// spinToy: thread 0 waits for thread 1's flag by spinning on it; it is not
// lock-free (thread 0 alone never completes), so the explorer must report a
// progress violation.
func spinToy() *toy {
	return &toy{name: "spin-wait", n: 2, build: func(c *controller, r *toyRun) {
		flag := new(hooked.Bool)
		r.bodies = []func(){
			func() {
				c.operation(liveNone, func() {
					for !flag.Load() {
					}
				})
			},
			func() { c.operation(liveNone, func() { flag.Store(true) }) },
		}
	}}
}

// panicToy: thread 0 panics if it reads the value thread 1 stored, which
// takes a preemption-free schedule where thread 1 runs first.
func panicToy() *toy {
	return &toy{name: "panics", n: 2, build: func(c *controller, r *toyRun) {
		x := new(hooked.Bool)
		r.bodies = []func(){
			func() {
				c.operation(liveNone, func() {
					if x.Load() {
						toyBoom()
					}
				})
			},
			func() { c.operation(liveNone, func() { x.Store(true) }) },
		}
	}}
}

func toyBoom() { panic("boom: thread 0 saw the flag") }

// sweepToy is the holder-liveness race of the credit table in miniature:
// two reserved rows of one holder, an enqueue into one, an exit of the
// holder and two sweeps over both rows,
// shaped as impl/credits shapes them (sweep loads the row, then reads the
// holder's liveness, then compares-and-swaps). With hookedFlag the
// liveness flag is a seam word like any other, so its store and load are
// switch points; without, it is a plain atomic as in the explored copies
// (holders are impl/credits's), the exit is an operation of its own and
// sweeps and exits are ordered by the controller's liveness conflict.
func sweepToy(hookedFlag bool) *toy {
	name := "sweep (liveness glued)"
	if hookedFlag {
		name = "sweep (liveness a switch point)"
	}
	type row struct {
		enqueued bool
	}
	return &toy{name: name, n: 3, build: func(c *controller, r *toyRun) {
		slot, other := new(hooked.Pointer[row]), new(hooked.Pointer[row])
		var plain atomic.Bool
		flag := new(hooked.Bool)
		alive := func() bool {
			if hookedFlag {
				return !flag.Load()
			}
			return !plain.Load()
		}
		exit := func() {
			if hookedFlag {
				flag.Store(true)
			} else {
				plain.Store(true)
			}
		}
		slot.Store(&row{})
		other.Store(&row{}) // the same holder's second reservation
		live := func(k int8) int8 {
			if hookedFlag {
				return liveNone
			}
			return k
		}
		r.bodies = []func(){
			func() { // the holder: enqueue
				c.operation(liveNone, func() {
					for {
						old := slot.Load()
						if old == nil || old.enqueued {
							r.outs[0] = append(r.outs[0], "lost")
							return
						}
						if slot.CompareAndSwap(old, &row{enqueued: true}) {
							r.outs[0] = append(r.outs[0], "ok")
							return
						}
					}
				})
			},
			func() { // the world: the holder exits
				c.operation(live(liveWrite), exit)
				r.outs[1] = append(r.outs[1], "exited")
			},
			func() { // the sweeper, twice, over both rows
				for k := 0; k < 2; k++ {
					c.operation(live(liveRead), func() {
						freed := 0
						for _, w := range []*hooked.Pointer[row]{slot, other} {
							old := w.Load()
							if old == nil || old.enqueued || alive() {
								continue
							}
							if w.CompareAndSwap(old, nil) {
								freed++
							}
						}
						r.outs[2] = append(r.outs[2], fmt.Sprint(freed))
					})
				}
			},
		}
		r.summary = func() string {
			switch v := slot.Load(); {
			case v == nil:
				return "free"
			case v.enqueued:
				return "enqueued"
			}
			return "reserved"
		}
	}}
}

// TestRandomStrategiesSeeNondeterminism: a toy whose second thread takes
// one step or two, alternately from run to run (as code that draws a
// random seed would), is reported as not deterministic by PCT and the
// random walk (DFS sees it when a replayed prefix diverges).
func TestRandomStrategiesSeeNondeterminism(t *testing.T) {
	var flip atomic.Uint32
	p := &toy{name: "coin", n: 2, build: func(c *controller, r *toyRun) {
		x := new(hooked.Uint64)
		r.bodies = []func(){
			func() { c.operation(liveNone, func() { x.Add(1) }) },
			func() {
				c.operation(liveNone, func() {
					if flip.Add(1)%2 == 0 {
						x.Load()
					}
					x.Add(1)
				})
			},
		}
	}}
	for _, s := range []Strategy{PCT, Random} {
		r := exploreProgram(p, "coin", Options{Strategy: s, Bound: 1, Budget: Budget{Schedules: 100}})
		if r.Err == nil || !strings.Contains(r.Err.Error(), "not deterministic") {
			t.Errorf("%s: want the code reported as not deterministic, got %s", s, r.Summary())
		}
	}
}
