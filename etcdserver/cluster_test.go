package etcdserver

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

func client(t *testing.T, endpoints ...string) *clientv3.Client {
	t.Helper()
	c, err := quietClient(endpoints, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func put(c *clientv3.Client, key, value string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := c.Put(ctx, key, value)
	return err
}

// localGet reads key from the member at endpoint alone (a serializable
// read: what that member has applied, without asking the leader).
func localGet(t *testing.T, endpoint, key string) string {
	t.Helper()
	c := client(t, endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := c.Get(ctx, key, clientv3.WithSerializable())
	if err != nil || len(r.Kvs) == 0 {
		return ""
	}
	return string(r.Kvs[0].Value)
}

// eventually retries f for up to d.
func eventually(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !f(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within %v: %s", d, what)
		}
	}
}

// TestFaults: on one cluster of three, in turn: every member serves what
// another took; a killed leader is replaced and, restarted from its data
// directory, catches up; a paused leader is replaced and steps down when
// it runs again; an isolated leader is replaced, acknowledges nothing
// while cut off, and catches up once healed; a removed follower's place is
// taken by a new member that serves the data.
func TestFaults(t *testing.T) {
	c := StartClusterT(t, 3)
	all := client(t, c.Endpoints()...)
	if err := put(all, "k", "v0", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < c.Size(); i++ {
		eventually(t, 5*time.Second, fmt.Sprintf("member %d serves k", i), func() bool { return localGet(t, c.Endpoint(i), "k") == "v0" })
	}
	// others is a client of every member but i: the majority, when i is
	// the one struck (a client of all three may send a request to i and
	// wait there until its deadline).
	others := func(i int) *clientv3.Client {
		var eps []string
		for j := 0; j < c.Size(); j++ {
			if j != i && !c.members[j].removed {
				eps = append(eps, c.Endpoint(j))
			}
		}
		return client(t, eps...)
	}
	newLeader := func(old int) int {
		t.Helper()
		var l int
		eventually(t, 10*c.ElectionTimeout(), "a new leader", func() bool {
			var err error
			l, err = c.Leader()
			return err == nil && l != old
		})
		return l
	}

	t.Run("kill the leader", func(t *testing.T) {
		l, err := c.WaitLeader(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Kill(l); err != nil {
			t.Fatal(err)
		}
		newLeader(l)
		if err := put(others(l), "k", "v1", 5*time.Second); err != nil {
			t.Fatalf("a write with the leader dead: %v", err)
		}
		if err := c.Restart(l); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the restarted member catches up", func() bool { return localGet(t, c.Endpoint(l), "k") == "v1" })
	})

	t.Run("pause the leader", func(t *testing.T) {
		l, err := c.WaitLeader(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Pause(l); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Resume(l) }()
		nl := newLeader(l)
		if err := put(others(l), "k", "v2", 5*time.Second); err != nil {
			t.Fatalf("a write with the leader paused: %v", err)
		}
		if err := c.Resume(l); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the old leader follows the new one", func() bool {
			st, err := c.status(c.members[l], time.Second)
			return err == nil && st.Leader != c.members[l].id && c.indexOf(st.Leader) == nl
		})
		eventually(t, 10*time.Second, "the old leader catches up", func() bool { return localGet(t, c.Endpoint(l), "k") == "v2" })
	})

	t.Run("isolate the leader", func(t *testing.T) {
		l, err := c.WaitLeader(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Isolate(l); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Heal() }()
		newLeader(l)
		if err := put(others(l), "k", "v3", 5*time.Second); err != nil {
			t.Fatalf("a write through the majority: %v", err)
		}
		cut := client(t, c.Endpoint(l))
		if err := put(cut, "k", "cut", 4*c.ElectionTimeout()); err == nil {
			t.Fatal("the isolated member acknowledged a write")
		}
		if got := localGet(t, c.Endpoint(l), "k"); got == "v3" || got == "cut" {
			t.Fatalf("the isolated member applied %q", got)
		}
		if err := c.Heal(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the healed member catches up", func() bool { return localGet(t, c.Endpoint(l), "k") == "v3" })
	})

	t.Run("replace a follower", func(t *testing.T) {
		l, err := c.WaitLeader(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		f := (l + 1) % c.Size()
		for f == l || c.members[f].removed {
			f = (f + 1) % c.Size()
		}
		if err := c.RemoveMember(f); err != nil {
			t.Fatal(err)
		}
		n, err := c.AddMember()
		if err != nil {
			t.Fatal(err)
		}
		if got := len(c.Endpoints()); got != 3 {
			t.Fatalf("%d members after the replacement", got)
		}
		if err := put(all, "k", "v4", 5*time.Second); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the new member serves the data", func() bool { return localGet(t, c.Endpoint(n), "k") == "v4" })
	})
}
