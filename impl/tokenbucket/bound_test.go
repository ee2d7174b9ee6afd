package tokenbucket_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// TestBind: Bind refuses what Take refuses, with the same error, and a Bound
// answers exactly as the Table does with its limits and cost.
func TestBind(t *testing.T) {
	tab := tokenbucket.New[string]()
	for _, bad := range []struct {
		lim   tokenbucket.Limits
		cost  float64
		field string
	}{
		{tokenbucket.Limits{Capacity: 0, RefillPerSecond: 1}, 1, "capacity"},
		{tokenbucket.Limits{Capacity: 1, RefillPerSecond: -1}, 1, "refill_per_second"},
		{tokenbucket.Limits{Capacity: 1, RefillPerSecond: 1}, 2, "cost"},
	} {
		_, err := tab.Bind(bad.lim, bad.cost)
		var ae *tokenbucket.ArgError
		if !errors.As(err, &ae) || ae.Field != bad.field {
			t.Errorf("Bind(%+v, %v) = %v, want an *ArgError naming %s", bad.lim, bad.cost, err, bad.field)
		}
	}
	var now int64
	clock := func() int64 { return now }
	lim := tokenbucket.Limits{Capacity: 3, RefillPerSecond: 2}
	bound, plain := tokenbucket.New[string](tokenbucket.WithClock(clock)), tokenbucket.New[string](tokenbucket.WithClock(clock))
	b, err := bound.Bind(lim, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b.Limits() != lim || b.Cost() != 2 {
		t.Fatalf("Limits, Cost = %+v, %v", b.Limits(), b.Cost())
	}
	for step := 0; step < 40; step++ {
		now += int64(step%7) * 90
		key := fmt.Sprint("k", step%3)
		gotR, gotOK := b.Take(key)
		wantR, wantOK, _ := plain.Take(key, lim, 2)
		if gotR != wantR || gotOK != wantOK {
			t.Fatalf("step %d: Bound.Take = %v %v, Table.Take = %v %v", step, gotR, gotOK, wantR, wantOK)
		}
		if got, want := b.Peek(key), must(plain.Peek(key, lim)); got != want {
			t.Fatalf("step %d: Peek %v, want %v", step, got, want)
		}
		if got, want := b.RetryAfter(key), must(plain.RetryAfter(key, lim, 2)); got != want {
			t.Fatalf("step %d: RetryAfter %v, want %v", step, got, want)
		}
		if got, want := b.Admit(key+"'"), must(plain.Admit(key+"'", lim, 2)); got != want {
			t.Fatalf("step %d: Admit %+v, want %+v", step, got, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Wait(ctx, "k0"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled context: %v", err)
	}
}

func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// TestZeroBoundPanics: the zero Bound says what is wrong at its first call.
func TestZeroBoundPanics(t *testing.T) {
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "zero Bound") {
			t.Fatalf("panic %q, want one naming the zero Bound", msg)
		}
	}()
	var b tokenbucket.Bound[string]
	b.Take("k")
}

// A handler's limit, bound once: per-client buckets with no limits passed
// on each call.
func ExampleTable_Bind() {
	var now int64 // the table's clock, in milliseconds
	perClient, err := tokenbucket.New[string](tokenbucket.WithClock(func() int64 { return now })).
		Bind(tokenbucket.Limits{Capacity: 2, RefillPerSecond: 1}, 1)
	if err != nil {
		panic(err) // a bad limit is refused here, once
	}
	for i := 0; i < 3; i++ {
		_, ok := perClient.Take("10.0.0.7")
		fmt.Println("request", i, "admitted:", ok)
	}
	fmt.Println("retry after ms:", perClient.RetryAfter("10.0.0.7"))
	now += 1000
	_, ok := perClient.Take("10.0.0.7")
	fmt.Println("a second later, admitted:", ok)
	// Output:
	// request 0 admitted: true
	// request 1 admitted: true
	// request 2 admitted: false
	// retry after ms: 1000
	// a second later, admitted: true
}
