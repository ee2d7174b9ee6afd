package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
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
// read, and the compare). etcd-txn is the Txn a take sends and nothing
// else, on a bare client: put the key's new value only if its ModRevision
// is the one the worker's last Txn wrote, else read the key and a second
// one, so that tollgate ÷ etcd-txn is what the table adds to the compared
// commit it cannot do without, and etcd-txn ÷ etcd-put what etcd charges
// for the compare.
const EtcdGroup = "ETCD/work=admit"

// EtcdRefuseGroup is the group of the etcd refusals: a take from
// impl/etcd/tokenbucket of a bucket that is empty and that the worker's own
// last take wrote, so that the refusal is confirmed by one linearizable
// Get (through the leader) of the bucket alone and writes nothing
// (tollgate), against one linearizable Get of a key of the
// worker's own (etcd-get), the least any design pays that answers from
// the cluster's committed state.
const EtcdRefuseGroup = "ETCD/work=refuse"

// The designs of EtcdGroup and EtcdRefuseGroup besides Tollgate.
const (
	EtcdPut   = "etcd-put"
	EtcdTxn   = "etcd-txn"
	EtcdGet   = "etcd-get"
	RedisTake = "redis"
)

// etcdRefuseAll are limits a take finds empty after its first one: one
// token, refilled once in 30 years.
var etcdRefuseAll = etcdtokenbucket.Limits{Capacity: 1, RefillPerSecond: 1e-9}

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
			{EtcdTxn, func(b B, g int) { runEtcdTxn(b, endpoints, g) }},
		} {
			cs = append(cs, etcdCase(EtcdGroup, d.name, g, d.run))
		}
		cs = append(cs, etcdCase(EtcdRefuseGroup, Tollgate, g, func(b B, g int) { runEtcdRefuse(b, endpoints, g) }),
			etcdCase(EtcdRefuseGroup, EtcdGet, g, func(b B, g int) { runEtcdGet(b, endpoints, g) }))
	}
	return cs
}

func etcdCase(group, design string, g int, run func(b B, g int)) Case {
	return Case{
		Name: fmt.Sprintf("%s/g=%d/design=%s", group, g, design), Group: group, Design: design, G: g,
		Run: func(b B) { run(b, g) },
	}
}

func etcdClient(b B, endpoints []string) *clientv3.Client {
	c, err := econn.NewClient(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		fail(b, "etcd: %v", err)
		return nil
	}
	return c
}

// etcdParallel is parallel for an etcd design: besides the client's
// figures it reports server-ns/op, the CPU time the members spent per
// operation over the case, all members together (etcdMembersCPU, read
// before and after, outside the timed part; it includes the members'
// heartbeats over the case, the same for every design).
func etcdParallel(b B, endpoints []string, g int, newOp func(w int) opFunc) runStats {
	cpu0, err := etcdMembersCPU(endpoints)
	if err != nil {
		fail(b, "etcd: %v", err)
		return runStats{}
	}
	st := parallel(b, g, newOp)
	cpu, err := etcdMembersCPU(endpoints)
	if err != nil {
		fail(b, "etcd: %v", err)
		return st
	}
	b.ReportMetric((cpu-cpu0)*1e9/float64(b.N()), "server-ns/op")
	return st
}

