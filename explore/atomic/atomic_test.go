package atomic_test

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	twin "github.com/tollgate/tollgate/explore/atomic"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// fns is the functions of sync/atomic (or of this package) for one type;
// add, and and or are nil for unsafe.Pointer.
type fns[T comparable] struct {
	load         func(*T) T
	store        func(*T, T)
	swap         func(*T, T) T
	cas          func(*T, T, T) bool
	add, and, or func(*T, T) T
}

// methods is the methods every sync/atomic type has.
type methods[T any] interface {
	Load() T
	Store(T)
	Swap(T) T
	CompareAndSwap(old, new T) bool
}

// arith is the methods of the integer types.
type arith[T any] interface {
	methods[T]
	Add(T) T
	And(T) T
	Or(T) T
}

// ops is a set of operations on one variable.
type ops[T comparable] struct {
	load         func() T
	store        func(T)
	swap         func(T) T
	cas          func(old, new T) bool
	add, and, or func(T) T
}

// bind returns f's operations on a new zero variable.
func (f fns[T]) bind() ops[T] {
	x := new(T)
	o := ops[T]{
		load:  func() T { return f.load(x) },
		store: func(v T) { f.store(x, v) },
		swap:  func(v T) T { return f.swap(x, v) },
		cas:   func(old, new T) bool { return f.cas(x, old, new) },
	}
	if f.add != nil {
		o.add = func(v T) T { return f.add(x, v) }
		o.and = func(v T) T { return f.and(x, v) }
		o.or = func(v T) T { return f.or(x, v) }
	}
	return o
}

// bindMethods returns m's operations.
func bindMethods[T comparable](m methods[T]) ops[T] {
	o := ops[T]{load: m.Load, store: m.Store, swap: m.Swap, cas: m.CompareAndSwap}
	if a, ok := m.(arith[T]); ok {
		o.add, o.and, o.or = a.Add, a.And, a.Or
	}
	return o
}

// run makes the same operations with a and b (a != b) every time and
// returns every result, in order.
func (o ops[T]) run(a, b T) []any {
	out := []any{o.load()}
	o.store(a)
	out = append(out, o.load(), o.swap(b), o.load(), o.cas(a, a), o.load(), o.cas(b, a), o.load())
	if o.add != nil {
		out = append(out, o.add(b), o.load(), o.and(b), o.load(), o.or(a), o.load(), o.add(a), o.load())
	}
	return out
}

