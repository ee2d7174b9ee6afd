package target

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/puzpuzpuz/xsync/v4"
	"github.com/tollgate/tollgate/explore"
)

// The scenarios of github.com/puzpuzpuz/xsync/v4: Map, Counter and
// MPMCQueue, two or three threads of one to three calls each.
//
// Two things make xsync random, and every run must be the same as the
// last one with the same schedule:
//
//   - A Map hashes keys with a maphash seed of its own (NewMap takes no
//     seed), so where a key lands among the table's 32 buckets changes
//     from run to run. One key alone is harmless: every call on it goes to
//     its bucket, whichever it is. Two keys may share a bucket or not, and
//     Range locks the buckets in order, so the step at which it reaches a
//     key depends on the bucket. The scenarios with two keys or a Range
//     therefore pick the keys in each run (placed): they find one key for
//     every bucket through Stats and Range, then use keys of fixed buckets
//     (a in bucket 1, b in bucket 2: different locks, different size
//     stripes). Two keys in one bucket are left out: their 7-bit tags,
//     which decide how many atomic loads a lookup makes, cannot be seen
//     through the API.
//   - A Counter adds to a stripe picked by runtime.cheaprand, one stripe
//     per P. The counter scenarios build the Counter with GOMAXPROCS 1, so
//     it has one stripe and every Add goes to it.
//
// map.go pads a bucket to 64 bytes with cacheLineSize minus
// unsafe.Sizeof(bucket{}), which holds a sync.Mutex: it compiles only if
// the rewrite's Mutex has sync.Mutex's size, 8 bytes.

// ---- Map ----

// keys are the map scenarios' keys, in the order of the model's state.
var keys = [...]string{"a", "b"}

func keyIndex(k string) int { return slices.Index(keys[:], k) }

// mop is one call on the map.
type mop struct {
	Kind string // load, store, loadorstore, compute, computedel, delete, range; seen in the model only
	K    string
	V    int
}

func (o mop) String() string {
	switch o.Kind {
	case "range":
		return "range"
	case "load", "delete", "seen":
		return fmt.Sprintf("%s(%s)", o.Kind, o.K)
	case "compute":
		return fmt.Sprintf("compute(%s,+%d)", o.K, o.V)
	case "computedel":
		return fmt.Sprintf("compute(%s,delete if %d)", o.K, o.V)
	}
	return fmt.Sprintf("%s(%s,%d)", o.Kind, o.K, o.V)
}

func load(k string) mop               { return mop{Kind: "load", K: k} }
func store(k string, v int) mop       { return mop{Kind: "store", K: k, V: v} }
func loadOrStore(k string, v int) mop { return mop{Kind: "loadorstore", K: k, V: v} }
func del(k string) mop                { return mop{Kind: "delete", K: k} }
func rangeAll() mop                   { return mop{Kind: "range"} }

// compute adds d to the key's value, or stores d when it is absent.
func compute(k string, d int) mop { return mop{Kind: "compute", K: k, V: d} }

// computeDel deletes the key when it holds v, and cancels otherwise.
func computeDel(k string, v int) mop { return mop{Kind: "computedel", K: k, V: v} }

// mres is what a call returned: value and ok (loaded, present) of a
// single-key call; a range's pairs, sorted by key.
type mres struct {
	V    int
	OK   bool
	Seen []kv
	Dup  bool // seen: the range visited the key twice
}

type kv struct {
	K string
	V int
}

func (r mres) String() string {
	switch {
	case r.Seen != nil:
		var b strings.Builder
		b.WriteString("{")
		for i, p := range r.Seen {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s=%d", p.K, p.V)
		}
		return b.String() + "}"
	case r.Dup:
		return "twice"
	}
	return fmt.Sprintf("(%d,%v)", r.V, r.OK)
}

// xmap is the map under test and its keys: each logical key's int key.
type xmap struct {
	m    *xsync.Map[int, int]
	phys map[string]int
}

