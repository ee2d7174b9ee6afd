package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/rconn"
	redistokenbucket "github.com/tollgate/tollgate/impl/redis/tokenbucket"
)

// RedisDesign is one way to take a token from a bucket in a shared Redis,
// for the Redis benchmarks: tollgate's impl/redis/tokenbucket (one FCALL),
// go-redis/redis_rate v10 (one EVALSHA of its GCRA script), and PING, the
// floor: one round trip that does nothing. Each gets its own client with
// the same options (go-redis's default pool), retries off.
type RedisDesign struct {
	Name string
	// Command is the command the design sends, as INFO commandstats names
	// it (RunRedis reports the server's time per call of it).
	Command string
	// Open connects to addr and returns the operation one goroutine runs
	// (w is its index) and a function that closes what Open opened.
	Open func(addr string) (op func(w int) opFunc, closeFn func(), err error)
}

// redisAdmitAll are limits no run of the benchmarks exhausts, so every take
// is admitted and every design does its whole write path.
var redisAdmitAll = redistokenbucket.Limits{Capacity: 1e15, RefillPerSecond: 1e9}

// RedisDesigns lists the designs the Redis benchmarks compare.
func RedisDesigns() []RedisDesign {
	ctx := context.Background()
	client := func(addr string) *goredis.Client { return rconn.NewClient(&goredis.Options{Addr: addr}) }
	return []RedisDesign{
		{"ping", "ping", func(addr string) (func(int) opFunc, func(), error) {
			c := client(addr)
			return func(int) opFunc {
				return func(int) bool { return c.Ping(ctx).Err() == nil }
			}, func() { _ = c.Close() }, c.Ping(ctx).Err()
		}},
		{"tollgate", "fcall", func(addr string) (func(int) opFunc, func(), error) {
			c := client(addr)
			tb, err := redistokenbucket.NewFromClient(ctx, c, "bench")
			if err != nil {
				_ = c.Close()
				return nil, nil, err
			}
			now := time.Now().UnixMilli()
			return func(w int) opFunc {
				key := fmt.Sprintf("k%d", w)
				return func(int) bool {
					_, ok, err := tb.TakeAt(ctx, now, key, redisAdmitAll, 1)
					return ok && err == nil
				}
			}, func() { _ = c.Close() }, nil
		}},
		{"redis_rate", "evalsha", func(addr string) (func(int) opFunc, func(), error) {
			c := client(addr)
			l := redis_rate.NewLimiter(c)
			lim := redis_rate.Limit{Rate: 1e9, Burst: 1e9, Period: time.Second}
			return func(w int) opFunc {
				key := fmt.Sprintf("k%d", w)
				return func(int) bool {
					res, err := l.Allow(ctx, key, lim)
					return err == nil && res.Allowed > 0
				}
			}, func() { _ = c.Close() }, nil
		}},
	}
}

// RedisGoroutines are the goroutine counts of the Redis benchmarks.
var RedisGoroutines = []int{1, 4, 16, 64}

// RedisGroup is the group of the Redis cases in the suite's vocabulary.
const RedisGroup = "REDIS/work=admit"

// RunRedis measures design d against the server at addr with g
// goroutines. Connecting and loading are not timed; every operation must
// succeed (an error or a refusal fails the run). Besides the client's
// figures it reports server-ns/op, the server's own time per call of the
// design's command over the case (INFO commandstats read before and after,
// outside the timed part): each round's server time, beside its
// end-to-end time.
func RunRedis(b B, d RedisDesign, addr string, g int) {
	newOp, closeFn, err := d.Open(addr)
	if err != nil {
		fail(b, "%s: %v", d.Name, err)
		return
	}
	defer closeFn()
	calls0, usec0, err := redisCommandStat(addr, d.Command)
	if err != nil {
		fail(b, "%s: %v", d.Name, err)
		return
	}
	st := parallel(b, g, newOp)
	if st.admitted != b.N() {
		fail(b, "%s/g=%d: %d of %d operations failed or were refused", d.Name, g, b.N()-st.admitted, b.N())
		return
	}
	calls, usec, err := redisCommandStat(addr, d.Command)
	if err != nil || calls <= calls0 {
		fail(b, "%s: the server counted %d calls of %s (%v)", d.Name, calls-calls0, d.Command, err)
		return
	}
	b.ReportMetric(float64(usec-usec0)*1000/float64(calls-calls0), "server-ns/op")
}

// redisCommandStat reads the calls and microseconds the server at addr has
// counted for command (INFO commandstats; zero before its first call).
func redisCommandStat(addr, command string) (calls, usec int64, err error) {
	c := rconn.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				calls, err = strconv.ParseInt(v, 10, 64)
			case "usec":
				usec, err = strconv.ParseInt(v, 10, 64)
			}
			if err != nil {
				return 0, 0, fmt.Errorf("INFO commandstats: %q: %w", line, err)
			}
		}
	}
	return calls, usec, nil
}

