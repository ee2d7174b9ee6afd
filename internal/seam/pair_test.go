package seam

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/internal/pairtest"
)

// TestPair runs the pair suite on every path of this build (on amd64: the
// AVX load and the CMPXCHG16B load).
func TestPair(t *testing.T) {
	for _, path := range pairPaths {
		t.Run(path.name, func(t *testing.T) {
			if path.use != nil {
				restore, ok := path.use()
				if !ok {
					t.Skip("this CPU does not have it")
				}
				defer restore()
			}
			pairtest.Run[Pair](t)
		})
	}
}

// pairPath is one way this build can run a Pair's operations; use switches
// to it (false: this CPU cannot) and returns the switch back.
type pairPath struct {
	name string
	use  func() (restore func(), ok bool)
}

// TestPairSize: three words where the pair is chosen by alignment, one
// pointer where it is boxed. (impl/ pads its slots by this size.)
func TestPairSize(t *testing.T) {
	want := uintptr(24) // three words
	if pairBoxed {
		want = unsafe.Sizeof(uintptr(0))
	}
	if got := unsafe.Sizeof(Pair{}); got != want {
		t.Errorf("a Pair is %d bytes, want %d", got, want)
	}
}

//go:noinline
func grow(n int) byte {
	var frame [512]byte
	frame[n%512] = byte(n)
	if n == 0 {
		return frame[0]
	}
	return grow(n-1) + frame[(n*7)%512]
}

// TestPairOnStack: a Pair that stays on its goroutine's stack keeps working
// when the stack is copied to a larger one (the runtime moves a stack by a
// multiple of 16 bytes, so the pair chosen from the address stays the one
// holding the value).
func TestPairOnStack(t *testing.T) {
	done := make(chan struct{})
	var moved, onStack bool
	var lo, hi, lo2 uint64
	go func() { // a fresh goroutine, with the smallest stack
		defer close(done)
		var p Pair
		p.Store(0x1111, 0x2222)
		before := uintptr(unsafe.Pointer(&p))
		grow(64) // 32 KiB of frames: the stack is copied at least once
		after := uintptr(unsafe.Pointer(&p))
		moved = before != after
		lo, hi = p.Load()
		p.CompareAndSwapLo(0x1111, 0x3333)
		lo2 = p.LoadLo()
		onStack = !pairBoxed
	}()
	<-done
	if lo != 0x1111 || hi != 0x2222 || lo2 != 0x3333 {
		t.Fatalf("after the stack moved (moved=%v): Load = (%#x, %#x), LoadLo after CompareAndSwapLo = %#x; want (0x1111, 0x2222), 0x3333", moved, lo, hi, lo2)
	}
	if onStack && !moved {
		t.Errorf("the Pair did not move: it escaped to the heap, or the stack did not grow; the test tested nothing")
	}
}

// The benchmarks compare a Pair's operations with atomic.Uint64's, on one
// goroutine (the instruction's latency, uncontended) and on all of them at
// once on one word (contention: an operation that writes the line makes the
// others wait for it; one that only reads shares it).

var sink uint64

func BenchmarkPair(b *testing.B) {
	for _, path := range pairPaths {
		name := ""
		if len(pairPaths) > 1 {
			name = path.name + "/"
		}
		var restore func()
		if path.use != nil {
			var ok bool
			if restore, ok = path.use(); !ok {
				continue
			}
		}
		benchPair(b, name)
		if restore != nil {
			restore()
		}
	}
	b.Run("Uint64/Load", func(b *testing.B) {
		var u atomic.Uint64
		var s uint64
		for i := 0; i < b.N; i++ {
			s += u.Load()
		}
		sink = s
	})
	b.Run("Uint64/CompareAndSwap", func(b *testing.B) {
		var u atomic.Uint64
		for i := 0; i < b.N; i++ {
			u.CompareAndSwap(uint64(i), uint64(i+1))
		}
	})
	b.Run("Uint64/Load/parallel", func(b *testing.B) {
		u := new(atomic.Uint64)
		b.RunParallel(func(pb *testing.PB) {
			var s uint64
			for pb.Next() {
				s += u.Load()
			}
			atomic.AddUint64(&sink, s)
		})
	})
	b.Run("Uint64/CompareAndSwap/parallel", func(b *testing.B) {
		u := new(atomic.Uint64)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				v := u.Load()
				u.CompareAndSwap(v, v+1)
			}
		})
	})
}

func benchPair(b *testing.B, prefix string) {
	b.Run(prefix+"Load", func(b *testing.B) {
		p := new(Pair)
		var s uint64
		for i := 0; i < b.N; i++ {
			lo, hi := p.Load()
			s += lo ^ hi
		}
		sink = s
	})
	if prefix != "" && prefix != pairPaths[0].name+"/" {
		// The other paths differ in Load alone.
		b.Run(prefix+"Load/parallel", func(b *testing.B) { benchParallelLoad(b) })
		return
	}
	b.Run(prefix+"LoadLo", func(b *testing.B) {
		p := new(Pair)
		var s uint64
		for i := 0; i < b.N; i++ {
			s += p.LoadLo()
		}
		sink = s
	})
	b.Run(prefix+"CompareAndSwap", func(b *testing.B) {
		p := new(Pair)
		for i := 0; i < b.N; i++ {
			p.CompareAndSwap(uint64(i), uint64(i), uint64(i+1), uint64(i+1))
		}
	})
	b.Run(prefix+"CompareAndSwap/fails", func(b *testing.B) {
		p := new(Pair)
		p.Store(1, 1)
		for i := 0; i < b.N; i++ {
			p.CompareAndSwap(1, 0, 2, 2)
		}
	})
	b.Run(prefix+"CompareAndSwapLo", func(b *testing.B) {
		p := new(Pair)
		for i := 0; i < b.N; i++ {
			p.CompareAndSwapLo(uint64(i), uint64(i+1))
		}
	})
	b.Run(prefix+"Store", func(b *testing.B) {
		p := new(Pair)
		for i := 0; i < b.N; i++ {
			p.Store(uint64(i), uint64(i))
		}
	})
	b.Run(prefix+"Load/parallel", func(b *testing.B) { benchParallelLoad(b) })
	b.Run(prefix+"LoadLo/parallel", func(b *testing.B) {
		p := new(Pair)
		b.RunParallel(func(pb *testing.PB) {
			var s uint64
			for pb.Next() {
				s += p.LoadLo()
			}
			atomic.AddUint64(&sink, s)
		})
	})
	b.Run(prefix+"CompareAndSwap/parallel", func(b *testing.B) {
		p := new(Pair)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				lo, hi := p.Load()
				p.CompareAndSwap(lo, hi, lo+1, hi+1)
			}
		})
	})
	b.Run(prefix+"CompareAndSwapLo/parallel", func(b *testing.B) {
		p := new(Pair)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				lo := p.LoadLo()
				p.CompareAndSwapLo(lo, lo+1)
			}
		})
	})
}

func benchParallelLoad(b *testing.B) {
	p := new(Pair)
	b.RunParallel(func(pb *testing.PB) {
		var s uint64
		for pb.Next() {
			lo, hi := p.Load()
			s += lo ^ hi
		}
		atomic.AddUint64(&sink, s)
	})
}
