package mainjob

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tollgate/tollgate/backends/etcdcheck"
	"github.com/tollgate/tollgate/backends/redischeck"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
)

// Config is the whole input of a job. Its zero value is not valid: start
// from Defaults. Each field is one flag of `tollgate check`.
type Config struct {
	// Duration is the total budget, split evenly between the primitives.
	Duration time.Duration
	// Clients, Keys and Ops scale the workloads (0: each workload's own):
	// goroutines per token-bucket history or holders per credit-table
	// history; keys of the multi-key workloads; operations per client or
	// rounds per holder.
	Clients, Keys, Ops int
	// Seed seeds the operation scripts; history i uses Seed+i. Resolve
	// replaces 0 by one from the clock.
	Seed uint64
	// Primitive is tokenbucket, credits or all.
	Primitive string
	// Mutant names a fault of internal/fault to run instead of the real
	// tables ("" for the real ones).
	Mutant string
	// Workload runs only this workload ("" for all).
	Workload string
	// Timeout is porcupine's budget per history; on expiry it is Unknown.
	Timeout time.Duration
	// Out is the directory for the files of failing histories and inputs.
	Out string
	// SeqShare is the share of each primitive's budget spent on the
	// sequential differential check, in [0, 1) (0 skips it).
	SeqShare float64
	// Progress is the interval between progress lines (0: none).
	Progress time.Duration
	// Backend is memory (impl/ in this process), redis (impl/redis),
	// redis-cluster (impl/redis on a Redis Cluster) or etcd (impl/etcd).
	Backend string
	// RedisAddr is the server of the Redis workloads, or with redis-cluster
	// the cluster's node addresses separated by commas; Run needs it when
	// Backend is redis or redis-cluster (the command starts a throwaway
	// server or cluster when the user names none). The fault workloads
	// start servers, or clusters, of their own.
	RedisAddr string
	// EtcdEndpoints are the client URLs of the etcd cluster of the etcd
	// workloads, separated by commas; Run needs them when Backend is etcd
	// (the command starts a throwaway cluster when the user names none).
	// The fault workloads start clusters of their own.
	EtcdEndpoints string
	// Faults are the fault workloads run after the others on a server
	// backend: all, none, or names separated by commas; the cluster-*
	// workloads are redis-cluster's, the others of redischeck redis's, and
	// etcdcheck's etcd's.
	Faults string
	// CallTimeout is each fault-workload call's budget; a call not
	// answered in it has an unknown outcome.
	CallTimeout time.Duration
	// Soak, when not 0, runs a soak instead of the job (Soak): windows
	// drawn from Seed, one after another, for this long.
	Soak time.Duration
	// SoakWindow, when >= 0, runs that window of Seed's soak alone.
	SoakWindow int
	// SoakResults is the file a soak's output is written to as well ("":
	// none).
	SoakResults string
}

// Defaults is the configuration of a bare `tollgate check`, but for Out,
// which the caller chooses.
func Defaults() Config {
	return Config{
		Duration: time.Minute, Primitive: "all", Timeout: 10 * time.Second, SeqShare: 0.1,
		Progress: 2 * time.Second, Backend: "memory", Faults: "all", CallTimeout: 250 * time.Millisecond,
		SoakWindow: -1,
	}
}

