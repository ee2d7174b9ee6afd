package linearizability

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// crStore answers the durability check's final Enqueued with entries.
func crStore(entries ...model.Entry[Payload]) CrBackend {
	return Local(func(in model.CrInput[Payload]) model.CrOutput[Payload] {
		if in.Kind != model.CrEnqueued {
			panic("only Enqueued is asked")
		}
		return model.CrOutput[Payload]{Entries: entries}
	})
}

// tbStore answers the durability check's peeks with the tokens gone per key.
func tbStore(lim model.Limits, gone map[string]float64) TBBackend {
	return Local(func(in model.TBInput[string]) model.TBOutput {
		if in.Kind != model.TBPeek {
			panic("only peeks are asked")
		}
		return model.TBOutput{OK: true, Tokens: lim.Capacity - gone[in.Key]}
	})
}

func enq(p string, slot int, epoch uint64, unknown bool) CrOp {
	op := CrOp{Input: model.CrInput[Payload]{Kind: model.CrEnqueue, Holder: 1, Token: model.Token{Slot: slot, Epoch: epoch}, Payload: p},
		Output: model.CrOutput[Payload]{Result: model.OK}}
	if unknown {
		op.Unknown, op.Output = true, model.CrOutput[Payload]{}
	}
	return op
}

func crTake(seen string, slot int, epoch uint64, got string, unknown bool) CrOp {
	op := CrOp{Input: model.CrInput[Payload]{Kind: model.CrTake, Token: model.Token{Slot: slot, Epoch: epoch}, Payload: seen},
		Output: model.CrOutput[Payload]{OK: true, Payload: got}}
	if unknown {
		op.Unknown, op.Output = true, model.CrOutput[Payload]{}
	}
	return op
}

// A store that lost an enqueue issues its epoch again: the loss must not
// hide behind the next enqueue of the same token, nor behind a take of
// unknown outcome of that token that was after another payload.
func TestCrDurabilityByPayload(t *testing.T) {
	for name, c := range map[string]struct {
		ops                          []CrOp
		final                        []model.Entry[Payload]
		lost, undecided, extra, acks int
	}{
		"epoch reissued, the second enqueue taken": {
			// "a" enqueued at slot 1 epoch 5, lost; the store issues epoch
			// 5 again, "b" is enqueued there and taken.
			ops:  []CrOp{enq("a", 1, 5, false), enq("b", 1, 5, false), crTake("b", 1, 5, "b", false)},
			lost: 1, acks: 2,
		},
		"epoch reissued, the second enqueue still enqueued": {
			ops:   []CrOp{enq("a", 1, 5, false), enq("b", 1, 5, false)},
			final: []model.Entry[Payload]{{Slot: 1, Epoch: 5, Payload: "b"}},
			lost:  1, acks: 2,
		},
		"an unknown take of another payload at the reissued token": {
			ops:  []CrOp{enq("a", 3, 1, false), enq("b", 3, 1, true), crTake("b", 3, 1, "", true)},
			lost: 1, acks: 1,
		},
		"an unknown take of the payload itself decides nothing": {
			ops:       []CrOp{enq("a", 3, 1, false), crTake("a", 3, 1, "", true)},
			undecided: 1, acks: 1,
		},
		"a payload delivered twice: its first take forgotten": {
			ops:  []CrOp{enq("a", 2, 1, false), crTake("a", 2, 1, "a", false), crTake("a", 2, 1, "a", false)},
			lost: 1, acks: 1,
		},
		"a payload in two rows": {
			ops:   []CrOp{enq("a", 2, 1, false)},
			final: []model.Entry[Payload]{{Slot: 2, Epoch: 1, Payload: "a"}, {Slot: 4, Epoch: 1, Payload: "a"}},
			extra: 1, acks: 1,
		},
		"nothing lost": {
			ops:   []CrOp{enq("a", 2, 1, false), crTake("a", 2, 1, "a", false), enq("b", 2, 2, false)},
			final: []model.Entry[Payload]{{Slot: 2, Epoch: 2, Payload: "b"}},
			acks:  2,
		},
	} {
		d, err := CrDurability(CrHistory{Ops: c.ops}, crStore(c.final...))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Lost != c.lost || d.Undecided != c.undecided || d.Extra != c.extra || d.Acked != c.acks {
			t.Errorf("%s: lost %d undecided %d extra %d acked %d, want %d %d %d %d: %s", name,
				d.Lost, d.Undecided, d.Extra, d.Acked, c.lost, c.undecided, c.extra, c.acks, d.Detail)
		}
		if c.lost == 0 && c.extra == 0 && !strings.HasPrefix(d.Detail, "none of") {
			t.Errorf("%s: %s", name, d.Detail)
		}
	}
}

func tbTake(key string, unknown, ok bool) TBOp {
	op := TBOp{Input: model.TBInput[string]{Kind: model.TBTake, Key: key, Cost: 1}, Output: model.TBOutput{OK: ok}}
	if unknown {
		op.Unknown, op.Output = true, model.TBOutput{}
	}
	return op
}

