package main

import (
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdexplore"
	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/shard"
)

// onBackend narrows the selected scenarios to what -backend explores: on
// etcd, the catalogue's (when -scenario was not given) of the real tables
// or of an etcd mutant's primitive.
func onBackend(c exploreConfig, scenarioSet bool, sh shard.Shard) ([]interleave.Scenario, error) {
	switch c.backend {
	case "memory":
		if c.opt.Fault.Etcd() || c.opt.Fault.Redis() {
			return nil, fmt.Errorf("explore: -mutant %v is a mutant of a server-backed table: explore it with -backend etcd (the Redis tables' operations are one request each: no interleaving to explore)", c.opt.Fault)
		}
		return c.scenarios, nil
	case "etcd":
	default:
		return nil, fmt.Errorf("explore: -backend %q: want memory or etcd", c.backend)
	}
	if c.opt.Fault != fault.None && !c.opt.Fault.Etcd() {
		return nil, fmt.Errorf("explore: -backend etcd explores the etcd tables: -mutant %v is not one of their mutants", c.opt.Fault)
	}
	ss := c.scenarios
	if !scenarioSet {
		var err error
		if ss, err = interleave.Select("catalogue", c.opt.Fault, sh); err != nil {
			return nil, err
		}
	}
	var out []interleave.Scenario
	for _, s := range ss {
		switch {
		case s.Fixed() == "":
			out = append(out, s)
		case scenarioSet && len(ss) == 1:
			return nil, fmt.Errorf("explore: -backend etcd explores scenarios, not a directed run's one schedule: %s is one", s.Name)
		}
	}
	return out, nil
}

// startEtcd starts a one-member etcd for the run and points c's options at
// it; stop stops it and removes its directory.
func startEtcd(c *exploreConfig) (stop func(), err error) {
	cl, err := etcdserver.StartCluster("", 1)
	if err != nil {
		return nil, err
	}
	cli, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		cl.Stop()
		return nil, err
	}
	c.opt.Remote = etcdexplore.Remote(cli, c.opt.Fault, "explore")
	return func() { _ = cli.Close(); cl.Stop() }, nil
}
