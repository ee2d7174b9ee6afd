package tokenbucket_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// panicOf runs f and returns what it panicked with, as a string ("" when it
// returned).
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

var keyLim = tokenbucket.Limits{Capacity: 1, RefillPerSecond: 1}

// checkRefused: every method that takes a key panics for key, with a
// message that holds want and not the runtime's own, and the table holds no
// bucket afterwards (a reclaim far in the future forgets none).
func checkRefused[K comparable](t *testing.T, key K, want string) {
	t.Helper()
	tab := tokenbucket.New[K](tokenbucket.WithClock(func() int64 { return 0 }))
	bound, err := tab.Bind(keyLim, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func(){
		"Take":       func() { tab.Take(key, keyLim, 1) },
		"TakeAt":     func() { tab.TakeAt(0, key, keyLim, 1) },
		"Admit":      func() { tab.Admit(key, keyLim, 1) },
		"Peek":       func() { tab.Peek(key, keyLim) },
		"RetryAfter": func() { tab.RetryAfter(key, keyLim, 1) },
		"Reset":      func() { tab.Reset(key) },
		"Wait":       func() { tab.Wait(context.Background(), key, keyLim, 1) },
		"Bound.Take": func() { bound.Take(key) },
	} {
		msg := panicOf(call)
		if msg == "" {
			t.Errorf("%s(%v): no panic; a key that is never found again must be refused", name, key)
			continue
		}
		if !strings.Contains(msg, want) || !strings.HasPrefix(msg, "tokenbucket: ") {
			t.Errorf("%s(%v) panicked with %q, want a tokenbucket message containing %q", name, key, msg, want)
		}
	}
	if n, _ := tab.ReclaimAt(1<<40, keyLim); n != 0 {
		t.Errorf("the refused calls left %d buckets in the table, want none", n)
	}
}

// TestNaNKeyRefused: a key not equal to itself would get a new, full bucket
// on every call, so it would be admitted without limit (issue 45). Every
// such key is refused at the call, naming the key.
func TestNaNKeyRefused(t *testing.T) {
	nan := math.NaN()
	type pair struct {
		Name  string
		Score float64
	}
	checkRefused(t, nan, "key NaN (float64) is not equal to itself")
	checkRefused(t, float32(nan), "key NaN (float32) is not equal to itself")
	checkRefused(t, complex(1, nan), "is not equal to itself")
	checkRefused(t, pair{"a", nan}, "key {a NaN} (tokenbucket_test.pair) is not equal to itself")
	checkRefused(t, [2]float64{1, nan}, "key [1 NaN] ([2]float64) is not equal to itself")
	checkRefused[any](t, nan, "key NaN (float64) is not equal to itself")
	checkRefused[any](t, pair{"b", nan}, "is not equal to itself")
}

// TestUnhashableKeyRefused: an interface key holding a value that cannot be
// hashed is refused naming the key type, not with the runtime's message.
func TestUnhashableKeyRefused(t *testing.T) {
	checkRefused[any](t, []int{1}, "a key of type interface {} cannot be hashed")
	type wrap struct {
		ID   int
		Meta any
	}
	checkRefused(t, wrap{1, map[string]int{}}, "a key of type tokenbucket_test.wrap cannot be hashed")
	checkRefused[fmt.Stringer](t, stringerFunc(func() string { return "" }), "a key of type fmt.Stringer cannot be hashed")
}

type stringerFunc func() string

func (f stringerFunc) String() string { return f() }

// TestFloatKeysLimited: ordinary float, complex, struct and interface keys
// are limited as any key is: the second take of a one-token bucket at the
// same clock is refused, and +0 and -0, which are equal, share a bucket.
func TestFloatKeysLimited(t *testing.T) {
	check := func(name string, take func() bool) {
		t.Helper()
		if !take() {
			t.Errorf("%s: first take refused", name)
		}
		if take() {
			t.Errorf("%s: second take admitted from a one-token bucket", name)
		}
	}
	floats := tokenbucket.New[float64]()
	check("1.5", func() bool { _, ok, _ := floats.TakeAt(0, 1.5, keyLim, 1); return ok })
	zero := 0.0
	if _, ok, _ := floats.TakeAt(0, zero, keyLim, 1); !ok {
		t.Error("+0: first take refused")
	}
	if _, ok, _ := floats.TakeAt(0, math.Copysign(0, -1), keyLim, 1); ok {
		t.Error("-0 was admitted after +0 emptied the bucket they share")
	}
	complexes := tokenbucket.New[complex128]()
	check("1+2i", func() bool { _, ok, _ := complexes.TakeAt(0, 1+2i, keyLim, 1); return ok })
	anys := tokenbucket.New[any]()
	check("any 2.5", func() bool { _, ok, _ := anys.TakeAt(0, 2.5, keyLim, 1); return ok })
	check("any string", func() bool { _, ok, _ := anys.TakeAt(0, "k", keyLim, 1); return ok })
	check("any [2]int", func() bool { _, ok, _ := anys.TakeAt(0, [2]int{1, 2}, keyLim, 1); return ok })
}
