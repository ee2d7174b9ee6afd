package linearizability

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
)

// The primitives, as Plan.Primitive and Tally.Primitive name them.
const (
	PrimitiveTokenBucket = "tokenbucket"
	PrimitiveCredits     = "credits"
)

// Plan is one primitive's share of a check run: record and check histories
// of its workloads, in turn, until Duration has passed (at least one history
// is always checked).
type Plan struct {
	Primitive string
	Duration  time.Duration
	// Sizes; 0 keeps each workload's own. Clients is the token bucket's
	// clients or the credit table's holders; Ops the token bucket's
	// operations per client or the credit table's rounds per holder; Keys
	// applies to the token-bucket workloads that use more than one key.
	Clients, Keys, Ops int
	Seed               uint64        // history i is recorded from Seed + i
	Fault              fault.Fault   // the mutant to run against (fault.None: the real table)
	Mutant             string        // its name, stored in the histories
	Timeout            time.Duration // porcupine's budget per history
	Dir                string        // where failing histories are written
	StopOnIllegal      bool
	// Workload, if set, runs only the workload of that name.
	Workload string
	// MinHistories keeps the run going past Duration until that many
	// histories are checked (one round of the workloads, say).
	MinHistories int
	// TB and Cr, if set, make the fresh backend each history is recorded
	// against, and what to call once it is recorded (a table on a server,
	// say); unset, it is the in-process table of Fault.
	TB func() (TBBackend, func(), error)
	Cr func() (CrBackend, func(), error)
}

func (p Plan) tb() (TBBackend, func(), error) {
	if p.TB != nil {
		return p.TB()
	}
	return InProcessTB(p.Fault), func() {}, nil
}

func (p Plan) cr() (CrBackend, func(), error) {
	if p.Cr != nil {
		return p.Cr()
	}
	return InProcessCr(p.Fault), func() {}, nil
}

// Tally is what a plan found so far.
type Tally struct {
	Primitive string
	Histories int
	Ops       int
	// UnknownOps counts the operations whose outcome was unknown.
	UnknownOps int
	// Overlapping counts the operations whose interval overlapped another's
	// (Report.Overlapping, summed).
	Overlapping int
	Illegal     int
	Unknown     int
	CheckTime   time.Duration // porcupine's time, summed
	Elapsed     time.Duration // wall time, recording included
	// First is the first Illegal (or else Unknown) history's report, with
	// the seed and workload that recorded it.
	First         *Report
	FirstSeed     uint64
	FirstWorkload string
}

// Result summarises the tally: Illegal if any history was, else Unknown if
// any check timed out, else Ok.
func (t Tally) Result() Result {
	switch {
	case t.Illegal > 0:
		return Illegal
	case t.Unknown > 0:
		return Unknown
	}
	return Ok
}

// Scaled returns w with the non-zero sizes replaced.
func (w TBWorkload) Scaled(clients, keys, ops int) TBWorkload {
	if clients > 0 {
		w.Clients = clients
	}
	if keys > 0 && w.Keys > 1 {
		w.Keys = keys
	}
	if ops > 0 {
		w.OpsPerClient = ops
	}
	return w
}

// Scaled returns w with the non-zero sizes replaced.
func (w CrWorkload) Scaled(holders, rounds int) CrWorkload {
	if holders > 0 {
		w.Holders = holders
	}
	if rounds > 0 {
		w.Rounds = rounds
	}
	return w
}

// Run carries out p, calling progress (if not nil) after every history.
func Run(p Plan, progress func(Tally)) (Tally, error) {
	t := Tally{Primitive: p.Primitive}
	n, record, err := p.recorder()
	if err != nil {
		return t, err
	}
	if n == 0 {
		return t, fmt.Errorf("linearizability: workload %q is not a %s workload", p.Workload, p.Primitive)
	}
	start := time.Now()
	for i := 0; i == 0 || i < p.MinHistories || time.Since(start) < p.Duration; i++ {
		seed := p.Seed + uint64(i)
		rep, name, err := record(i, seed)
		if err != nil {
			return t, err
		}
		t.add(rep, seed, name)
		t.Elapsed = time.Since(start)
		if progress != nil {
			progress(t)
		}
		if rep.Result == Illegal && p.StopOnIllegal {
			break
		}
	}
	return t, nil
}

