package etcdsut

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	etokenbucket "github.com/tollgate/tollgate/impl/etcd/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestEtcdRefusalIsNotStale: a take reads first from its own member
// (serializable), so a refusal must be confirmed through the leader (T2,
// T11). A follower cut off from the others, while it still believes in its
// leader, holds an empty bucket that a reset through the leader has since
// made full again: a take through that follower must not be refused (it
// may fail, since it cannot reach the leader, but a refusal would be
// decided on a state the table left before the take began). Kills
// etb-refuse-on-local-read. Each table gets a cluster of its own (one
// member is cut off), with a 4 s election timeout, so that the follower
// keeps its leader well past the take.
func TestEtcdRefusalIsNotStale(t *testing.T) {
	build.Need(t)
	testlong.Skip(t)
	t.Parallel()
	for _, f := range []fault.Fault{fault.None, fault.Named("etb-refuse-on-local-read")} {
		err := staleRefusal(t, f)
		switch {
		case f == fault.None && err != nil:
			t.Errorf("the real table: %v", err)
		case f != fault.None && err == nil:
			t.Errorf("the mutant %v passed the check that must kill it", f)
		case f != fault.None:
			t.Logf("the mutant %v is killed: %v", f, err)
		}
	}
}

// staleRefusal runs the check on f's table and returns what went wrong.
func staleRefusal(t *testing.T, f fault.Fault) error {
	cl := etcdserver.StartClusterT(t, 3, etcdserver.WithTimeouts(100*time.Millisecond, 4*time.Second))
	defer cl.Stop()
	leader, follower := -1, -1
	for i := range 3 {
		st, err := cl.Status(i)
		if err != nil {
			return err
		}
		if st.Leader == st.Header.MemberId {
			leader = i
		} else if follower < 0 {
			follower = i
		}
	}
	if leader < 0 || follower < 0 {
		return fmt.Errorf("no leader and follower found")
	}
	client := func(i int) (*clientv3.Client, error) {
		return econn.NewClient(clientv3.Config{Endpoints: []string{cl.Member(i).ClientURL}, DialTimeout: 5 * time.Second})
	}
	cL, err := client(leader)
	if err != nil {
		return err
	}
	defer cL.Close()
	cF, err := client(follower)
	if err != nil {
		return err
	}
	defer cF.Close()
	ctx := context.Background()
	name := tableName(t, f)
	tL, err := newEtcdTokenbucket(f, cL, name)
	if err != nil {
		return err
	}
	tF, err := newEtcdTokenbucket(f, cF, name)
	if err != nil {
		return err
	}
	lim := etokenbucket.Limits{Capacity: 1, RefillPerSecond: 1e-9}
	if _, ok, err := tL.TakeAt(ctx, 1000, "k", lim, 1); err != nil || !ok {
		return fmt.Errorf("emptying the bucket: ok %v, %v", ok, err)
	}
	// The follower has the empty bucket: a take through it is refused.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := tF.TakeAt(ctx, 1000, "k", lim, 1)
		if err == nil && !ok {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the follower never refused the empty bucket: ok %v, %v", ok, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cl.Isolate(follower); err != nil {
		return err
	}
	defer cl.Heal()
	if err := tL.Reset(ctx, "k"); err != nil {
		return fmt.Errorf("reset through the leader: %v", err)
	}
	tctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, ok, err := tF.TakeAt(tctx, 1000, "k", lim, 1)
	switch {
	case err == nil && !ok:
		return errors.New("a take through the cut-off follower was refused on its stale empty bucket, after a reset through the leader had completed")
	case err == nil && ok:
		return errors.New("a take through the cut-off follower was admitted: it cannot have committed")
	}
	t.Logf("%v: the take through the cut-off follower: %v", f, err)
	return nil
}
