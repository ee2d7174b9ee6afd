package explore

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Naming the words of a table. The explored tables keep their words in
// unexported fields; this test tool reads them with reflect and unsafe:
// addresses, to give every seam word an id that is the same in every run
// (addresses are not: each run has a fresh table) and a name for traces;
// and the values of pointer words, to render them. It never writes a word
// (it does set the token-bucket trie's hash hook, see addTrie).

var hookedPkg = reflect.TypeOf(hooked.Bool{}).PkgPath()

func isWord(t reflect.Type) bool { return t.Kind() == reflect.Struct && t.PkgPath() == hookedPkg }

// rawOffset is where a hooked.Pointer keeps its pointer: the v field of its
// sync/atomic.Pointer.
var rawOffset = func() uintptr {
	t := reflect.TypeOf(hooked.Pointer[int]{})
	v, ok := t.FieldByName("v")
	if !ok {
		panic("explore: hooked.Pointer has no field v")
	}
	inner, ok := v.Type.FieldByName("v")
	if !ok || inner.Type.Kind() != reflect.UnsafePointer {
		panic("explore: sync/atomic.Pointer has no unsafe.Pointer field v")
	}
	return v.Offset + inner.Offset
}()

// loadWord reads a hooked.Pointer word without switching.
func loadWord(addr unsafe.Pointer) unsafe.Pointer {
	return atomic.LoadPointer((*unsafe.Pointer)(unsafe.Add(addr, rawOffset)))
}

// pointee is the T of a hooked.Pointer[T] type.
func pointee(word reflect.Type) reflect.Type {
	v, _ := word.FieldByName("v") // sync/atomic.Pointer[T]
	z := v.Type.Field(0)          // _ [0]*T
	return z.Type.Elem().Elem()   // T
}

// layout is the static words of a table type, by offset.
type layout struct {
	typ   reflect.Type // the table struct
	names map[uintptr]string
	words map[uintptr]reflect.Type // the hooked type of each word
}

func newLayout(t reflect.Type) *layout {
	l := &layout{typ: t, names: map[uintptr]string{}, words: map[uintptr]reflect.Type{}}
	l.walk(t, "", 0)
	return l
}

func (l *layout) walk(t reflect.Type, name string, off uintptr) {
	switch {
	case isWord(t):
		l.names[off], l.words[off] = name, t
	case t.Kind() == reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			n := f.Name
			if name != "" {
				n = name + "." + f.Name
			}
			if f.Anonymous {
				n = name
			}
			l.walk(f.Type, n, off+f.Offset)
		}
	case t.Kind() == reflect.Array:
		for i := 0; i < t.Len(); i++ {
			l.walk(t.Elem(), fmt.Sprintf("%s[%d]", name, i), off+uintptr(i)*t.Elem().Size())
		}
	}
}

// tableOf returns the address of the struct behind a table interface and
// its type.
func tableOf(tab any) (unsafe.Pointer, reflect.Type) {
	v := reflect.ValueOf(tab)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("explore: table %T is not a pointer to a struct", tab))
	}
	return v.UnsafePointer(), v.Elem().Type()
}

// readable makes an unexported struct field of an addressable value
// readable.
func readable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// trieShape is the layout of the token-bucket trie types, found from the
// table type.
type trieShape struct {
	trieT, nodeT, keyT                 reflect.Type
	forcedOff, rootOff, floorOff       uintptr
	sealedOff, frozenKidsOff           uintptr
	kidsOff, keyOff, nextOff, stateOff uintptr
	stateWordT                         reflect.Type
	fanout                             int
	bucketsOff                         uintptr
}

func newTrieShape(table reflect.Type) (*trieShape, bool) {
	b, ok := table.FieldByName("buckets")
	if !ok || !isWord(b.Type) {
		return nil, false
	}
	s := &trieShape{bucketsOff: b.Offset, trieT: pointee(b.Type)}
	get := func(t reflect.Type, name string) reflect.StructField {
		f, ok := t.FieldByName(name)
		if !ok {
			panic(fmt.Sprintf("explore: %v has no field %s", t, name))
		}
		return f
	}
	forced, root := get(s.trieT, "forced"), get(s.trieT, "root")
	s.forcedOff, s.rootOff, s.nodeT = forced.Offset, root.Offset, root.Type.Elem()
	s.floorOff, s.sealedOff = get(s.trieT, "floor").Offset, get(s.trieT, "sealed").Offset
	s.frozenKidsOff = get(s.trieT, "frozenKids").Offset
	kids := get(s.nodeT, "kids")
	s.kidsOff, s.fanout = kids.Offset, kids.Type.Elem().Len()
	key := get(s.nodeT, "key")
	s.keyOff, s.keyT = key.Offset, key.Type
	st := get(s.nodeT, "state")
	s.nextOff, s.stateOff, s.stateWordT = get(s.nodeT, "next").Offset, st.Offset, st.Type
	return s, true
}