// An unknown take that applied must not hide a lost acknowledged take on
// the same key (it leaves the take undecided), and cannot make one up; a
// take on a key of its own is judged by itself.
func TestTBDurabilityUnknownHidesNothing(t *testing.T) {
	w := TBWorkload{Keys: 1, Limits: model.Limits{Capacity: 100, RefillPerSecond: 1}, StartMs: 1000}
	for name, c := range map[string]struct {
		ops                          []TBOp
		gone                         map[string]float64
		lost, undecided, extra, acks int
	}{
		// One acknowledged take lost, one unknown take applied: one token
		// gone, as if nothing were lost.
		"shared key: an unknown take covers a lost one": {
			ops:  []TBOp{tbTake("k0", false, true), tbTake("k0", true, false)},
			gone: map[string]float64{"k0": 1}, undecided: 1, acks: 1,
		},
		"shared key: the unknown take did not apply": {
			ops:  []TBOp{tbTake("k0", false, true), tbTake("k0", true, false)},
			gone: map[string]float64{"k0": 0}, lost: 1, acks: 1,
		},
		"own keys: the acknowledged take lost, the unknown one applied": {
			ops:  []TBOp{tbTake(OwnKey(0, 0), false, true), tbTake(OwnKey(1, 0), true, false)},
			gone: map[string]float64{OwnKey(1, 0): 1}, lost: 1, acks: 1,
		},
		"own keys: the unknown take did not apply": {
			ops:  []TBOp{tbTake(OwnKey(0, 0), false, true), tbTake(OwnKey(1, 0), true, false)},
			gone: map[string]float64{OwnKey(0, 0): 1}, acks: 1,
		},
		"own key: applied twice": {
			ops:  []TBOp{tbTake(OwnKey(0, 0), false, true)},
			gone: map[string]float64{OwnKey(0, 0): 2}, extra: 1, acks: 1,
		},
		"own key: refused yet applied": {
			ops:  []TBOp{tbTake(OwnKey(0, 0), false, false)},
			gone: map[string]float64{OwnKey(0, 0): 1}, extra: 1,
		},
	} {
		d, err := TBDurability(w, TBHistory{Ops: c.ops}, tbStore(w.Limits, c.gone))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Lost != c.lost || d.Undecided != c.undecided || d.Extra != c.extra || d.Acked != c.acks {
			t.Errorf("%s: lost %d undecided %d extra %d acked %d, want %d %d %d %d: %s", name,
				d.Lost, d.Undecided, d.Extra, d.Acked, c.lost, c.undecided, c.extra, c.acks, d.Detail)
		}
	}
}

// The recorded workload puts about OwnKeys of its takes on keys of their
// own, each taken once, and the in-process table loses none of them.
func TestOwnKeysRecorded(t *testing.T) {
	w := FaultTBWorkload()
	b := InProcessTB(0)
	h, err := RecordTokenBucket(w, b, 3)
	if err != nil {
		t.Fatal(err)
	}
	own, takes := 0, 0
	for _, op := range h.Ops {
		if op.Input.Kind == model.TBTake {
			takes++
			if strings.HasPrefix(op.Input.Key, "t") {
				own++
			}
		}
	}
	if own == 0 || own == takes {
		t.Fatalf("%d of %d takes on keys of their own", own, takes)
	}
	d, err := TBDurability(w, h, b)
	if err != nil {
		t.Fatal(err)
	}
	if d.Lost != 0 || d.Extra != 0 || d.Undecided != 0 || d.Acked != takes {
		t.Fatalf("the recorded table: %s", d.Detail)
	}
	d, err = TBDurability(w, h, InProcessTB(0))
	if err != nil {
		t.Fatal(err)
	}
	// A fresh table: every key full, so every acknowledged take is lost.
	if d.Lost != d.Acked || d.Acked == 0 {
		t.Fatalf("a fresh table: %s", d.Detail)
	}
}

