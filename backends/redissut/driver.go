package redissut

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/remote"
	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// DriverTables is the tables of the Go driver (conform.Serve) with
// --backend redis (remote.DriverTables): the Redis-backed tables
// (impl/redis/tokenbucket, impl/redis/credits, through TokenBucket and
// Credits, which pass the table's epochs through as issued) on the server
// newClient reaches, named "tollgate-driver-", a part random to this
// driver, and the protocol's name, each call waiting at most timeout for
// its answer. A mutant of a Redis table (f) is served for its primitive;
// the other primitive is real. A call that got no answer (rconn.ErrUnknown),
// or could not be sent in ten tries 50 ms apart, is answered "unknown"; any
// other error of the server is a bad_request naming it.
//
// newClient makes a client of the server (a *goredis.Client) or of a Redis
// Cluster (a *goredis.ClusterClient, whose tables are built by NewCluster);
// each table gets a client of its own, made from a copy of its options.
func DriverTables(newClient func() goredis.UniversalClient, f fault.Fault, timeout time.Duration) conform.Tables {
	return remote.DriverTables(remote.Driver{
		Prefix:  "tollgate-driver-",
		Timeout: timeout,
		Errors:  Errors,
		Fault:   f,
		Ours:    fault.Fault.Redis,
		TB: func(ctx context.Context, f fault.Fault, name string) (func(context.Context, model.TBInput[string]) (model.TBOutput, error), error) {
			c := newClient()
			defer c.Close()
			t, err := newTokenBucket(ctx, f, c, name)
			if err != nil {
				return nil, err
			}
			return t.Apply, nil
		},
		Cr: func(ctx context.Context, f fault.Fault, name string) (func(context.Context, model.CrInput[string]) (model.CrOutput[string], error), error) {
			c := newClient()
			defer c.Close()
			t, err := newCredits(ctx, f, c, name)
			if err != nil {
				return nil, err
			}
			t.PassEpochs() // the harness names the driver's epochs itself
			return t.Apply, nil
		},
	})
}
