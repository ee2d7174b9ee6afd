package redissut

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/remote"
	rcredits "github.com/tollgate/tollgate/impl/redis/credits"
	"github.com/tollgate/tollgate/internal/fault"
)

// redisCreditsTable is the method set of *impl/redis/credits.Table that
// Credits uses. Every mutant of impl/redis/credits has it too (a copy
// of the package, whose value types are impl/credits's).
type redisCreditsTable interface {
	remote.CrTable[*rcredits.Holder]
	RenewAt(ctx context.Context, nowMs int64, h *rcredits.Holder, ttlMs int64) (rcredits.Result, error)
	Destroyed(ctx context.Context) (bool, error)
	Close() error
}

var _ redisCreditsTable = (*rcredits.Table)(nil)

// Credits applies model credit-table inputs to a Redis credit table
// (impl/redis/credits, or a mutant of it), through remote.Credits: the
// same naming of epochs as sut.Credits (sut.TableEpochs: the n-th distinct
// epoch the table issues is model epoch n; a model epoch it never issued
// goes to the table as 1<<63 | epoch, which pins nothing), or the table's
// own epochs for the driver (DriverTables).
//
// Each model holder ID maps to a random holder created on first use, whose
// lease is renewed then for rcredits.MaxLeaseMs from the current time (so
// no SweepAt clock the table accepts expires it within an hour: in the
// model only an exit makes a holder sweepable). A model exit drops the
// lease (Exit), a sweep is SweepAt at the input's NowMs. A holder the
// model has exited is never renewed again, even if it goes on acting (as
// the model lets it); one it exited before its first use is leased and
// dropped at once.
//
// Apply returns the table's transport errors unchanged (they wrap
// rcredits.ErrUnknown or ErrNotSent); the output is then meaningless.
// Credits is safe for concurrent use.
type Credits struct {
	*remote.Credits[*rcredits.Holder]
	table redisCreditsTable
}

// NewCredits returns an adapter over the credit table called name on
// c's server, of f's package (fault.None: the real implementation;
// otherwise a fault of impl/redis/credits). The table is built by its
// package's New from a copy of c's options, so it has a client of its own,
// made the way that package makes it; c itself is not used for calls.
// Close closes the table's client; the table stays on the server. c may be
// a *goredis.ClusterClient: the table is then built by NewCluster.
func NewCredits(f fault.Fault, c goredis.UniversalClient, name string) (*Credits, error) {
	return newCredits(context.Background(), f, c, name)
}

func newCredits(ctx context.Context, f fault.Fault, c goredis.UniversalClient, name string) (*Credits, error) {
	if f != fault.None && (!f.Redis() || !f.Credits()) {
		return nil, fmt.Errorf("redissut: %v is not a fault of the Redis credit table", f)
	}
	var t redisCreditsTable
	var err error
	switch c := c.(type) {
	case *goredis.Client:
		t, err = newRedisCredits(ctx, f, optionsOf(c), name)
	case *goredis.ClusterClient:
		t, err = newRedisCreditsCluster(ctx, f, clusterOptionsOf(c), name)
	default:
		return nil, fmt.Errorf("redissut: a %T is not supported", c)
	}
	if err != nil {
		return nil, err
	}
	return &Credits{Credits: remote.NewCredits(t, grant(t), rcredits.TableBounds()), table: t}, nil
}

// Close closes the table's client. The table stays on the server, live
// (a model close is the input CrClose).
func (s *Credits) Close() error { return s.table.Close() }

// grant returns a new random holder of t with the longest lease there is,
// from now on the server's machine's clock: no sweep the table accepts (at
// most MaxClockAheadMs ahead of that clock) expires it while a check runs.
// A closed table answers NoTable, which is a holder too: a closed table has
// no leases to keep.
func grant(t redisCreditsTable) func(context.Context) (*rcredits.Holder, error) {
	return func(ctx context.Context) (*rcredits.Holder, error) {
		h := rcredits.NewHolder()
		if _, err := t.RenewAt(ctx, time.Now().UnixMilli(), h, rcredits.MaxLeaseMs); err != nil {
			return nil, err
		}
		return h, nil
	}
}
