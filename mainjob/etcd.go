package mainjob

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdcheck"
	"github.com/tollgate/tollgate/backends/etcdsut"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
)

// etcdTables makes the tables of the etcd workloads: a fresh table for
// each history (named by the job's seed and a count), of f's package (the
// real one for fault.None, else the etcd mutant f), on one client of the
// cluster, each call given timeout.
type etcdTables struct {
	c       *clientv3.Client
	f       fault.Fault
	timeout time.Duration
	prefix  string
	n       atomic.Int64
}

func newEtcdTables(endpoints []string, f fault.Fault, timeout time.Duration, seed uint64) (*etcdTables, error) {
	c, err := econn.NewClient(clientv3.Config{Endpoints: endpoints, DialTimeout: timeout})
	if err != nil {
		return nil, err
	}
	return &etcdTables{c: c, f: f, timeout: timeout, prefix: fmt.Sprintf("check-%d-", seed)}, nil
}

func (e *etcdTables) close() { _ = e.c.Close() }

func (e *etcdTables) name() string { return fmt.Sprintf("%s%d", e.prefix, e.n.Add(1)) }

func (e *etcdTables) tb() (linearizability.TBBackend, func(), error) {
	t, err := etcdsut.NewTokenBucket(e.f, e.c, e.name())
	if err != nil {
		return nil, nil, err
	}
	return etcdsut.Remote(t.Apply, e.timeout), func() {}, nil
}

func (e *etcdTables) cr() (linearizability.CrBackend, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	t, err := etcdsut.NewCredits(ctx, e.f, e.c, e.name())
	if err != nil {
		return nil, nil, err
	}
	return etcdsut.Remote(t.Apply, e.timeout), func() {}, nil
}

// etcdFaultWorkloads runs the fault workloads of etcdcheck, each on a
// cluster of its own, and returns a summary row for each and their
// verdict: a row whose history is not linearizable, that lost or doubled
// an acknowledged write, or whose table did not answer again after the
// fault fails; a history porcupine could not decide, with nothing lost, is
// Unknown.
func etcdFaultWorkloads(c Config, prims []string, w io.Writer) ([]row, Verdict, error) {
	var rows []row
	v := Ok
	for _, s := range etcdcheck.Scenarios() {
		if !c.ranEtcdFault(s.Name) {
			continue
		}
		got, err := etcdcheck.Run(s, prims, etcdcheck.Options{CheckTimeout: c.Timeout, Seed: c.Seed, Dir: c.Out, Fault: c.fault()})
		if err != nil {
			return rows, v, fmt.Errorf("check: %w", err)
		}
		for _, r := range got {
			res := string(r.Result)
			if f := r.Failure(); f != "" && !r.Inconclusive() {
				res = "FAILED: " + f
			}
			if r.MustLose && r.Pass() {
				res = "Ok: lost as it must (history " + string(r.Result) + ")"
			}
			rows = append(rows, row{primitive: r.Primitive, check: "fault " + r.Scenario, histories: 1, ops: r.Ops, unknown: r.UnknownOps,
				overlapping: r.Report.Overlapping, result: res, invariant: r.Invariant, checkTime: r.Report.CheckTime, durability: r.Detail})
			fmt.Fprintf(w, "  fault %-16s %-11s operations %5d  unknown %4d  %s; %s (%v)\n", r.Scenario, r.Primitive, r.Ops, r.UnknownOps, r.Result, r.Detail, r.Elapsed.Round(time.Millisecond))
			switch {
			case r.Pass():
			case r.Inconclusive():
				v = v.Merge(Unknown)
			default:
				v = Illegal
				if r.Report.JSONPath != "" {
					fmt.Fprintf(w, "    history: %s\n    replay:  go run ./cmd/tollgate check --replay %s\n", r.Report.JSONPath, r.Report.JSONPath)
				}
			}
		}
	}
	return rows, v, nil
}
