package tokenbucket

import (
	"context"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
)

// The client's cost per take, on one goroutine against a local
// redis-server: a TakeAt (BenchmarkClientTake) against a bare go-redis Do
// of the same FCALL with the same arguments (BenchmarkClientBareFCall)
// and against PING (BenchmarkClientPing). Each reports allocations
// (-benchmem) and cpu-ns/op, this process's user and system time per
// call: the server runs in a process of its own, so it is the client's
// CPU alone.

var benchAdmitAll = Limits{Capacity: 1e15, RefillPerSecond: 1e9}

func benchServer(b *testing.B) (*goredis.Client, *Table) {
	b.Helper()
	srv := redisserver.StartT(b)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = c.Close() })
	tb, err := NewFromClient(context.Background(), c, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return c, tb
}

func cpuNs() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func measure(b *testing.B, op func() error) {
	b.Helper()
	for range 100 { // warm the pool and the connection
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuNs()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuNs()-cpu)/float64(b.N), "cpu-ns/op")
}

func BenchmarkClientTake(b *testing.B) {
	_, tb := benchServer(b)
	ctx, now := context.Background(), time.Now().UnixMilli()
	measure(b, func() error {
		_, _, err := tb.TakeAt(ctx, now, "k", benchAdmitAll, 1)
		return err
	})
}

func BenchmarkClientBareFCall(b *testing.B) {
	c, tb := benchServer(b)
	ctx, now := context.Background(), time.Now().UnixMilli()
	measure(b, func() error {
		return c.Do(ctx, "FCALL", tb.fn.take, 2, tb.keys[0], tb.keys[1], "k", pack(now, benchAdmitAll.Capacity, benchAdmitAll.RefillPerSecond, 1)).Err()
	})
}

func BenchmarkClientPing(b *testing.B) {
	c, _ := benchServer(b)
	ctx := context.Background()
	measure(b, func() error { return c.Ping(ctx).Err() })
}

// BenchmarkClientTakeCluster is BenchmarkClientTake through a cluster
// client, on a Redis Cluster of one primary.
func BenchmarkClientTakeCluster(b *testing.B) {
	cl := redisserver.StartClusterT(b, 1, time.Second)
	ctx, now := context.Background(), time.Now().UnixMilli()
	tb, err := NewCluster(ctx, &goredis.ClusterOptions{Addrs: cl.Addrs()}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tb.Close() })
	measure(b, func() error {
		_, _, err := tb.TakeAt(ctx, now, "k", benchAdmitAll, 1)
		return err
	})
}