// RedisSuite lists the Redis cases against the server at addr: every
// design at every count of RedisGoroutines, one cell per count, so that
// Runner interleaves the designs compared in one ratio.
func RedisSuite(addr string) []Case {
	var cs []Case
	for _, g := range RedisGoroutines {
		for _, d := range RedisDesigns() {
			cs = append(cs, Case{
				Name: fmt.Sprintf("%s/g=%d/design=%s", RedisGroup, g, d.Name), Group: RedisGroup, Design: d.Name, G: g,
				Run: func(b B) { RunRedis(b, d, addr, g) },
			})
		}
	}
	return cs
}

// RedisServerTimes reads the server's own accounting of the commands the
// Redis designs send (INFO commandstats): microseconds of server time per
// call of fcall (tollgate), evalsha (redis_rate) and ping, over every call
// since the server started. It is the part of a take's cost the server pays
// alone, whatever the client and the network add.
func RedisServerTimes(addr string) (map[string]float64, error) {
	c := rconn.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd || (cmd != "fcall" && cmd != "evalsha" && cmd != "ping") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, found := strings.CutPrefix(kv, "usec_per_call="); found {
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					out[cmd] = x
				}
			}
		}
	}
	return out, nil
}

// RedisClusterGroup is the group of the Redis Cluster scaling cases.
const RedisClusterGroup = "REDIS-CLUSTER/work=admit/tables=3"

// OnePrimary is the design of the scaling cases whose three tables share a
// cluster's one primary; Tollgate is the same three tables on a cluster of
// three primaries, one table on each.
const OnePrimary = "one-primary"

// RedisClusterGoroutines are the goroutine counts of the scaling cases.
var RedisClusterGoroutines = []int{16, 64}

// RedisClusterSuite lists the scaling cases: takes on three token-bucket
// tables, worker w on table w%3 and a key of its own, on the cluster whose
// nodes are at three (3 primaries, the tables named so that each lands on
// another primary) and on the cluster at one (1 primary, the same names).
// The ratio tollgate ÷ one-primary is the time per take with the tables
// spread over 3 primaries against all on one: how throughput scales with
// the primaries. Each client has a pool of 64 connections per node, so
// neither cluster waits for a connection.
func RedisClusterSuite(one, three []string) []Case {
	var cs []Case
	for _, g := range RedisClusterGoroutines {
		for _, d := range []struct {
			name  string
			addrs []string
		}{{OnePrimary, one}, {Tollgate, three}} {
			cs = append(cs, Case{
				Name: fmt.Sprintf("%s/g=%d/design=%s", RedisClusterGroup, g, d.name), Group: RedisClusterGroup, Design: d.name, G: g,
				Run: func(b B) { runRedisCluster(b, d.addrs, three, g) },
			})
		}
	}
	return cs
}

// runRedisCluster runs g goroutines of takes on three tables on the
// cluster at addrs, named for the cluster at spread (SpreadTableNames).
func runRedisCluster(b B, addrs, spread []string, g int) {
	ctx := context.Background()
	names, err := SpreadTableNames(ctx, spread, 3)
	if err != nil {
		fail(b, "%v", err)
		return
	}
	c := rconn.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, PoolSize: 64})
	defer c.Close()
	var tables []*redistokenbucket.Table
	for _, n := range names {
		tb, err := redistokenbucket.NewFromClient(ctx, c, n)
		if err != nil {
			fail(b, "%v", err)
			return
		}
		tables = append(tables, tb)
	}
	now := time.Now().UnixMilli()
	st := parallel(b, g, func(w int) opFunc {
		tb, key := tables[w%len(tables)], fmt.Sprintf("k%d", w)
		return func(int) bool {
			_, ok, err := tb.TakeAt(ctx, now, key, redisAdmitAll, 1)
			return ok && err == nil
		}
	})
	if st.admitted != b.N() {
		fail(b, "cluster %v, g=%d: %d of %d takes failed or were refused", addrs, g, b.N()-st.admitted, b.N())
	}
}

// SpreadTableNames returns n table names whose slots are served by n
// different shards (primaries) of the cluster at addrs (it must have n or
// more): the first of bench-0, bench-1, … to land on each shard.
func SpreadTableNames(ctx context.Context, addrs []string, n int) ([]string, error) {
	c := rconn.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		return nil, err
	}
	used := map[int]bool{} // the shards a name was found for
	var names []string
	for i := 0; i < 10_000 && len(names) < n; i++ {
		name := fmt.Sprintf("bench-%d", i)
		slot, err := c.ClusterKeySlot(ctx, "{"+name+"}").Result()
		if err != nil {
			return nil, err
		}
		for i, sh := range shards {
			for _, r := range sh.Slots {
				if r.Start <= slot && slot <= r.End && !used[i] {
					used[i] = true
					names = append(names, name)
				}
			}
		}
	}
	if len(names) < n {
		return nil, fmt.Errorf("bench: the cluster at %v has %d shards serving slots, want %d", addrs, len(used), n)
	}
	return names, nil
}