func (x *xmap) name(k int) string {
	for n, p := range x.phys {
		if p == k {
			return n
		}
	}
	return fmt.Sprintf("?%d", k)
}

// Spec.New cannot call NewMap: NewMap calls sync.NewCond, and the
// explorer stops a run at that call wherever it is made, New included
// (the Cond serves resizes, which these small maps never make). So each
// test builds its Map once, before exploring, and New empties it with
// Clear, which gives it a new table (and a new seed) and calls no
// NewCond. A run the explorer abandons midway may leave a bucket locked,
// but only in the table Clear drops.

// oneKey empties m and uses key a only (which bucket it lands in does not
// matter: see the top of the file).
func oneKey(m *xsync.Map[int, int]) *xmap {
	m.Clear()
	return &xmap{m: m, phys: map[string]int{"a": 1}}
}

// placed empties m and picks key a in bucket 1 and key b in bucket 2. It
// stores keys 1, 2, … one by one, keeping a key when Stats shows one empty
// bucket fewer and deleting it otherwise, until every bucket holds one;
// Range visits the buckets in order, so the i-th key it visits is in
// bucket i. Then it deletes them all, which leaves the table as new (a
// bucket left empty by a delete does not shrink a table of the minimal
// size).
func placed(m *xsync.Map[int, int]) *xmap {
	m.Clear()
	st := m.Stats()
	empty, kept := st.EmptyBuckets, 0
	for k := 1; empty > 0; k++ {
		if k > 1<<16 {
			panic("placed: some bucket never got a key")
		}
		m.Store(k, 0)
		if e := m.Stats().EmptyBuckets; e < empty {
			empty, kept = e, kept+1
		} else {
			m.Delete(k)
		}
	}
	var order []int
	m.Range(func(k, _ int) bool { order = append(order, k); return true })
	if len(order) != st.RootBuckets || kept != st.RootBuckets {
		panic(fmt.Sprintf("placed: %d keys in %d buckets", len(order), st.RootBuckets))
	}
	for _, k := range order {
		m.Delete(k)
	}
	if s := m.Stats(); s.Size != 0 || s.Counter != 0 || s.TotalBuckets != st.TotalBuckets {
		panic(fmt.Sprintf("placed: the table is not new again: %+v", s))
	}
	return &xmap{m: m, phys: map[string]int{"a": order[1], "b": order[2]}}
}

func mapCall(x *xmap, o mop) mres {
	k := x.phys[o.K]
	var r mres
	switch o.Kind {
	case "load":
		r.V, r.OK = x.m.Load(k)
	case "store":
		x.m.Store(k, o.V)
	case "loadorstore":
		r.V, r.OK = x.m.LoadOrStore(k, o.V)
	case "compute":
		r.V, r.OK = x.m.Compute(k, func(old int, loaded bool) (int, xsync.ComputeOp) {
			if loaded {
				return old + o.V, xsync.UpdateOp
			}
			return o.V, xsync.UpdateOp
		})
	case "computedel":
		r.V, r.OK = x.m.Compute(k, func(old int, loaded bool) (int, xsync.ComputeOp) {
			if loaded && old == o.V {
				return 0, xsync.DeleteOp
			}
			return old, xsync.CancelOp
		})
		if !r.OK {
			// After a delete v4.5.0 returns the old value where the doc
			// says the zero value: not a concurrency matter, left aside.
			r.V = 0
		}
	case "delete":
		x.m.Delete(k)
	case "range":
		r.Seen = []kv{}
		x.m.Range(func(k, v int) bool {
			r.Seen = append(r.Seen, kv{x.name(k), v})
			return true
		})
		slices.SortStableFunc(r.Seen, func(p, q kv) int { return strings.Compare(p.K, q.K) })
	default:
		panic("unknown map call " + o.Kind)
	}
	return r
}

// slot is one key's state in the model.
type slot struct {
	V  int
	OK bool
}

type mstate [len(keys)]slot

