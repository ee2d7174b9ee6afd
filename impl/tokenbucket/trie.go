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
// Lookups, inserts and unlinks are lock-free and linearizable (T11, T12).
//
// Each child word of a node holds one of:
//
//	nil              no key with this hash prefix has a cell
//	*tnode, kids≠nil an inner node: descend with the next bitsPerLevel bits
//	*tnode, kids=nil a cell: a key, its bucket word, and a chain (next) of
//	                 cells whose keys have exactly the same 64-bit hash (a
//	                 cell does not keep its hash: an insert that meets it
//	                 hashes its key again)
//
// or, while a reclaim compacts its node, the frozen form of one of these
// (a wrapper: see frozen), and moves only
//
//	nil → cell                 insert: publishes a key's cell
//	cell → inner node          push-down: the node holds that same cell one
//	                           level down, so every key stays reachable
//	dead cell → its successor  unlink: the cell's next, or nil when the next
//	                           is sealed
//	any → frozen(that value)   compaction, first step: the word never
//	                           changes again
//	inner node → replacement   compaction, last step, in the word that holds
//	                           the node: nil when the node held nothing
//	                           live, its one chain of cells (pulled up a
//	                           level), or a fresh copy of the node
//
// A cell's next word holds nil, a cell, or the trie's sealed marker, and
// moves only nil → cell (an append) or nil → sealed (the unlink of a dead
// cell with no successor, so nothing is appended to a cell on its way out);
// once not nil it never changes. A cell dies (its bucket word becomes dead,
// tokenbucket.go) before anything unlinks it, and a dead cell never lives
// again, so a word that pointed to a live cell still does, or points to an
// inner node that does: no unlink loses a live cell. Only a dead cell at the
// head of its chain is unlinked; a dead cell deeper in a chain of equal
// hashes waits until the cells before it are gone.
//
// An inner node left with at most one chain is compacted away by a
// reclaim (compact): every child word is frozen first, so no insert,
// push-down or unlink can change the node once its replacement is computed;
// an operation that meets a frozen word helps finish the compaction and
// starts again from the root. Cells are shared by the node and its
// replacement, so takes, appends and kills go on undisturbed. Memory thus
// follows the keys in use.
type trie[K comparable] struct {
	// hash is the keys' 64-bit hash (keyHash), under a seed drawn for this
	// trie.
	hash func(K) uint64
	root *tnode[K] // an inner node
	// floor is the newest clock reading any reclaim of this trie carried
	// (T12), biased by 1<<63 so that the zero word is the smallest int64: no
	// reclaim yet, and then max(now, floor) is now. It only rises.
	floor seam.Uint64
	// sealed is the next word of a dead cell being unlinked that had no
	// successor. It is never a key's cell.
	sealed *tnode[K]
	// frozenKids marks a frozen wrapper: a node whose kids is frozenKids
	// stands, in a frozen child word, for the value its next holds.
	frozenKids *[fanout]seam.Pointer[tnode[K]]
}

// floorBias turns the floor's signed order into the word's unsigned one.
const floorBias = 1 << 63

// floorMs is the trie's floor (T12).
func (t *trie[K]) floorMs() int64 { return int64(t.floor.Load() ^ floorBias) }

// raiseFloor lifts the floor to nowMs unless it is already as new. Only
// reclaims call it, before any cell they kill dies.
func (t *trie[K]) raiseFloor(nowMs int64) {
	next := uint64(nowMs) ^ floorBias
	for {
		old := t.floor.Load()
		// old → next: the floor rises to this reclaim's clock; a reclaim
		// with a newer clock that came first keeps its own.
		if next <= old || t.floor.CompareAndSwap(old, next) {
			return
		}
	}
}

type tnode[K comparable] struct {
	kids *[fanout]seam.Pointer[tnode[K]] // non-nil for an inner node

	// cell fields
	key  K
	next seam.Pointer[tnode[K]]
	// state is the bucket word (tokenbucket.go): (0, 0) while absent, then
	// the tokens and timestamp of the last committed take, and dead at the
	// end. Every change is a 128-bit compare-and-swap.
	state seam.Pair
}

// dead reports whether the cell's bucket word is dead: it is no key's
// bucket any more, and only waits to be unlinked.
func (c *tnode[K]) dead() bool { return c.state.LoadLo() == deadLo }

func newTrie[K comparable]() *trie[K] {
	return &trie[K]{hash: keyHash[K](maphash.MakeSeed()),
		root: newInner[K](), sealed: &tnode[K]{}, frozenKids: new([fanout]seam.Pointer[tnode[K]])}
}

// frozen reports whether c, read from a child word, is a frozen wrapper.
func (t *trie[K]) frozen(c *tnode[K]) bool { return c != nil && c.kids == t.frozenKids }

// thaw is the value a child word stands for: c, or what c wraps.
func (t *trie[K]) thaw(c *tnode[K]) *tnode[K] {
	if t.frozen(c) {
		return c.next.Load()
	}
	return c
}

