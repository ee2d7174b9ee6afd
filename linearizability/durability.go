package linearizability

import (
	"fmt"
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
// stay taken (Durability).
func FaultTBWorkload() TBWorkload {
	return TBWorkload{
		Name: "acked-takes", Clients: 8, Keys: 16, OpsPerClient: 150,
		Limits: model.Limits{Capacity: 1e6, RefillPerSecond: 1}, Costs: []float64{1},
		StartMs: 1000, Mix: [7]int{8, 1, 1, 0, 0, 0, 0},
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

// TBDurability checks that no acknowledged take was lost and none applied
// twice: at the workload's one clock reading nothing refills, so each key
// must hold at most its capacity less the cost of the takes acknowledged on
// it, and at least that less the cost of its takes of unknown outcome (each
// ran once at most). Lost counts the tokens above the first bound, extra
// those below the second.
func TBDurability(w TBWorkload, h TBHistory, b TBBackend) (acked, lost, extra int, detail string, err error) {
	taken, maybe := map[string]float64{}, map[string]float64{}
	for _, op := range h.Ops {
		switch {
		case op.Input.Kind != model.TBTake:
		case op.Unknown:
			maybe[op.Input.Key] += op.Input.Cost
		case op.Output.OK:
			taken[op.Input.Key] += op.Input.Cost
			acked++
		}
	}
	var notes []string
	for k := range w.Keys {
		key := fmt.Sprintf("k%d", k)
		out, err := Known(b, model.TBInput[string]{Kind: model.TBPeek, Key: key, Limits: w.Limits, NowMs: w.StartMs})
		if err != nil {
			return acked, lost, extra, "", err
		}
		most := w.Limits.Capacity - taken[key]
		least := most - maybe[key]
		switch {
		case out.Tokens > most:
			n := int(out.Tokens - most + 0.5)
			lost += n
			notes = append(notes, fmt.Sprintf("%s holds %g tokens, at most %g after %g acknowledged takes: %d came back", key, out.Tokens, most, taken[key], n))
		case out.Tokens < least:
			n := int(least - out.Tokens + 0.5)
			extra += n
			notes = append(notes, fmt.Sprintf("%s holds %g tokens, at least %g after %g acknowledged and %g unknown takes: %d taken twice", key, out.Tokens, least, taken[key], maybe[key], n))
		}
	}
	switch {
	case lost == 0 && extra == 0:
		return acked, 0, 0, fmt.Sprintf("none of %d acknowledged takes lost, none applied twice", acked), nil
	case extra == 0:
		return acked, lost, 0, fmt.Sprintf("%d of %d acknowledged takes lost (%s)", lost, acked, strings.Join(notes, "; ")), nil
	}
	return acked, lost, extra, fmt.Sprintf("%d lost, %d tokens taken that no take accounts for (a take applied twice): %s", lost, extra, strings.Join(notes, "; ")), nil
}

// CrDurability checks that no acknowledged enqueue was lost: its payload
// was taken by an owner (a take of its token answered it, or a take of its
// token has an unknown outcome), or it is still enqueued at the end.
func CrDurability(h CrHistory, b CrBackend) (acked, lost int, detail string, err error) {
	taken := map[model.Token]bool{}
	for _, op := range h.Ops {
		if op.Input.Kind == model.CrTake && (op.Unknown || op.Output.OK) {
			taken[op.Input.Token] = true
		}
	}
	out, err := Known(b, model.CrInput[string]{Kind: model.CrEnqueued})
	if err != nil {
		return 0, 0, "", err
	}
	for _, e := range out.Entries {
		taken[model.Token{Slot: e.Slot, Epoch: e.Epoch}] = true
	}
	var missing []string
	for _, op := range h.Ops {
		if op.Input.Kind != model.CrEnqueue || op.Unknown || op.Output.Result != model.OK {
			continue
		}
		acked++
		if !taken[op.Input.Token] {
			lost++
			if len(missing) < 5 {
				missing = append(missing, fmt.Sprintf("%q (slot %d)", op.Input.Payload, op.Input.Token.Slot))
			}
		}
	}
	if lost == 0 {
		return acked, 0, fmt.Sprintf("none of %d acknowledged enqueues lost", acked), nil
	}
	return acked, lost, fmt.Sprintf("%d of %d acknowledged enqueues never reached an owner, e.g. %s", lost, acked, strings.Join(missing, ", ")), nil
}
