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
			tr.forced = func(key string) uint64 {
				var i int
				if _, err := fmt.Sscanf(key, "k%d", &i); err != nil {
					t.Errorf("hash of %q: %v", key, err)
				}
				return hash(i)
			}
			const keys, workers = 256, 8
			got := make([][]*tnode[string], workers)
			var wg sync.WaitGroup
			for w := range workers {
				got[w] = make([]*tnode[string], keys)
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