// mapApply is the sequential map on one key.
func mapApply(s slot, o mop) (slot, mres) {
	switch o.Kind {
	case "load", "seen":
		return s, mres{V: s.V, OK: s.OK}
	case "store":
		return slot{o.V, true}, mres{}
	case "loadorstore":
		if s.OK {
			return s, mres{V: s.V, OK: true}
		}
		return slot{o.V, true}, mres{V: o.V}
	case "compute":
		if s.OK {
			return slot{s.V + o.V, true}, mres{V: s.V + o.V, OK: true}
		}
		return slot{o.V, true}, mres{V: o.V, OK: true}
	case "computedel":
		if s.OK && s.V == o.V {
			return slot{}, mres{}
		}
		return s, mres{V: s.V, OK: s.OK}
	case "delete":
		return slot{}, mres{}
	}
	panic("unknown map call " + o.Kind)
}

// byKey splits a history into one per key. Every call but range is on
// one key, and linearizability is local: the history is linearizable iff
// each key's is. A range is checked as the doc describes it: "no key will
// be visited more than once, but if the value for any key is stored or
// deleted concurrently, Range may reflect any mapping for that key from
// any point during the Range call". So it becomes, in each key's history,
// a read of that key (seen) over the range's interval, answering what the
// range saw for it, or absent, or twice; a key the range saw that no call
// names fails in a history of its own.
func byKey(h []porcupine.Operation) [][]porcupine.Operation {
	parts := map[string][]porcupine.Operation{}
	for _, k := range keys {
		parts[k] = nil
	}
	for _, o := range h {
		in := o.Input.(mop)
		if in.Kind != "range" {
			parts[in.K] = append(parts[in.K], o)
			continue
		}
		seen := map[string][]int{}
		for _, p := range o.Output.(mres).Seen {
			seen[p.K] = append(seen[p.K], p.V)
		}
		for k := range seen {
			if _, ok := parts[k]; !ok {
				parts[k] = nil
			}
		}
		for k := range parts {
			r := mres{}
			switch vs := seen[k]; len(vs) {
			case 0:
			case 1:
				r = mres{V: vs[0], OK: true}
			default:
				r = mres{Dup: true}
			}
			parts[k] = append(parts[k], porcupine.Operation{ClientId: o.ClientId, Input: mop{Kind: "seen", K: k},
				Call: o.Call, Output: r, Return: o.Return})
		}
	}
	var out [][]porcupine.Operation
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range parts {
			if !yield(k) {
				return
			}
		}
	}) {
		if len(parts[k]) > 0 {
			out = append(out, parts[k])
		}
	}
	return out
}

func mapModel(init map[string]int) *porcupine.Model {
	var s0 mstate
	for k, v := range init {
		s0[keyIndex(k)] = slot{v, true}
	}
	return &porcupine.Model{
		Partition: byKey,
		Init:      func() any { return s0 },
		Step: func(st, in, out any) (bool, any) {
			s, o, got := st.(mstate), in.(mop), out.(mres)
			i := keyIndex(o.K)
			if i < 0 {
				return false, st
			}
			next, want := mapApply(s[i], o)
			if got.Dup || got.Seen != nil || want.V != got.V || want.OK != got.OK {
				return false, st
			}
			s[i] = next
			return true, s
		},
		Equal:             func(a, b any) bool { return a.(mstate) == b.(mstate) },
		DescribeOperation: func(in, out any) string { return fmt.Sprintf("%v → %v", in, out) },
		DescribeState: func(st any) string {
			var b strings.Builder
			for i, s := range st.(mstate) {
				if s.OK {
					fmt.Fprintf(&b, "%s=%d ", keys[i], s.V)
				}
			}
			return "{" + strings.TrimSpace(b.String()) + "}"
		},
	}
}

