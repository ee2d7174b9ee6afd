package redisserver

import (
	"testing"
	"time"
)

// TestCluster: three primaries with a replica each serve every slot, and
// MoveSlot moves a slot with its keys to another primary.
func TestCluster(t *testing.T) {
	c := StartClusterT(t, 3, time.Second)
	if len(c.Primaries) != 3 || len(c.Replicas) != 3 {
		t.Fatalf("%d primaries, %d replicas", len(c.Primaries), len(c.Replicas))
	}
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
