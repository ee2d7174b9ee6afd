package tokenbucket

import (
	"fmt"
	"sync"
	"testing"
)

// TestTrieConcurrentInsert: T11. Goroutines insert overlapping key sets at
// once, with hashes forced to collide in every way the trie handles: equal
// prefixes (push-down to inner nodes) and equal full hashes (chains). Every
// key must end with exactly one cell, the same one every goroutine got.
func TestTrieConcurrentInsert(t *testing.T) {
	hashes := map[string]func(i int) uint64{
		"distinct":        func(i int) uint64 { return uint64(i) * 0x9e3779b97f4a7c15 },
		"shared prefixes": func(i int) uint64 { return uint64(i) << 40 }, // low 40 bits equal: deep push-downs
		"full collisions": func(i int) uint64 { return uint64(i % 4) },   // chains of 64 cells
	}
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) {
			tr := newTrie[string]()
			tr.hash = func(key string) uint64 {
				var i int
				if _, err := fmt.Sscanf(key, "k%d", &i); err != nil {
					t.Errorf("hash of %q: %v", key, err)
				}
				return hash(i)
			}
			const keys, workers = 256, 8
			got := make([][]*cell[string], workers)
			var wg sync.WaitGroup
			for w := range workers {
				got[w] = make([]*cell[string], keys)
				wg.Go(func() {
					for j := range keys {
						i := (j + w*37) % keys // each worker in its own order
						got[w][i] = tr.insertHash(fmt.Sprint("k", i), hash(i))
					}
				})
			}
			wg.Wait()
			for i := range keys {
				key := fmt.Sprint("k", i)
				c := tr.findHash(key, hash(i), lookThawed)
				if c == nil || c.key != key {
					t.Fatalf("key %s: find returned %v", key, c)
				}
				for w := range workers {
					if got[w][i] != c {
						t.Fatalf("key %s: worker %d got a different cell than find", key, w)
					}
				}
			}
			if c := tr.findHash("absent", hash(3), lookThawed); c != nil {
				t.Fatalf("found a cell for a key never inserted: %q", c.key)
			}
		})
	}
}

// TestCompactDropsDeadHeads: a compaction that meets a dead cell at the head
// of a frozen chain (a kill that landed after the sweep passed it) drops the
// cell, and the chain behind it moves up with the live cells: memory follows
// the keys in use. Without that drop the trie stays correct (a dead head
// is unlinked by whoever meets it next) but keeps the node, so this pins
// the compaction's shape directly.
func TestCompactDropsDeadHeads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		behind bool // a live cell of the same hash behind the dead head
	}{{"dead head alone", false}, {"dead head with a live successor", true}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrie[string]()
			// a and b share the full hash; c shares only the first level.
			tr.hash = func(key string) uint64 { return map[string]uint64{"a": 0x21, "b": 0x21, "c": 0x51}[key] }
			a := tr.insert("a")
			if tc.behind {
				tr.insert("b")
			}
			tr.insert("c")
			holder := tr.root.kid(1)
			node := holder.Load()
			if node == nil || cellOf(node) != nil {
				t.Fatal("a and c do not share an inner node")
			}
			in := tr.asInner(node, node.first.Load())
			// c's cell is gone (its sweep unlinked it); a dies afterwards,
			// with nobody to unlink it before the compaction.
			in.kid(5).Store(nil)
			a.word.Store(deadLo, 0)
			tr.compact(holder, in, 1)
			got := holder.Load()
			switch {
			case !tc.behind && got != nil:
				t.Fatalf("the compaction left %+v, want nil: the dead head was kept", got)
			case tc.behind && (cellOf(got) == nil || cellOf(got).key != "b"):
				t.Fatalf("the compaction left %+v, want b's cell pulled up", got)
			}
			if a.next.Load() != tr.sealed && !tc.behind {
				t.Fatal("the dropped dead head's next was not sealed: an append could still land behind it")
			}
		})
	}
}

// TestCastsCheckTheKind: each of the trie's casts accepts the one kind of
// node it names, judged by the first word it is given, and panics on the
// other two and on nil, instead of reading a cell's key out of an inner
// node's child words.
func TestCastsCheckTheKind(t *testing.T) {
	tr := newTrie[string]()
	c := newCell("k")
	w := &wrapper[string]{}
	w.first.Store(tr.frozen)
	in := newInner[string](3)
	in.kid(0).Store(&c.node)
	nodes := map[string]*node[string]{"a cell": &c.node, "a wrapper": &w.node, "an inner node": in.head(), "nil": nil}
	casts := map[string]func(n, f *node[string]){
		"a cell":        func(n, f *node[string]) { asCell(n, f) },
		"a wrapper":     func(n, f *node[string]) { tr.asWrapper(n, f) },
		"an inner node": func(n, f *node[string]) { tr.asInner(n, f) },
	}
	for as, cast := range casts {
		for kind, n := range nodes {
			var f *node[string]
			if n != nil {
				f = n.first.Load()
			}
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				cast(n, f)
				return false
			}()
			if want := kind != as; panicked != want {
				t.Errorf("%s cast as %s: panicked %v, want %v", kind, as, panicked, want)
			}
		}
	}
}