// mapSpec: pick is oneKey or placed, init is stored in the map before the
// threads start, after runs once they are done.
func mapSpec(pick func(*xsync.Map[int, int]) *xmap, init map[string]int, threads [][]mop, after ...mop) explore.Spec[*xmap, mop, mres, struct{}] {
	m := xsync.NewMap[int, int]()
	return explore.Spec[*xmap, mop, mres, struct{}]{
		New: func() *xmap {
			x := pick(m)
			for k, v := range init {
				x.m.Store(x.phys[k], v)
			}
			return x
		},
		Threads: threads,
		Call:    mapCall,
		After:   after,
		Model:   mapModel(init),
	}
}

// TestMapLoadOrStore: two LoadOrStores of one key: one stores, the other
// loads what it stored.
func TestMapLoadOrStore(t *testing.T) {
	explorations(t, "map-loadorstore", mapSpec(oneKey, nil,
		[][]mop{{loadOrStore("a", 1)}, {loadOrStore("a", 2), load("a")}}, load("a")))
}

// TestMapLoadOrStoreDelete: LoadOrStore against a Delete that may come
// between the lock-free lookup and the locked one.
func TestMapLoadOrStoreDelete(t *testing.T) {
	explorations(t, "map-loadorstore-delete", mapSpec(oneKey, nil,
		[][]mop{{loadOrStore("a", 1), del("a")}, {loadOrStore("a", 2), loadOrStore("a", 3)}}, load("a")))
}

// TestMapComputeAdd: three read-modify-writes of one key: none is lost.
func TestMapComputeAdd(t *testing.T) {
	explorations(t, "map-compute-add", mapSpec(oneKey, nil,
		[][]mop{{compute("a", 1), compute("a", 1)}, {compute("a", 10)}}, load("a")))
}

// TestMapComputeDelete: a Compute that deletes against one that adds and
// a LoadOrStore.
func TestMapComputeDelete(t *testing.T) {
	explorations(t, "map-compute-delete", mapSpec(oneKey, map[string]int{"a": 1},
		[][]mop{{compute("a", 1), load("a")}, {computeDel("a", 1), loadOrStore("a", 5)}}, load("a")))
}

// TestMapStoreDeleteLoad: three threads: a Store, a Delete, and a thread
// reading with Load and LoadOrStore.
func TestMapStoreDeleteLoad(t *testing.T) {
	explorations(t, "map-store-delete-load", mapSpec(oneKey, nil,
		[][]mop{{store("a", 1)}, {del("a")}, {load("a"), loadOrStore("a", 7)}}, load("a")))
}

// TestMapTwoKeys: two keys of different buckets.
func TestMapTwoKeys(t *testing.T) {
	explorations(t, "map-two-keys", mapSpec(placed, nil,
		[][]mop{{store("a", 1), loadOrStore("b", 1)}, {compute("b", 2), del("a")}}, load("a"), load("b")))
}

// TestMapRange: a Range while the keys are stored and deleted; the range
// after the threads must see exactly what is there.
func TestMapRange(t *testing.T) {
	explorations(t, "map-range", mapSpec(placed, map[string]int{"a": 1},
		[][]mop{{rangeAll()}, {store("b", 2), del("a"), store("a", 3)}}, rangeAll()))
}

// TestMapRangeCompute: a Range while Compute changes both keys, and a
// third thread's LoadOrStore.
func TestMapRangeCompute(t *testing.T) {
	explorations(t, "map-range-compute", mapSpec(placed, map[string]int{"a": 1, "b": 2},
		[][]mop{{rangeAll()}, {compute("a", 1), computeDel("b", 2)}, {loadOrStore("b", 9)}}, rangeAll()))
}

// ---- Counter ----

// cop is one call on the counter.
type cop struct {
	Kind string // add, inc, dec, value
	D    int64
}

func (o cop) String() string {
	if o.Kind == "add" {
		return fmt.Sprintf("add(%d)", o.D)
	}
	return o.Kind
}

func counterCall(c *xsync.Counter, o cop) int64 {
	switch o.Kind {
	case "add":
		c.Add(o.D)
	case "inc":
		c.Inc()
	case "dec":
		c.Dec()
	case "value":
		return c.Value()
	default:
		panic("unknown counter call " + o.Kind)
	}
	return 0
}

