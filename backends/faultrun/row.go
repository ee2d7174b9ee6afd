// Package faultrun is the one fault-workload runner of the server wings
// (backends/redischeck, backends/etcdcheck): a history recorded while a
// fault is done to the servers, the store read back for what every
// acknowledged write must have left, porcupine's verdict, and the Row that
// judges them. Each wing keeps only its servers and its faults.
//
// It may import linearizability and model; no client of Redis or etcd.
package faultrun

import (
	"fmt"
	"time"

	"github.com/tollgate/tollgate/linearizability"
)

// Row is what one scenario found for one primitive.
type Row struct {
	Scenario, Primitive string
	Ops, UnknownOps     int
	SettledOps          int // unknown operations held to their interval (credits)
	// Result is porcupine's verdict: on the whole history, or in a lossy
	// scenario on the history before the fault (the operations called
	// before it, those in flight then of unknown outcome), since the
	// writes the fault loses make the rest unlinearizable by design.
	Result    linearizability.Result
	Invariant string
	// Whole is porcupine's verdict on the whole history of a lossy
	// scenario (informative: what the lost writes did to it).
	Whole linearizability.Result
	// Acked is the acknowledged writes the durability check followed
	// (takes, or enqueues), Lost those it found lost: a take whose token is
	// back in the bucket, an enqueue no owner ever took. Undecided are
	// those a call of unknown outcome leaves open (linearizability.Durability).
	Acked, Lost, Undecided int
	// Extra counts writes applied more often than made, counting every
	// call of unknown outcome as applied once: a take applied twice, an
	// enqueue in two rows. No scenario allows it, lossy or not.
	Extra  int
	Detail string // the durability check's finding, then the run's notes
	Lossy  bool   // losses are the scenario's documented limit
	// MustLose marks a negative control: the scenario must lose an
	// acknowledged write; a row that lost none fails (its fault did not
	// reach what it was meant to).
	MustLose bool
	// MustStrike marks a scenario with a fault: it fails if the fault
	// never struck (Struck) or found no write in flight (InFlight: at the
	// least struck start of a fault of several, the writes called before
	// it and returned after it or never).
	MustStrike bool
	Struck     bool
	InFlight   int
	// RecoverWithin, when not 0, is how soon after the fault's end some
	// call begun after it must be acknowledged (Recovery).
	RecoverWithin time.Duration
	// After counts the calls begun once the fault was injected, AfterOK
	// those of them acknowledged; Recovery is the time from the fault's end
	// to the first such acknowledgement (0: none came).
	After, AfterOK int
	Recovery       time.Duration
	// Unbounded, when not "", says how the row broke a bound of its own
	// (Job.Bound): a partition under min-replicas-to-write that lost a
	// write acknowledged after the bound, say.
	Unbounded string
	Report    linearizability.Report
	Elapsed   time.Duration
}

// Pass reports whether the row is what the backend promises (Failure
// says what it is not).
func (r Row) Pass() bool { return r.Failure() == "" }

// Inconclusive reports a row that fails only because porcupine could not
// decide its history in time: Unknown, not a pass.
func (r Row) Inconclusive() bool {
	return r.Result == linearizability.Unknown && r.broken() == ""
}

// Failure says why the row is not what the backend promises, "" when it
// is: the fault struck writes in flight; no write applied twice; no
// acknowledged write lost, except in a lossy scenario, where losses are
// measured; a linearizable history (in a lossy scenario, before the
// fault); where required, a table that answers again within RecoverWithin
// of the fault's end. A negative control (MustLose) is what it must be when
// it lost an acknowledged write: a history that lost acknowledged writes is
// not linearizable (later reads see them undone), so porcupine's verdict is
// reported, not required.
func (r Row) Failure() string {
	if f := r.broken(); f != "" {
		return f
	}
	if r.MustLose {
		return ""
	}
	if r.Result != linearizability.Ok {
		if r.Lossy {
			return string(r.Result) + " before the fault"
		}
		return string(r.Result)
	}
	return ""
}

// broken is Failure but for porcupine's verdict.
func (r Row) broken() string {
	switch {
	case r.MustStrike && !r.Struck:
		return "the fault never struck"
	case r.MustStrike && r.InFlight == 0:
		return "the fault found no write in flight"
	case r.RecoverWithin != 0 && (r.AfterOK == 0 || r.Recovery > r.RecoverWithin):
		return fmt.Sprintf("no call answered within %v of the fault", r.RecoverWithin)
	case r.Extra > 0:
		return fmt.Sprintf("%d writes applied twice", r.Extra)
	case r.Unbounded != "":
		return r.Unbounded
	case r.MustLose && r.Lost == 0:
		return "a negative control (its fault must lose an acknowledged write) lost none"
	case !r.Lossy && !r.MustLose && r.Lost > 0:
		return fmt.Sprintf("%d acknowledged writes lost", r.Lost)
	}
	return ""
}