// Resolve checks c and returns it completed: the primitive a mutant
// belongs to when Primitive is all, no sequential check on the Redis
// backend (it runs in process), a seed from the clock when Seed is 0. An
// error names the field's flag and the rule it breaks, and comes with c
// unchanged.
func (c Config) Resolve() (Config, error) {
	in := c
	if err := c.checkRanges(); err != nil {
		return in, err
	}
	if c.remote() {
		c.SeqShare = 0
		if err := c.checkFaults(); err != nil {
			return in, err
		}
	}
	if c.Mutant != "" {
		p, err := c.mutantPrimitive()
		if err != nil {
			return in, err
		}
		c.Primitive = p
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	return c, nil
}

// checkRanges checks each field's own rule.
func (c Config) checkRanges() error {
	switch {
	case c.Primitive != "all" && c.Primitive != linearizability.PrimitiveTokenBucket && c.Primitive != linearizability.PrimitiveCredits:
		return fmt.Errorf("check: -primitive %q must be tokenbucket, credits or all", c.Primitive)
	case c.Duration < 0:
		return fmt.Errorf("check: -duration %v must be >= 0", c.Duration)
	case c.Clients < 0:
		return fmt.Errorf("check: -clients %d must be >= 0 (0: each workload's own)", c.Clients)
	case c.Keys < 0:
		return fmt.Errorf("check: -keys %d must be >= 0 (0: each workload's own)", c.Keys)
	case c.Ops < 0:
		return fmt.Errorf("check: -ops %d must be >= 0 (0: each workload's own)", c.Ops)
	case c.SeqShare < 0 || c.SeqShare >= 1:
		return fmt.Errorf("check: -seq-share %v must be in [0, 1)", c.SeqShare)
	case c.Timeout < 0:
		return fmt.Errorf("check: -timeout %v must be >= 0", c.Timeout)
	case c.Backend != "memory" && !c.redis() && c.Backend != "etcd":
		return fmt.Errorf("check: -backend %q must be memory, redis, redis-cluster or etcd", c.Backend)
	case c.Soak < 0:
		return fmt.Errorf("check: -soak %v must be >= 0", c.Soak)
	case c.SoakWindow < -1:
		return fmt.Errorf("check: -soak-window %d must be >= 0 (or -1: every window)", c.SoakWindow)
	}
	return nil
}

// checkFaults checks that Faults names fault workloads that exist, each
// of the backend checked: the cluster-* workloads run with -backend
// redis-cluster, the others with -backend redis.
func (c Config) checkFaults() error {
	if c.Faults == "all" || c.Faults == "none" {
		return nil
	}
	for _, name := range strings.Split(c.Faults, ",") {
		if c.Backend == "etcd" {
			if !slices.Contains(etcdScenarioNames(), name) {
				return fmt.Errorf("check: -faults: no fault workload %q of -backend etcd (known: %s)", name, strings.Join(etcdScenarioNames(), ", "))
			}
			continue
		}
		s, ok := scenario(name)
		if !ok {
			return fmt.Errorf("check: -faults: no fault workload %q (known: %s)", name, scenarioNames())
		}
		if s.Cluster != (c.Backend == "redis-cluster") {
			return fmt.Errorf("check: -faults %s: that fault workload runs with -backend %s, not %s", name, map[bool]string{true: "redis-cluster", false: "redis"}[s.Cluster], c.Backend)
		}
	}
	return nil
}

// ranFault reports whether c runs the fault workload s.
func (c Config) ranFault(s redischeck.Scenario) bool {
	if !c.redis() || c.Faults == "none" || s.Cluster != (c.Backend == "redis-cluster") {
		return false
	}
	return c.Faults == "all" || slices.Contains(strings.Split(c.Faults, ","), s.Name)
}

// ranEtcdFault reports whether c runs the etcd fault workload named name.
func (c Config) ranEtcdFault(name string) bool {
	if c.Backend != "etcd" || c.Faults == "none" {
		return false
	}
	return c.Faults == "all" || slices.Contains(strings.Split(c.Faults, ","), name)
}

func etcdScenarioNames() []string {
	var names []string
	for _, s := range etcdcheck.Scenarios() {
		names = append(names, s.Name)
	}
	return names
}

// mutantPrimitive checks Mutant against Backend and Primitive and returns
// the primitive to check: the mutant's own.
func (c Config) mutantPrimitive() (string, error) {
	f, err := fault.Parse(c.Mutant)
	if err != nil {
		return "", fmt.Errorf("check: -mutant: %w", err)
	}
	if f.Etcd() != (c.Backend == "etcd") {
		if f.Etcd() {
			return "", fmt.Errorf("check: -mutant %s is a mutant of the etcd tables: it needs -backend etcd", f)
		}
		return "", fmt.Errorf("check: -mutant %s is not a mutant of the etcd tables, which -backend etcd checks", f)
	}
	if !f.Etcd() && f.Redis() != c.redis() {
		return "", fmt.Errorf("check: -mutant %s is a mutant of the %s tables: it needs -backend %s", f, map[bool]string{true: "Redis", false: "in-process"}[f.Redis()], map[bool]string{true: "redis", false: "memory"}[f.Redis()])
	}
	own := linearizability.PrimitiveTokenBucket
	if f.Credits() {
		own = linearizability.PrimitiveCredits
	}
	if c.Primitive != "all" && c.Primitive != own {
		return "", fmt.Errorf("check: -mutant %s is not a %s mutant", c.Mutant, c.Primitive)
	}
	return own, nil
}

// primitives are the primitives c checks, in order.
func (c Config) primitives() []string {
	if c.Primitive != "all" {
		return []string{c.Primitive}
	}
	return []string{linearizability.PrimitiveTokenBucket, linearizability.PrimitiveCredits}
}

// fault is c's mutant (fault.None for the real tables). Resolve has
// checked the name.
func (c Config) fault() fault.Fault {
	if c.Mutant == "" {
		return fault.None
	}
	f, _ := fault.Parse(c.Mutant)
	return f
}

func scenario(name string) (redischeck.Scenario, bool) {
	for _, s := range redischeck.Scenarios() {
		if s.Name == name {
			return s, true
		}
	}
	return redischeck.Scenario{}, false
}

func scenarioNames() string {
	var names []string
	for _, s := range redischeck.Scenarios() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// remote reports whether c checks tables kept on servers (Redis or etcd).
func (c Config) remote() bool { return c.redis() || c.Backend == "etcd" }

// redis reports whether c checks the Redis backend, on a server or a
// cluster.
func (c Config) redis() bool { return c.Backend == "redis" || c.Backend == "redis-cluster" }