func counterStep(n int64, _ time.Time, o cop) (int64, int64) {
	switch o.Kind {
	case "add":
		return n + o.D, 0
	case "inc":
		return n + 1, 0
	case "dec":
		return n - 1, 0
	case "value":
		return n, n
	}
	panic("unknown counter call " + o.Kind)
}

// counterSpec builds its Counters with one stripe: see the top of the file.
func counterSpec(threads [][]cop, after ...cop) explore.Spec[*xsync.Counter, cop, int64, int64] {
	return explore.Spec[*xsync.Counter, cop, int64, int64]{
		New: func() *xsync.Counter {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			return xsync.NewCounter()
		},
		Threads: threads,
		Call:    counterCall,
		After:   after,
		Step:    counterStep,
	}
}

var (
	inc   = cop{Kind: "inc"}
	dec   = cop{Kind: "dec"}
	value = cop{Kind: "value"}
)

func add(d int64) cop { return cop{Kind: "add", D: d} }

// TestCounterAdd: Adds of both signs from two threads; Value only once
// they are done. Value's doc allows it to miss concurrent Adds, and with
// several stripes a Value read during Adds of both signs can be a number
// the counter never held, so it is checked after them, where it must be
// exact.
func TestCounterAdd(t *testing.T) {
	explorations(t, "counter-add", counterSpec([][]cop{{inc, add(2)}, {add(-5), inc}}, value))
}

// TestCounterThree: three threads, one Add each.
func TestCounterThree(t *testing.T) {
	explorations(t, "counter-three", counterSpec([][]cop{{add(5)}, {dec}, {inc}}, value))
}

// TestCounterIncValue: Value during Incs. With increments of one only,
// each stripe only grows, so the sum Value reads lies between the
// counter's values when it starts and when it ends, and every number in
// between is held at some moment of the call: linearizability is a sound
// check here, whatever the number of stripes.
func TestCounterIncValue(t *testing.T) {
	explorations(t, "counter-inc-value", counterSpec([][]cop{{inc, inc}, {value, inc, value}}, value))
}

// ---- MPMCQueue ----

// qop is one call on the queue: TryEnqueue(V), TryDequeue, or drain
// (TryDequeue until it fails, run after the threads, alone).
type qop struct {
	Kind string // enq, deq, drain
	V    int
}

func (o qop) String() string {
	if o.Kind == "enq" {
		return fmt.Sprintf("enq(%d)", o.V)
	}
	return o.Kind
}

type qres struct {
	V   int
	OK  bool
	All []int
}

func (r qres) String() string {
	if r.All != nil {
		return fmt.Sprint(r.All)
	}
	return fmt.Sprintf("(%d,%v)", r.V, r.OK)
}

func enq(v int) qop { return qop{Kind: "enq", V: v} }

var (
	deq   = qop{Kind: "deq"}
	drain = qop{Kind: "drain"}
)

type queue = xsync.MPMCQueue[int]

func queueCall(q *queue, o qop) qres {
	switch o.Kind {
	case "enq":
		return qres{OK: q.TryEnqueue(o.V)}
	case "deq":
		v, ok := q.TryDequeue()
		return qres{V: v, OK: ok}
	case "drain":
		all := []int{}
		for {
			v, ok := q.TryDequeue()
			if !ok {
				return qres{All: all}
			}
			all = append(all, v)
		}
	}
	panic("unknown queue call " + o.Kind)
}

// qstate is the queue's contents, oldest first.
type qstate struct {
	Items [8]int
	N     int
}

