package interleave

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// pairCounterToy: n threads each count both halves of a hooked.Pair up by
// one, incs times. With loOnly false an increment is a Load and a 128-bit
// CompareAndSwap, retried (correct). With loOnly true it is the hazard of
// comparing one half only: a CompareAndSwapLo claims the increment and a
// Store then writes both halves from what the thread loaded, so a Store that
// lands after another thread's increment puts back a stale hi (a lost
// update of hi). A lo thread, when withLo is set, adds 10 to lo alone by
// LoadLo and CompareAndSwapLo, which must never be lost either. Every thread
// answers the value it swapped from, so the outcomes tell the orders of the
// writes apart.
func pairCounterToy(n, incs int, loOnly, withLo bool) *toy {
	name := "pair cas counter"
	if loOnly {
		name = "pair lo-cas-then-store counter"
	}
	threads := n
	if withLo {
		threads++
		name += " with a lo adder"
	}
	return &toy{name: name, n: threads, build: func(c *controller, r *toyRun) {
		p := new(hooked.Pair)
		for t := 0; t < n; t++ {
			r.bodies = append(r.bodies, func() {
				for k := 0; k < incs; k++ {
					c.operation(liveNone, func() {
						for {
							lo, hi := p.Load()
							if loOnly {
								if p.CompareAndSwapLo(lo, lo+1) {
									p.Store(lo+1, hi+1)
									r.outs[t] = append(r.outs[t], fmt.Sprintf("(%d,%d)", lo, hi))
									return
								}
								continue
							}
							if p.CompareAndSwap(lo, hi, lo+1, hi+1) {
								r.outs[t] = append(r.outs[t], fmt.Sprintf("(%d,%d)", lo, hi))
								return
							}
						}
					})
				}
			})
		}
		if withLo {
			r.bodies = append(r.bodies, func() {
				c.operation(liveNone, func() {
					for {
						lo := p.LoadLo()
						if p.CompareAndSwapLo(lo, lo+10) {
							r.outs[n] = append(r.outs[n], fmt.Sprint(lo))
							return
						}
					}
				})
			})
		}
		r.check = func() *Failure {
			lo, hi := p.Load()
			wantLo, want := uint64(n*incs), uint64(n*incs)
			if withLo {
				wantLo += 10
			}
			if lo != wantLo || hi != want {
				return &Failure{Kind: KindInvariant, Thread: -1, Detail: fmt.Sprintf("pair is (%d, %d) after %d increments, want (%d, %d): lost update", lo, hi, n*incs, wantLo, want)}
			}
			return nil
		}
		r.summary = func() string {
			lo, hi := p.Load()
			return fmt.Sprintf("p=(%d,%d)", lo, hi)
		}
	}}
}

// pairHalvesToy: thread 0 reads the pair three ways (Load, LoadLo, a
// failing CompareAndSwap) while thread 1 writes it two ways (CompareAndSwapLo,
// then a 128-bit CompareAndSwap). What thread 0 sees depends on where thread
// 1's writes fall between its reads, so the outcomes tell every order of
// conflicting accesses apart: a reduction that took a write of one half for
// a read, or the lo half for another word, would lose some.
func pairHalvesToy() *toy {
	return &toy{name: "pair halves", n: 2, build: func(c *controller, r *toyRun) {
		p := new(hooked.Pair)
		r.bodies = []func(){
			func() {
				c.operation(liveNone, func() {
					lo, hi := p.Load()
					lo2 := p.LoadLo()
					failed := !p.CompareAndSwap(10, 0, 0, 0)
					r.outs[0] = append(r.outs[0], fmt.Sprintf("(%d,%d) %d %v", lo, hi, lo2, failed))
				})
			},
			func() {
				c.operation(liveNone, func() {
					a := p.CompareAndSwapLo(0, 10)
					b := p.CompareAndSwap(10, 0, 10, 5)
					r.outs[1] = append(r.outs[1], fmt.Sprint(a, b))
				})
			},
		}
		r.summary = func() string {
			lo, hi := p.Load()
			return fmt.Sprintf("p=(%d,%d)", lo, hi)
		}
	}}
}

// TestPairLostUpdateFound: the explorer finds the lost update of the
// one-half compare-and-swap, and its trace shows the pair's accesses: the
// 128-bit ones with both halves, the lo ones on the word's lo half.
func TestPairLostUpdateFound(t *testing.T) {
	res := exploreProgram(pairCounterToy(2, 1, true, false), "pair-lost-update", Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	f := res.Failure
	if f == nil {
		t.Fatalf("no failure: %s", res.Summary())
	}
	if f.Kind != KindInvariant || f.Preemptions != 1 {
		t.Fatalf("failure %s with %d preemptions, want an invariant failure with 1", f.Kind, f.Preemptions)
	}
	for _, want := range []string{"load 0x", " = {lo=0 hi=0}", ".lo: 0 → 1 ok", "store 0x", ":= {lo=1 hi=1}"} {
		if !strings.Contains(f.Trace, want) {
			t.Errorf("the trace does not show %q:\n%s", want, f.Trace)
		}
	}
	t.Logf("%s\n%s", res.Summary(), f.Report())
}

// TestPairCASCounterExhaustive: the 128-bit compare-and-swap loop loses
// nothing, also beside a thread that writes lo alone.
func TestPairCASCounterExhaustive(t *testing.T) {
	for _, withLo := range []bool{false, true} {
		res := exploreProgram(pairCounterToy(2, 2, false, withLo), "pair-cas-counter", Options{Bound: 3})
		if res.Err != nil || res.Failure != nil || !res.Exhaustive {
			t.Fatalf("withLo=%v: %s", withLo, res.Summary())
		}
		t.Logf("withLo=%v: %s", withLo, res.Summary())
	}
}

// TestPairReductionLosesNothing: the sleep sets treat a Pair as one word
// (every access to it conflicts with a write of either half), so with the
// reduction on the search finds every outcome it finds with it off.
func TestPairReductionLosesNothing(t *testing.T) {
	for _, p := range []func() *toy{
		pairHalvesToy,
		func() *toy { return pairCounterToy(2, 1, true, false) },
		func() *toy { return pairCounterToy(2, 1, true, true) },
		func() *toy { return pairCounterToy(2, 2, false, true) },
	} {
		on, nOn, err := outcomes(p(), 3, true)
		if err != nil {
			t.Fatal(err)
		}
		off, nOff, err := outcomes(p(), 3, false)
		if err != nil {
			t.Fatal(err)
		}
		name := p().name
		t.Logf("%-50s %d outcomes; %d schedules with the reduction, %d without", name, len(off), nOn, nOff)
		for o := range off {
			if !on[o] {
				t.Errorf("%s: the reduction lost outcome %s", name, o)
			}
		}
		for o := range on {
			if !off[o] {
				t.Errorf("%s: the reduction found an outcome the full search did not: %s", name, o)
			}
		}
		if nOn >= nOff {
			t.Errorf("%s: %d schedules with the reduction, %d without: it pruned nothing", name, nOn, nOff)
		}
	}
}
