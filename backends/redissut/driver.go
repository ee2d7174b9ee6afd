package redissut

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// DriverTables is the tables of the Go driver (conform.Serve) with
// --backend redis: the Redis-backed tables (impl/redis/tokenbucket,
// impl/redis/credits, through TokenBucket and Credits, which pass the
// table's epochs through as issued) on the server opts names: the
// protocol's table name N is the Redis table named by a prefix random to
// this driver and N, so drivers sharing a server never meet, and each call
// waits at most timeout for its answer. A mutant of a Redis table (f) is
// served for its primitive; the other primitive is real. A call that got
// no answer (rconn.ErrUnknown), or could not be sent in ten tries 50 ms
// apart, is answered "unknown" (the error is made by
// conform.OutcomeUnknown); any other error of the server is a bad_request
// naming it.
//
// newClient makes a client of the server (a *goredis.Client) or of a Redis
// Cluster (a *goredis.ClusterClient, whose tables are built by NewCluster);
// each table gets a client of its own, made from a copy of its options.
func DriverTables(newClient func() goredis.UniversalClient, f fault.Fault, timeout time.Duration) conform.Tables {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &redisTables{newClient: newClient, f: f, timeout: timeout, prefix: "tollgate-driver-" + hex.EncodeToString(b[:]) + "-"}
}

type redisTables struct {
	newClient func() goredis.UniversalClient
	f         fault.Fault
	timeout   time.Duration
	prefix    string
}

func (r *redisTables) fault(credits bool) fault.Fault {
	if r.f != fault.None && r.f.Redis() && r.f.Credits() == credits {
		return r.f
	}
	return fault.None
}

func (r *redisTables) TB(name string) (conform.TBTable, error) {
	c := r.newClient()
	defer c.Close()
	t, err := NewTokenBucket(r.fault(false), c, r.prefix+"tb-"+name)
	if err != nil {
		return nil, err
	}
	return redisTB{t: t, timeout: r.timeout}, nil
}

func (r *redisTables) Cr(name string) (conform.CrTable, error) {
	c := r.newClient()
	defer c.Close()
	t, err := NewCredits(r.fault(true), c, r.prefix+"cr-"+name)
	if err != nil {
		return nil, err
	}
	t.epochs.AsIssued = true // the harness names the driver's epochs itself
	return redisCr{t: t, timeout: r.timeout}, nil
}

type redisTB struct {
	t       *TokenBucket
	timeout time.Duration
}

func (r redisTB) Apply(in model.TBInput[string]) (model.TBOutput, error) {
	return sendRedis(r.timeout, func(ctx context.Context) (model.TBOutput, error) { return r.t.Apply(ctx, in) })
}

type redisCr struct {
	t       *Credits
	timeout time.Duration
}

func (r redisCr) Apply(in model.CrInput[string]) (model.CrOutput[string], error) {
	return sendRedis(r.timeout, func(ctx context.Context) (model.CrOutput[string], error) { return r.t.Apply(ctx, in) })
}

// sendRedis makes one call, sending it again (up to ten times, 50 ms
// apart) while it could not be sent: nothing ran, so that is safe. An error
// that leaves the call's outcome unknown (rconn.ErrUnknown, or ErrNotSent
// after the last try) is returned through conform.OutcomeUnknown; a
// server's refusal as it is.
func sendRedis[Out any](timeout time.Duration, call func(context.Context) (Out, error)) (Out, error) {
	var out Out
	var err error
	for range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		out, err = call(ctx)
		cancel()
		if !errors.Is(err, rconn.ErrNotSent) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if errors.Is(err, rconn.ErrUnknown) || errors.Is(err, rconn.ErrNotSent) {
		return out, conform.OutcomeUnknown(err)
	}
	return out, err
}
