package interleave

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tollgate/tollgate/internal/layout"
)

// Naming the words of a table. Every hooked copy of impl/ describes its
// table through the code go generate writes into it (internal/interleave/
// layout): the words at fixed places in the table, by name and address; the
// fields of a credit table's payload boxes; and accessors that walk a
// token-bucket trie and pin its hash. With them the explorer gives every
// seam word an id that is the same in every run (addresses are not: each
// run has a fresh table) and a name for traces, and renders the values of
// pointer words. It reads between steps, without switch points, and never
// writes a word (it does set each trie's hash, see addTrie).

// tableLayout is the layout of a table of a hooked copy.
func tableLayout(tab any) layout.Layout {
	t, ok := tab.(layout.Table)
	if !ok {
		panic(fmt.Sprintf("explore: table %T has no layout: it is not a hooked copy of impl/ (run go generate ./internal/mutants)", tab))
	}
	return t.Layout()
}

// words is the per-exploration word naming: the words at fixed places by
// their offset in the table, trie words by their place in the structure,
// interned to ids stable across runs.
type words struct {
	names  map[uintptr]string  // the words at fixed places, by offset
	boxes  layout.Boxes        // nil for a table without payload boxes
	trie   layout.Tries        // nil for a table without a trie; the current run's
	keys   []string            // the scenario's keys, to name trie words by
	hash   func(string) uint64 // the keys' hash in every trie of the exploration
	intern map[string]int32
	labels map[int32]string
	// per run
	base unsafe.Pointer
	// fields names the fields of the heap objects (payload boxes) a
	// rendered value held: "slots[0].box(g1).payload".
	fields map[unsafe.Pointer]string
	addr   map[unsafe.Pointer]int32
	tries  []namedTrie
}

type namedTrie struct {
	p    unsafe.Pointer
	name string
}

const dynamicBase = 1 << 20

// privateWord is the id of a word no walk of this run's tries reaches and
// no rendered box holds: a node being built, or a word only a pointer
// outside the trie leads to (a frozen wrapper's own next word). Traces call
// it so; the search compares words by address and never asks.
const privateWord int32 = -2

// newWords names the words of the tables lay is one of.
func newWords(lay layout.Layout) *words {
	w := &words{names: map[uintptr]string{}, fields: map[unsafe.Pointer]string{}, intern: map[string]int32{}, labels: map[int32]string{}}
	base := lay.Base()
	for _, word := range lay.Words() {
		w.names[uintptr(word.Addr)-uintptr(base)] = word.Name
	}
	w.boxes, _ = lay.(layout.Boxes)
	w.trie, _ = lay.(layout.Tries)
	return w
}

// reset starts a run over the table lay describes.
func (w *words) reset(lay layout.Layout) {
	w.base = lay.Base()
	clear(w.fields)
	if w.trie != nil {
		w.trie = lay.(layout.Tries)
		w.addr = map[unsafe.Pointer]int32{}
		w.tries = w.tries[:0]
	}
}

func (w *words) id(addr unsafe.Pointer) int32 {
	if uintptr(addr) >= uintptr(w.base) {
		off := uintptr(addr) - uintptr(w.base)
		if _, ok := w.names[off]; ok {
			return int32(off)
		}
	}
	if w.trie == nil {
		return privateWord
	}
	if id, ok := w.addr[addr]; ok {
		return id
	}
	w.walk()
	if id, ok := w.addr[addr]; ok {
		return id
	}
	// Not reachable from any trie this run has seen: a node being built,
	// which no other thread can reach until it is published.
	return privateWord
}

// name renders a word for a trace.
func (w *words) name(addr unsafe.Pointer) string {
	if f, ok := w.fields[addr]; ok {
		return f
	}
	id := w.id(addr)
	switch {
	case id == privateWord:
		return "unpublished word"
	case id < dynamicBase:
		return w.names[uintptr(id)]
	}
	return w.labels[id]
}

func (w *words) register(addr unsafe.Pointer, key, label string) {
	id, ok := w.intern[key]
	if !ok {
		id = int32(dynamicBase + len(w.intern))
		w.intern[key] = id
		w.labels[id] = label
	}
	w.addr[addr] = id
}

