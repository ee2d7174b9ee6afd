package target

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
)

// The scenarios of HashTrieMap[string, int] (hashtriemap.go, a copy of
// Go's internal/sync one). Keys hash with testHash, so that some share a
// prefix of their hash and two collide: a trie of 16 children a level,
// read from the top nibble down.
//
//	a  0x12000…  root slot 1, then slot 2
//	b  0x12000…  the same hash as a: a collision chain
//	f  0x12000…  the same again: a chain of three
//	c  0x13000…  shares a's first nibble: one indirect node under slot 1
//	d  0x12300…  shares a's first two nibbles: two indirect nodes
//	e  0x50000…  a slot of its own
//
// Every scenario is exhaustive at bound 2 (mixed and range-three, the
// largest, in a few seconds).
var keys = []string{"a", "b", "c", "d", "e", "f"}

func testHash(key string, _ uintptr) uintptr {
	var h uint64
	switch key {
	case "a", "b", "f":
		h = 0x12 << 56
	case "c":
		h = 0x13 << 56
	case "d":
		h = 0x123 << 52
	case "e":
		h = 0x5 << 60
	default:
		panic("testHash: unknown key " + key)
	}
	return uintptr(h)
}

// op is one call on the map.
type op struct {
	Kind string // load, store, loadorstore, swap, cas, cad, delete, loadanddelete, range
	K    string
	V    int // the value stored (cas: the new value)
	Old  int // cas and cad: the value compared
}

func (o op) String() string {
	switch o.Kind {
	case "range":
		return "range"
	case "load", "delete", "loadanddelete":
		return fmt.Sprintf("%s(%s)", o.Kind, o.K)
	case "cas":
		return fmt.Sprintf("cas(%s,%d,%d)", o.K, o.Old, o.V)
	case "cad":
		return fmt.Sprintf("cad(%s,%d)", o.K, o.Old)
	}
	return fmt.Sprintf("%s(%s,%d)", o.Kind, o.K, o.V)
}

func load(k string) op               { return op{Kind: "load", K: k} }
func store(k string, v int) op       { return op{Kind: "store", K: k, V: v} }
func loadOrStore(k string, v int) op { return op{Kind: "loadorstore", K: k, V: v} }
func swap(k string, v int) op        { return op{Kind: "swap", K: k, V: v} }
func cas(k string, old, new int) op  { return op{Kind: "cas", K: k, Old: old, V: new} }
func cad(k string, old int) op       { return op{Kind: "cad", K: k, Old: old} }
func del(k string) op                { return op{Kind: "delete", K: k} }
func loadAndDelete(k string) op      { return op{Kind: "loadanddelete", K: k} }
func rangeAll() op                   { return op{Kind: "range"} }
func loads(ks ...string) (out []op) {
	for _, k := range ks {
		out = append(out, load(k))
	}
	return out
}

// result is what a call returned: the value and ok (loaded, swapped,
// deleted) of a single-key call, the pairs seen by a range.
type result struct {
	V    int
	OK   bool
	Seen []kv
}

type kv struct {
	K string
	V int
}

func (r result) String() string {
	if r.Seen != nil {
		var b strings.Builder
		b.WriteString("{")
		for i, p := range r.Seen {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s=%d", p.K, p.V)
		}
		b.WriteString("}")
		return b.String()
	}
	return fmt.Sprintf("(%d,%v)", r.V, r.OK)
}

type htm = HashTrieMap[string, int]

func call(m *htm, o op) result {
	var r result
	switch o.Kind {
	case "load":
		r.V, r.OK = m.Load(o.K)
	case "store":
		m.Store(o.K, o.V)
	case "loadorstore":
		r.V, r.OK = m.LoadOrStore(o.K, o.V)
	case "swap":
		r.V, r.OK = m.Swap(o.K, o.V)
	case "cas":
		r.OK = m.CompareAndSwap(o.K, o.Old, o.V)
	case "cad":
		r.OK = m.CompareAndDelete(o.K, o.Old)
	case "delete":
		m.Delete(o.K)
	case "loadanddelete":
		r.V, r.OK = m.LoadAndDelete(o.K)
	case "range":
		r.Seen = []kv{}
		m.Range(func(k string, v int) bool {
			r.Seen = append(r.Seen, kv{k, v})
			return true
		})
		slices.SortStableFunc(r.Seen, func(x, y kv) int { return strings.Compare(x.K, y.K) })
	default:
		panic("unknown op " + o.Kind)
	}
	return r
}