// A strike waits for a write in flight and stamps an instant inside it;
// the history cut there keeps what was called before it, the write in
// flight made unknown.
func TestFaultClockStrikesAWriteInFlight(t *testing.T) {
	var f FaultClock
	var ts Stamps
	f.ShareStamps(&ts)
	peek := model.TBInput[string]{Kind: model.TBPeek, Key: "k0"}
	tk := model.TBInput[string]{Kind: model.TBTake, Key: "k0", Cost: 1}
	done := make(chan int64)
	stop := make(chan struct{})
	// A peek in flight is not a write, nor is a take the history may leave
	// out: the strike waits.
	cp := f.Begin(0, peek)
	f.Omittable(2, true)
	co := f.Begin(2, tk)
	f.Omittable(2, false)
	go func() {
		if !f.Strike(stop) {
			done <- -1
			return
		}
		done <- f.Starts()[0]
	}()
	select {
	case at := <-done:
		t.Fatalf("struck at %d with only a read in flight", at)
	case <-time.After(20 * time.Millisecond):
	}
	call := ts.Stamp()
	ct := f.Begin(1, tk)
	at := <-done
	f.End(ct)
	ret := ts.Stamp()
	f.End(co)
	f.End(cp)
	ops := []TBOp{
		{Input: peek, Call: 0, Return: ret, Output: model.TBOutput{OK: true}},
		{Input: tk, Call: call, Return: ret, Output: model.TBOutput{OK: true}},
		{Input: tk, Call: ret + 1, Return: ret + 2, Output: model.TBOutput{OK: true}},
	}
	if n := Spanning(ops, at); n != 1 {
		t.Fatalf("%d writes span the strike at %d, want 1", n, at)
	}
	h := TBHistory{Ops: ops}.Before(at)
	if len(h.Ops) != 2 || !h.Ops[1].Unknown || h.Ops[1].Output.OK || !h.Ops[0].Unknown {
		t.Fatalf("cut at %d: %+v", at, h.Ops)
	}
	if n := Spanning(ops, ret+1); n != 0 {
		t.Fatalf("%d writes span an instant between calls", n)
	}
	close(stop)
	if f.Strike(stop) {
		t.Fatal("struck with nothing in flight after stop")
	}
}

// clocked is a backend wrapped as a fault workload's is: its calls go
// through a FaultClock (Begin, End), which takes the recorder's stamps and
// marks, and each takes a little while.
type clocked[In, Out any] struct {
	b Backend[In, Out]
	f *FaultClock
}

func (c clocked[In, Out]) ShareStamps(ts *Stamps)        { c.f.ShareStamps(ts) }
func (c clocked[In, Out]) Omittable(client int, on bool) { c.f.Omittable(client, on) }
func (c clocked[In, Out]) Do(client int, in In) (Out, error) {
	counted := c.f.Begin(client, in)
	out, err := c.b.Do(client, in)
	time.Sleep(100 * time.Microsecond) // the answer's way back, as over a network
	c.f.End(counted)
	return out, err
}

// TestEveryStrikeSpansARecordedWrite: strikes made all through a credit
// recording whose enqueues race a helper's sweeps and releases each stamp
// an instant that some write of the history spans. The helper's losing
// calls are left out of the history; before the recorder marked them
// omittable, a strike could wait for one of them and find no recorded
// write in flight.
func TestEveryStrikeSpansARecordedWrite(t *testing.T) {
	var f FaultClock
	b := clocked[model.CrInput[Payload], model.CrOutput[Payload]]{InProcessCr(fault.None), &f}
	stop := make(chan struct{})
	struck := make(chan int)
	go func() {
		n := 0
		for f.Strike(stop) {
			n++
			time.Sleep(50 * time.Microsecond)
		}
		struck <- n
	}()
	var w CrWorkload
	for _, c := range CrWorkloads() {
		if c.Name == "dead-enqueue" { // races a sweep or a release with each enqueue
			w = c
		}
	}
	h, err := RecordCredits(w, b, 1)
	close(stop)
	n := <-struck
	if err != nil {
		t.Fatal(err)
	}
	missed := 0
	for _, at := range f.Starts() {
		if Spanning(h.Ops, at) == 0 {
			missed++
		}
	}
	if n < 100 || missed != 0 {
		t.Fatalf("%d of %d strikes found no recorded write in flight (%d operations)", missed, n, len(h.Ops))
	}
	t.Logf("%d strikes, each inside a recorded write (%d operations)", n, len(h.Ops))
}

// omitSpy counts the writes a recorder made through it, and those it made
// while their client was marked omittable.
type omitSpy[In, Out any] struct {
	b              Backend[In, Out]
	mu             sync.Mutex
	omit           map[int]bool
	calls, omitted int
}

func (m *omitSpy[In, Out]) Omittable(client int, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.omit[client] = on
}

func (m *omitSpy[In, Out]) Do(client int, in In) (Out, error) {
	if IsWrite(in) {
		m.mu.Lock()
		m.calls++
		if m.omit[client] {
			m.omitted++
		}
		m.mu.Unlock()
	}
	return m.b.Do(client, in)
}

// TestUnrecordedCallsAreMarked: every write the credit recorder leaves out
// of its history was marked omittable first, so a fault's clock never
// waits for one: the writes not marked are at most the writes recorded.
func TestUnrecordedCallsAreMarked(t *testing.T) {
	for _, w := range CrWorkloads() {
		m := &omitSpy[model.CrInput[Payload], model.CrOutput[Payload]]{b: InProcessCr(fault.None), omit: map[int]bool{}}
		h, err := RecordCredits(w, m, 1)
		if err != nil {
			t.Fatal(err)
		}
		writes := 0
		for _, op := range h.Ops {
			if IsWrite(op.Input) {
				writes++
			}
		}
		if unmarked := m.calls - m.omitted; unmarked > writes {
			t.Errorf("%s: %d writes not marked omittable, %d recorded", w.Name, unmarked, writes)
		}
	}
}