// TestSameAsSyncAtomic checks that with no scheduler installed every
// function and method gives sync/atomic's results.
func TestSameAsSyncAtomic(t *testing.T) {
	if hooked.Current() != nil {
		t.Fatal("a scheduler is installed")
	}
	p, q := unsafe.Pointer(new(int)), unsafe.Pointer(new(int))
	i, j := new(int), new(int)
	for _, c := range []struct {
		name       string
		twin, real []any
	}{
		{"Int32 functions",
			fns[int32]{twin.LoadInt32, twin.StoreInt32, twin.SwapInt32, twin.CompareAndSwapInt32, twin.AddInt32, twin.AndInt32, twin.OrInt32}.bind().run(-7, 0x3c),
			fns[int32]{atomic.LoadInt32, atomic.StoreInt32, atomic.SwapInt32, atomic.CompareAndSwapInt32, atomic.AddInt32, atomic.AndInt32, atomic.OrInt32}.bind().run(-7, 0x3c)},
		{"Int64 functions",
			fns[int64]{twin.LoadInt64, twin.StoreInt64, twin.SwapInt64, twin.CompareAndSwapInt64, twin.AddInt64, twin.AndInt64, twin.OrInt64}.bind().run(-1<<40-3, 0x7f00ff),
			fns[int64]{atomic.LoadInt64, atomic.StoreInt64, atomic.SwapInt64, atomic.CompareAndSwapInt64, atomic.AddInt64, atomic.AndInt64, atomic.OrInt64}.bind().run(-1<<40-3, 0x7f00ff)},
		{"Uint32 functions",
			fns[uint32]{twin.LoadUint32, twin.StoreUint32, twin.SwapUint32, twin.CompareAndSwapUint32, twin.AddUint32, twin.AndUint32, twin.OrUint32}.bind().run(0xfffffff0, 0x35),
			fns[uint32]{atomic.LoadUint32, atomic.StoreUint32, atomic.SwapUint32, atomic.CompareAndSwapUint32, atomic.AddUint32, atomic.AndUint32, atomic.OrUint32}.bind().run(0xfffffff0, 0x35)},
		{"Uint64 functions",
			fns[uint64]{twin.LoadUint64, twin.StoreUint64, twin.SwapUint64, twin.CompareAndSwapUint64, twin.AddUint64, twin.AndUint64, twin.OrUint64}.bind().run(1<<63|5, 1<<40|0x33),
			fns[uint64]{atomic.LoadUint64, atomic.StoreUint64, atomic.SwapUint64, atomic.CompareAndSwapUint64, atomic.AddUint64, atomic.AndUint64, atomic.OrUint64}.bind().run(1<<63|5, 1<<40|0x33)},
		{"Uintptr functions",
			fns[uintptr]{twin.LoadUintptr, twin.StoreUintptr, twin.SwapUintptr, twin.CompareAndSwapUintptr, twin.AddUintptr, twin.AndUintptr, twin.OrUintptr}.bind().run(0xabc, 0x0f0),
			fns[uintptr]{atomic.LoadUintptr, atomic.StoreUintptr, atomic.SwapUintptr, atomic.CompareAndSwapUintptr, atomic.AddUintptr, atomic.AndUintptr, atomic.OrUintptr}.bind().run(0xabc, 0x0f0)},
		{"Pointer functions",
			fns[unsafe.Pointer]{load: twin.LoadPointer, store: twin.StorePointer, swap: twin.SwapPointer, cas: twin.CompareAndSwapPointer}.bind().run(p, q),
			fns[unsafe.Pointer]{load: atomic.LoadPointer, store: atomic.StorePointer, swap: atomic.SwapPointer, cas: atomic.CompareAndSwapPointer}.bind().run(p, q)},
		{"Bool", bindMethods[bool](new(twin.Bool)).run(true, false), bindMethods[bool](new(atomic.Bool)).run(true, false)},
		{"Int32", bindMethods[int32](new(twin.Int32)).run(-7, 0x3c), bindMethods[int32](new(atomic.Int32)).run(-7, 0x3c)},
		{"Int64", bindMethods[int64](new(twin.Int64)).run(-1<<40-3, 0x7f00ff), bindMethods[int64](new(atomic.Int64)).run(-1<<40-3, 0x7f00ff)},
		{"Uint32", bindMethods[uint32](new(twin.Uint32)).run(0xfffffff0, 0x35), bindMethods[uint32](new(atomic.Uint32)).run(0xfffffff0, 0x35)},
		{"Uint64", bindMethods[uint64](new(twin.Uint64)).run(1<<63|5, 1<<40|0x33), bindMethods[uint64](new(atomic.Uint64)).run(1<<63|5, 1<<40|0x33)},
		{"Uintptr", bindMethods[uintptr](new(twin.Uintptr)).run(0xabc, 0x0f0), bindMethods[uintptr](new(atomic.Uintptr)).run(0xabc, 0x0f0)},
		{"Pointer", bindMethods[*int](new(twin.Pointer[int])).run(i, j), bindMethods[*int](new(atomic.Pointer[int])).run(i, j)},
		{"Value", bindMethods[any](new(twin.Value)).run("a", "b"), bindMethods[any](new(atomic.Value)).run("a", "b")},
	} {
		if !reflect.DeepEqual(c.twin, c.real) {
			t.Errorf("%s:\ngot  %v\nwant %v", c.name, c.twin, c.real)
		}
	}
}

