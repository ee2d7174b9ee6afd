package linearizability

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tollgate/tollgate/model"
)

// The durability checks of the fault workloads (redischeck, etcdcheck): a
// history can be linearizable and still have lost a write that was
// acknowledged, when the store itself forgot it (a failover, a crash) and
// every later answer agrees with the forgetting. These ask the store, after
// the recording, for what the acknowledged writes must have left.

// FaultTBWorkload is the token-bucket fault workload of the server-backed
// tables (redischeck, etcdcheck): takes (and some peeks and
// retry_afters) on 16 keys of a bucket that never runs dry, all at one
// clock reading, so no refill happens and every acknowledged take must
// stay taken (TBDurability). Half the takes go to keys of their own, so
// that their durability is judged take by take.
func FaultTBWorkload() TBWorkload {
	return TBWorkload{
		Name: "acked-takes", Clients: 8, Keys: 16, OpsPerClient: 150,
		Limits: model.Limits{Capacity: 1e6, RefillPerSecond: 1}, Costs: []float64{1},
		StartMs: 1000, Mix: [7]int{8, 1, 1, 0, 0, 0, 0}, OwnKeys: 0.5,
	}
}

// FaultCrWorkload is the credit-table fault workload: holders reserving,
// enqueueing for an owner, releasing and now and then dying; every
// acknowledged enqueue must reach an owner (Durability).
func FaultCrWorkload() CrWorkload {
	return CrWorkload{
		Name: "acked-enqueues", Holders: 3, Rounds: 40, Classes: []model.Class{model.General}, Hold: 1,
		Mix:    [8]int{ActEnqueue: 6, ActRelease: 2, ActExitHolding: 1},
		Owners: 1, Sweepers: 1,
	}
}