func (s *trieShape) kids(node unsafe.Pointer) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(node, s.kidsOff))
}

func (s *trieShape) key(node unsafe.Pointer) string {
	return fmt.Sprint(reflect.NewAt(s.keyT, unsafe.Add(node, s.keyOff)).Elem().Interface())
}

// forced is the trie's hash hook; the explorer's keys are strings.
func (s *trieShape) forced(trie unsafe.Pointer) *func(string) uint64 {
	return (*func(string) uint64)(unsafe.Add(trie, s.forcedOff))
}

func (s *trieShape) root(trie unsafe.Pointer) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(trie, s.rootOff))
}

// sealed is the trie's marker that ends the chain of a cell being unlinked.
func (s *trieShape) sealed(trie unsafe.Pointer) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(trie, s.sealedOff))
}

// frozenKids is the trie's marker of a frozen wrapper's kids.
func (s *trieShape) frozenKids(trie unsafe.Pointer) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(trie, s.frozenKidsOff))
}

// floor is the address of the trie's floor word.
func (s *trieShape) floor(trie unsafe.Pointer) unsafe.Pointer { return unsafe.Add(trie, s.floorOff) }

// words is the per-exploration word naming: static words by their offset
// in the table, trie words by their place in the structure, interned to
// ids stable across runs.
type words struct {
	lay    *layout
	trie   *trieShape          // nil for a table without a trie
	keys   []string            // the scenario's keys, to name trie words by
	hash   func(string) uint64 // the keys' hash in every trie of the exploration
	intern map[string]int32
	labels map[int32]string
	// per run
	base  unsafe.Pointer
	addr  map[unsafe.Pointer]int32
	tries []namedTrie
}

type namedTrie struct {
	p    unsafe.Pointer
	name string
}

const dynamicBase = 1 << 20

// privateWord is the id of a word no walk of this run's tries reaches: a
// node being built, or a word only a pointer outside the trie leads to (a
// frozen wrapper's own next word). Traces call it so; the search compares
// words by address and never asks.
const privateWord int32 = -2

func newWords(table reflect.Type) *words {
	w := &words{lay: newLayout(table), intern: map[string]int32{}, labels: map[int32]string{}}
	if s, ok := newTrieShape(table); ok {
		w.trie = s
	}
	return w
}

// reset starts a run over the table at base.
func (w *words) reset(base unsafe.Pointer) {
	w.base = base
	if w.trie != nil {
		w.addr = map[unsafe.Pointer]int32{}
		w.tries = w.tries[:0]
	}
}

