package redisserver

import (
	"strconv"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/testlong"
)

// TestCluster: three primaries with a replica each serve every slot, every
// replica streams when StartCluster returns (replicasStream), and MoveSlot
// moves a slot with its keys to another primary.
func TestCluster(t *testing.T) {
	testlong.Skip(t)
	c := StartClusterT(t, 3, time.Second)
	if len(c.Primaries) != 3 || len(c.Replicas) != 3 {
		t.Fatalf("%d primaries, %d replicas", len(c.Primaries), len(c.Replicas))
	}
	t.Run("ReplicasStream", func(t *testing.T) { replicasStream(t, c) })
	t.Run("Adopt", func(t *testing.T) { adopt(t, c) })
	slot, err := c.Primaries[0].KeySlot("{x}k")
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := c.Primaries[0].SlotOwner(slot)
	if err != nil {
		t.Fatal(err)
	}
	from := c.node(owner)
	if _, err := from.Query("SET", "{x}k", "v"); err != nil {
		t.Fatal(err)
	}
	to := c.Primaries[0]
	if to == from {
		to = c.Primaries[1]
	}
	if err := c.MoveSlot(slot, to, 10, 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Primaries {
		if a, _, err := p.SlotOwner(slot); err != nil || a != to.Addr {
			t.Fatalf("%s sees slot %d at %s (%v), want %s", p.Addr, slot, a, err, to.Addr)
		}
	}
	if v, err := to.Query("GET", "{x}k"); err != nil || v != "v" {
		t.Fatalf("the moved key on its new primary: %q, %v", v, err)
	}
}

// replicasStream: StartCluster returns once every replica has
// processed a write its primary made after the link came up. In cluster
// mode PUBLISH goes over the cluster bus, not the replication stream, so
// the mark WaitReplicated used on one server moved no offset: a replica
// still waiting for its first sync (wait_bgsave) passed, and a primary
// killed then lost every write of the first second to its promoted
// replica (296 of 959 acknowledged takes in one cluster-kill run).
func replicasStream(t *testing.T, c *Cluster) {
	for i, r := range c.Replicas {
		info, err := r.Info("replication")
		if err != nil {
			t.Fatal(err)
		}
		if off, _ := strconv.ParseInt(info["slave_repl_offset"], 10, 64); off <= 0 || info["master_link_status"] != "up" {
			t.Errorf("replica %d (%s) of %s: link %s at offset %s when StartCluster returned: nothing streamed yet", i, r.Addr, c.Primaries[i].Addr, info["master_link_status"], info["slave_repl_offset"])
		}
	}
}

// adopt: Adopt refuses a pair that has not failed over and leaves it as
// it was; after a failover the cluster made (CLUSTER FAILOVER on the
// replica, no fault injected), it swaps the pair back into its places:
// Primaries[2] serves the pair's slots, Replicas[2] replicates it.
func adopt(t *testing.T, c *Cluster) {
	p, r := c.Primaries[2], c.Replicas[2]
	if err := c.Adopt(2, 300*time.Millisecond); err == nil {
		t.Fatal("Adopt took in a failover that had not happened")
	}
	if c.Primaries[2] != p || c.Replicas[2] != r {
		t.Fatal("a refused Adopt changed the pair")
	}
	if _, err := r.Query("CLUSTER", "FAILOVER"); err != nil {
		t.Fatal(err)
	}
	if err := c.Adopt(2, 10*c.NodeTimeout); err != nil {
		t.Fatal(err)
	}
	if c.Primaries[2] != r || c.Replicas[2] != p {
		t.Fatal("Adopt did not swap the pair")
	}
	if a, _, err := c.Primaries[0].SlotOwner(16383); err != nil || a != r.Addr {
		t.Fatalf("slot 16383 at %s (%v), want the promoted %s", a, err, r.Addr)
	}
}
