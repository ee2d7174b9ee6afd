package redischeck

import (
	"context"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// TestFenceRefusesAnotherServer: the WAIT fence must reach the server whose
// connection answered the call, not whatever now listens on the address
// the call was sent to. A take answered by a primary that is then killed
// and restarted empty on the same port, its replica resynced from the new
// process, was never acknowledged by any replica; WAIT on the new process
// says 1 replica all the same, so a fence keyed by address reported the
// take done, and durable. It must be unknown.
func TestFenceRefusesAnotherServer(t *testing.T) {
	t.Parallel() // each on servers of its own; they mostly wait out faults
	needServer(t)
	p := redisserver.StartT(t) // no AOF: a restart starts empty
	rep := redisserver.StartReplicaT(t, p)
	tg := NewTarget(p.Addr, 500*time.Millisecond)
	tg.Wait = 1
	defer tg.Close()
	b, closeB, err := tg.TB(fault.None)
	if err != nil {
		t.Fatal(err)
	}
	defer closeB()
	r := b.(*retrying[model.TBInput[string], model.TBOutput])
	take := model.TBInput[string]{Kind: model.TBTake, Key: "k", Limits: model.Limits{Capacity: 5, RefillPerSecond: 1}, Cost: 1, NowMs: 1}
	if _, err := b.Do(0, take); err != nil {
		t.Fatalf("a take, fenced by the server that answered it: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	call := tg.begin()
	if _, err := r.apply(ctx, take); err != nil {
		t.Fatal(err)
	}
	if err := p.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := rep.WaitReplicated(p, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	err = r.wait(call)
	if !errors.Is(err, linearizability.ErrUnknown) {
		t.Fatalf("a take answered by a server killed before its fence, the fence reaching its successor on the same port: %v, want ErrUnknown", err)
	}
	t.Log(err)
}

// TestSettleDropsAHeldCall: a call CLIENT PAUSE WRITE holds in the server
// is unknown to its caller; once settle returns, it can no longer run.
// Settling kills the connection's client on the server, and the held INCR
// goes with it: when the pause ends, the counter is still 0. (Without the
// kill, the connection left open, the INCR runs when the pause ends.) A
// stopped server cannot be settled: settle gives up at its deadline and
// the call stays open.
func TestSettleDropsAHeldCall(t *testing.T) {
	testlong.Skip(t)
	t.Parallel() // each on servers of its own; they mostly wait out faults
	needServer(t)
	p := redisserver.StartT(t)
	tg := NewTarget(p.Addr, 200*time.Millisecond)
	defer tg.Close()
	c := goredis.NewClient(tg.Options())
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "n", 0, 0).Err(); err != nil {
		t.Fatal(err)
	}
	// A tracked connection whose INCR the pause holds, and whose read
	// failed (as a client's read time-out would), left open.
	nc, err := tg.dial(ctx, "tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := p.PauseWrites(time.Second); err != nil {
		t.Fatal(err)
	}
	call := tg.begin()
	if _, err := nc.Write([]byte(resp("INCR", "n"))); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := nc.Read(make([]byte, 64)); err == nil {
		t.Fatal("INCR answered during CLIENT PAUSE WRITE")
	}
	if !tg.settle(call, time.Now().Add(time.Second)) {
		t.Fatal("a call held by CLIENT PAUSE WRITE was not settled")
	}
	time.Sleep(1200 * time.Millisecond) // the pause ends
	if n, err := c.Get(ctx, "n").Int(); err != nil || n != 0 {
		t.Fatalf("after the pause the counter is %d (%v): the settled INCR ran", n, err)
	}

	// A stopped server answers nothing, so nothing can be settled.
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	defer p.Resume()
	call = tg.begin()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = c.Incr(cctx, "n").Err()
	cancel()
	if err == nil {
		t.Fatal("INCR answered by a stopped server")
	}
	if tg.settle(call, time.Now().Add(500*time.Millisecond)) {
		t.Fatal("a call sent to a stopped server was settled")
	}
}