// Known calls b until it answers with a known outcome (at most 50 times).
func Known[In, Out any](b Backend[In, Out], in In) (Out, error) {
	var err error
	for range 50 {
		var out Out
		if out, err = b.Do(0, in); err == nil {
			return out, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return *new(Out), fmt.Errorf("no known answer to %v after 50 calls: %w", in, err)
}

// Durability is what a durability check found.
type Durability struct {
	// Acked counts the acknowledged writes the check followed (takes, or
	// enqueues).
	Acked int
	// Lost counts the acknowledged writes the store forgot: a take whose
	// token is back, an enqueue no owner took and no longer enqueued, a
	// take the store forgot so that its payload was delivered again.
	Lost int
	// Extra counts writes applied more often than they were made, counting
	// every call of unknown outcome as applied once: tokens gone that no
	// take accounts for, a payload enqueued in two rows at once.
	Extra int
	// Undecided counts the acknowledged writes whose fate a call of
	// unknown outcome leaves open: it may have applied (and the write is
	// safe) or not (and the write was lost). They are neither lost nor
	// kept: an unknown call can neither hide a loss nor make one up.
	Undecided int
	Detail    string
}

func (d Durability) summary(kind string, notes []string) string {
	var b strings.Builder
	switch {
	case d.Lost == 0 && d.Extra == 0:
		fmt.Fprintf(&b, "none of %d acknowledged %s lost, none applied twice", d.Acked, kind)
	default:
		fmt.Fprintf(&b, "%d of %d acknowledged %s lost, %d applied twice", d.Lost, d.Acked, kind, d.Extra)
	}
	if d.Undecided > 0 {
		fmt.Fprintf(&b, "; %d undecided (a call of unknown outcome may have covered a loss)", d.Undecided)
	}
	if len(notes) > 0 {
		if len(notes) > 5 {
			notes = append(notes[:5:5], fmt.Sprintf("and %d more", len(notes)-5))
		}
		b.WriteString(": " + strings.Join(notes, "; "))
	}
	return b.String()
}

// TBDurability checks that no acknowledged take was lost and none applied
// twice. At the workload's one clock reading nothing refills, so a key
// holds its capacity less the cost of the takes that applied on it.
//
// A take on a key of its own (TBWorkload.OwnKeys) is judged by its
// identity: its key holds the capacity (it did not apply), the capacity
// less its cost (it applied once) or less (it applied twice). An
// acknowledged take that did not apply is lost; a take of unknown outcome
// may have applied or not, and decides nothing.
//
// On a shared key only counts are known: with A tokens taken by
// acknowledged takes, U by takes of unknown outcome and G gone, A−G tokens
// are surely lost (no unknown take applied), up to A+U−G perhaps (every
// unknown take applied and covered a lost one): the first are Lost, the
// rest Undecided; G−A−U above zero is Extra.
func TBDurability(w TBWorkload, h TBHistory, b TBBackend) (Durability, error) {
	var d Durability
	keys := make([]string, 0, w.Keys)
	for k := range w.Keys {
		keys = append(keys, fmt.Sprintf("k%d", k))
	}
	t, err := tallyTakes(h, keys, &d)
	if err != nil {
		return d, err
	}
	peek := func(key string) (float64, error) {
		out, err := Known(b, model.TBInput[string]{Kind: model.TBPeek, Key: key, Limits: w.Limits, NowMs: w.StartMs})
		return w.Limits.Capacity - out.Tokens, err
	}
	var notes []string
	for _, key := range keys {
		gone, err := peek(key)
		if err != nil {
			return d, err
		}
		notes = d.judgeShared(key, gone, t.taken[key], t.maybe[key], notes)
	}
	ownKeys := make([]string, 0, len(t.own))
	for k := range t.own {
		ownKeys = append(ownKeys, k)
	}
	sort.Strings(ownKeys)
	for _, key := range ownKeys {
		gone, err := peek(key)
		if err != nil {
			return d, err
		}
		notes = d.judgeOwn(key, gone, t.own[key], notes)
	}
	d.Detail = fmt.Sprintf("%d takes on keys of their own; ", len(t.own)) + d.summary("takes", notes)
	return d, nil
}

// takeTally is what TBDurability reads off the takes of a history.
type takeTally struct {
	taken map[string]float64 // shared key → tokens taken by acknowledged takes
	maybe map[string]float64 // shared key → tokens asked by takes of unknown outcome
	own   map[string]TBOp    // the take on each key of its own
}

// tallyTakes sums the takes on the shared keys by outcome and keeps the
// one take on each other key, counting the acknowledged ones in d.Acked;
// an error when a key outside the shared ones has two takes.
func tallyTakes(h TBHistory, keys []string, d *Durability) (takeTally, error) {
	t := takeTally{taken: map[string]float64{}, maybe: map[string]float64{}, own: map[string]TBOp{}}
	shared := map[string]bool{}
	for _, k := range keys {
		shared[k] = true
	}
	for _, op := range h.Ops {
		if op.Input.Kind != model.TBTake {
			continue
		}
		if !op.Unknown && op.Output.OK {
			d.Acked++
		}
		if !shared[op.Input.Key] {
			if _, dup := t.own[op.Input.Key]; dup {
				return t, fmt.Errorf("linearizability: key %q has two takes: not a key of its own", op.Input.Key)
			}
			t.own[op.Input.Key] = op
			continue
		}
		switch {
		case op.Unknown:
			t.maybe[op.Input.Key] += op.Input.Cost
		case op.Output.OK:
			t.taken[op.Input.Key] += op.Input.Cost
		}
	}
	return t, nil
}

// judgeShared counts a shared key's losses, double takes and undecided
// takes from the tokens gone, a acknowledged and u of unknown outcome,
// returning notes with the findings added.
func (d *Durability) judgeShared(key string, gone, a, u float64, notes []string) []string {
	if l := int(a - gone + 0.5); l > 0 {
		d.Lost += l
		notes = append(notes, fmt.Sprintf("%s: %g tokens gone, %g acknowledged: %d came back", key, gone, a, l))
	}
	if x := int(gone - a - u + 0.5); x > 0 {
		d.Extra += x
		notes = append(notes, fmt.Sprintf("%s: %g tokens gone, %g acknowledged and %g unknown: %d taken twice", key, gone, a, u, x))
	}
	// Perhaps lost, beyond the sure losses: min(a, a+u-gone) - max(0, a-gone).
	if p := int(min(a, a+u-gone) - max(0, a-gone) + 0.5); p > 0 {
		d.Undecided += p
	}
	return notes
}

// judgeOwn judges the one take op on a key of its own by the tokens gone:
// applied twice, acknowledged yet lost, or refused yet applied.
func (d *Durability) judgeOwn(key string, gone float64, op TBOp, notes []string) []string {
	acked := !op.Unknown && op.Output.OK
	switch {
	case gone > op.Input.Cost+1e-9:
		d.Extra++
		notes = append(notes, fmt.Sprintf("%s: %g tokens gone after one take of %g: applied twice", key, gone, op.Input.Cost))
	case acked && gone < op.Input.Cost-1e-9:
		d.Lost++
		notes = append(notes, fmt.Sprintf("%s: its acknowledged take of %g is gone (%g tokens taken)", key, op.Input.Cost, gone))
	case !op.Unknown && !op.Output.OK && gone > 1e-9:
		d.Extra++
		notes = append(notes, fmt.Sprintf("%s: a take answered not taken, yet %g tokens are gone", key, gone))
	}
	return notes
}

// CrDurability checks that no acknowledged enqueue was lost, judging each
// by its payload, which the workload makes unique to it (never by its
// token: a store that lost an enqueue issues the same epoch again). An
// acknowledged enqueue is delivered when a take answered with its payload
// or it is still enqueued at the end; a take answered with a payload some
// earlier take had already been given was forgotten by the store (Lost). A
// take of unknown outcome carries the payload its owner's poll saw in the
// row (RecordCredits): the enqueue of that payload, if not otherwise
// delivered, is Undecided (the take may have applied, or the store may have
// lost it). A payload in two rows of the final Enqueued is Extra.
func CrDurability(h CrHistory, b CrBackend) (Durability, error) {
	var d Durability
	acked := map[Payload]bool{}
	var order []Payload
	for _, op := range h.Ops {
		if op.Input.Kind != model.CrEnqueue || op.Unknown || op.Output.Result != model.OK {
			continue
		}
		p := op.Input.Payload
		if acked[p] {
			return d, fmt.Errorf("linearizability: payload %q enqueued twice: enqueues cannot be told apart", p)
		}
		acked[p] = true
		order = append(order, p)
	}
	d.Acked = len(order)
	delivered, undecided := map[Payload]int{}, map[Payload]bool{}
	var notes []string
	for _, op := range h.Ops {
		if op.Input.Kind != model.CrTake {
			continue
		}
		switch {
		case op.Unknown:
			undecided[op.Input.Payload] = true
		case op.Output.OK:
			p := op.Output.Payload
			if delivered[p]++; delivered[p] == 2 {
				d.Lost++
				notes = append(notes, fmt.Sprintf("%q delivered twice: the store forgot its first take", p))
			}
		}
	}
	out, err := Known(b, model.CrInput[Payload]{Kind: model.CrEnqueued})
	if err != nil {
		return d, err
	}
	present := map[Payload]int{}
	for _, e := range out.Entries {
		if present[e.Payload]++; present[e.Payload] == 2 {
			d.Extra++
			notes = append(notes, fmt.Sprintf("%q enqueued in two rows", e.Payload))
		}
	}
	for _, p := range order {
		switch {
		case delivered[p] > 0 || present[p] > 0:
		case undecided[p]:
			d.Undecided++
		default:
			d.Lost++
			notes = append(notes, fmt.Sprintf("%q never reached an owner", p))
		}
	}
	d.Detail = d.summary("enqueues", notes)
	return d, nil
}
