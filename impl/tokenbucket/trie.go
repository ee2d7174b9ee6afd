package tokenbucket

import (
	"hash/maphash"

	"github.com/tollgate/tollgate/internal/seam"
)

// The trie's shape: each inner node consumes bitsPerLevel bits of the key's
// 64-bit hash, so it has fanout children, chosen by hash>>shift & levelMask.
const (
	bitsPerLevel = 4
	fanout       = 1 << bitsPerLevel
	levelMask    = fanout - 1
)

// trie is the lock-free map from keys to cells behind a Table: a hash trie
// of fanout-way nodes whose child words change only by compare-and-swap.
// Lookups and inserts are lock-free and linearizable (T11): a lookup
// linearizes at the load that found the key's cell (or the nil word that
// proves it absent), an insert at the compare-and-swap that published the
// cell. Nothing
// is ever removed from a trie (Reset clears a cell's state instead), so a
// reader never races with an unlink; ResetAll replaces the whole trie.
//
// Each child word of a node holds one of:
//
//	nil              no key with this hash prefix yet
//	*tnode, kids≠nil an inner node: descend with the next bitsPerLevel bits
//	*tnode, kids=nil a cell: a key, its bucket word, and a chain (next) of
//	                 cells whose keys have exactly the same 64-bit hash (a
//	                 cell does not keep its hash: an insert that meets it
//	                 hashes its key again)
//
// A child word only ever moves nil → cell, or cell → inner node that holds
// that same cell one level down. A cell's next word only moves nil → cell.
// So once a lookup has seen a key's cell, that cell stays the key's cell for
// the life of the trie.
type trie[K comparable] struct {
	seed maphash.Seed
	root *tnode[K] // an inner node
	// forced, set only by tests, replaces the keys' hash to force
	// collisions.
	forced func(K) uint64
}

type tnode[K comparable] struct {
	kids *[fanout]seam.Pointer[tnode[K]] // non-nil for an inner node

	// cell fields
	key  K
	next seam.Pointer[tnode[K]]
	// state is the bucket word (tokenbucket.go): (0, 0) while absent, else
	// the tokens and timestamp of the last committed take. Every commit
	// replaces it by a 128-bit compare-and-swap; only Reset stores to it
	// directly.
	state seam.Pair
}

func newTrie[K comparable]() *trie[K] {
	return &trie[K]{seed: maphash.MakeSeed(), root: newInner[K]()}
}

func newInner[K comparable]() *tnode[K] {
	return &tnode[K]{kids: new([fanout]seam.Pointer[tnode[K]])}
}

// hash is key's 64-bit hash.
func (t *trie[K]) hash(key K) uint64 {
	if t.forced != nil {
		return t.forced(key)
	}
	return maphash.Comparable(t.seed, key)
}

// find returns key's cell, or nil when the key has none.
func (t *trie[K]) find(key K) *tnode[K] { return t.findHash(key, t.hash(key)) }

// insert returns key's cell, adding an empty one if the key has none. A key
// seen before is found by the read-only walk, which has no insert to prepare.
func (t *trie[K]) insert(key K) *tnode[K] {
	h := t.hash(key)
	if c := t.findHash(key, h); c != nil {
		return c
	}
	return t.insertHash(key, h)
}

// findHash is find with the key's hash h given (tests force collisions).
func (t *trie[K]) findHash(key K, h uint64) *tnode[K] {
	n := t.root
	for shift := uint(0); ; shift += bitsPerLevel {
		c := n.kids[(h>>shift)&levelMask].Load()
		if c == nil {
			return nil
		}
		if c.kids != nil {
			n = c
			continue
		}
		// The key, if present, is this cell or in its chain: a key of
		// another hash would have pushed the cell down first.
		for ; c != nil; c = c.next.Load() {
			if c.key == key {
				return c
			}
		}
		return nil
	}
}

// insertHash is insert with the key's hash h given.
func (t *trie[K]) insertHash(key K, h uint64) *tnode[K] {
	var fresh *tnode[K]
	n, shift := t.root, uint(0)
	for {
		word := &n.kids[(h>>shift)&levelMask]
		c := word.Load()
		switch {
		case c == nil:
			if fresh == nil {
				fresh = &tnode[K]{key: key}
			}
			// nil → cell: publishes the key's cell; fails if another key (or
			// this one) claimed the word first, and then we look again.
			if word.CompareAndSwap(nil, fresh) {
				return fresh
			}
		case c.kids != nil:
			n, shift = c, shift+bitsPerLevel
		case c.key == key:
			return c
		case t.hash(c.key) == h:
			if found := c.appendKey(key, &fresh); found != nil {
				return found
			}
		default:
			// Two hashes share this prefix: push the cell one level down.
			inner := newInner[K]()
			inner.kids[(t.hash(c.key)>>(shift+bitsPerLevel))&levelMask].Store(c)
			// cell → inner node holding that cell: keeps every key reachable.
			if word.CompareAndSwap(c, inner) {
				n, shift = inner, shift+bitsPerLevel
			}
		}
	}
}

// appendKey walks the equal-hash chain that starts at c and returns key's
// cell, appending one (*fresh, made on first need) at the tail if the chain
// lacks it. It returns nil only if it lost a race at the tail; the caller
// retries.
func (c *tnode[K]) appendKey(key K, fresh **tnode[K]) *tnode[K] {
	for {
		if c.key == key {
			return c
		}
		next := c.next.Load()
		if next != nil {
			c = next
			continue
		}
		if *fresh == nil {
			*fresh = &tnode[K]{key: key}
		}
		// nil → cell at the chain's tail.
		if c.next.CompareAndSwap(nil, *fresh) {
			return *fresh
		}
		return nil
	}
}