// TestLayout checks that each type has its sync/atomic type's size and
// alignment, and that a 64-bit one after a 32-bit field is placed as
// sync/atomic's is (64-bit aligned, on 32-bit platforms too).
func TestLayout(t *testing.T) {
	type layout struct{ size, align, offset uintptr }
	var (
		i64 struct {
			a uint32
			b twin.Int64
		}
		u64 struct {
			a uint32
			b twin.Uint64
		}
		stdI64 struct {
			a uint32
			b atomic.Int64
		}
		stdU64 struct {
			a uint32
			b atomic.Uint64
		}
	)
	for _, c := range []struct {
		name      string
		got, want layout
	}{
		{"Bool", layout{unsafe.Sizeof(twin.Bool{}), unsafe.Alignof(twin.Bool{}), 0}, layout{unsafe.Sizeof(atomic.Bool{}), unsafe.Alignof(atomic.Bool{}), 0}},
		{"Int32", layout{unsafe.Sizeof(twin.Int32{}), unsafe.Alignof(twin.Int32{}), 0}, layout{unsafe.Sizeof(atomic.Int32{}), unsafe.Alignof(atomic.Int32{}), 0}},
		{"Int64", layout{unsafe.Sizeof(twin.Int64{}), unsafe.Alignof(twin.Int64{}), unsafe.Offsetof(i64.b)}, layout{unsafe.Sizeof(atomic.Int64{}), unsafe.Alignof(atomic.Int64{}), unsafe.Offsetof(stdI64.b)}},
		{"Uint32", layout{unsafe.Sizeof(twin.Uint32{}), unsafe.Alignof(twin.Uint32{}), 0}, layout{unsafe.Sizeof(atomic.Uint32{}), unsafe.Alignof(atomic.Uint32{}), 0}},
		{"Uint64", layout{unsafe.Sizeof(twin.Uint64{}), unsafe.Alignof(twin.Uint64{}), unsafe.Offsetof(u64.b)}, layout{unsafe.Sizeof(atomic.Uint64{}), unsafe.Alignof(atomic.Uint64{}), unsafe.Offsetof(stdU64.b)}},
		{"Uintptr", layout{unsafe.Sizeof(twin.Uintptr{}), unsafe.Alignof(twin.Uintptr{}), 0}, layout{unsafe.Sizeof(atomic.Uintptr{}), unsafe.Alignof(atomic.Uintptr{}), 0}},
		{"Pointer", layout{unsafe.Sizeof(twin.Pointer[int]{}), unsafe.Alignof(twin.Pointer[int]{}), 0}, layout{unsafe.Sizeof(atomic.Pointer[int]{}), unsafe.Alignof(atomic.Pointer[int]{}), 0}},
		{"Value", layout{unsafe.Sizeof(twin.Value{}), unsafe.Alignof(twin.Value{}), 0}, layout{unsafe.Sizeof(atomic.Value{}), unsafe.Alignof(atomic.Value{}), 0}},
	} {
		if c.got != c.want {
			t.Errorf("%s: size, align, offset %v; sync/atomic's %v", c.name, c.got, c.want)
		}
	}
	if unsafe.Offsetof(i64.b) != 8 || unsafe.Offsetof(u64.b) != 8 {
		t.Errorf("a 64-bit value after a uint32 is at %d and %d, not 8", unsafe.Offsetof(i64.b), unsafe.Offsetof(u64.b))
	}
}

// event is one call of a scheduler's Before (before true: word and op) or
// After (a).
type event struct {
	before bool
	word   unsafe.Pointer
	op     hooked.Op
	a      hooked.Access
}

// recorder is a Scheduler that lets every operation run at once and
// records the calls.
type recorder struct{ events []event }

func (r *recorder) Before(w unsafe.Pointer, op hooked.Op) {
	r.events = append(r.events, event{before: true, word: w, op: op})
}

func (r *recorder) After(a hooked.Access) { r.events = append(r.events, event{a: a}) }

// record installs a recorder, with call sites on, until the test ends.
func record(t *testing.T) *recorder {
	r := &recorder{}
	uninstall := hooked.Install(r)
	hooked.SetSites(true)
	t.Cleanup(func() {
		hooked.SetSites(false)
		uninstall()
	})
	return r
}

// caller is the name of the function that called the function calling
// caller.
func caller() string {
	pc, _, _, _ := runtime.Caller(2)
	return runtime.FuncForPC(pc).Name()
}

// siteFunc is the name of the function at a call site.
func siteFunc(pc uintptr) string {
	if pc == 0 {
		return "(no site)"
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	return f.Function
}

// check checks that the one operation since the last check called Before
// and then After once, with word w, op, old, new and ok, and that its site
// is in the function that called check.
func (r *recorder) check(t *testing.T, w unsafe.Pointer, op hooked.Op, old, new any, ok bool) {
	t.Helper()
	ev := r.events
	r.events = nil
	if len(ev) != 2 || !ev[0].before || ev[1].before {
		t.Errorf("%v: want one Before, then one After; got %+v", op, ev)
		return
	}
	if ev[0].word != w || ev[0].op != op {
		t.Errorf("Before(%p, %v); want Before(%p, %v)", ev[0].word, ev[0].op, w, op)
	}
	a := ev[1].a
	if a.Word != w || a.Op != op || a.Old != old || a.New != new || a.OK != ok || a.Lo || a.Hi {
		t.Errorf("After(%+v); want word %p, op %v, old %#v, new %#v, ok %v", a, w, op, old, new, ok)
	}
	if got, want := siteFunc(a.Site), caller(); got != want {
		t.Errorf("%v: site in %s; want %s", op, got, want)
	}
}

type integer interface {
	~int32 | ~int64 | ~uint32 | ~uint64 | ~uintptr
}

// checkFuncs checks every function of f on a variable.
func checkFuncs[T integer](t *testing.T, r *recorder, f fns[T]) {
	t.Helper()
	var x T
	w := unsafe.Pointer(&x)
	eq := func(got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%T: got %v, want %v", x, got, want)
		}
	}
	f.store(&x, 12)
	r.check(t, w, hooked.Store, nil, T(12), true)
	eq(f.load(&x), T(12))
	r.check(t, w, hooked.Load, T(12), nil, true)
	eq(f.swap(&x, 10), T(12))
	r.check(t, w, hooked.Swap, T(12), T(10), true)
	eq(f.cas(&x, 3, 4), false)
	r.check(t, w, hooked.CAS, T(3), T(4), false)
	eq(f.cas(&x, 10, 6), true)
	r.check(t, w, hooked.CAS, T(10), T(6), true)
	eq(f.add(&x, 5), T(11))
	r.check(t, w, hooked.Add, T(6), T(11), true)
	eq(f.and(&x, 6), T(11))
	r.check(t, w, hooked.And, T(11), T(2), true)
	eq(f.or(&x, 5), T(2))
	r.check(t, w, hooked.Or, T(2), T(7), true)
	eq(x, T(7))
}

