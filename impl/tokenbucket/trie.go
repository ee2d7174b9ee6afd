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

// index is the child word of a level-d inner node that hash h descends to.
func index(h uint64, d uint) uint64 { return h >> shiftAt(d) & (fanoutAt(d) - 1) }

// trie is the lock-free map from keys to cells behind a Table: a hash trie
// whose child words change only by compare-and-swap. Lookups, inserts and
// unlinks are lock-free and linearizable (T11, T12).
//
// A node is one of three types, told apart by its first word (node, the
// header they share):
//
//	inner          its child words, fanoutAt(d) of them and nothing else;
//	               the first word is child 0
//	cell           a key, its bucket word, and a chain word (next) to the
//	               next cell whose key has exactly the same 64-bit hash (a
//	               cell does not keep its hash: an insert that meets it
//	               hashes its key again); the first word points to the cell
//	               itself
//	wrapper        a frozen wrapper: the first word holds the trie's frozen
//	               marker, the second (value) the value of the child word
//	               it froze
//
// A child word never holds the node it belongs to, nor the frozen marker,
// so the first word of an inner node is never either: loading a node's
// first word tells the three apart, and the casts asInner, asCell and
// asWrapper check it. The first word of a cell or a wrapper is stored
// before the node is published and never changes; so is a wrapper's value.
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
	root *inner[K] // the inner node of level 0
	// floor is the newest clock reading any reclaim of this trie carried
	// (T12), biased by 1<<63 so that the zero word is the smallest int64: no
	// reclaim yet, and then max(now, floor) is now. It only rises.
	floor seam.Uint64
	// sealed is the next word of a dead cell being unlinked that had no
	// successor. It is never a key's cell, nor any node's value.
	sealed *cell[K]
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

// node is the header that begins every node of the trie, and what a child
// word points to: the node's first word, which says what the node is (see
// trie). Nothing else is read through a *node; the casts asInner, asCell
// and asWrapper turn it into the node's own type, given the first word the
// caller loaded, and panic when that word says the node is something else.
// An inner node has no header of its own: its first word is child 0, which
// keeps an inner node at exactly its child words (spec/tokenbucket.md §6
// measures what a header word of its own would cost).
type node[K comparable] struct {
	first seam.Pointer[node[K]]
}

// inner is an inner node: its child words and nothing else, fanoutAt(d) of
// them at level d. The type shows a narrow node's narrowFanout words; a
// wide node is wideFanout words in a row (newInner), all reached through
// kid.
type inner[K comparable] struct {
	kids [narrowFanout]seam.Pointer[node[K]]
}

// kid is child word i of n, i below the fanout of n's level.
func (n *inner[K]) kid(i uint64) *seam.Pointer[node[K]] {
	return (*seam.Pointer[node[K]])(unsafe.Add(unsafe.Pointer(n), uintptr(i)*unsafe.Sizeof(n.kids[0])))
}

// head is n as a child word holds it: its child 0 is its first word.
func (n *inner[K]) head() *node[K] { return (*node[K])(unsafe.Pointer(n)) }

// cell is a key's cell (see trie).
type cell[K comparable] struct {
	node[K] // points to the cell itself
	key     K
	// next is the chain word: nil, the next cell of an equal hash, or the
	// trie's sealed marker.
	next seam.Pointer[cell[K]]
	// word is the bucket word (tokenbucket.go): (0, 0) while absent, then
	// the tokens and timestamp of the last committed take, and dead at the
	// end. Every change is a 128-bit compare-and-swap.
	word seam.Pair
}

// head is c as a child word holds it, nil for nil.
func (c *cell[K]) head() *node[K] { return (*node[K])(unsafe.Pointer(c)) }

// dead reports whether the cell's bucket word is dead: it is no key's
// bucket any more, and only waits to be unlinked.
func (c *cell[K]) dead() bool { return c.word.LoadLo() == deadLo }

// wrapper is a frozen wrapper (see trie): the frozen form of a child word's
// value. Both words are stored before the wrapper is published and never
// change.
type wrapper[K comparable] struct {
	node[K] // holds the trie's frozen marker
	// value is the value of the child word the wrapper froze: nil, a cell
	// or an inner node.
	value seam.Pointer[node[K]]
}

// asCell is n as a cell, f being n's first word as loaded. It panics unless
// f says n is a cell (it points to n).
func asCell[K comparable](n, f *node[K]) *cell[K] {
	if n == nil || f != n {
		panic("tokenbucket: a trie node that is not a cell used as one")
	}
	return (*cell[K])(unsafe.Pointer(n))
}

// asWrapper is n as a frozen wrapper, f being n's first word as loaded. It
// panics unless f is the trie's frozen marker.
func (t *trie[K]) asWrapper(n, f *node[K]) *wrapper[K] {
	if n == nil || f != t.frozen {
		panic("tokenbucket: a trie node that is not a frozen wrapper used as one")
	}
	return (*wrapper[K])(unsafe.Pointer(n))
}

// asInner is n as an inner node, f being n's first word as loaded. It
// panics unless f says n is one: neither n itself (a cell) nor the frozen
// marker (a wrapper).
func (t *trie[K]) asInner(n, f *node[K]) *inner[K] {
	if n == nil || f == n || f == t.frozen {
		panic("tokenbucket: a trie node that is not an inner node used as one")
	}
	return (*inner[K])(unsafe.Pointer(n))
}

// cellOf is n as a cell when it is one, else nil (n is nil, an inner node or
// a wrapper).
func cellOf[K comparable](n *node[K]) *cell[K] {
	if n == nil {
		return nil
	}
	if f := n.first.Load(); f == n {
		return asCell(n, f)
	}
	return nil
}