// slot is one key's state in the model: its value, if present.
type slot struct {
	V  int
	OK bool
}

// apply is the sequential map on one key: the key's next state and the
// call's result.
func apply(s slot, o op) (slot, result) {
	switch o.Kind {
	case "load":
		return s, result{V: s.V, OK: s.OK}
	case "store":
		return slot{o.V, true}, result{}
	case "loadorstore":
		if s.OK {
			return s, result{V: s.V, OK: true}
		}
		return slot{o.V, true}, result{V: o.V}
	case "swap":
		return slot{o.V, true}, result{V: s.V, OK: s.OK}
	case "cas":
		if s.OK && s.V == o.Old {
			return slot{o.V, true}, result{OK: true}
		}
		return s, result{}
	case "cad":
		if s.OK && s.V == o.Old {
			return slot{}, result{OK: true}
		}
		return s, result{}
	case "delete":
		return slot{}, result{}
	case "loadanddelete":
		return slot{}, result{V: s.V, OK: s.OK}
	}
	panic("apply: " + o.Kind)
}

// state is the whole map in the model: an array, one slot a key, so a
// step copies it and states compare with ==.
type state [6]slot

func index(k string) int {
	i := slices.Index(keys, k)
	if i < 0 {
		panic("unknown key " + k)
	}
	return i
}

func step(s state, _ time.Time, o op) (state, result) {
	i := index(o.K)
	var r result
	s[i], r = apply(s[i], o)
	return s, r
}

// newMap builds the map of a run with the pairs given, stored in order
// (no switch points: New runs before the threads start). With no pairs
// it is left uninitialized, so the threads race to initialize it.
func newMap(pairs ...kv) func() *htm {
	return func() *htm {
		m := NewHashTrieMap[string, int](testHash)
		for _, p := range pairs {
			m.Store(p.K, p.V)
		}
		return m
	}
}

func initial(pairs ...kv) state {
	var s state
	for _, p := range pairs {
		s[index(p.K)] = slot{p.V, true}
	}
	return s
}

// spec is a scenario of single-key calls, checked against the
// sequential map.
func spec(pairs []kv, threads [][]op, after []op) explore.Spec[*htm, op, result, state] {
	return explore.Spec[*htm, op, result, state]{
		New:      newMap(pairs...),
		Threads:  threads,
		Call:     call,
		After:    after,
		Init:     initial(pairs...),
		Step:     step,
		Describe: op.String,
	}
}

// Range is not linearizable as a whole: Go documents (sync.Map.Range,
// which HashTrieMap.Range follows) that it "does not necessarily
// correspond to any consistent snapshot", that "no key will be visited
// more than once", and that "if the value for any key is stored or
// deleted concurrently ... Range may reflect any mapping for that key
// from any point during the Range call". So the sound check is per key:
// a range is, for every key, a read of that key (seen once with a value,
// or not seen) that takes effect at some point during the call. The
// model below partitions the history by key; a range becomes one such
// read in every key's partition, a key seen twice a read that no state
// allows. For single-key calls, partitioning by key loses nothing:
// linearizability is local, so a history is linearizable if and only if
// each key's part is.

// rangeRead is a range's read of one key, in that key's partition.
type rangeRead struct{ K string }

type rangeSeen struct {
	V     int
	Times int // how often the range visited the key
}