// checkMethods checks m's Load, Store, Swap and CompareAndSwap, with a and
// b (a != b); m's value is a at the end.
func checkMethods[T comparable](t *testing.T, r *recorder, m methods[T], a, b T) {
	t.Helper()
	w := unsafe.Pointer(reflect.ValueOf(m).Pointer())
	eq := func(got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%T: got %v, want %v", m, got, want)
		}
	}
	m.Store(a)
	r.check(t, w, hooked.Store, nil, a, true)
	eq(m.Load(), a)
	r.check(t, w, hooked.Load, a, nil, true)
	eq(m.Swap(b), a)
	r.check(t, w, hooked.Swap, a, b, true)
	eq(m.CompareAndSwap(a, a), false)
	r.check(t, w, hooked.CAS, a, a, false)
	eq(m.CompareAndSwap(b, a), true)
	r.check(t, w, hooked.CAS, b, a, true)
	eq(m.Load(), a)
	r.check(t, w, hooked.Load, a, nil, true)
}

// checkArith checks an integer type's methods.
func checkArith[T integer](t *testing.T, r *recorder, m arith[T]) {
	t.Helper()
	checkMethods(t, r, m, 12, 10)
	w := unsafe.Pointer(reflect.ValueOf(m).Pointer())
	eq := func(got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%T: got %v, want %v", m, got, want)
		}
	}
	eq(m.Add(5), T(17))
	r.check(t, w, hooked.Add, T(12), T(17), true)
	eq(m.And(6), T(17))
	r.check(t, w, hooked.And, T(17), T(0), true)
	eq(m.Or(5), T(0))
	r.check(t, w, hooked.Or, T(0), T(5), true)
	eq(m.Load(), T(5))
	r.check(t, w, hooked.Load, T(5), nil, true)
}

// TestSwitchPoints checks that under a scheduler every operation calls
// Before and then After, and reports what it did.
func TestSwitchPoints(t *testing.T) {
	r := record(t)

	checkFuncs(t, r, fns[int32]{twin.LoadInt32, twin.StoreInt32, twin.SwapInt32, twin.CompareAndSwapInt32, twin.AddInt32, twin.AndInt32, twin.OrInt32})
	checkFuncs(t, r, fns[int64]{twin.LoadInt64, twin.StoreInt64, twin.SwapInt64, twin.CompareAndSwapInt64, twin.AddInt64, twin.AndInt64, twin.OrInt64})
	checkFuncs(t, r, fns[uint32]{twin.LoadUint32, twin.StoreUint32, twin.SwapUint32, twin.CompareAndSwapUint32, twin.AddUint32, twin.AndUint32, twin.OrUint32})
	checkFuncs(t, r, fns[uint64]{twin.LoadUint64, twin.StoreUint64, twin.SwapUint64, twin.CompareAndSwapUint64, twin.AddUint64, twin.AndUint64, twin.OrUint64})
	checkFuncs(t, r, fns[uintptr]{twin.LoadUintptr, twin.StoreUintptr, twin.SwapUintptr, twin.CompareAndSwapUintptr, twin.AddUintptr, twin.AndUintptr, twin.OrUintptr})

	// The unsafe.Pointer functions, called here.
	var p unsafe.Pointer
	w := unsafe.Pointer(&p)
	a, b := unsafe.Pointer(new(int)), unsafe.Pointer(new(int))
	twin.StorePointer(&p, a)
	r.check(t, w, hooked.Store, nil, a, true)
	if got := twin.LoadPointer(&p); got != a {
		t.Errorf("LoadPointer: got %p, want %p", got, a)
	}
	r.check(t, w, hooked.Load, a, nil, true)
	if got := twin.SwapPointer(&p, b); got != a {
		t.Errorf("SwapPointer: got %p, want %p", got, a)
	}
	r.check(t, w, hooked.Swap, a, b, true)
	if twin.CompareAndSwapPointer(&p, a, a) {
		t.Error("CompareAndSwapPointer swapped a value that was not there")
	}
	r.check(t, w, hooked.CAS, a, a, false)
	if !twin.CompareAndSwapPointer(&p, b, nil) {
		t.Error("CompareAndSwapPointer did not swap")
	}
	r.check(t, w, hooked.CAS, b, unsafe.Pointer(nil), true)
	if p != nil {
		t.Errorf("p is %p, want nil", p)
	}

	checkMethods(t, r, new(twin.Bool), true, false)
	checkArith(t, r, new(twin.Int32))
	checkArith(t, r, new(twin.Int64))
	checkArith(t, r, new(twin.Uint32))
	checkArith(t, r, new(twin.Uint64))
	checkArith(t, r, new(twin.Uintptr))
	checkMethods(t, r, new(twin.Pointer[int]), new(int), new(int))
	checkMethods[any](t, r, new(twin.Value), "a", "b")

	// A Value's zero value loads nil.
	var v twin.Value
	if got := v.Load(); got != nil {
		t.Errorf("Value.Load of the zero Value: %v", got)
	}
	r.check(t, unsafe.Pointer(&v), hooked.Load, nil, nil, true)
}

