package etcdsut

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/remote"
	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// DriverTables is the tables of the Go driver (conform.Serve) with
// --backend etcd (remote.DriverTables): the etcd-backed tables
// (impl/etcd/tokenbucket, impl/etcd/credits, through TokenBucket and
// Credits, which pass the table's epochs through as issued) on c's
// cluster, named "driver-", a part random to this driver, and the
// protocol's name, each call waiting at most timeout for its answer. A
// mutant of an etcd table (f) is served for its primitive; the other
// primitive is real. A call that got no answer (econn.ErrUnknown), or could
// not be sent in ten tries 50 ms apart, is answered "unknown".
func DriverTables(c *clientv3.Client, f fault.Fault, timeout time.Duration) conform.Tables {
	return remote.DriverTables(remote.Driver{
		Prefix:  "driver-",
		Timeout: timeout,
		Errors:  Errors,
		Fault:   f,
		Ours:    fault.Fault.Etcd,
		TB: func(_ context.Context, f fault.Fault, name string) (func(context.Context, model.TBInput[string]) (model.TBOutput, error), error) {
			t, err := NewTokenBucket(f, c, name)
			if err != nil {
				return nil, err
			}
			return t.Apply, nil
		},
		Cr: func(ctx context.Context, f fault.Fault, name string) (func(context.Context, model.CrInput[string]) (model.CrOutput[string], error), error) {
			t, err := NewCredits(ctx, f, c, name)
			if err != nil {
				return nil, err
			}
			t.PassEpochs() // the harness names the driver's epochs itself
			return t.Apply, nil
		},
	})
}