func (w *words) id(addr unsafe.Pointer) int32 {
	off := uintptr(addr) - uintptr(w.base)
	if uintptr(addr) >= uintptr(w.base) && off < w.lay.typ.Size() {
		if _, ok := w.lay.names[off]; ok {
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
	id := w.id(addr)
	switch {
	case id == privateWord:
		return "unpublished node word"
	case id < dynamicBase:
		return w.lay.names[uintptr(id)]
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
// a reset_all stored), pins its seed and names it.
func (w *words) addTrie(p unsafe.Pointer, name string) {
	for _, t := range w.tries {
		if t.p == p {
			return
		}
	}
	*w.trie.forced(p) = w.hash
	w.tries = append(w.tries, namedTrie{p, name})
	w.register(w.trie.floor(p), name+".floor", name+".floor")
}

// thaw is what a child word's value c stands for: c, or the value c wraps
// when it is a frozen wrapper of a trie of this run.
func (w *words) thaw(c unsafe.Pointer) unsafe.Pointer {
	if c != nil && w.isFrozen(c) {
		return loadWord(unsafe.Add(c, w.trie.nextOff))
	}
	return c
}

// isFrozen reports whether the node at p is a frozen wrapper.
func (w *words) isFrozen(p unsafe.Pointer) bool {
	k := w.trie.kids(p)
	for _, t := range w.tries {
		if k != nil && w.trie.frozenKids(t.p) == k {
			return true
		}
	}
	return false
}

// isSealed reports whether p is the sealed marker of a trie of this run.
func (w *words) isSealed(p unsafe.Pointer) bool {
	for _, t := range w.tries {
		if w.trie.sealed(t.p) == p {
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
		w.register(w.trie.floor(t.p), t.name+".floor", t.name+".floor")
		w.walkInner(w.trie.root(t.p), t.name, nil)
	}
}

func (w *words) walkInner(node unsafe.Pointer, trie string, path []int) {
	s := w.trie
	kids := s.kids(node)
	wordSize := reflect.TypeOf(hooked.Pointer[int]{}).Size()
	for j := 0; j < s.fanout; j++ {
		addr := unsafe.Add(kids, uintptr(j)*wordSize)
		p := append(append([]int(nil), path...), j)
		if _, ok := w.addr[addr]; !ok {
			w.register(addr, trie+"/"+digits(p), trie+w.pathLabel(p))
		}
		child := w.thaw(loadWord(addr))
		switch {
		case child == nil:
		case s.kids(child) != nil:
			w.walkInner(child, trie, p)
		default:
			w.walkCell(child, trie)
		}
	}
}

func (w *words) walkCell(c unsafe.Pointer, trie string) {
	for ; c != nil && !w.isSealed(c); c = loadWord(unsafe.Add(c, w.trie.nextOff)) {
		k := strconv.Quote(w.trie.key(c))
		w.register(unsafe.Add(c, w.trie.stateOff), trie+"/cell "+k+".state", trie+" cell "+k+".state")
		w.register(unsafe.Add(c, w.trie.nextOff), trie+"/cell "+k+".next", trie+" cell "+k+".next")
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
				if int(h>>(4*uint(l)))&(w.trie.fanout-1) != p[l] {
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

// value renders the value of a seam word: a row, a trie node, a bucket
// state, a trie, a pair ({lo hi}), or a number or flag. holder names a
// credits holder.
func (w *words) value(v any, holder func(unsafe.Pointer) string) string {
	if v == nil {
		return "nil"
	}
	if s, ok := pairValue(v); ok {
		return s
	}
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
	name := e.Type().Name()
	f := func(n string) reflect.Value { return readable(e.FieldByName(n)) }
	switch {
	case strings.HasPrefix(name, "box["):
		return fmt.Sprintf("{g%d %q @%dms}", f("gen").Uint(), fmt.Sprint(f("payload").Interface()), f("markedMs").Int())
	case strings.HasPrefix(name, "tnode["):
		if w.isSealed(rv.UnsafePointer()) {
			return "sealed"
		}
		if w.isFrozen(rv.UnsafePointer()) {
			// A plain read of the wrapper's next: it is written once, before
			// the wrapper is published, and a trace is rendered between
			// steps, where a hooked load would be a switch point.
			inner := loadWord(unsafe.Add(rv.UnsafePointer(), w.trie.nextOff))
			if inner == nil {
				return "frozen(nil)"
			}
			return "frozen(" + w.value(reflect.NewAt(e.Type(), inner).Interface(), holder) + ")"
		}
		if f("kids").IsNil() {
			return fmt.Sprintf("cell %q", fmt.Sprint(f("key").Interface()))
		}
		return "inner node"
	case strings.HasPrefix(name, "trie["):
		return w.trieName(rv.UnsafePointer())
	}
	return fmt.Sprintf("%+v", e.Interface())
}

// rawValue reads a word of hooked type t at addr through its Load method;
// only in direct mode (no switch). A Pair's value is [2]uint64{lo, hi}, as in
// its accesses.
func rawValue(addr unsafe.Pointer, t reflect.Type) any {
	m := reflect.NewAt(t, addr).MethodByName("Load")
	out := m.Call(nil)
	if len(out) == 2 {
		return [2]uint64{out[0].Uint(), out[1].Uint()}
	}
	return out[0].Interface()
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