// etcdMembersCPU is the CPU time, in seconds, the members at endpoints
// have used since they started, summed: each member's own accounting,
// process_cpu_seconds_total on its /metrics (the client URL serves it).
func etcdMembersCPU(endpoints []string) (float64, error) {
	hc := http.Client{Timeout: 5 * time.Second}
	total := 0.0
	for _, ep := range endpoints {
		resp, err := hc.Get(strings.TrimSuffix(ep, "/") + "/metrics")
		if err != nil {
			return 0, fmt.Errorf("metrics of %s: %w", ep, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("metrics of %s: %w", ep, err)
		}
		v, ok := metricValue(string(body), "process_cpu_seconds_total")
		if !ok {
			return 0, fmt.Errorf("metrics of %s: no process_cpu_seconds_total", ep)
		}
		total += v
	}
	return total, nil
}

// metricValue is the value of the unlabelled sample name in a Prometheus
// text exposition.
func metricValue(text, name string) (float64, bool) {
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// etcdTable opens a table of the given name on a client of its own, and a
// function that closes the client; nil if it failed (b failed).
func etcdTable(b B, endpoints []string, name string) (*etcdtokenbucket.Table, func()) {
	c := etcdClient(b, endpoints)
	if c == nil {
		return nil, nil
	}
	tb, err := etcdtokenbucket.NewFromClient(c, name)
	if err != nil {
		_ = c.Close()
		fail(b, "etcd: %v", err)
		return nil, nil
	}
	return tb, func() { _ = c.Close() }
}

func runEtcdTake(b B, endpoints []string, g int) {
	tb, closeFn := etcdTable(b, endpoints, "bench")
	if tb == nil {
		return
	}
	defer closeFn()
	ctx, now := context.Background(), time.Now().UnixMilli()
	st := etcdParallel(b, endpoints, g, func(w int) opFunc {
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
	st := etcdParallel(b, endpoints, g, func(w int) opFunc {
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

// runEtcdTxn sends, per operation, the Txn an admitted take of a known
// bucket sends (impl/etcd/tokenbucket's take): a compare of the key's
// ModRevision with the revision the worker's own last Txn wrote, a put of
// a 16-byte value, and the two reads of the Else branch, which an
// admission never runs. The first Txn of a worker compares with revision 0
// (the key absent): the keys are deleted before the workers start.
func runEtcdTxn(b B, endpoints []string, g int) {
	c := etcdClient(b, endpoints)
	if c == nil {
		return
	}
	defer c.Close()
	ctx := context.Background()
	const prefix = "tollgate/bench/txn/"
	if _, err := c.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
		fail(b, "etcd txn: %v", err)
		return
	}
	value := string(make([]byte, 16))
	st := etcdParallel(b, endpoints, g, func(w int) opFunc {
		key, other := fmt.Sprintf("%s%d", prefix, w), prefix+"floor"
		var rev int64
		return func(int) bool {
			r, err := c.Txn(clientv3.WithRequireLeader(ctx)).
				If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
				Then(clientv3.OpPut(key, value)).
				Else(clientv3.OpGet(key), clientv3.OpGet(other)).
				Commit()
			if err != nil || !r.Succeeded {
				return false
			}
			rev = r.Header.Revision
			return true
		}
	})
	if st.admitted != b.N() {
		fail(b, "etcd txn, g=%d: %d of %d compared puts failed", g, b.N()-st.admitted, b.N())
	}
}

// runEtcdRefuse measures refused takes: each worker empties a bucket of its
// own with one admitted take before the timer starts, so that every timed
// take knows the bucket (its own last write) and finds it empty.
func runEtcdRefuse(b B, endpoints []string, g int) {
	tb, closeFn := etcdTable(b, endpoints, "bench-refuse")
	if tb == nil {
		return
	}
	defer closeFn()
	ctx, now := context.Background(), time.Now().UnixMilli()
	var errs atomic.Int64
	st := etcdParallel(b, endpoints, g, func(w int) opFunc {
		key := fmt.Sprintf("k%d", w)
		if err := tb.Reset(ctx, key); err != nil {
			errs.Add(1)
		}
		if _, ok, err := tb.TakeAt(ctx, now, key, etcdRefuseAll, 1); !ok || err != nil {
			errs.Add(1)
		}
		return func(int) bool {
			_, ok, err := tb.TakeAt(ctx, now, key, etcdRefuseAll, 1)
			if err != nil {
				errs.Add(1)
			}
			return ok
		}
	})
	if st.admitted != 0 || errs.Load() != 0 {
		fail(b, "etcd refusal, g=%d: %d of %d takes admitted, %d errors (or the first take of a worker refused)", g, st.admitted, b.N(), errs.Load())
	}
}

// runEtcdGet measures one linearizable Get per operation, of a key of the
// worker's own that exists.
func runEtcdGet(b B, endpoints []string, g int) {
	c := etcdClient(b, endpoints)
	if c == nil {
		return
	}
	defer c.Close()
	ctx := context.Background()
	var errs atomic.Int64
	st := etcdParallel(b, endpoints, g, func(w int) opFunc {
		key := fmt.Sprintf("tollgate/bench/get/%d", w)
		if _, err := c.Put(ctx, key, string(make([]byte, 16))); err != nil {
			errs.Add(1)
		}
		return func(int) bool {
			r, err := c.Get(ctx, key)
			return err == nil && len(r.Kvs) == 1
		}
	})
	if st.admitted != b.N() || errs.Load() != 0 {
		fail(b, "etcd get, g=%d: %d of %d gets failed, %d puts failed", g, b.N()-st.admitted, b.N(), errs.Load())
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