// addTrie records a trie this run has seen (the table's first one, or one
// a reset_all stored), pins its hash and names it.
func (w *words) addTrie(p unsafe.Pointer, name string) {
	for _, t := range w.tries {
		if t.p == p {
			return
		}
	}
	w.trie.SetHash(p, w.hash)
	w.tries = append(w.tries, namedTrie{p, name})
	w.register(w.trie.Floor(p), name+".floor", name+".floor")
}

// thaw is what a child word's value c stands for: c, or the value c wraps
// when it is a frozen wrapper of a trie of this run.
func (w *words) thaw(c unsafe.Pointer) unsafe.Pointer {
	if c != nil && w.isFrozen(c) {
		_, next := w.trie.Next(c)
		return next
	}
	return c
}

// isFrozen reports whether the node at p is a frozen wrapper.
func (w *words) isFrozen(p unsafe.Pointer) bool {
	f := w.trie.First(p)
	for _, t := range w.tries {
		if f != nil && w.trie.Frozen(t.p) == f {
			return true
		}
	}
	return false
}

// isInner reports whether the node at p, which is not a frozen wrapper, is
// an inner node: a cell's first word holds the cell itself.
func (w *words) isInner(p unsafe.Pointer) bool { return w.trie.First(p) != p }

// isFrozenMarker reports whether p is the frozen marker of a trie of this
// run (the value of a frozen wrapper's first word).
func (w *words) isFrozenMarker(p unsafe.Pointer) bool {
	for _, t := range w.tries {
		if w.trie.Frozen(t.p) == p {
			return true
		}
	}
	return false
}

// isSealed reports whether p is the sealed marker of a trie of this run.
func (w *words) isSealed(p unsafe.Pointer) bool {
	for _, t := range w.tries {
		if w.trie.Sealed(t.p) == p {
			return true
		}
	}
	return false
}

func (w *words) trieName(p unsafe.Pointer) string {
	for _, t := range w.tries {
		if t.p == p {
			return t.name
		}
	}
	return "trie?"
}

// walk names every word reachable from the tries of this run.
func (w *words) walk() {
	for _, t := range w.tries {
		w.register(w.trie.Floor(t.p), t.name+".floor", t.name+".floor")
		w.walkInner(w.trie.Root(t.p), t.name, nil)
	}
}

// walkInner names the words under node, an inner node at level len(path).
func (w *words) walkInner(node unsafe.Pointer, trie string, path []int) {
	s := w.trie
	for j := range s.Fanout(len(path)) {
		addr, child := s.Child(node, j)
		p := append(append([]int(nil), path...), j)
		if _, ok := w.addr[addr]; !ok {
			w.register(addr, trie+"/"+digits(p), trie+w.pathLabel(p))
		}
		child = w.thaw(child)
		switch {
		case child == nil:
		case w.isInner(child):
			w.walkInner(child, trie, p)
		default:
			w.walkCell(child, trie)
		}
	}
}

func (w *words) walkCell(c unsafe.Pointer, trie string) {
	for c != nil && !w.isSealed(c) {
		k := strconv.Quote(w.trie.Key(c))
		w.register(c, trie+"/cell "+k+".first", trie+" cell "+k+".first")
		w.register(w.trie.State(c), trie+"/cell "+k+".word", trie+" cell "+k+".word")
		next, n := w.trie.Next(c)
		w.register(next, trie+"/cell "+k+".next", trie+" cell "+k+".next")
		c = n
	}
}

func digits(p []int) string {
	s := make([]string, len(p))
	for i, d := range p {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, ".")
}

// pathLabel names a child word by the scenario keys whose hash path goes
// through it: trie0[k1,k2][k2] is the word of the second level on k2's
// path below the first-level word k1 and k2 share.
func (w *words) pathLabel(p []int) string {
	var b strings.Builder
	for level := range p {
		var ks []string
		for _, k := range w.keys {
			h := w.hash(k)
			match := true
			for l := 0; l <= level; l++ {
				if w.trie.Index(h, l) != p[l] {
					match = false
					break
				}
			}
			if match {
				ks = append(ks, strconv.Quote(k))
			}
		}
		if len(ks) == 0 {
			fmt.Fprintf(&b, "[#%d]", p[level])
			continue
		}
		sort.Strings(ks)
		b.WriteString("[" + strings.Join(ks, ",") + "]")
	}
	return b.String()
}

