package tokenbucket

import (
	"hash/maphash"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam"
)

// The trie's shape: an inner node at level d (the root is level 0) consumes
// the next bits of the key's 64-bit hash, low bits first, and has one child
// word for each of their values. The first wideLevels levels are 16-way;
// every level below is 4-way (spec/tokenbucket.md §6). The top levels are
// full once a table holds a few thousand keys, so wide nodes there cost
// next to nothing and keep walks short; below, most nodes hold two or three
// keys, and a small node there wastes fewer empty child words.
const (
	wideLevels   = 3
	wideBits     = 4
	narrowBits   = 2
	wideFanout   = 1 << wideBits
	narrowFanout = 1 << narrowBits
)

// fanoutAt is the number of child words of an inner node at level d.
func fanoutAt(d uint) uint64 {
	if d < wideLevels {
		return wideFanout
	}
	return narrowFanout
}

// shiftAt is the lowest hash bit that level d consumes.
func shiftAt(d uint) uint {
	if d < wideLevels {
		return d * wideBits
	}
	return wideLevels*wideBits + (d-wideLevels)*narrowBits
}

// slot is the child word of a level-d inner node that hash h descends to.
func slot(h uint64, d uint) uint64 { return h >> shiftAt(d) & (fanoutAt(d) - 1) }

// trie is the lock-free map from keys to cells behind a Table: a hash trie
// whose child words change only by compare-and-swap. Lookups, inserts and
// unlinks are lock-free and linearizable (T11, T12).
//
// A node is one of three things, told apart by its first word (node):
//
//	inner node     its child words, fanoutAt(d) of them and nothing else;
//	               the first word is child 0
//	cell           a key, its bucket word, and a chain (next) of cells whose
//	               keys have exactly the same 64-bit hash (a cell does not
//	               keep its hash: an insert that meets it hashes its key
//	               again); the first word points to the cell itself
//	frozen wrapper a cell-shaped node whose first word is the trie's frozen
//	               marker; its next holds the value of the word it froze
//
// A child word never holds the node it belongs to, nor the frozen marker,
// so the first word of an inner node is never either: loading a node's
// first word tells the three apart. The first word of a cell or a wrapper
// is stored before the node is published and never changes.
//
// Each child word of an inner node holds one of
//
//	nil         no key with this hash prefix has a cell
//	inner node  descend with the next level's bits
//	cell        the head of the chain of this hash prefix's one hash
//
// or, while a reclaim compacts its node, the frozen form of one of these
// (a wrapper), and moves only
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
	root *node[K] // an inner node of level 0
	// floor is the newest clock reading any reclaim of this trie carried
	// (T12), biased by 1<<63 so that the zero word is the smallest int64: no
	// reclaim yet, and then max(now, floor) is now. It only rises.
	floor seam.Uint64
	// sealed is the next word of a dead cell being unlinked that had no
	// successor. It is never a key's cell, nor any node's value.
	sealed *node[K]
	// frozen marks a frozen wrapper: a wrapper's first word holds it. No
	// child word ever does.
	frozen *node[K]
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

// node is a trie node as a child word holds it: its first word, which says
// what the node is (see trie). An inner node is an array of nodes, each of
// them one child word; a cell and a wrapper begin with one.
type node[K comparable] struct {
	first seam.Pointer[node[K]]
}

// cell is a key's cell, or a frozen wrapper (see trie). A cell's node word
// points to the cell itself; a wrapper's holds the trie's frozen marker, and
// its next the value of the child word it froze.
type cell[K comparable] struct {
	node[K]
	key  K
	next seam.Pointer[node[K]]
	// state is the bucket word (tokenbucket.go): (0, 0) while absent, then
	// the tokens and timestamp of the last committed take, and dead at the
	// end. Every change is a 128-bit compare-and-swap.
	state seam.Pair
}

// dead reports whether the cell's bucket word is dead: it is no key's
// bucket any more, and only waits to be unlinked.
func (c *cell[K]) dead() bool { return c.state.LoadLo() == deadLo }

