package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// Driver says how the Go driver (conform.Serve) builds a backend's tables:
// see DriverTables.
type Driver struct {
	// Prefix starts the name of every table the driver makes; a random
	// part follows it, so drivers sharing a server never meet.
	Prefix string
	// Timeout is the most each call waits for its answer.
	Timeout time.Duration
	// Errors reads the backend's failed calls (Send).
	Errors Errors
	// Fault is the mutant to serve for its primitive (fault.None: the real
	// tables); the other primitive is real. Ours reports a fault of this
	// backend's tables.
	Fault fault.Fault
	Ours  func(fault.Fault) bool
	// TB and Cr build the token bucket and the credit table called name
	// of f's package (fault.None: the real one) and return their adapters'
	// Apply; ctx bounds the building.
	TB func(ctx context.Context, f fault.Fault, name string) (func(context.Context, model.TBInput[string]) (model.TBOutput, error), error)
	Cr func(ctx context.Context, f fault.Fault, name string) (func(context.Context, model.CrInput[string]) (model.CrOutput[string], error), error)
}

// fault is the fault the tables of a primitive (credits, or the token
// bucket) are built with: d.Fault when it is a fault of that table of this
// backend, else None.
func (d Driver) fault(credits bool) fault.Fault {
	if d.Fault != fault.None && d.Ours(d.Fault) && d.Fault.Credits() == credits {
		return d.Fault
	}
	return fault.None
}

// DriverTables is the tables of the Go driver (conform.Serve) for a
// server-backed backend: the protocol's table name N is the table d.TB or
// d.Cr builds under the name d.Prefix, a random part, "tb-" or "cr-" and N.
// Each table is built, and each call made, through Send: a call that got
// no answer, or could not be sent in Sends tries, is answered "unknown"
// (the error is made by conform.OutcomeUnknown); any other error of the
// server is returned as it is (a bad_request naming it).
func DriverTables(d Driver) conform.Tables {
	var b [6]byte
	_, _ = rand.Read(b[:])
	d.Prefix += hex.EncodeToString(b[:]) + "-"
	return tables{d}
}

type tables struct{ d Driver }

func (t tables) TB(name string) (conform.TBTable, error) {
	apply, err := Send(t.d.Timeout, t.d.Errors, func(ctx context.Context) (func(context.Context, model.TBInput[string]) (model.TBOutput, error), error) {
		return t.d.TB(ctx, t.d.fault(false), t.d.Prefix+"tb-"+name)
	})
	if err != nil {
		return nil, err
	}
	return table[model.TBInput[string], model.TBOutput]{t.d, apply}, nil
}

func (t tables) Cr(name string) (conform.CrTable, error) {
	apply, err := Send(t.d.Timeout, t.d.Errors, func(ctx context.Context) (func(context.Context, model.CrInput[string]) (model.CrOutput[string], error), error) {
		return t.d.Cr(ctx, t.d.fault(true), t.d.Prefix+"cr-"+name)
	})
	if err != nil {
		return nil, err
	}
	return table[model.CrInput[string], model.CrOutput[string]]{t.d, apply}, nil
}

// table is a driver's table: each Apply is one call through Send.
type table[In, Out any] struct {
	d     Driver
	apply func(context.Context, In) (Out, error)
}

func (t table[In, Out]) Apply(in In) (Out, error) {
	return Send(t.d.Timeout, t.d.Errors, func(ctx context.Context) (Out, error) { return t.apply(ctx, in) })
}
