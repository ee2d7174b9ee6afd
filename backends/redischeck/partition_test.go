package redischeck

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// scenarioNamed is the fault workload called name.
func scenarioNamed(t *testing.T, name string) Scenario {
	t.Helper()
	for _, s := range Scenarios() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %q", name)
	return Scenario{}
}

// runRows runs s for prims at seed 1 and logs its rows.
func runRows(t *testing.T, s Scenario, prims ...string) []Row {
	t.Helper()
	// A minute for porcupine: under -race on a loaded machine a WAIT
	// row's token-bucket history (a hundred unknown takes) took over 20 s.
	rows, err := Run(s, prims, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		logRow(t, r)
	}
	return rows
}

// TestPartition: the replica cut from its primary and healed, with no
// promotion: both tables linearizable, nothing acknowledged lost, and the
// fault struck writes in flight.
func TestPartition(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	needServer(t)
	for _, r := range runRows(t, scenarioNamed(t, "partition")) {
		if !r.Pass() {
			t.Errorf("%s: %s", r.Primitive, r.Failure())
		}
	}
}

// TestPartitionFailoverLoses: the replica promoted on its side of a cut
// while the clients write to the old primary: the old primary's
// acknowledged takes are lost (the limit shows), some of them acknowledged
// later than min-replicas would have allowed, which is what
// partition-failover-minreplicas forbids; the row passes as a lossy row
// (linearizable before the fault, nothing applied twice).
func TestPartitionFailoverLoses(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	needServer(t)
	r := runRows(t, scenarioNamed(t, "partition-failover"), linearizability.PrimitiveTokenBucket)[0]
	if !r.Pass() {
		t.Errorf("a lossy row failed: %s", r.Failure())
	}
	if r.Lost == 0 {
		t.Errorf("a partition-failover lost nothing: %s", r.Detail)
	}
}

// TestPartitionMinReplicas: with min-replicas-to-write 1 and
// min-replicas-max-lag 1 s the cut-off primary refuses writes within the
// bound and runs none after it, so every lost take was acknowledged within
// the bound of the cut: both tables' rows pass. The same row on a primary
// without min-replicas fails on the bound (the negative control): its
// primary never refuses, and loses takes it acknowledged later.
func TestPartitionMinReplicas(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	needServer(t)
	s := scenarioNamed(t, "partition-failover-minreplicas")
	t.Run("on", func(t *testing.T) {
		t.Parallel()
		for _, r := range runRows(t, s) {
			if !r.Pass() {
				t.Errorf("%s: %s", r.Primitive, r.Failure())
			}
			if !strings.Contains(r.Detail, "refused writes from") {
				t.Errorf("%s: the primary's refusal was not measured: %s", r.Primitive, r.Detail)
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		off := s
		off.unsetMinReplicas = true
		r := runRows(t, off, linearizability.PrimitiveTokenBucket)[0]
		if r.Pass() || r.Unbounded == "" {
			t.Errorf("without min-replicas the row held its bound: %q, %s", r.Failure(), r.Detail)
		}
	})
}

// TestPartitionWait: every call followed by WAIT 1 across the cut and the
// failover: whatever the replica acknowledged survives, a call whose WAIT
// timed out is unknown, never failed; both tables linearizable, nothing
// acknowledged lost.
func TestPartitionWait(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	needServer(t)
	for _, r := range runRows(t, scenarioNamed(t, "partition-failover-wait")) {
		if !r.Pass() {
			t.Errorf("%s: %s", r.Primitive, r.Failure())
		}
		if r.UnknownOps == 0 {
			t.Errorf("%s: no call's WAIT timed out across the cut: %s", r.Primitive, r.Detail)
		}
	}
}

// TestNoReplicasRefusalRanNothing: a take a primary refuses with
// NOREPLICAS (min-replicas-to-write 1, its only replica gone) ran nothing:
// the checks' client reports it not run (linearizability.ErrNotRun: not
// recorded), never unknown, and the bucket keeps its tokens.
func TestNoReplicasRefusalRanNothing(t *testing.T) {
	t.Parallel()
	needServer(t)
	p := redisserver.StartT(t, redisserver.WithMinReplicas(1, time.Second))
	rep := redisserver.StartReplicaT(t, p)
	// A refused call is sent again for Retry (by default 20 timeouts, 5 s
	// here) before it is reported not run: a refusal that lasts is
	// reported not run after any window, so a short one checks the same.
	tg := NewTarget(p.Addr, 250*time.Millisecond)
	tg.Retry = 500 * time.Millisecond
	defer tg.Close()
	b, closeB, err := tg.TB(fault.None)
	if err != nil {
		t.Fatal(err)
	}
	defer closeB()
	lim := model.Limits{Capacity: 5, RefillPerSecond: 1}
	take := model.TBInput[string]{Kind: model.TBTake, Key: "k", Limits: lim, Cost: 1, NowMs: 1}
	if _, err := b.Do(0, take); err != nil {
		t.Fatalf("a take with the replica up: %v", err)
	}
	rep.Stop() // the primary sees its replica's connection close: 0 good replicas at once
	_, err = b.Do(0, take)
	if !errors.Is(err, linearizability.ErrNotRun) || errors.Is(err, linearizability.ErrUnknown) {
		t.Fatalf("a take refused NOREPLICAS: %v; want ErrNotRun, not unknown", err)
	}
	if !strings.Contains(err.Error(), "NOREPLICAS") {
		t.Fatalf("the refusal does not say NOREPLICAS: %v", err)
	}
	out, err := b.Do(0, model.TBInput[string]{Kind: model.TBPeek, Key: "k", Limits: lim, NowMs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Tokens != 4 {
		t.Fatalf("after one take and one refused: %g tokens, want 4", out.Tokens)
	}
}