// asCell is n, which is a cell or a wrapper (or nil), as one.
func asCell[K comparable](n *node[K]) *cell[K] { return (*cell[K])(unsafe.Pointer(n)) }

// cellOf is n as a cell when it is one, else nil (n is nil, an inner node or
// a wrapper).
func cellOf[K comparable](n *node[K]) *cell[K] {
	if n != nil && n.first.Load() == n {
		return asCell(n)
	}
	return nil
}

// kid is child word i of the inner node n.
func kid[K comparable](n *node[K], i uint64) *seam.Pointer[node[K]] {
	return &(*node[K])(unsafe.Add(unsafe.Pointer(n), uintptr(i)*unsafe.Sizeof(*n))).first
}

// newInner returns an empty inner node of level d.
func newInner[K comparable](d uint) *node[K] {
	if d < wideLevels {
		return &new([wideFanout]node[K])[0]
	}
	return &new([narrowFanout]node[K])[0]
}

// newCell returns a fresh cell of key, its node word set, not yet
// published.
func newCell[K comparable](key K) *cell[K] {
	c := &cell[K]{key: key}
	c.first.Store(&c.node)
	return c
}

func newTrie[K comparable]() *trie[K] {
	return &trie[K]{hash: keyHash[K](maphash.MakeSeed()),
		root: newInner[K](0), sealed: new(node[K]), frozen: new(node[K])}
}

// isFrozen reports whether n, read from a child word, is a frozen wrapper.
func (t *trie[K]) isFrozen(n *node[K]) bool { return n != nil && n.first.Load() == t.frozen }

// thaw is the value a child word stands for: n, or what n wraps.
func (t *trie[K]) thaw(n *node[K]) *node[K] {
	if t.isFrozen(n) {
		return asCell(n).next.Load()
	}
	return n
}

// find returns the first cell of key, dead or alive, or nil when the key has
// none. A caller that finds it dead looks again with findLive or insertHash.
func (t *trie[K]) find(key K) *cell[K] { return t.findHash(key, t.hash(key), lookThawed) }

// findLive returns key's live cell, or nil when the key has none.
func (t *trie[K]) findLive(key K) *cell[K] { return t.findHash(key, t.hash(key), lookLive) }

// How findHash looks: lookFast takes a frozen wrapper for an empty word, so
// it misses the cells of a node being compacted; that is a miss, never a
// wrong cell, and insert's fast path then falls back to insertHash, which
// helps the compaction. The other two see through the wrapper; lookLive
// also skips dead cells.
const (
	lookFast = iota
	lookThawed
	lookLive
)

// insert returns key's first cell, adding an empty one if the key has none. A
// key seen before is found by the read-only walk, which has no insert to
// prepare; the cell it finds may be dead (see find).
func (t *trie[K]) insert(key K) *cell[K] {
	h := t.hash(key)
	if c := t.findHash(key, h, lookFast); c != nil {
		return c
	}
	return t.insertHash(key, h)
}

// findHash looks for key's cell as look says, with the key's hash h given
// (tests force collisions).
func (t *trie[K]) findHash(key K, h uint64, look int) *cell[K] {
	n := t.root
	for d := uint(0); ; d++ {
		c := kid(n, slot(h, d)).Load()
		if c == nil {
			return nil
		}
		f := c.first.Load()
		if f == t.frozen {
			if look == lookFast {
				return nil
			}
			if c = asCell(c).next.Load(); c == nil {
				return nil
			}
			f = c.first.Load()
		}
		if f != c {
			n = c // an inner node
			continue
		}
		// The key, if present, is this cell or in its chain: a key of
		// another hash would have pushed the cell down first.
		for c != nil && c != t.sealed {
			x := asCell(c)
			if x.key == key && !(look == lookLive && x.dead()) {
				return x
			}
			c = x.next.Load()
		}
		return nil
	}
}

