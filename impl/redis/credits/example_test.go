package credits_test

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/credits"
)

// A caller in one process reserves a slot and enqueues its request; the
// owner, in another, lists the enqueued rows, takes each, handles it and
// finishes it. The caller keeps a lease while it holds a reservation, and
// a sweeper frees what holders that vanished left reserved.
func Example() {
	ctx := context.Background()
	opts := &goredis.Options{Addr: "127.0.0.1:6379"}
	now := func() int64 { return time.Now().UnixMilli() }

	// The caller.
	caller, err := credits.New(ctx, opts, "orders")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer caller.Close() // this client only: the table stays for the others
	h := credits.NewHolder()
	if _, err := caller.RenewAt(ctx, now(), h, 30_000); err != nil {
		fmt.Println(err)
		return
	}
	defer caller.Exit(ctx, h)
	tok, res, err := caller.Reserve(ctx, h, credits.General)
	if err != nil || res != credits.OK {
		fmt.Println(res, err) // exhausted: shed the request; an error: see ErrUnknown
		return
	}
	if res, err := caller.EnqueueAt(ctx, now(), h, tok, `{"order":42}`); err != nil || res != credits.OK {
		fmt.Println(res, err)
		return
	}

	// The owner's poll.
	owner, err := credits.New(ctx, opts, "orders")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer owner.Close()
	rows, err := owner.Enqueued(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range rows {
		if payload, ok, err := owner.Take(ctx, e.Token); err == nil && ok {
			fmt.Println("handling", payload)
			owner.Finish(ctx, e.Token)
		}
	}

	// The sweeper, anywhere, from time to time.
	if _, err := owner.SweepAt(ctx, now()); err != nil {
		fmt.Println(err)
	}
}
