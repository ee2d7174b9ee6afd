package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/bench"
)

func init() {
	register(command{
		name:    "bench",
		summary: "contention benchmarks against peer designs: raw results, ratio table, plots",
		run:     func(args []string) int { return runBench(args, os.Stderr) },
	})
}

// parseBenchFlags parses bench's flags into the run's configuration,
// resolved: checked and completed.
func parseBenchFlags(args []string, stderr io.Writer) (bench.Config, error) {
	c := bench.Defaults()
	fs := flag.NewFlagSet("tollgate bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.Full, "full", false, "run the complete matrix (goroutines 1,2,4,8,16,64; keys 1,16,10000; every workload)")
	fs.StringVar(&c.Out, "out", c.Out, "directory for raw.txt, RESULTS.md and the plots (default: a new directory under the system's temporary directory, printed; bench/results holds the committed run)")
	fs.DurationVar(&c.Benchtime, "benchtime", 0, "target time per case per round (default 40ms, 100ms with -full)")
	fs.IntVar(&c.Rounds, "rounds", 0, "rounds of every case, interleaved with the other designs at the same goroutine count; each case keeps its median round, and a ratio is a verdict only when a Mann–Whitney test over the rounds finds it significant (p < 0.05), which takes at least 4 rounds (default 6)")
	fs.StringVar(&c.Run, "run", "", "only cases whose name matches this regular expression")
	fs.IntVar(&c.MemKeys, "memkeys", c.MemKeys, "keys for the memory-per-idle-key measurement (0 skips it)")
	fs.BoolVar(&c.Redis, "redis", false, "also measure the Redis-backed take (impl/redis/tokenbucket) against go-redis/redis_rate v10 and PING on one throwaway redis-server (needs redis-server on PATH)")
	fs.BoolVar(&c.RedisCluster, "redis-cluster", false, "also measure how takes on three Redis tables scale from 1 to 3 primaries, on two throwaway Redis Clusters (needs redis-server on PATH)")
	fs.BoolVar(&c.Etcd, "etcd", false, "also measure the etcd-backed take (impl/etcd/tokenbucket) on a throwaway cluster of 3 etcd members against the Redis-backed take on a throwaway redis-server, one etcd Put and the take's Txn alone (needs etcd and redis-server on PATH)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate bench [flags]\n\nRuns tollgate's contention benchmarks in process, prints a summary of the targets\n(met, MISSED, or ~ when the rounds do not show a significant difference) and\nwrites, to -out:\n  raw.txt      every round's results in the format benchstat reads\n  RESULTS.md   machine, targets, and tollgate-vs-peer ratio tables\n  *.png *.svg  throughput and p99 latency against goroutines, per design\n\nflags:")
		fs.PrintDefaults()
		helpTail(stderr, "bench")
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("tollgate bench: unexpected argument %q", fs.Arg(0))
	}
	// A zero -rounds or -benchtime means the default in Config; given on
	// the command line it is a mistake, not a request for the default.
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil:
		case f.Name == "rounds" && c.Rounds < 1:
			err = fmt.Errorf("tollgate bench: -rounds %d: must be at least 1 (leave it out for the default)", c.Rounds)
		case f.Name == "benchtime" && c.Benchtime <= 0:
			err = fmt.Errorf("tollgate bench: -benchtime %v: must be > 0 (leave it out for the default)", c.Benchtime)
		}
	})
	if err != nil {
		return c, err
	}
	return c.Resolve()
}

// runBench is `tollgate bench`: bench.Run, with -redis on a throwaway
// redis-server.
func runBench(args []string, stderr io.Writer) int {
	c, err := parseBenchFlags(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if c.Etcd {
		cl, err := etcdserver.StartCluster(os.TempDir(), 3)
		if err != nil {
			fmt.Fprintln(stderr, "tollgate bench: -etcd:", err)
			return 1
		}
		defer cl.Stop()
		stopOnSignal(cl, "the etcd cluster")
		c.EtcdEndpoints = cl.Endpoints()
	}
	if c.Redis || c.Etcd {
		srv, err := redisserver.Start(os.TempDir())
		if err != nil {
			fmt.Fprintln(stderr, "tollgate bench: -redis:", err)
			return 1
		}
		defer srv.Stop()
		stopOnSignal(srv, "redis-server "+srv.Addr)
		c.RedisAddr = srv.Addr
	}
	if c.RedisCluster {
		for _, n := range []int{1, 3} {
			cl, err := redisserver.StartCluster(os.TempDir(), n, time.Second)
			if err != nil {
				fmt.Fprintln(stderr, "tollgate bench: -redis-cluster:", err)
				return 1
			}
			defer cl.Stop()
			stopOnSignal(cl, fmt.Sprintf("the %d-primary Redis Cluster", n))
			if n == 1 {
				c.RedisClusterOne = cl.Addrs()
			} else {
				c.RedisClusterThree = cl.Addrs()
			}
		}
	}
	if err := bench.Run(c, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		if errors.Is(err, bench.ErrNothingSelected) {
			return 2
		}
		return 1
	}
	return 0
}