// newInner returns an empty inner node of level d.
func newInner[K comparable](d uint) *inner[K] {
	if d < wideLevels {
		return &new([wideFanout / narrowFanout]inner[K])[0]
	}
	return new(inner[K])
}

// newCell returns a fresh cell of key, its first word set, not yet
// published.
func newCell[K comparable](key K) *cell[K] {
	c := &cell[K]{key: key}
	c.first.Store(&c.node)
	return c
}

func newTrie[K comparable]() *trie[K] {
	return &trie[K]{hash: keyHash[K](maphash.MakeSeed()),
		root: newInner[K](0), sealed: new(cell[K]), frozen: new(node[K])}
}

// isFrozen reports whether n, read from a child word, is a frozen wrapper.
func (t *trie[K]) isFrozen(n *node[K]) bool { return n != nil && n.first.Load() == t.frozen }

// thaw is the value a child word stands for: n, or what n wraps.
func (t *trie[K]) thaw(n *node[K]) *node[K] {
	if n == nil {
		return nil
	}
	if f := n.first.Load(); f == t.frozen {
		return t.asWrapper(n, f).value.Load()
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
		c := n.kid(index(h, d)).Load()
		if c == nil {
			return nil
		}
		f := c.first.Load()
		if f == t.frozen {
			if look == lookFast {
				return nil
			}
			if c = t.asWrapper(c, f).value.Load(); c == nil {
				return nil
			}
			f = c.first.Load()
		}
		if f != c {
			n = t.asInner(c, f)
			continue
		}
		// The key, if present, is this cell or in its chain: a key of
		// another hash would have pushed the cell down first.
		for x := asCell(c, f); x != nil && x != t.sealed; x = x.next.Load() {
			if x.key == key && !(look == lookLive && x.dead()) {
				return x
			}
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
		word := n.kid(index(h, d))
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
		f := c.first.Load()
		if f == t.frozen {
			// n is being compacted: finish that, then walk again from the
			// root, which reaches n's replacement.
			t.compact(holder, n, d)
			holder, n, d = nil, t.root, 0
			continue
		}
		if f != c {
			holder, n, d = word, t.asInner(c, f), d+1
			continue
		}
		switch x := asCell(c, f); {
		case x.dead():
			t.unlink(word, x)
		case x.key == key:
			return x
		case t.hash(x.key) == h:
			if found := t.appendKey(x, key, &fresh); found != nil {
				return found
			}
		default:
			// Two hashes share this prefix: push the cell one level down.
			in := newInner[K](d + 1)
			in.kid(index(t.hash(x.key), d+1)).Store(c)
			// cell → inner node holding that cell: keeps every key reachable.
			if word.CompareAndSwap(c, in.head()) {
				holder, n, d = word, in, d+1
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
			c = next
			continue
		}
		if *fresh == nil {
			*fresh = newCell(key)
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
func (t *trie[K]) unlink(word *seam.Pointer[node[K]], c *cell[K]) {
	// nil → sealed: c takes no successor from now on.
	c.next.CompareAndSwap(nil, t.sealed)
	succ := c.next.Load()
	if succ == t.sealed {
		succ = nil
	}
	// dead cell → its successor: unlinks c; fails if another unlink (or a
	// push-down, which keeps c one level down) came first.
	word.CompareAndSwap(&c.node, succ.head())
}

// tidy unlinks the dead heads of the chain at the end of hash h's path.
func (t *trie[K]) tidy(h uint64) {
	n, d := t.root, uint(0)
	for {
		word := n.kid(index(h, d))
		c := word.Load()
		if c == nil {
			return
		}
		f := c.first.Load()
		switch {
		case f == t.frozen:
			return // a frozen word: its compaction drops dead heads
		case f != c:
			n, d = t.asInner(c, f), d+1
		case asCell(c, f).dead():
			t.unlink(word, asCell(c, f)) // then look at the same word again
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
func (t *trie[K]) sweep(holder *seam.Pointer[node[K]], n *inner[K], d uint, forget func(*cell[K]) bool) int {
	forgot := 0
	frozen := false
	for i := range fanoutAt(d) {
		word := n.kid(i)
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
			if c = t.asWrapper(c, f).value.Load(); c == nil {
				continue
			}
			f = c.first.Load()
		}
		if f != c {
			forgot += t.sweep(word, t.asInner(c, f), d+1, forget)
			continue
		}
		for x := asCell(c, f); x != nil && x != t.sealed; x = x.next.Load() {
			if forget(x) {
				forgot++
			}
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
func (t *trie[K]) sparse(n *inner[K], d uint) bool {
	cells := 0
	for i := range fanoutAt(d) {
		c := n.kid(i).Load()
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
func (t *trie[K]) compact(holder *seam.Pointer[node[K]], n *inner[K], d uint) {
	if holder == nil {
		return
	}
	var kids [wideFanout]*node[K]
	live := 0
	for i := range fanoutAt(d) {
		word := n.kid(i)
		c := word.Load()
		for !t.isFrozen(c) {
			w := &wrapper[K]{}
			w.first.Store(t.frozen)
			w.value.Store(c)
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
			next := x.next.Load()
			if next == t.sealed {
				next = nil
			}
			v = next.head()
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
		in := newInner[K](d)
		for i := range fanoutAt(d) {
			in.kid(i).Store(kids[i])
		}
		repl = in.head()
	}
	// n → replacement: unfreezes the structure; a lost race means another
	// helper installed its replacement first, or holder changed.
	holder.CompareAndSwap(n.head(), repl)
}
