package redisserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/testlong"
)

// TestPartitionAReplica: a replica started ThroughProxy and cut from its
// primary (Partition) misses the primary's writes and WAIT 1 times out;
// a primary WithMinReplicas(1, 1 s) refuses writes (NOREPLICAS) about
// MinReplicasBound of the cut at the latest, and not at once (the partition closes no
// connection, so only the lag tells it); once healed, the replica has
// every write and the primary accepts writes again. Some 5 s of waiting
// for the lag: with -long, as the partition rows that use it
// (backends/redischeck TestPartition*).
func TestPartitionAReplica(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	p := StartT(t, WithMinReplicas(1, time.Second))
	r := StartReplicaT(t, p, ThroughProxy())
	if v, err := p.Query("SET", "before", "1"); err != nil || v != "OK" {
		t.Fatalf("SET before the cut: %q, %v", v, err)
	}
	if err := r.WaitReplicated(p, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Partition(); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	// WAIT waits for the writes of its own connection.
	c := client(t, p, 2*time.Second)
	ctx := context.Background()
	if err := c.Set(ctx, "during", "1", 0).Err(); err != nil {
		t.Fatalf("SET at once after the cut: %v (the primary cannot know yet)", err)
	}
	if n, err := c.Do(ctx, "WAIT", 1, 200).Int64(); err != nil || n != 0 {
		t.Fatalf("WAIT 1 across the cut: %d, %v; want 0", n, err)
	}
	if v, _ := r.Query("GET", "during"); v != "" {
		t.Fatalf("the cut replica has a write made after the cut: %q", v)
	}
	var refused time.Duration
	for refused == 0 {
		_, err := p.Query("SET", "probe", "1")
		switch {
		case err != nil && strings.Contains(err.Error(), "NOREPLICAS"):
			refused = time.Since(cut)
		case err != nil:
			t.Fatal(err)
		case time.Since(cut) > MinReplicasBound(time.Second)+time.Second:
			t.Fatalf("the primary still accepts writes %v after the cut", time.Since(cut))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The probe's own lateness on a loaded machine is allowed for (the
	// fault rows hold the server to the bound by its own count).
	t.Logf("NOREPLICAS %v after the cut (bound %v)", refused.Round(time.Millisecond), MinReplicasBound(time.Second))
	if err := r.Heal(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := p.Query("SET", "after", "1")
		if err == nil && v == "OK" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healed, the primary still refuses: %q, %v", v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := r.WaitReplicated(p, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"before", "during", "after"} {
		if v, err := r.Query("GET", k); err != nil || v != "1" {
			t.Errorf("healed, the replica's %s: %q, %v", k, v, err)
		}
	}
}

// TestProxyOptionsRefused: the options of a partition are refused when
// they make no sense, naming the rule, and start nothing.
func TestProxyOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		want string
	}{
		{[]Option{ThroughProxy()}, "only a replica"},
		{[]Option{WithMinReplicas(0, time.Second)}, "n must be at least 1"},
		{[]Option{WithMinReplicas(1, 1500*time.Millisecond)}, "whole number of seconds"},
		{[]Option{WithMinReplicas(1, 0)}, "whole number of seconds"},
	} {
		s, err := Start(t.TempDir(), c.opts...)
		if err == nil {
			s.Stop()
			t.Errorf("started with %s refused", c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q does not say %q", err, c.want)
		}
	}
	s := StartT(t)
	if err := s.Partition(); err == nil {
		t.Error("Partition of a server not started ThroughProxy")
	}
}
