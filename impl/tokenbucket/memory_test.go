package tokenbucket

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam"
)

// TestNodeSizes pins the node layout spec/tokenbucket.md §6 counts memory
// by: a node header is one word; an inner node is its child words and
// nothing else (16 of them, 128 B, at the wide levels; 4, 32 B, below: it
// has no header word of its own, its child 0 is its first word); a cell is
// its header, key, chain word and bucket word, 48 B for an 8-byte key (a Go
// size class: a cell wastes nothing); a frozen wrapper is its header and
// the value it froze, 16 B.
func TestNodeSizes(t *testing.T) {
	word := unsafe.Sizeof(uintptr(0))
	if got := unsafe.Sizeof(node[uint64]{}); got != word {
		t.Errorf("a node header is %d B, want one word (%d B)", got, word)
	}
	if got := unsafe.Sizeof([wideFanout / narrowFanout]inner[uint64]{}); got != wideFanout*word {
		t.Errorf("a wide inner node is %d B, want %d child words (%d B)", got, wideFanout, wideFanout*word)
	}
	if got := unsafe.Sizeof(inner[uint64]{}); got != narrowFanout*word {
		t.Errorf("a narrow inner node is %d B, want %d child words (%d B)", got, narrowFanout, narrowFanout*word)
	}
	if got, want := unsafe.Sizeof(cell[uint64]{}), 3*word+unsafe.Sizeof(seam.Pair{}); got != want {
		t.Errorf("a cell of a uint64 key is %d B, want its header, key, next and bucket word (%d B)", got, want)
	}
	if got := unsafe.Sizeof(cell[uint64]{}); got > 48 {
		t.Errorf("a cell of a uint64 key is %d B, more than the 48 B size class", got)
	}
	if got := unsafe.Sizeof(wrapper[uint64]{}); got != 2*word {
		t.Errorf("a frozen wrapper is %d B, want its header and value (%d B)", got, 2*word)
	}
}

// TestInnerNodesPerKey: the inner nodes of a trie of many random keys take
// about 23 B per key (§6: about 0.72 narrow nodes of 32 B a key, the wide
// levels next to nothing), so that with a 48 B cell a held key costs at
// most 80 B. The bound, 26 B, leaves room for the dispersion of random
// hashes; the fixed-fanout-16 trie before took 63 B.
func TestInnerNodesPerKey(t *testing.T) {
	const keys = 1 << 18
	tr := newTrie[uint64]()
	rng := rand.New(rand.NewPCG(3, 4))
	for range keys {
		k := rng.Uint64()
		tr.insertHash(k, tr.hash(k))
	}
	var bytes, cells uintptr
	var walk func(n *inner[uint64], d uint)
	walk = func(n *inner[uint64], d uint) {
		bytes += uintptr(fanoutAt(d)) * unsafe.Sizeof(n.kids[0])
		for i := range fanoutAt(d) {
			c := n.kid(i).Load()
			switch {
			case c == nil:
			case cellOf(c) == nil:
				walk(tr.asInner(c, c.first.Load()), d+1)
			default:
				for x := cellOf(c); x != nil; x = x.next.Load() {
					cells++
				}
			}
		}
	}
	walk(tr.root, 0)
	if cells != keys {
		t.Fatalf("%d cells reachable, want %d", cells, keys)
	}
	if perKey := float64(bytes) / keys; perKey > 26 {
		t.Errorf("inner nodes take %.1f B per key, want at most 26", perKey)
	} else {
		t.Logf("inner nodes take %.1f B per key", perKey)
	}
}

// TestNewInnerAllocates: an inner node allocates its child words and no
// more, 16 at the wide levels and 4 below: a wide node where a narrow one
// is due would cost 96 B that no walk uses.
func TestNewInnerAllocates(t *testing.T) {
	const n = 4096
	word := unsafe.Sizeof(node[uint64]{})
	keep := make([]*inner[uint64], n)
	for d := range uint(wideLevels + 2) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range keep {
			keep[i] = newInner[uint64](d)
		}
		runtime.ReadMemStats(&after)
		got := float64(after.TotalAlloc-before.TotalAlloc) / n
		if want := float64(uintptr(fanoutAt(d)) * word); got < want || got > want+float64(word) {
			t.Errorf("level %d: a new inner node allocates %.1f B, want %.0f (%d child words)", d, got, want, fanoutAt(d))
		}
	}
	runtime.KeepAlive(keep)
}