// insertHash returns key's live cell, adding an empty one if the key has
// none, with the key's hash h given. Dead cells at the head of a chain on
// its way are unlinked first.
func (t *trie[K]) insertHash(key K, h uint64) *cell[K] {
	var fresh *cell[K]
	var holder *seam.Pointer[node[K]] // the word n was read from; nil for the root
	n, d := t.root, uint(0)
	for {
		word := kid(n, slot(h, d))
		c := word.Load()
		if c == nil {
			if fresh == nil {
				fresh = newCell(key)
			}
			// nil → cell: publishes the key's cell; fails if another key (or
			// this one) claimed the word first, and then we look again.
			if word.CompareAndSwap(nil, &fresh.node) {
				return fresh
			}
			continue
		}
		switch f := c.first.Load(); {
		case f == t.frozen:
			// n is being compacted: finish that, then walk again from the
			// root, which reaches n's replacement.
			t.compact(holder, n, d)
			holder, n, d = nil, t.root, 0
		case f != c:
			holder, n, d = word, c, d+1 // an inner node
		case asCell(c).dead():
			t.unlink(word, asCell(c))
		case asCell(c).key == key:
			return asCell(c)
		case t.hash(asCell(c).key) == h:
			if found := t.appendKey(asCell(c), key, &fresh); found != nil {
				return found
			}
		default:
			// Two hashes share this prefix: push the cell one level down.
			inner := newInner[K](d + 1)
			kid(inner, slot(t.hash(asCell(c).key), d+1)).Store(c)
			// cell → inner node holding that cell: keeps every key reachable.
			if word.CompareAndSwap(c, inner) {
				holder, n, d = word, inner, d+1
			}
		}
	}
}