// queueModel is a FIFO queue of capacity c. Strict: TryEnqueue fails only
// when the queue is full, TryDequeue only when it is empty. Weak: either
// may also fail at any time, with nothing changed (xsync's gives up when
// it loses the compare-and-swap of head or tail to another call of the
// same kind; see TestQueueEnqueueStrict); one that succeeds must still be
// exact, and the drain after the threads, alone, must give the rest.
func queueModel(c int, weak bool, init ...int) *porcupine.Model {
	var s0 qstate
	s0.N = copy(s0.Items[:], init)
	return &porcupine.Model{
		Init: func() any { return s0 },
		Step: func(st, in, out any) (bool, any) {
			s, o, got := st.(qstate), in.(qop), out.(qres)
			switch o.Kind {
			case "enq":
				if !got.OK {
					return weak || s.N == c, s
				}
				if s.N == c {
					return false, s
				}
				s.Items[s.N] = o.V
				s.N++
				return true, s
			case "deq":
				if !got.OK {
					return (weak || s.N == 0) && got.V == 0, s
				}
				if s.N == 0 || got.V != s.Items[0] {
					return false, s
				}
				copy(s.Items[:], s.Items[1:s.N])
				s.N--
				s.Items[s.N] = 0
				return true, s
			case "drain":
				if !slices.Equal(got.All, s.Items[:s.N]) {
					return false, s
				}
				return true, qstate{}
			}
			return false, s
		},
		Equal:             func(a, b any) bool { return a.(qstate) == b.(qstate) },
		DescribeOperation: func(in, out any) string { return fmt.Sprintf("%v → %v", in, out) },
		DescribeState:     func(st any) string { s := st.(qstate); return fmt.Sprint(s.Items[:s.N]) },
	}
}

func queueSpec(c int, weak bool, init []int, threads [][]qop) explore.Spec[*queue, qop, qres, struct{}] {
	return explore.Spec[*queue, qop, qres, struct{}]{
		New: func() *queue {
			q := xsync.NewMPMCQueue[int](c)
			for _, v := range init {
				if !q.TryEnqueue(v) {
					panic("queue: the initial items do not fit")
				}
			}
			return q
		},
		Threads: threads,
		Call:    queueCall,
		After:   []qop{drain},
		Model:   queueModel(c, weak, init...),
	}
}

// TestQueueSPSC: one producer, one consumer, capacity 2, the producer
// filling it: with one call of each kind at a time no call can lose a
// compare-and-swap, so the strict model applies (a call that meets a slot
// another call is still filling or emptying overlaps that call, which may
// be ordered after it).
func TestQueueSPSC(t *testing.T) {
	explorations(t, "mpmc-spsc", queueSpec(2, false, nil,
		[][]qop{{enq(1), enq(2), enq(3)}, {deq, deq}}))
}

// TestQueueSPSCWrap: capacity 1: every call reuses the one slot.
func TestQueueSPSCWrap(t *testing.T) {
	explorations(t, "mpmc-spsc-wrap", queueSpec(1, false, nil,
		[][]qop{{enq(1), enq(2)}, {deq, deq}}))
}

// TestQueueProducers: two producers and a consumer, capacity 2.
func TestQueueProducers(t *testing.T) {
	explorations(t, "mpmc-producers", queueSpec(2, true, nil,
		[][]qop{{enq(1), enq(2)}, {enq(3)}, {deq, deq}}))
}

// TestQueueConsumers: a producer and two consumers, capacity 2, one item
// in the queue at the start.
func TestQueueConsumers(t *testing.T) {
	explorations(t, "mpmc-consumers", queueSpec(2, true, []int{1},
		[][]qop{{enq(2), enq(3)}, {deq}, {deq}}))
}

// TestQueueEnqueueStrict: two TryEnqueues into an empty queue of
// capacity 2, under the strict model, which reads "the result indicates
// that the queue isn't full and the item was inserted" as: false means
// full. xsync's TryEnqueue returns false when another TryEnqueue wins the
// compare-and-swap of head, the queue not being full (the C++ queue it is
// based on, rigtorp/MPMCQueue, reloads head and tries again): so this
// scenario is expected to be violated, at one preemption.
func TestQueueEnqueueStrict(t *testing.T) {
	explorations(t, "mpmc-enqueue-strict", queueSpec(2, false, nil,
		[][]qop{{enq(1)}, {enq(2)}}))
}
