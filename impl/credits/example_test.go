package credits_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
)

// The whole life of one slot: a caller reserves and enqueues, the owner
// takes and finishes. A stale token from the finished reservation can no
// longer touch the slot after it is handed out again.
func ExampleTable_Reserve() {
	tab := credits.New[string]()
	caller := credits.NewHolder()

	tok, res := tab.Reserve(caller, credits.General)
	fmt.Println("reserve:", tok.Slot, res)
	fmt.Println("enqueue:", tab.EnqueueAt(100, caller, tok, "GET /balance"))

	for _, e := range tab.Enqueued() { // the owner's poll
		payload, _ := tab.Take(e.Token)
		fmt.Println("owner took:", payload)
		fmt.Println("finish:", tab.Finish(e.Token))
	}

	next, _ := tab.Reserve(credits.NewHolder(), credits.General)
	fmt.Println("slot reused:", next.Slot == tok.Slot, "stale release:", tab.Release(caller, tok))
	// Output:
	// reserve: 1 ok
	// enqueue: ok
	// owner took: GET /balance
	// finish: true
	// slot reused: true stale release: false
}

// An owner serves callers through the table; no message goes from caller to
// owner except the row itself.
func ExampleOwner_Call() {
	tab := credits.New[*credits.Request[string, int]]()
	owner := credits.NewOwner(tab, time.Millisecond, func(_ context.Context, s string) (int, error) {
		return len(s), nil
	})
	stop := owner.Start(context.Background()) // returns once the owner serves

	n, err := owner.Call(context.Background(), credits.NewHolder(), credits.Internal, "hello")
	fmt.Println(n, err)

	fmt.Println(stop()) // Run's error: the context it ran under was cancelled
	_, err = owner.Call(context.Background(), credits.NewHolder(), credits.Internal, "late")
	fmt.Println(err)
	// Output:
	// 5 <nil>
	// context canceled
	// credits: the table is closed
}
