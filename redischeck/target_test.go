package redischeck

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
	"github.com/tollgate/tollgate/redisserver"
)

// TestFenceRefusesAnotherServer: the WAIT fence must reach the server whose
// connection answered the call, not whatever now listens on the address
// the call was sent to. A take answered by a primary that is then killed
// and restarted empty on the same port, its replica resynced from the new
// process, was never acknowledged by any replica; WAIT on the new process
// says 1 replica all the same, so a fence keyed by address reported the
// take done, and durable. It must be unknown.
func TestFenceRefusesAnotherServer(t *testing.T) {
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
