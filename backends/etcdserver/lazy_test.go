package etcdserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestPowerLossKeepsAcknowledgedWrites: a one-member cluster on lazyfs
// acknowledges puts, loses power (every write it had not fsynced dropped)
// and restarts: every acknowledged put is there, because etcd fsyncs its
// WAL before it answers.
func TestPowerLossKeepsAcknowledgedWrites(t *testing.T) {
	c := StartClusterT(t, 1, OnLazyFS())
	cl := client(t, c.Endpoints()...)
	const n = 100
	for i := range n {
		if err := put(cl, fmt.Sprintf("k%03d", i), "v", 2*time.Second); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	losses, err := c.PowerLoss(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the power loss dropped %v: %q", losses[0], losses[0].Undone)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := client(t, c.Endpoints()...).Get(ctx, "k", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kvs) != n {
		t.Fatalf("after the power loss %d of %d acknowledged puts are there", len(r.Kvs), n)
	}
}

func TestPowerLossNeedsLazyFS(t *testing.T) {
	c := StartClusterT(t, 1)
	if _, err := c.PowerLoss(0); err == nil {
		t.Fatal("PowerLoss of a member not on lazyfs: no error")
	}
}
