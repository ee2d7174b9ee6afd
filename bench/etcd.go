package bench

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/impl/etcd/econn"
	etcdtokenbucket "github.com/tollgate/tollgate/impl/etcd/tokenbucket"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	redistokenbucket "github.com/tollgate/tollgate/impl/redis/tokenbucket"
)

// EtcdGroup is the group of the etcd cases: a take from impl/etcd/tokenbucket
// on a cluster of three members (tollgate), against the same take from
// impl/redis/tokenbucket on one redis-server (redis), and against one
// etcd Put of a key of the worker's own (etcd-put), the floor of any
// design that commits a write through consensus once per operation. The
// ratio tollgate ÷ redis is the cost of consensus against asynchronous
// replication; tollgate ÷ etcd-put what a take pays beyond one commit (its
// read, and the compare).
const EtcdGroup = "ETCD/work=admit"

// The designs of EtcdGroup besides Tollgate.
const (
	EtcdPut   = "etcd-put"
	RedisTake = "redis"
)

// EtcdGoroutines are the goroutine counts of the etcd cases: one client,
// and 16 and 64 clients at once.
var EtcdGoroutines = []int{1, 16, 64}

// EtcdSuite lists the etcd cases against the cluster at endpoints and the
// redis-server at redisAddr: every design at every count of
// EtcdGoroutines, one cell per count, so that Runner interleaves the
// designs of one ratio. Every take is admitted (the limits never run out),
// each worker on a key of its own, so that a take contends only with the
// cluster, not with another worker's compare.
func EtcdSuite(endpoints []string, redisAddr string) []Case {
	var cs []Case
	for _, g := range EtcdGoroutines {
		for _, d := range []struct {
			name string
			run  func(b B, g int)
		}{
			{Tollgate, func(b B, g int) { runEtcdTake(b, endpoints, g) }},
			{RedisTake, func(b B, g int) { runRedisTake(b, redisAddr, g) }},
			{EtcdPut, func(b B, g int) { runEtcdPut(b, endpoints, g) }},
		} {
			cs = append(cs, Case{
				Name: fmt.Sprintf("%s/g=%d/design=%s", EtcdGroup, g, d.name), Group: EtcdGroup, Design: d.name, G: g,
				Run: func(b B) { d.run(b, g) },
			})
		}
	}
	return cs
}

func etcdClient(b B, endpoints []string) *clientv3.Client {
	c, err := econn.NewClient(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		fail(b, "etcd: %v", err)
		return nil
	}
	return c
}

func runEtcdTake(b B, endpoints []string, g int) {
	c := etcdClient(b, endpoints)
	if c == nil {
		return
	}
	defer c.Close()
	tb, err := etcdtokenbucket.NewFromClient(c, "bench")
	if err != nil {
		fail(b, "etcd: %v", err)
		return
	}
	ctx, now := context.Background(), time.Now().UnixMilli()
	st := parallel(b, g, func(w int) opFunc {
		key := fmt.Sprintf("k%d", w)
		return func(int) bool {
			_, ok, err := tb.TakeAt(ctx, now, key, redisAdmitAll, 1)
			return ok && err == nil
		}
	})
	if st.admitted != b.N() {
		fail(b, "etcd take, g=%d: %d of %d takes failed or were refused", g, b.N()-st.admitted, b.N())
	}
}

func runEtcdPut(b B, endpoints []string, g int) {
	c := etcdClient(b, endpoints)
	if c == nil {
		return
	}
	defer c.Close()
	ctx := context.Background()
	st := parallel(b, g, func(w int) opFunc {
		key := fmt.Sprintf("tollgate/bench/put/%d", w)
		return func(int) bool {
			_, err := c.Put(ctx, key, "v")
			return err == nil
		}
	})
	if st.admitted != b.N() {
		fail(b, "etcd put, g=%d: %d of %d puts failed", g, b.N()-st.admitted, b.N())
	}
}

func runRedisTake(b B, addr string, g int) {
	c := rconn.NewClient(&goredis.Options{Addr: addr, PoolSize: 64})
	defer c.Close()
	ctx := context.Background()
	tb, err := redistokenbucket.NewFromClient(ctx, c, "bench-etcd")
	if err != nil {
		fail(b, "redis: %v", err)
		return
	}
	now := time.Now().UnixMilli()
	st := parallel(b, g, func(w int) opFunc {
		key := fmt.Sprintf("k%d", w)
		return func(int) bool {
			_, ok, err := tb.TakeAt(ctx, now, key, redisAdmitAll, 1)
			return ok && err == nil
		}
	})
	if st.admitted != b.N() {
		fail(b, "redis take, g=%d: %d of %d takes failed or were refused", g, b.N()-st.admitted, b.N())
	}
}
