package redischeck

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/linearizability"
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
	rows, err := Run(s, prims, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 20 * time.Second})
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
