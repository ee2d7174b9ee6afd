package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/etcdsut"
	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/backends/redissut"
	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
)

func init() {
	register(command{
		name:    "driver",
		summary: "serve the Go implementation (in process, or the Redis backend) over the conformance protocol on stdin/stdout (spec/protocol.md)",
		run:     runDriver,
	})
}

func runDriver(args []string) int {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	mutant := fs.String("mutant", "", "serve a deliberately broken implementation (a fault name, see internal/fault)")
	backend := fs.String("backend", "memory", "memory (impl/ in this process), redis (impl/redis, on a redis-server), redis-cluster (impl/redis on a Redis Cluster) or etcd (impl/etcd on an etcd cluster)")
	etcdAddr := fs.String("etcd", "", "with -backend etcd: the cluster's client URLs, comma-separated (empty: start a throwaway cluster of 3 members on loopback, and stop it on exit)")
	addr := fs.String("redis", "", "with -backend redis: the server's host:port; with -backend redis-cluster: comma-separated addresses of cluster nodes (empty: start a throwaway server, or a cluster of 3 primaries with a replica each, and stop it on exit)")
	timeout := fs.Duration("timeout", 2*time.Second, "with a server backend: each call's budget; a call not answered in it is answered \"unknown\"")
	fs.Usage = func() {
		fmt.Fprint(os.Stderr, `usage: tollgate driver [flags]

Serves the Go implementation over the conformance protocol (spec/protocol.md):
requests on stdin, answers on stdout, one JSON object a line, until stdin
ends. It is the reference driver that tollgate conform runs a port against,
in process (impl/) or on a Redis server (impl/redis/).

flags:
`)
		fs.PrintDefaults()
		helpTail(os.Stderr, "driver")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	var faults fault.Fault
	if *mutant != "" {
		f, err := fault.Parse(*mutant)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tollgate driver:", err)
			return 2
		}
		faults = f
		fmt.Fprintf(os.Stderr, "tollgate driver: serving mutant %s\n", f)
	}
	var tables conform.Tables
	switch *backend {
	case "memory":
		if faults.Server() {
			fmt.Fprintf(os.Stderr, "tollgate driver: -mutant %s is a mutant of a server backend: add -backend redis or -backend etcd\n", faults)
			return 2
		}
		tables = conform.InProcess(faults)
	case "redis", "redis-cluster":
		if faults != fault.None && !faults.Redis() {
			fmt.Fprintf(os.Stderr, "tollgate driver: -mutant %s is not a mutant of the Redis backend\n", faults)
			return 2
		}
		newClient, stop, err := redisClients(*backend, *addr, *timeout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tollgate driver:", err)
			return 1
		}
		defer stop()
		tables = redissut.DriverTables(newClient, faults, *timeout)
	case "etcd":
		if faults != fault.None && !faults.Etcd() {
			fmt.Fprintf(os.Stderr, "tollgate driver: -mutant %s is not a mutant of the etcd backend\n", faults)
			return 2
		}
		c, stop, err := etcdClient(*etcdAddr, *timeout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tollgate driver:", err)
			return 1
		}
		defer stop()
		tables = etcdsut.DriverTables(c, faults, *timeout)
	default:
		fmt.Fprintf(os.Stderr, "tollgate driver: -backend %q must be memory, redis, redis-cluster or etcd\n", *backend)
		return 2
	}
	if err := conform.Serve(os.Stdin, os.Stdout, os.Stderr, tables); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate driver:", err)
		return 1
	}
	return 0
}

// etcdClient is how the driver reaches etcd: a client of the cluster at
// endpoints (comma-separated), having started a throwaway cluster of 3
// members when endpoints is empty, and what closes the client and stops
// the cluster.
func etcdClient(endpoints string, timeout time.Duration) (*clientv3.Client, func(), error) {
	stop := func() {}
	eps := strings.Split(endpoints, ",")
	if endpoints == "" {
		cl, err := etcdserver.StartCluster(os.TempDir(), 3)
		if err != nil {
			return nil, nil, err
		}
		stopOnSignal(cl, "the etcd cluster")
		stop, eps = cl.Stop, cl.Endpoints()
		fmt.Fprintf(os.Stderr, "tollgate driver: started an etcd cluster of 3 members (%s)\n", strings.Join(eps, ","))
	}
	c, err := econn.NewClient(clientv3.Config{Endpoints: eps, DialTimeout: timeout})
	if err != nil {
		stop()
		return nil, nil, err
	}
	return c, func() { _ = c.Close(); stop() }, nil
}

// redisClients is how the driver reaches Redis: a maker of clients of the
// server (backend redis) or of the cluster (redis-cluster) at addr, having
// started a throwaway one when addr is empty, and what stops it. Each
// client waits at most timeout and never sends a call twice on its own.
func redisClients(backend, addr string, timeout time.Duration) (func() goredis.UniversalClient, func(), error) {
	stop := func() {}
	if backend == "redis-cluster" {
		addrs := strings.Split(addr, ",")
		if addr == "" {
			c, err := redisserver.StartCluster(os.TempDir(), 3, time.Second)
			if err != nil {
				return nil, nil, err
			}
			stopOnSignal(c, "the Redis Cluster")
			stop, addrs = c.Stop, c.Addrs()
			fmt.Fprintf(os.Stderr, "tollgate driver: started a Redis Cluster of 3 primaries with a replica each (%s)\n", strings.Join(addrs, ","))
		}
		opts := &goredis.ClusterOptions{Addrs: addrs, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, ContextTimeoutEnabled: true, PoolSize: 128}
		return func() goredis.UniversalClient { return rconn.NewClusterClient(opts) }, stop, nil
	}
	if addr == "" {
		srv, err := redisserver.Start(os.TempDir())
		if err != nil {
			return nil, nil, err
		}
		stopOnSignal(srv, "redis-server "+srv.Addr)
		stop, addr = srv.Stop, srv.Addr
		fmt.Fprintf(os.Stderr, "tollgate driver: started redis-server on %s\n", srv.Addr)
	}
	opts := &goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, ContextTimeoutEnabled: true, PoolSize: 128}
	return func() goredis.UniversalClient { return goredis.NewClient(opts) }, stop, nil
}