func newInner[K comparable]() *tnode[K] {
	return &tnode[K]{kids: new([fanout]seam.Pointer[tnode[K]])}
}

// find returns the first cell of key, dead or alive, or nil when the key has
// none. A caller that finds it dead looks again with findLive or insertHash.
func (t *trie[K]) find(key K) *tnode[K] { return t.findHash(key, t.hash(key), lookThawed) }

// findLive returns key's live cell, or nil when the key has none.
func (t *trie[K]) findLive(key K) *tnode[K] { return t.findHash(key, t.hash(key), lookLive) }

// How findHash looks: lookFast takes a frozen wrapper for an inner node
// (whose kids, frozenKids, are all nil), so it misses the cells of a node
// being compacted; that is a miss, never a wrong cell, and insert's fast
// path then falls back to insertHash, which helps the compaction. The other
// two see through the wrapper; lookLive also skips dead cells.
const (
	lookFast = iota
	lookThawed
	lookLive
)

// insert returns key's first cell, adding an empty one if the key has none. A
// key seen before is found by the read-only walk, which has no insert to
// prepare; the cell it finds may be dead (see find).
func (t *trie[K]) insert(key K) *tnode[K] {
	h := t.hash(key)
	if c := t.findHash(key, h, lookFast); c != nil {
		return c
	}
	return t.insertHash(key, h)
}

// findHash looks for key's cell as look says, with the key's hash h given
// (tests force collisions).
func (t *trie[K]) findHash(key K, h uint64, look int) *tnode[K] {
	n := t.root
	for shift := uint(0); ; shift += bitsPerLevel {
		c := n.kids[(h>>shift)&levelMask].Load()
		if look != lookFast {
			c = t.thaw(c)
		}
		if c == nil {
			return nil
		}
		if c.kids != nil {
			n = c
			continue
		}
		// The key, if present, is this cell or in its chain: a key of
		// another hash would have pushed the cell down first.
		for ; c != nil && c != t.sealed; c = c.next.Load() {
			if c.key == key && !(look == lookLive && c.dead()) {
				return c
			}
		}
		return nil
	}
}

// insertHash returns key's live cell, adding an empty one if the key has
// none, with the key's hash h given. Dead cells at the head of a chain on
// its way are unlinked first.
func (t *trie[K]) insertHash(key K, h uint64) *tnode[K] {
	var fresh *tnode[K]
	var holder *seam.Pointer[tnode[K]] // the word n was read from; nil for the root
	n, shift := t.root, uint(0)
	for {
		word := &n.kids[(h>>shift)&levelMask]
		c := word.Load()
		switch {
		case t.frozen(c):
			// n is being compacted: finish that, then walk again from the
			// root, which reaches n's replacement.
			t.compact(holder, n)
			holder, n, shift = nil, t.root, 0
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
			holder, n, shift = word, c, shift+bitsPerLevel
		case c.dead():
			t.unlink(word, c)
		case c.key == key:
			return c
		case t.hash(c.key) == h:
			if found := t.appendKey(c, key, &fresh); found != nil {
				return found
			}
		default:
			// Two hashes share this prefix: push the cell one level down.
			inner := newInner[K]()
			inner.kids[(t.hash(c.key)>>(shift+bitsPerLevel))&levelMask].Store(c)
			// cell → inner node holding that cell: keeps every key reachable.
			if word.CompareAndSwap(c, inner) {
				holder, n, shift = word, inner, shift+bitsPerLevel
			}
		}
	}
}

// appendKey walks the equal-hash chain that starts at c and returns key's
// live cell, appending one (*fresh, made on first need) at the tail if the
// chain lacks it. It returns nil if it lost a race at the tail or met a
// sealed head; the caller retries.
func (t *trie[K]) appendKey(c *tnode[K], key K, fresh **tnode[K]) *tnode[K] {
	for {
		if c.key == key && !c.dead() {
			return c
		}
		next := c.next.Load()
		if next == t.sealed {
			return nil // a dead head on its way out: the caller unlinks it
		}
		if next != nil {
			c = next
			continue
		}
		if *fresh == nil {
			*fresh = &tnode[K]{key: key}
		}
		// nil → cell at the chain's tail. A dead tail may take a successor:
		// it is then unlinked to that successor instead of to nil.
		if c.next.CompareAndSwap(nil, *fresh) {
			return *fresh
		}
		return nil
	}
}

// unlink removes c, a dead cell that word held at the head of its chain,
// from word. It first settles c's next word: nil becomes sealed, so no
// append can slip in behind the unlink; a next that is already a cell never
// changes again. Then word moves from c to that successor (nil for sealed).
// Anyone may unlink a dead cell; all but the first compare-and-swap fail,
// harmlessly.
func (t *trie[K]) unlink(word *seam.Pointer[tnode[K]], c *tnode[K]) {
	// nil → sealed: c takes no successor from now on.
	c.next.CompareAndSwap(nil, t.sealed)
	succ := c.next.Load()
	if succ == t.sealed {
		succ = nil
	}
	// dead cell → its successor: unlinks c; fails if another unlink (or a
	// push-down, which keeps c one level down) came first.
	word.CompareAndSwap(c, succ)
}

