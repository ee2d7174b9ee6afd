package target

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/tollgate/tollgate/explore"
)

// The scenarios of github.com/hashicorp/golang-lru/v2/expirable: an LRU of
// two entries, Add, Get and Remove of three keys from two or three
// threads. The model is a sequential LRU (the entries in order of use,
// the oldest evicted when a third is added); After the threads, keys
// reads the entries oldest first. Every call takes the cache's lock, so
// every correct run is linearizable with respect to it; the race detector
// sees the entries, the list and the buckets.
//
// With a TTL of 0 entries never expire and NewLRU starts no goroutine.
// With a TTL, NewLRU starts a goroutine that cleans up on a
// time.NewTicker, which the explorer does not control yet: TestTTL tries
// it and records the explorer's answer.

// lop is one call: add(K,V), get(K), remove(K), keys.
type lop struct {
	Kind string
	K    string
	V    int
}

func (o lop) String() string {
	switch o.Kind {
	case "add":
		return fmt.Sprintf("add(%s,%d)", o.K, o.V)
	case "keys":
		return "keys"
	}
	return fmt.Sprintf("%s(%s)", o.Kind, o.K)
}

func add(k string, v int) lop { return lop{Kind: "add", K: k, V: v} }
func get(k string) lop        { return lop{Kind: "get", K: k} }
func remove(k string) lop     { return lop{Kind: "remove", K: k} }

var keys = lop{Kind: "keys"}

type cache = expirable.LRU[string, int]

func call(c *cache, o lop) string {
	switch o.Kind {
	case "add":
		return fmt.Sprint(c.Add(o.K, o.V))
	case "get":
		v, ok := c.Get(o.K)
		return fmt.Sprint(v, ok)
	case "remove":
		return fmt.Sprint(c.Remove(o.K))
	case "keys":
		return strings.Join(c.Keys(), " ")
	}
	panic("unknown cache call " + o.Kind)
}

// entry is one entry of the model; lru holds at most 2, oldest first.
type entry struct {
	K string
	V int
}

type lru struct {
	E [2]entry
	N int
}

func (s lru) find(k string) int {
	return slices.IndexFunc(s.E[:s.N], func(e entry) bool { return e.K == k })
}

// drop removes entry i.
func (s lru) drop(i int) lru {
	copy(s.E[i:], s.E[i+1:s.N])
	s.N--
	s.E[s.N] = entry{}
	return s
}

// step is the sequential LRU of two entries.
func step(s lru, _ time.Time, o lop) (lru, string) {
	switch o.Kind {
	case "add":
		if i := s.find(o.K); i >= 0 {
			s = s.drop(i)
		}
		evicted := false
		if s.N == len(s.E) {
			s, evicted = s.drop(0), true
		}
		s.E[s.N] = entry{o.K, o.V}
		s.N++
		return s, fmt.Sprint(evicted)
	case "get":
		i := s.find(o.K)
		if i < 0 {
			return s, fmt.Sprint(0, false)
		}
		e := s.E[i]
		s = s.drop(i)
		s.E[s.N] = e
		s.N++
		return s, fmt.Sprint(e.V, true)
	case "remove":
		i := s.find(o.K)
		if i < 0 {
			return s, "false"
		}
		return s.drop(i), "true"
	case "keys":
		var ks []string
		for _, e := range s.E[:s.N] {
			ks = append(ks, e.K)
		}
		return s, strings.Join(ks, " ")
	}
	panic("unknown cache call " + o.Kind)
}

func spec(ttl time.Duration, threads [][]lop) explore.Spec[*cache, lop, string, lru] {
	return explore.Spec[*cache, lop, string, lru]{
		New:     func() *cache { return expirable.NewLRU[string, int](2, nil, ttl) },
		Threads: threads,
		Call:    call,
		After:   []lop{keys},
		Step:    step,
	}
}

// TestAddGet: two threads add and read one key.
func TestAddGet(t *testing.T) {
	explorations(t, "add-get", spec(0, [][]lop{{add("a", 1), get("a")}, {add("a", 2), get("a")}}))
}

// TestEvict: three keys in a cache of two from two threads: which is
// evicted depends on the order of use.
func TestEvict(t *testing.T) {
	explorations(t, "evict", spec(0, [][]lop{{add("a", 1), add("b", 2)}, {get("a"), add("c", 3)}}))
}

// TestRemove: three threads: an Add, a Remove and a Get of one key.
func TestRemove(t *testing.T) {
	explorations(t, "remove", spec(0, [][]lop{{add("a", 1), add("b", 2)}, {remove("a")}, {get("a"), get("b")}}))
}

// TestTTL: a TTL of a minute on the virtual clock.
func TestTTL(t *testing.T) {
	needs(t, "ttl", "timers", spec(time.Minute, [][]lop{{add("a", 1)}, {get("a")}}))
}
