//go:build !purego

package seam

import (
	"strings"
	"testing"
)

// The CPU's own features, before any test switches the Pair's copies.
var hasAVX, hasCX16 = pairVecLoad, pairCX16

// The two Loads of amd64: VMOVDQA (with AVX) and LOCK CMPXCHG16B.
var pairPaths = []pairPath{
	{name: "vec", use: func() (func(), bool) {
		if !hasAVX {
			return nil, false
		}
		return setPairFeatures(true, pairCX16), true
	}},
	{name: "locked", use: func() (func(), bool) {
		if !hasCX16 {
			return nil, false
		}
		return setPairFeatures(false, pairCX16), true
	}},
}

func setPairFeatures(vec, cx16 bool) (restore func()) {
	v, c := pairVecLoad, pairCX16
	pairVecLoad, pairCX16 = vec, cx16
	return func() { pairVecLoad, pairCX16 = v, c }
}

// TestPairNoCX16: on a CPU without CMPXCHG16B every operation that needs it
// panics, saying what to do; the others work.
func TestPairNoCX16(t *testing.T) {
	for _, vec := range []bool{true, false} {
		restore := setPairFeatures(vec, false)
		p := new(Pair)
		ops := map[string]func(){
			"Store":          func() { p.Store(1, 2) },
			"CompareAndSwap": func() { p.CompareAndSwap(0, 0, 1, 2) },
		}
		if !vec {
			ops["Load"] = func() { p.Load() }
		}
		for name, op := range ops {
			func() {
				defer func() {
					r := recover()
					if s, _ := r.(string); !strings.Contains(s, "CMPXCHG16B") || !strings.Contains(s, "-tags purego") {
						t.Errorf("vec=%v: %s without CMPXCHG16B: recovered %v, want a panic naming CMPXCHG16B and -tags purego", vec, name, r)
					}
				}()
				op()
			}()
		}
		if vec {
			if lo, hi := p.Load(); lo != 0 || hi != 0 {
				t.Errorf("Load with AVX and without CMPXCHG16B = (%d, %d)", lo, hi)
			}
		}
		if !p.CompareAndSwapLo(0, 5) || p.LoadLo() != 5 {
			t.Error("CompareAndSwapLo/LoadLo need no CMPXCHG16B but failed")
		}
		restore()
	}
}