// appendKey walks the equal-hash chain that starts at c and returns key's
// live cell, appending one (*fresh, made on first need) at the tail if the
// chain lacks it. It returns nil if it lost a race at the tail or met a
// sealed head; the caller retries.
func (t *trie[K]) appendKey(c *cell[K], key K, fresh **cell[K]) *cell[K] {
	for {
		if c.key == key && !c.dead() {
			return c
		}
		next := c.next.Load()
		if next == t.sealed {
			return nil // a dead head on its way out: the caller unlinks it
		}
		if next != nil {
			c = asCell(next)
			continue
		}
		if *fresh == nil {
			*fresh = newCell(key)
		}
		// nil → cell at the chain's tail. A dead tail may take a successor:
		// it is then unlinked to that successor instead of to nil.
		if c.next.CompareAndSwap(nil, &(*fresh).node) {
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
func (t *trie[K]) unlink(word *seam.Pointer[node[K]], c *cell[K]) {
	// nil → sealed: c takes no successor from now on.
	c.next.CompareAndSwap(nil, t.sealed)
	succ := c.next.Load()
	if succ == t.sealed {
		succ = nil
	}
	// dead cell → its successor: unlinks c; fails if another unlink (or a
	// push-down, which keeps c one level down) came first.
	word.CompareAndSwap(&c.node, succ)
}

// tidy unlinks the dead heads of the chain at the end of hash h's path.
func (t *trie[K]) tidy(h uint64) {
	n, d := t.root, uint(0)
	for {
		word := kid(n, slot(h, d))
		c := word.Load()
		if c == nil {
			return
		}
		switch f := c.first.Load(); {
		case f == t.frozen:
			return // a frozen word: its compaction drops dead heads
		case f != c:
			n, d = c, d+1 // an inner node
		case asCell(c).dead():
			t.unlink(word, asCell(c)) // then look at the same word again
		default:
			return
		}
	}
}

// sweep kills, through forget, the cells of every chain under n, an inner
// node of level d, and unlinks the dead heads; it returns the number of
// buckets forget reported forgotten (ReclaimAt).
//
// holder is the word n was read from (nil for the root); a node that is
// left with at most one chain is compacted away.
func (t *trie[K]) sweep(holder *seam.Pointer[node[K]], n *node[K], d uint, forget func(*cell[K]) bool) int {
	forgot := 0
	frozen := false
	for i := range fanoutAt(d) {
		word := kid(n, i)
		c := word.Load()
		if c == nil {
			continue
		}
		f := c.first.Load()
		if f == t.frozen {
			// Another reclaim is compacting this node. Its cells are still
			// the keys' cells (the replacement shares them), and this
			// reclaim, whose clock and limits are its own, must judge each
			// of them: visit what the frozen word holds, and help finish
			// the compaction after.
			frozen = true
			if c = asCell(c).next.Load(); c == nil {
				continue
			}
			f = c.first.Load()
		}
		if f != c {
			forgot += t.sweep(word, c, d+1, forget) // an inner node
			continue
		}
		for c != nil && c != t.sealed {
			x := asCell(c)
			if forget(x) {
				forgot++
			}
			c = x.next.Load()
		}
		// Unlink dead heads until a live cell, an inner node or nothing
		// holds the word. (A frozen word holds a wrapper, which is not a
		// cell: its compaction drops the dead heads instead.)
		for x := cellOf(word.Load()); x != nil && x.dead(); x = cellOf(word.Load()) {
			t.unlink(word, x)
		}
	}
	if holder != nil && (frozen || t.sparse(n, d)) {
		t.compact(holder, n, d)
	}
	return forgot
}

// sparse reports whether n, an inner node of level d, holds at most one
// chain of cells and no inner node, as one read of each child word saw it:
// compacting it then frees it.
func (t *trie[K]) sparse(n *node[K], d uint) bool {
	cells := 0
	for i := range fanoutAt(d) {
		c := kid(n, i).Load()
		if c == nil {
			continue
		}
		if c.first.Load() != c {
			return false // an inner node (a frozen word too: compacted already)
		}
		cells++
	}
	return cells <= 1
}

// compact replaces n, an inner node of level d that holder held, by what
// it holds: nil, its one chain of cells, or a fresh copy. It first freezes
// every child word of n (any → frozen(that value)), so the node cannot
// change any more; then it unlinks the dead heads of the frozen chains into
// its own reading, and moves holder from n to the replacement. Every step
// may be done by anyone who meets a frozen word, in any order: a word
// frozen already is left alone, and only the first compare-and-swap of
// holder wins. If holder no longer holds n (its own node was compacted in
// between and now holds n or a copy of it), that compare-and-swap fails
// and n stays, frozen, until an insert or a reclaim meets it through its
// new holder and finishes. The root is never compacted.
func (t *trie[K]) compact(holder *seam.Pointer[node[K]], n *node[K], d uint) {
	if holder == nil {
		return
	}
	var kids [wideFanout]*node[K]
	live := 0
	for i := range fanoutAt(d) {
		word := kid(n, i)
		c := word.Load()
		for !t.isFrozen(c) {
			w := &cell[K]{}
			w.first.Store(t.frozen)
			w.next.Store(c)
			// c → frozen(c): fails if the word changed since the load;
			// then freeze what it holds now.
			if word.CompareAndSwap(c, &w.node) {
				break
			}
			c = word.Load()
		}
		v := t.thaw(word.Load())
		for x := cellOf(v); x != nil && x.dead(); x = cellOf(v) {
			// nil → sealed on a dead head, as unlink does, so the chain
			// behind it is settled.
			x.next.CompareAndSwap(nil, t.sealed)
			if v = x.next.Load(); v == t.sealed {
				v = nil
			}
		}
		kids[i] = v
		if v != nil {
			live++
		}
	}
	var repl *node[K]
	if live == 1 {
		for _, v := range kids {
			if v != nil {
				repl = v
			}
		}
		if cellOf(repl) == nil {
			// An inner node cannot move up a level (its children are
			// indexed by the next level's bits): keep n, as a copy.
			repl, live = nil, 2
		}
	}
	if live > 1 {
		repl = newInner[K](d)
		for i := range fanoutAt(d) {
			kid(repl, i).Store(kids[i])
		}
	}
	// n → replacement: unfreezes the structure; a lost race means another
	// helper installed its replacement first, or holder changed.
	holder.CompareAndSwap(n, repl)
}