// tidy unlinks the dead heads of the chain at the end of hash h's path.
func (t *trie[K]) tidy(h uint64) {
	n, shift := t.root, uint(0)
	for {
		word := &n.kids[(h>>shift)&levelMask]
		c := word.Load()
		switch {
		case c == nil || t.frozen(c):
			return // a frozen word: its compaction drops dead heads
		case c.kids != nil:
			n, shift = c, shift+bitsPerLevel
		case c.dead():
			t.unlink(word, c) // then look at the same word again
		default:
			return
		}
	}
}

// sweep kills, through forget, the cells of every chain under node and
// unlinks the dead heads; it returns the number of buckets forget reported
// forgotten (ReclaimAt).
//
// holder is the word node was read from (nil for the root); a node that is
// left with at most one chain is compacted away.
func (t *trie[K]) sweep(holder *seam.Pointer[tnode[K]], node *tnode[K], forget func(*tnode[K]) bool) int {
	n := 0
	frozen := false
	for i := range node.kids {
		word := &node.kids[i]
		c := word.Load()
		if t.frozen(c) {
			// Another reclaim is compacting this node. Its cells are still
			// the keys' cells (the replacement shares them), and this
			// reclaim, whose clock and limits are its own, must judge each
			// of them: visit what the frozen word holds, and help finish
			// the compaction after.
			frozen, c = true, t.thaw(c)
		}
		switch {
		case c == nil:
			continue
		case c.kids != nil:
			n += t.sweep(word, c, forget)
			continue
		}
		for x := c; x != nil && x != t.sealed; x = x.next.Load() {
			if forget(x) {
				n++
			}
		}
		// Unlink dead heads until a live cell, an inner node or nothing
		// holds the word. (A frozen word holds a wrapper, which is not a
		// cell: its compaction drops the dead heads instead.)
		for c = word.Load(); c != nil && c.kids == nil && c.dead(); c = word.Load() {
			t.unlink(word, c)
		}
	}
	if holder != nil && (frozen || t.sparse(node)) {
		t.compact(holder, node)
	}
	return n
}

// sparse reports whether node holds at most one chain of cells and no inner
// node, as one read of each child word saw it: compacting it then frees it.
func (t *trie[K]) sparse(node *tnode[K]) bool {
	cells := 0
	for i := range node.kids {
		switch c := node.kids[i].Load(); {
		case c == nil:
		case c.kids != nil:
			return false // an inner node (a frozen word too: compacted already)
		default:
			cells++
		}
	}
	return cells <= 1
}

// compact replaces node, which holder held, by what it holds: nil, its one
// chain of cells, or a fresh copy. It first freezes every child word of
// node (any → frozen(that value)), so the node cannot change any more;
// then it unlinks the dead heads of the frozen chains into its own
// reading, and moves holder from node to the replacement. Every step may be
// done by anyone who meets a frozen word, in any order: a word frozen
// already is left alone, and only the first compare-and-swap of holder
// wins. If holder no longer holds node (its own node was compacted in
// between and now holds node or a copy of it), that compare-and-swap fails
// and node stays, frozen, until an insert or a reclaim meets it through its
// new holder and finishes. The root is never compacted.
func (t *trie[K]) compact(holder *seam.Pointer[tnode[K]], node *tnode[K]) {
	if holder == nil {
		return
	}
	var kids [fanout]*tnode[K]
	live := 0
	for i := range node.kids {
		word := &node.kids[i]
		c := word.Load()
		for !t.frozen(c) {
			w := &tnode[K]{kids: t.frozenKids}
			w.next.Store(c)
			// c → frozen(c): fails if the word changed since the load;
			// then freeze what it holds now.
			if word.CompareAndSwap(c, w) {
				break
			}
			c = word.Load()
		}
		v := t.thaw(word.Load())
		for v != nil && v.kids == nil && v.dead() {
			// nil → sealed on a dead head, as unlink does, so the chain
			// behind it is settled.
			v.next.CompareAndSwap(nil, t.sealed)
			if v = v.next.Load(); v == t.sealed {
				v = nil
			}
		}
		kids[i] = v
		if v != nil {
			live++
		}
	}
	var repl *tnode[K]
	if live == 1 {
		for _, v := range kids {
			if v != nil {
				repl = v
			}
		}
		if repl.kids != nil {
			// An inner node cannot move up a level (its children are
			// indexed by the next level's bits): keep node, as a copy.
			repl, live = nil, 2
		}
	}
	if live > 1 {
		repl = newInner[K]()
		for i, v := range kids {
			repl.kids[i].Store(v)
		}
	}
	// node → replacement: unfreezes the structure; a lost race means
	// another helper installed its replacement first, or holder changed.
	holder.CompareAndSwap(node, repl)
}
