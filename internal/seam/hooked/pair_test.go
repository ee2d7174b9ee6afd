package hooked

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam"
	"github.com/tollgate/tollgate/internal/seam/internal/pairtest"
)

// TestPair: with no scheduler installed the hooked Pair is seam.Pair, atomic
// and all: the same suite passes.
func TestPair(t *testing.T) { pairtest.Run[Pair](t) }

// TestPairMethodSet: the hooked Pair has exactly seam.Pair's methods, with
// the same signatures, so a generated copy of impl/ compiles unchanged; and
// the same size, which impl/ may pad by.
func TestPairMethodSet(t *testing.T) {
	// name → signature without the receiver
	methods := func(t reflect.Type) map[string]string {
		m := map[string]string{}
		for i := 0; i < t.NumMethod(); i++ {
			f := t.Method(i).Type
			var in, out []string
			for k := 1; k < f.NumIn(); k++ {
				in = append(in, f.In(k).String())
			}
			for k := 0; k < f.NumOut(); k++ {
				out = append(out, f.Out(k).String())
			}
			m[t.Method(i).Name] = fmt.Sprintf("%v %v", in, out)
		}
		return m
	}
	real := methods(reflect.TypeOf(&seam.Pair{}))
	twin := methods(reflect.TypeOf(&Pair{}))
	if !reflect.DeepEqual(real, twin) {
		t.Errorf("method sets differ:\nseam.Pair   %v\nhooked.Pair %v", real, twin)
	}
	if len(real) != 6 {
		t.Errorf("seam.Pair has %d methods, want the six: %v", len(real), real)
	}
	if a, b := unsafe.Sizeof(seam.Pair{}), unsafe.Sizeof(Pair{}); a != b {
		t.Errorf("seam.Pair is %d bytes, hooked.Pair %d", a, b)
	}
}

// recorder is a Scheduler that lets every operation run at once and records
// what it was told.
type recorder struct {
	before []string
	after  []Access
}

func (r *recorder) Before(word unsafe.Pointer, op Op) {
	r.before = append(r.before, fmt.Sprintf("%p %s", word, op))
}

func (r *recorder) After(a Access) { r.after = append(r.after, a) }

// TestPairSwitchPoints: under a scheduler every method is a switch point on
// the Pair's address (one word for all six), reports its values, and does
// the real operation.
func TestPairSwitchPoints(t *testing.T) {
	p := new(Pair)
	w := unsafe.Pointer(p)
	r := &recorder{}
	uninstall := Install(r)
	lo, hi := p.Load()
	p.Store(3, 4)
	ok1 := p.CompareAndSwap(3, 4, 5, 6)
	ok2 := p.CompareAndSwap(3, 4, 7, 8)
	l := p.LoadLo()
	ok3 := p.CompareAndSwapLo(5, 9)
	ok4 := p.CompareAndSwapLo(5, 10)
	uninstall()
	if lo != 0 || hi != 0 || !ok1 || ok2 || l != 5 || !ok3 || ok4 {
		t.Fatalf("results: Load (%d, %d), CAS %v %v, LoadLo %d, CASLo %v %v", lo, hi, ok1, ok2, l, ok3, ok4)
	}
	if gl, gh := p.Load(); gl != 9 || gh != 6 {
		t.Fatalf("the pair is (%d, %d), want (9, 6)", gl, gh)
	}
	wantBefore := []Op{Load, Store, CAS, CAS, Load, CAS, CAS}
	want := []Access{
		{Word: w, Op: Load, Old: [2]uint64{0, 0}, OK: true},
		{Word: w, Op: Store, New: [2]uint64{3, 4}, OK: true},
		{Word: w, Op: CAS, Old: [2]uint64{3, 4}, New: [2]uint64{5, 6}, OK: true},
		{Word: w, Op: CAS, Old: [2]uint64{3, 4}, New: [2]uint64{7, 8}, OK: false},
		{Word: w, Op: Load, Old: uint64(5), OK: true, Lo: true},
		{Word: w, Op: CAS, Old: uint64(5), New: uint64(9), OK: true, Lo: true},
		{Word: w, Op: CAS, Old: uint64(5), New: uint64(10), OK: false, Lo: true},
	}
	if len(r.before) != len(wantBefore) || len(r.after) != len(want) {
		t.Fatalf("%d Before and %d After calls, want %d each", len(r.before), len(r.after), len(want))
	}
	for i := range want {
		if b := fmt.Sprintf("%p %s", w, wantBefore[i]); r.before[i] != b {
			t.Errorf("Before %d: %s, want %s", i, r.before[i], b)
		}
		if !reflect.DeepEqual(r.after[i], want[i]) {
			t.Errorf("After %d: %+v, want %+v", i, r.after[i], want[i])
		}
	}
	// Conflicts: the explorer orders two accesses to one word when either
	// wrote; a failed compare-and-swap is a read.
	for i, wrote := range []bool{false, true, true, false, false, true, false} {
		if r.after[i].Wrote() != wrote {
			t.Errorf("access %d (%+v): Wrote() = %v, want %v", i, r.after[i], r.after[i].Wrote(), wrote)
		}
	}
}
