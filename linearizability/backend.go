package linearizability

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// Backend is one primitive's system under test as a recording sees it: the
// operations of the primitive, applied on behalf of one client at a time,
// answered in the model's vocabulary. The in-process implementation
// (InProcessTB, InProcessCr, through internal/sut), a port's driver over a
// pipe (package conform) and a server each provide one; the workloads and
// the recorder are the same for all of them.
//
// Do performs in for client (the history's client id) and returns its
// answer. It is called from many goroutines at once, at most one call per
// client at a time.
//
// Do's error says what the recorder may conclude:
//   - nil: the answer is the outcome;
//   - one wrapping ErrUnknown: the call was made but its outcome cannot be
//     known (a timeout, a lost reply); it is recorded as unknown, never as
//     failed;
//     When it also wraps ErrSettled, the backend made sure the call can no
//     longer take effect after Do returns (its connection's server dropped
//     it, or the server died): the operation then took effect between its
//     call and Do's return, or never, and is recorded with that interval
//     instead of one open to the end of the history;
//   - one wrapping ErrNotRun: the backend did not make the call at all (it
//     could not be expressed); nothing is recorded;
//   - any other: the backend broke; the recording stops and returns it.
type Backend[In, Out any] interface {
	Do(client int, in In) (Out, error)
}

// TBBackend is a token-bucket backend.
type TBBackend = Backend[model.TBInput[string], model.TBOutput]

// CrBackend is a credit-table backend. Its Do must also answer
// model.CrEnqueued (the owners poll it to find work, and their polls are
// recorded as listings).
type CrBackend = Backend[model.CrInput[Payload], model.CrOutput[Payload]]

// The errors a Backend's Do may wrap (see Backend).
var (
	ErrUnknown = errors.New("linearizability: the call's outcome cannot be known")
	ErrNotRun  = errors.New("linearizability: the backend did not make the call")
	// ErrSettled is wrapped beside ErrUnknown (see Backend).
	ErrSettled = errors.New("linearizability: the call can no longer take effect")
)

// ErrPanicked is wrapped, with the panic's value and stack, by the error a
// recording returns when the table panicked in one of its calls: a table
// broken enough to corrupt its own state (a mutant's), or a defect. The
// recording stops there; the panic is a violation seen, not a crash of the
// checker.
var ErrPanicked = errors.New("linearizability: the table panicked in a call")

// doRecovering is b.Do, with a panic in the call turned into an error
// wrapping ErrPanicked. Every recorder calls its backend through it
// (recording.call), so a panic is reported the same way whichever recorder
// met it.
func doRecovering[In, Out any](b Backend[In, Out], client int, in In) (out Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v\n%s", ErrPanicked, r, debug.Stack())
		}
	}()
	return b.Do(client, in)
}

// local is a backend whose every answer is known: an in-process applier.
type local[In, Out any] func(In) Out

func (l local[In, Out]) Do(_ int, in In) (Out, error) { return l(in), nil }

// Local returns the backend that answers every call with apply(in): an
// in-process table, whose outcome is always known.
func Local[In, Out any](apply func(In) Out) Backend[In, Out] { return local[In, Out](apply) }

// InProcessTB returns a backend over a fresh token-bucket table of f's
// package (fault.None: impl/tokenbucket) through internal/sut.
func InProcessTB(f fault.Fault) TBBackend { return Local(sut.NewTokenBucket[string](f).Apply) }

// InProcessCr returns a backend over a fresh credit table of f's package
// (fault.None: impl/credits) through internal/sut.
func InProcessCr(f fault.Fault) CrBackend { return Local(sut.NewCredits[Payload](f).Apply) }