// perKey is the model of rangeSpec: the sequential map (state, from
// init), with the history partitioned by key and every range made a
// rangeRead in each key's partition.
func perKey(init state) porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			parts := make([][]porcupine.Operation, len(keys))
			for _, o := range history {
				in, out := o.Input.(op), o.Output.(result)
				if in.Kind != "range" {
					i := index(in.K)
					parts[i] = append(parts[i], o)
					continue
				}
				for _, p := range out.Seen {
					index(p.K) // a key no call stored panics
				}
				for i, k := range keys {
					var seen rangeSeen
					for _, p := range out.Seen {
						if p.K == k {
							seen.V = p.V
							seen.Times++
						}
					}
					r := o
					r.Input, r.Output = rangeRead{k}, seen
					parts[i] = append(parts[i], r)
				}
			}
			return parts
		},
		Init: func() any { return init },
		Step: func(st, in, out any) (bool, any) {
			s := st.(state)
			if rr, ok := in.(rangeRead); ok {
				now, seen := s[index(rr.K)], out.(rangeSeen)
				switch seen.Times {
				case 0:
					return !now.OK, s
				case 1:
					return now.OK && now.V == seen.V, s
				}
				return false, s
			}
			next, want := step(s, time.Time{}, in.(op))
			if want.V != out.(result).V || want.OK != out.(result).OK {
				return false, s
			}
			return true, next
		},
		Equal: func(a, b any) bool { return a == b },
		DescribeOperation: func(in, out any) string {
			if rr, ok := in.(rangeRead); ok {
				seen := out.(rangeSeen)
				switch seen.Times {
				case 0:
					return fmt.Sprintf("range saw no %s", rr.K)
				case 1:
					return fmt.Sprintf("range saw %s=%d", rr.K, seen.V)
				}
				return fmt.Sprintf("range saw %s %d times", rr.K, seen.Times)
			}
			return fmt.Sprintf("%v → %v", in, out)
		},
		DescribeState: func(st any) string {
			s := st.(state)
			var b strings.Builder
			for i, k := range keys {
				if s[i].OK {
					fmt.Fprintf(&b, "%s=%d ", k, s[i].V)
				}
			}
			return "{" + strings.TrimSpace(b.String()) + "}"
		},
	}
}

// rangeSpec is a scenario with ranges, checked key by key (perKey).
func rangeSpec(pairs []kv, threads [][]op, after []op) explore.Spec[*htm, op, result, struct{}] {
	m := perKey(initial(pairs...))
	return explore.Spec[*htm, op, result, struct{}]{
		New:      newMap(pairs...),
		Threads:  threads,
		Call:     call,
		After:    after,
		Model:    &m,
		Describe: op.String,
	}
}

func pairs(ps ...kv) []kv { return ps }

// TestLoadDuringExpand: loads of a, c and d while c and then d are
// stored, each store turning a's slot into one or two new indirect nodes.
func TestLoadDuringExpand(t *testing.T) {
	explorations(t, "load-during-expand", spec(pairs(kv{"a", 1}),
		[][]op{{store("c", 3), store("d", 4)}, loads("a", "c", "d")},
		loads("a", "c", "d")))
}

// TestStoreCollide: three stores into an empty map: a and b collide
// fully (a chain), c shares their first nibble (an indirect node over
// the chain).
func TestStoreCollide(t *testing.T) {
	explorations(t, "store-collide", spec(pairs(kv{"e", 5}),
		[][]op{{store("a", 1)}, {store("b", 2)}, {store("c", 3)}},
		loads("a", "b", "c")))
}

// TestStoreUninit: the zero map (no pairs), initialized by whichever
// call comes first.
func TestStoreUninit(t *testing.T) {
	explorations(t, "store-uninit", spec(nil,
		[][]op{{store("a", 1)}, {store("b", 2), load("a")}},
		loads("a", "b")))
}

// TestLoadOrStore: two threads each LoadOrStore a and b, the colliding
// pair, in opposite orders: one value of each wins.
func TestLoadOrStore(t *testing.T) {
	explorations(t, "loadorstore", spec(pairs(kv{"c", 3}),
		[][]op{{loadOrStore("a", 1), loadOrStore("b", 1)}, {loadOrStore("b", 2), loadOrStore("a", 2)}},
		loads("a", "b")))
}

// TestSwap: swaps of a and b, which share a chain (b, then a), and of c,
// which expands it.
func TestSwap(t *testing.T) {
	explorations(t, "swap", spec(pairs(kv{"a", 1}, kv{"b", 2}),
		[][]op{{swap("a", 10), swap("b", 20)}, {swap("a", 30), swap("c", 3)}},
		loads("a", "b", "c")))
}

