package faultrun

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// probe passes calls to b, calling on first.
type probe struct {
	b  linearizability.TBBackend
	on func()
}

func (p probe) Do(client int, in model.TBInput[string]) (model.TBOutput, error) {
	p.on()
	return p.b.Do(client, in)
}

// TestDurabilityReadAfterTheFault: the direct check of acknowledged writes
// reads the store through the table Reopen opens, and only once the fault
// has healed: never through the recording's backend (its connections,
// fence or WAIT may answer for a store the fault left behind), and never
// while the fault still holds (a CLIENT PAUSE whose inject returned as
// soon as the command was sent). Here the fault outlasts the recording by
// 100 ms.
func TestDurabilityReadAfterTheFault(t *testing.T) {
	tab := linearizability.InProcessTB(fault.None)
	var healed atomic.Bool
	var recorded, reads, early atomic.Int64
	r := NewRun()
	row := Row{Scenario: "test"}
	j := Job[model.TBInput[string], model.TBOutput]{
		Seed:    1,
		Backend: probe{tab, func() { recorded.Add(1) }},
		Start: func() {
			r.Inject(nil, func() error {
				<-r.Stop
				time.Sleep(100 * time.Millisecond)
				healed.Store(true)
				return nil
			})
		},
		Reopen: func() (linearizability.TBBackend, func(), error) {
			return probe{tab, func() {
				reads.Add(1)
				if !healed.Load() {
					early.Add(1)
				}
			}}, func() {}, nil
		},
	}
	if err := TB(r, &row, j); err != nil {
		t.Fatal(err)
	}
	w := linearizability.FaultTBWorkload()
	if n := recorded.Load(); n != int64(w.Clients*w.OpsPerClient) {
		t.Errorf("the recording's backend took %d calls, the recording makes %d: the durability read went through it", n, w.Clients*w.OpsPerClient)
	}
	if reads.Load() == 0 {
		t.Error("the durability read never went through the reopened table")
	}
	if n := early.Load(); n > 0 {
		t.Errorf("%d reads of the durability check ran before the fault healed", n)
	}
	if row.Lost != 0 || row.Extra != 0 || row.Acked == 0 {
		t.Errorf("acknowledged %d, lost %d, extra %d: %s", row.Acked, row.Lost, row.Extra, row.Detail)
	}
}
