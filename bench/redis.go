package bench

import (
	"context"
	"fmt"
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
		{"ping", func(addr string) (func(int) opFunc, func(), error) {
			c := client(addr)
			return func(int) opFunc {
				return func(int) bool { return c.Ping(ctx).Err() == nil }
			}, func() { _ = c.Close() }, c.Ping(ctx).Err()
		}},
		{"tollgate", func(addr string) (func(int) opFunc, func(), error) {
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
		{"redis_rate", func(addr string) (func(int) opFunc, func(), error) {
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