// TestCompareAndSwap: two compare-and-swaps of a from 1, and one from the
// value the other thread's would leave; b's is on the same chain.
func TestCompareAndSwap(t *testing.T) {
	explorations(t, "compareandswap", spec(pairs(kv{"a", 1}, kv{"b", 2}),
		[][]op{{cas("a", 1, 2), cas("b", 2, 3)}, {cas("a", 1, 3), cas("a", 2, 4)}},
		loads("a", "b")))
}

// TestCompareAndDelete: compare-and-deletes of a (head of nothing: b's
// chain is b, a) racing a compare-and-swap of a, and of b and c.
func TestCompareAndDelete(t *testing.T) {
	explorations(t, "compareanddelete", spec(pairs(kv{"a", 1}, kv{"b", 2}, kv{"c", 3}),
		[][]op{{cad("a", 1), cad("c", 3)}, {cas("a", 1, 5), cad("b", 2), cad("a", 5)}},
		loads("a", "b", "c")))
}

// TestDeletePrune: a and c share an indirect node; deleting both empties
// it, and the last delete removes it from the root (marking it dead)
// while a third thread stores d, which belongs under it.
func TestDeletePrune(t *testing.T) {
	explorations(t, "delete-prune", spec(pairs(kv{"a", 1}, kv{"c", 3}),
		[][]op{{loadAndDelete("a")}, {loadAndDelete("c")}, {store("d", 4)}},
		loads("a", "c", "d")))
}

// TestDelete: deletes of the chain a, b against a store of a and a load
// of b.
func TestDelete(t *testing.T) {
	explorations(t, "delete", spec(pairs(kv{"a", 1}, kv{"b", 2}),
		[][]op{{del("a"), del("b")}, {store("a", 3), load("b")}},
		loads("a", "b")))
}

// TestRange: a range while a is deleted, d stored (expanding a's slot
// first, were a still there) and b stored (a chain with a).
func TestRange(t *testing.T) {
	explorations(t, "range", rangeSpec(pairs(kv{"a", 1}, kv{"c", 3}, kv{"e", 5}),
		[][]op{{rangeAll()}, {del("a"), store("d", 4), store("b", 2)}},
		[]op{rangeAll()}))
}

// TestRangePrune: a range while the indirect node of a and c is emptied
// and pruned and e is swapped.
func TestRangePrune(t *testing.T) {
	explorations(t, "range-prune", rangeSpec(pairs(kv{"a", 1}, kv{"c", 3}, kv{"e", 5}),
		[][]op{{rangeAll()}, {del("c"), swap("e", 6), del("a")}},
		[]op{rangeAll()}))
}

// TestRangeChain: a range over the chain f, b, a (stored a, b, f) while
// b, in the middle of it, is swapped and f, its head, deleted.
func TestRangeChain(t *testing.T) {
	explorations(t, "range-chain", rangeSpec(pairs(kv{"a", 1}, kv{"b", 2}, kv{"f", 6}),
		[][]op{{rangeAll()}, {swap("b", 20), del("f")}},
		[]op{rangeAll()}))
}

// TestMixed: three threads on the keys of slot 1 (a, b, f colliding, c
// and d sharing prefixes with them), every kind of write: expansions,
// chain edits and a prune may all meet.
func TestMixed(t *testing.T) {
	explorations(t, "mixed", spec(pairs(kv{"a", 1}, kv{"b", 2}),
		[][]op{{store("c", 3), del("a")}, {loadOrStore("d", 4), cad("b", 2)}, {swap("a", 7), cas("b", 2, 9)}},
		loads("a", "b", "c", "d")))
}

// TestRangeThree: two ranges while two threads expand slot 1 and delete
// from it.
func TestRangeThree(t *testing.T) {
	explorations(t, "range-three", rangeSpec(pairs(kv{"a", 1}, kv{"b", 2}),
		[][]op{{rangeAll(), rangeAll()}, {store("c", 3), del("a")}, {store("d", 4), del("b")}},
		[]op{rangeAll()}))
}