// recordFunc records and checks history i of a plan under seed, returning
// its report and its workload's name.
type recordFunc func(i int, seed uint64) (Report, string, error)

// recorder returns how many workloads of p's primitive p selects, and the
// function that records and checks a history of one of them (taken in
// turn); an error when the primitive is neither table.
func (p Plan) recorder() (int, recordFunc, error) {
	switch p.Primitive {
	case PrimitiveTokenBucket:
		return p.tbHistories()
	case PrimitiveCredits:
		return p.crHistories()
	}
	return 0, nil, fmt.Errorf("linearizability: primitive %q must be %q or %q", p.Primitive, PrimitiveTokenBucket, PrimitiveCredits)
}

// tbHistories is recorder for the token bucket.
func (p Plan) tbHistories() (int, recordFunc, error) {
	var ws []TBWorkload
	for _, w := range TBWorkloads() {
		if p.Workload == "" || p.Workload == w.Name {
			ws = append(ws, w.Scaled(p.Clients, p.Keys, p.Ops))
		}
	}
	return len(ws), func(i int, seed uint64) (Report, string, error) {
		w := ws[i%len(ws)]
		b, done, err := p.tb()
		if err != nil {
			return Report{}, w.Name, err
		}
		h, err := RecordTokenBucket(w, b, seed)
		done()
		if err != nil {
			return Report{}, w.Name, err
		}
		h.Mutant = p.Mutant
		rep, err := CheckTokenBucket(h, p.options(w.Name, seed))
		return rep, w.Name, err
	}, nil
}

// crHistories is recorder for the credit table.
func (p Plan) crHistories() (int, recordFunc, error) {
	var ws []CrWorkload
	for _, w := range CrWorkloads() {
		if p.Workload == "" || p.Workload == w.Name {
			ws = append(ws, w.Scaled(p.Clients, p.Ops))
		}
	}
	return len(ws), func(i int, seed uint64) (Report, string, error) {
		w := ws[i%len(ws)]
		b, done, err := p.cr()
		if err != nil {
			return Report{}, w.Name, err
		}
		h, err := RecordCredits(w, b, seed)
		done()
		if err != nil {
			return Report{}, w.Name, err
		}
		h.Mutant = p.Mutant
		rep, err := CheckCredits(h, p.options(w.Name, seed))
		return rep, w.Name, err
	}, nil
}

// add counts one history's report, keeping as First the first history not
// found linearizable, or the first illegal one if that came later.
func (t *Tally) add(rep Report, seed uint64, name string) {
	t.Histories++
	t.Ops += rep.Ops
	t.UnknownOps += rep.UnknownOps
	t.Overlapping += rep.Overlapping
	t.CheckTime += rep.CheckTime
	switch rep.Result {
	case Illegal:
		t.Illegal++
	case Unknown:
		t.Unknown++
	}
	if rep.Result != Ok && (t.First == nil || (rep.Result == Illegal && t.First.Result != Illegal)) {
		t.First, t.FirstSeed, t.FirstWorkload = &rep, seed, name
	}
}

func (p Plan) options(workload string, seed uint64) Options {
	name := fmt.Sprintf("%s-%s-seed%d", p.Primitive, workload, seed)
	if p.Mutant != "" {
		name = fmt.Sprintf("%s-%s-%s-seed%d", p.Primitive, p.Mutant, workload, seed)
	}
	return Options{Timeout: p.Timeout, Dir: p.Dir, Name: filepath.Base(name)}
}
