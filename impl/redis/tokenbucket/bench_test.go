package tokenbucket

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
)

// The client's cost per take, on one goroutine: a TakeAt ("take"), and an
// AdmitAt ("admit", the same take answering a refusal's wait), against
// a bare go-redis Do of the same FCALL with the same function, keys and
// arguments ("bare") and against PING ("ping"), on one throwaway
// redis-server (BenchmarkClient) and on a throwaway Redis Cluster of three
// primaries (BenchmarkClientCluster), each design on the same server or
// cluster and the same client. Each reports allocations (-benchmem) and
// cpu-ns/op, this process's user and system time per call (getrusage): the
// servers run in processes of their own, so it is the client's CPU alone,
// GC and go-redis's background goroutines included. server-cpu-ns/op is
// the servers' own CPU per call beside it (serverCPU).
//
// On the cluster, "node" is the take through go-redis's own client of
// the table's primary, bypassing the cluster client.
//
// "wire" is the floor under them all: the take's FCALL's bytes, encoded
// once, written to a net.Conn of its own to the node that serves the
// table and its 14-byte reply read back, with no client library at all:
// what the kernel's round trip (a write, a read that parks until the reply
// comes, the netpoller's wake-up) costs this process per call.
//
// TOLLGATE_BENCH_ROTATE=r rotates the order of the three designs by r, so
// that interleaved rounds (bench/results/redis-client/run.sh) do not always
// run one design first.

var benchAdmitAll = Limits{Capacity: 1e15, RefillPerSecond: 1e9}

func cpuNs() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func measure(b *testing.B, nodes []*goredis.Client, op func() error) {
	b.Helper()
	for range 100 { // warm the pool and the connection
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	srv := serverCPU(b, nodes)
	cpu := cpuNs()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	cpu = cpuNs() - cpu
	srv = serverCPU(b, nodes) - srv
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(srv)/float64(b.N), "server-cpu-ns/op")
}

// serverCPU is the CPU time, in ns, that the servers of nodes have used
// (INFO cpu: used_cpu_sys + used_cpu_user, each server's own getrusage):
// the one server, or every node of a cluster, replicas included (a take's
// replication is part of its cost). It is read outside the timed loop;
// server-cpu-ns/op also carries the servers' idle work (serverCron, the
// cluster bus) over the loop, a fraction of a microsecond per call.
func serverCPU(b *testing.B, nodes []*goredis.Client) int64 {
	b.Helper()
	var total int64
	for _, n := range nodes {
		info, err := n.Info(context.Background(), "cpu").Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
			if k == "used_cpu_sys" || k == "used_cpu_user" {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatalf("INFO cpu: %q: %v", line, err)
				}
				total += int64(x * 1e9)
			}
		}
	}
	return total
}

// infoClients are clients of their own for the servers at addrs, for
// serverCPU, closed when b ends.
func infoClients(b *testing.B, addrs []string) []*goredis.Client {
	var cs []*goredis.Client
	for _, a := range addrs {
		c := rconn.NewClient(&goredis.Options{Addr: a})
		b.Cleanup(func() { _ = c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// clientDesigns runs the designs as sub-benchmarks on c (nodes: clients
// of each of its servers, for serverCPU), through a
// table on c, in the order TOLLGATE_BENCH_ROTATE gives.
func clientDesigns(b *testing.B, c goredis.UniversalClient, nodes []*goredis.Client) {
	ctx, now := context.Background(), time.Now().UnixMilli()
	tb, err := NewFromClient(ctx, c, "bench")
	if err != nil {
		b.Fatal(err)
	}
	designs := []struct {
		name string
		op   func() error
	}{
		{"take", func() error {
			_, ok, err := tb.TakeAt(ctx, now, "k", benchAdmitAll, 1)
			if err == nil && !ok {
				b.Fatal("take refused")
			}
			return err
		}},
		{"admit", func() error {
			d, err := tb.AdmitAt(ctx, now, "k", benchAdmitAll, 1)
			if err == nil && !d.OK {
				b.Fatal("admit refused")
			}
			return err
		}},
		{"bare", func() error {
			return c.Do(ctx, "FCALL", tb.fn.take, 2, tb.keys[0], tb.keys[1], "k", pack(now, benchAdmitAll.Capacity, benchAdmitAll.RefillPerSecond, 1)).Err()
		}},
		{"ping", func() error { return c.Ping(ctx).Err() }},
		{"wire", wireFCall(b, c, tb, now)},
	}
	if cc, ok := c.(*goredis.ClusterClient); ok {
		// "node": the same take through the plain client go-redis keeps
		// for the table's primary, so that take ÷ node is what the
		// cluster client's layer costs on the same node, in one process.
		m, err := cc.MasterForKey(ctx, tb.keys[0])
		if err != nil {
			b.Fatal(err)
		}
		ntb, err := NewFromClient(ctx, m, "bench")
		if err != nil {
			b.Fatal(err)
		}
		designs = append(designs, struct {
			name string
			op   func() error
		}{"node", func() error {
			_, _, err := ntb.TakeAt(ctx, now, "k", benchAdmitAll, 1)
			return err
		}})
	}
	r, _ := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_ROTATE"))
	for i := range designs {
		d := designs[(i+r)%len(designs)]
		b.Run(d.name, func(b *testing.B) { measure(b, nodes, d.op) })
	}
}

// BenchmarkClient is take, bare and ping on one server.
func BenchmarkClient(b *testing.B) {
	srv := redisserver.StartT(b)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = c.Close() })
	clientDesigns(b, c, infoClients(b, []string{srv.Addr}))
}

// BenchmarkClientCluster is take, bare and ping on a Redis Cluster of
// three primaries (each with a replica), through a cluster client.
func BenchmarkClientCluster(b *testing.B) {
	cl := redisserver.StartClusterT(b, 3, time.Second)
	c := rconn.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs()})
	b.Cleanup(func() { _ = c.Close() })
	clientDesigns(b, c, infoClients(b, cl.Addrs()))
}

// wireFCall returns the "wire" design: the take's FCALL as its RESP bytes
// on a connection of its own to the primary that serves tb.
func wireFCall(b *testing.B, c goredis.UniversalClient, tb *Table, now int64) func() error {
	b.Helper()
	var addr string
	switch c := c.(type) {
	case *goredis.Client:
		addr = c.Options().Addr
	case *goredis.ClusterClient:
		m, err := c.MasterForKey(context.Background(), tb.keys[0])
		if err != nil {
			b.Fatal(err)
		}
		addr = m.Options().Addr
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	nums := pack(now, benchAdmitAll.Capacity, benchAdmitAll.RefillPerSecond, 1)
	args := []string{"fcall", tb.fn.take, "2", tb.keys[0], tb.keys[1], "k", string(nums.b[:nums.n])}
	var req bytes.Buffer
	fmt.Fprintf(&req, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
	}
	msg := req.Bytes()
	var reply [14]byte // $8\r\n, the 8 bytes, \r\n
	return func() error {
		if _, err := conn.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(conn, reply[:]); err != nil {
			return err
		}
		if string(reply[:4]) != "$8\r\n" {
			return fmt.Errorf("wire: reply %q", reply[:])
		}
		return nil
	}
}
