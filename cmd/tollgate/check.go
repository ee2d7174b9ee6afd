package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/mainjob"
)

func init() {
	register(command{
		name:    "check",
		summary: "record concurrent histories of both primitives and check them with porcupine (the main job)",
		run:     func(args []string) int { return runCheck(args, os.Stdout, os.Stderr) },
	})
}

// Exit codes of check.
const (
	exitOK      = 0
	exitIllegal = 1 // some history is not linearizable, or the sequential check failed
	exitUsage   = 2
	exitUnknown = 3 // no violation, but some check timed out: not a pass
)

// exitCode is a verdict's exit code.
var exitCode = map[mainjob.Verdict]int{mainjob.Ok: exitOK, mainjob.Unknown: exitUnknown, mainjob.Illegal: exitIllegal}

// parseCheck parses check's flags into the job's configuration (resolved:
// checked and completed) and the history to replay, if any.
func parseCheck(args []string, stderr io.Writer) (mainjob.Config, string, error) {
	c := mainjob.Defaults()
	var replay string
	soakPlan = 0
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: tollgate check [flags]

Records concurrent histories of the token bucket and the credit table (goroutines
running random operation scripts against the lock-free implementations), checks
each with porcupine against the sequential model, and runs a short sequential
differential check (model.Step against the implementation, fuzz). On a
violation it writes porcupine's HTML visualization and the raw history (JSON),
prints both paths and a replay command, and exits 1. A checker timeout is
reported as Unknown (exit 3), never as a pass.

flags:
`)
		fs.PrintDefaults()
		helpTail(stderr, "check")
	}
	fs.DurationVar(&c.Duration, "duration", c.Duration, "total budget, split evenly between the primitives")
	fs.IntVar(&c.Clients, "clients", 0, "goroutines per token-bucket history / holders per credit-table history (0: each workload's own, 2–8)")
	fs.IntVar(&c.Keys, "keys", 0, "keys of the multi-key token-bucket workloads (0: each workload's own, 16 for many-keys)")
	fs.IntVar(&c.Ops, "ops", 0, "operations per client (token bucket) / rounds per holder (credit table) (0: each workload's own)")
	fs.Uint64Var(&c.Seed, "seed", 0, "seed of the operation scripts (0: from the clock); history i uses seed+i")
	fs.StringVar(&c.Primitive, "primitive", c.Primitive, "tokenbucket, credits or all")
	fs.StringVar(&c.Mutant, "mutant", "", "run against this mutant of internal/fault instead of the real table, e.g. tb-plain-store")
	fs.StringVar(&c.Workload, "workload", "", "run only this workload (see the linearizability package docs)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "porcupine's budget per history; on expiry the history is Unknown")
	fs.StringVar(&c.Out, "out", filepath.Join(os.TempDir(), "tollgate-check"), "directory for the files of failing histories")
	fs.StringVar(&replay, "replay", "", "check a history file written by an earlier run instead of recording")
	fs.Float64Var(&c.SeqShare, "seq-share", c.SeqShare, "share of each primitive's budget spent on the sequential differential check (0 to skip it)")
	fs.DurationVar(&c.Progress, "progress", c.Progress, "interval between progress lines (0: none)")
	fs.StringVar(&c.Backend, "backend", c.Backend, "memory (the tables of impl/ in this process), redis (impl/redis on a redis-server), redis-cluster (impl/redis on a Redis Cluster) or etcd (impl/etcd on an etcd cluster)")
	fs.StringVar(&c.RedisAddr, "redis", "", "with -backend redis: the server for the workloads (empty: a throwaway redis-server); with redis-cluster: node addresses, comma-separated (empty: a throwaway cluster of 3 primaries with a replica each); the fault workloads always start their own on loopback")
	fs.StringVar(&c.EtcdEndpoints, "etcd", "", "with -backend etcd: the cluster's client URLs, comma-separated (empty: a throwaway cluster of 3 members on loopback); the fault workloads always start their own")
	fs.StringVar(&c.Faults, "faults", c.Faults, "with -backend redis, redis-cluster or etcd: the fault workloads to run after the others (the cluster-* ones are redis-cluster's), comma-separated, or all, or none")
	fs.DurationVar(&c.CallTimeout, "call-timeout", c.CallTimeout, "with -backend redis or redis-cluster: each call's budget in the fault workloads; a call not answered in it has an unknown outcome")
	fs.DurationVar(&c.Soak, "soak", 0, "with -backend redis, redis-cluster or etcd: instead of the job, a soak of this long: windows drawn from -seed, each a recording through one fault or two overlapping, on servers of its own, checked as the fault workloads are")
	fs.IntVar(&c.SoakWindow, "soak-window", -1, "run window N of -seed's soak alone (with -backend redis, redis-cluster or etcd)")
	fs.IntVar(&soakPlan, "soak-plan", 0, "print the first N windows of -seed's soak and exit (no server is started)")
	fs.StringVar(&c.SoakResults, "soak-results", "", "write the soak's output to this file as well")
	if err := fs.Parse(args); err != nil {
		return c, "", err
	}
	if fs.NArg() > 0 {
		return c, "", fmt.Errorf("check: unexpected argument %q", fs.Arg(0))
	}
	c, err := c.Resolve()
	return c, replay, err
}

// soakPlan is -soak-plan's count (0: not asked).
var soakPlan int

// runCheck is `tollgate check`: mainjob.Run, or mainjob.Replay with
// -replay, on a throwaway redis-server when -backend redis names none.
func runCheck(args []string, stdout, stderr io.Writer) int {
	c, replay, err := parseCheck(args, stderr)
	if err == flag.ErrHelp {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	if c.Backend != "memory" {
		// The fault workloads kill and stop servers on purpose: go-redis's
		// log of every dial that then fails is noise here; what a call met
		// is in its error, and in the summary.
		goredis.SetLogger(quietLog{})
	}
	var v mainjob.Verdict
	switch {
	case soakPlan < 0:
		fmt.Fprintf(stderr, "check: -soak-plan %d must be >= 0\n", soakPlan)
		return exitUsage
	case soakPlan > 0:
		if err := mainjob.SoakPlan(c, soakPlan, stdout); err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		return exitOK
	case c.Soak > 0 || c.SoakWindow >= 0:
		// Each window starts servers of its own.
		if v, err = mainjob.Soak(c, stdout); err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		return exitCode[v]
	}
	if replay != "" {
		v, err = mainjob.Replay(replay, c.Timeout, stdout)
	} else {
		if c.RedisAddr == "" && (c.Backend == "redis" || c.Backend == "redis-cluster") {
			stop, addr, serr := throwawayRedis(c.Backend == "redis-cluster")
			if serr != nil {
				fmt.Fprintln(stderr, "check:", serr)
				return exitUsage
			}
			defer stop()
			c.RedisAddr = addr
		}
		if c.EtcdEndpoints == "" && c.Backend == "etcd" {
			cl, serr := etcdserver.StartCluster(os.TempDir(), 3)
			if serr != nil {
				fmt.Fprintln(stderr, "check:", serr)
				return exitUsage
			}
			stopOnSignal(cl, "the etcd cluster")
			defer cl.Stop()
			c.EtcdEndpoints = strings.Join(cl.Endpoints(), ",")
		}
		v, err = mainjob.Run(c, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	return exitCode[v]
}

// throwawayRedis starts a redis-server, or a Redis Cluster of 3 primaries
// with a replica each, stopped by stop (and on a signal), and returns its
// address (the nodes' addresses, comma-separated).
func throwawayRedis(cluster bool) (stop func(), addr string, err error) {
	if cluster {
		cl, err := redisserver.StartCluster(os.TempDir(), 3, time.Second)
		if err != nil {
			return nil, "", err
		}
		stopOnSignal(cl, "the Redis Cluster")
		return cl.Stop, strings.Join(cl.Addrs(), ","), nil
	}
	srv, err := redisserver.Start(os.TempDir())
	if err != nil {
		return nil, "", err
	}
	stopOnSignal(srv, "redis-server "+srv.Addr)
	return srv.Stop, srv.Addr, nil
}

// quietLog discards go-redis's log lines.
type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}