// pinnedHash finds the first salt under which the collide keys share their
// first 4 hash bits and differ pairwise in the next 4, and every other key
// has first 4 bits of its own, and returns that salted hash, under which the
// keys of same all have the hash of same[0] (which is one of collide or
// others). It is set as every explored trie's hash (the trie's test hook),
// so the trie has the same shape in every run and every process: a schedule
// printed by one process replays in another. (A maphash seed cannot be made
// from a number, so pinning one would differ from process to process.)
func pinnedHash(collide, others, same []string) func(string) uint64 {
	for salt := uint64(0); ; salt++ {
		if salt > 1_000_000 {
			panic("explore: no hash salt gives the scenario's trie shape")
		}
		s := saltedHash(salt)
		lvl := func(k string, l uint) uint64 { return (s(k) >> (4 * l)) & 15 }
		ok := true
		first := map[uint64]bool{}
		second := map[uint64]bool{}
		for i, k := range collide {
			if i > 0 && lvl(k, 0) != lvl(collide[0], 0) {
				ok = false
				break
			}
			if second[lvl(k, 1)] {
				ok = false
				break
			}
			second[lvl(k, 1)] = true
		}
		if len(collide) > 0 {
			first[lvl(collide[0], 0)] = true
		}
		for _, k := range others {
			if !ok {
				break
			}
			if first[lvl(k, 0)] {
				ok = false
			}
			first[lvl(k, 0)] = true
		}
		if ok && len(same) > 0 {
			salted, head := s, same[0]
			s = func(k string) uint64 {
				if slices.Contains(same, k) {
					k = head
				}
				return salted(k)
			}
		}
		if ok {
			return s
		}
	}
}

// noteBox names the fields of box value v, held by the word called word:
// slots[0].box(g1).payload. A box is immutable once published but for its
// flag, yet a faulty enqueue may store to it later, and a trace names the
// field it stored to.
func (w *words) noteBox(word string, v any) {
	if w.boxes == nil {
		return
	}
	if b, ok := w.boxes.Box(v); ok {
		for _, f := range b.Fields {
			w.fields[f.Addr] = fmt.Sprintf("%s(g%d).%s", word, b.Gen, f.Name)
		}
	}
}

// value renders the value of a seam word: a row, a trie node, a bucket
// state, a trie, a pair ({lo hi}), or a number or flag.
func (w *words) value(v any) string {
	if v == nil {
		return "nil"
	}
	if s, ok := pairValue(v); ok {
		return s
	}
	// reflect reads no field here: it tells a pointer from a number or a
	// flag, and finds a nil pointer, for values whose types only the hooked
	// copies know; their fields are read by the copies' own code.
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return fmt.Sprint(v)
	}
	if rv.IsNil() {
		return "nil"
	}
	e := rv.Elem()
	if e.Kind() != reflect.Struct {
		return fmt.Sprint(e.Interface())
	}
	if w.boxes != nil {
		if b, ok := w.boxes.Box(v); ok {
			return fmt.Sprintf("{g%d %q @%dms}", b.Gen, fmt.Sprint(b.Payload), b.MarkedMs)
		}
	}
	if w.trie != nil {
		if p, ok := w.trie.IsNode(v); ok {
			return w.nodeValue(p)
		}
		if p, ok := w.trie.IsTrie(v); ok {
			return w.trieName(p)
		}
	}
	return fmt.Sprintf("%+v", e.Interface())
}

// nodeValue renders the trie node at p.
func (w *words) nodeValue(p unsafe.Pointer) string {
	switch {
	case w.isSealed(p):
		return "sealed"
	case w.isFrozenMarker(p):
		return "frozen marker"
	case w.isFrozen(p):
		// A plain read of the wrapper's next: it is written once, before
		// the wrapper is published, and a trace is rendered between steps,
		// where a hooked load would be a switch point.
		if _, inner := w.trie.Next(p); inner != nil {
			return "frozen(" + w.nodeValue(inner) + ")"
		}
		return "frozen(nil)"
	case !w.isInner(p):
		return fmt.Sprintf("cell %q", w.trie.Key(p))
	}
	return "inner node"
}

// saltedHash is FNV-1a over the key's bytes, started from salt and mixed by
// the SplitMix64 finalizer so that every 4-bit level of the result varies.
func saltedHash(salt uint64) func(string) uint64 {
	return func(k string) uint64 {
		h := 14695981039346656037 ^ salt
		for i := 0; i < len(k); i++ {
			h = (h ^ uint64(k[i])) * 1099511628211
		}
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		return h ^ h>>31
	}
}