// TestSite checks that a site is the line of the call in the code under
// test, and that with sites off it is 0.
func TestSite(t *testing.T) {
	r := record(t)
	var n int64
	var u twin.Uint32
	var v twin.Value
	var p twin.Pointer[string]
	_, _, line, _ := runtime.Caller(0)
	twin.AddInt64(&n, 1)
	u.Or(3)
	v.Store(1)
	p.Load()
	for i, ev := range r.events {
		if ev.before {
			continue
		}
		f, _ := runtime.CallersFrames([]uintptr{ev.a.Site}).Next()
		if want := line + 1 + i/2; !strings.HasSuffix(f.Function, ".TestSite") || f.Line != want {
			t.Errorf("event %d (%v): site %s:%d; want TestSite:%d", i, ev.a.Op, f.Function, f.Line, want)
		}
	}
	if len(r.events) != 8 {
		t.Errorf("%d events, want 8", len(r.events))
	}
	r.events = nil

	hooked.SetSites(false)
	u.Load()
	if len(r.events) != 2 || r.events[1].a.Site != 0 {
		t.Errorf("with sites off: %+v; want one Before and one After with Site 0", r.events)
	}
}

// TestValuePanics checks that a Value panics as sync/atomic's does, with
// and without a scheduler, and that under a scheduler Before comes first
// and no After follows.
func TestValuePanics(t *testing.T) {
	type misuse struct {
		name string
		f    func(methods[any])
	}
	cases := []misuse{
		{"store nil", func(v methods[any]) { v.Store(nil) }},
		{"swap nil", func(v methods[any]) { v.Swap(nil) }},
		{"cas nil", func(v methods[any]) { v.CompareAndSwap(nil, nil) }},
		{"store other type", func(v methods[any]) { v.Store(1); v.Store("x") }},
		{"swap other type", func(v methods[any]) { v.Store(1); v.Swap("x") }},
		{"cas other types", func(v methods[any]) { v.Store(1); v.CompareAndSwap(1, "x") }},
		{"cas incomparable", func(v methods[any]) { v.Store([]int{1}); v.CompareAndSwap([]int{1}, []int{2}) }},
	}
	catch := func(f func()) (p any) {
		defer func() { p = recover() }()
		f()
		return nil
	}
	for _, c := range cases {
		want := catch(func() { c.f(new(atomic.Value)) })
		if want == nil {
			t.Fatalf("%s: sync/atomic.Value did not panic", c.name)
		}
		got := catch(func() { c.f(new(twin.Value)) })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s, no scheduler: panic %v; want %v", c.name, got, want)
		}
	}

	r := record(t)
	for _, c := range cases {
		v := new(twin.Value)
		got := catch(func() { c.f(v) })
		want := catch(func() { c.f(new(atomic.Value)) })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s, with a scheduler: panic %v; want %v", c.name, got, want)
		}
		if n := len(r.events); n%2 != 1 || !r.events[n-1].before || r.events[n-1].word != unsafe.Pointer(v) {
			t.Errorf("%s: events %+v; want Before and After for each operation but the last, which has Before alone", c.name, r.events)
		}
		r.events = nil
	}
}
