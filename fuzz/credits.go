package fuzz

import (
	"fmt"
	"slices"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// Issued is a token the implementation handed out, with the holder that
// reserved it. Tokens stay in a machine's list after their reservation ends,
// so later operations can use them stale (C3).
type Issued struct {
	Token  model.Token
	Holder model.HolderID
}

type payloadState uint8

const (
	inRow    payloadState = iota + 1 // enqueued, not yet taken
	taken                            // processing
	consumed                         // finished, or the table closed
)

type payloadInfo struct {
	tok   model.Token
	state payloadState
}

// CrMachine runs one credit table beside the model (spec/credits.md). Step
// applies an operation to both and checks the answers; Check verifies the
// invariants that hold between operations. The zero value is not usable;
// use NewCrMachine.
type CrMachine struct {
	opts  Options
	model model.Credits[int]
	sut   func(model.CrInput[int]) model.CrOutput[int] // the implementation's Apply
	hist  history[model.CrInput[int]]

	epochs      map[uint64]bool      // C3: every epoch the implementation issued
	tokens      []Issued             // every token issued, in order
	payloads    map[int]*payloadInfo // every payload enqueued
	live        map[model.Token]int  // the payload enqueued or processing under each token
	nextPayload int
	closed      bool // the implementation was closed (C11)

	// tamper, when set (tests only), rewrites the implementation's answers
	// so the tests can watch each property reject a wrong one.
	tamper func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int]
}

// NewCrMachine returns a machine over a fresh model state and a fresh
// implementation table carrying faults (the empty set for the real one).
func NewCrMachine(faults fault.Fault, opts Options) *CrMachine {
	return &CrMachine{
		opts:     opts,
		sut:      sut.NewCredits[int](faults).Apply,
		epochs:   map[uint64]bool{},
		payloads: map[int]*payloadInfo{},
		live:     map[model.Token]int{},
	}
}

// NextPayload returns a payload never enqueued before, so C7 can tell every
// enqueue apart.
func (m *CrMachine) NextPayload() int {
	m.nextPayload++
	return m.nextPayload
}

// Step applies in to the implementation and the model, checks the
// properties on the implementation's answer, then (unless PropertiesOnly)
// compares the answer with the model's. It returns the first violation; a
// different answer is reported under the invariant model.CrDivergence
// names.
func (m *CrMachine) Step(in model.CrInput[int]) (fail *Failure) {
	m.hist.add(in)
	next, want := m.model.Step(in)
	got, perr := m.apply(in)
	if perr != "" {
		return m.hist.fail("panic", perr)
	}
	if f := m.properties(in, got); f != nil {
		return f
	}
	// Equal first (cheap); the diff only to describe a difference.
	if !m.opts.PropertiesOnly && !want.Equal(got) {
		return m.disagree(in, want, got, m.hist.ins[:len(m.hist.ins)-1], "")
	}
	m.model = next
	return nil
}

// disagree reports an answer of the implementation that differs from the
// model's, after the inputs prior, under the invariant it breaks.
func (m *CrMachine) disagree(in model.CrInput[int], want, got model.CrOutput[int], prior []model.CrInput[int], context string) *Failure {
	return m.hist.fail(model.CrDivergence(prior, in, want, got), fmt.Sprintf("%s%v: the model answers %s, the implementation %s",
		context, in, want.Answer(in.Kind), got.Answer(in.Kind)))
}

func (m *CrMachine) apply(in model.CrInput[int]) (model.CrOutput[int], string) {
	return guardedApply(m.sut, m.tamper, in)
}

// properties checks the invariants visible in one answer and updates the
// trackers they need.
func (m *CrMachine) properties(in model.CrInput[int], got model.CrOutput[int]) *Failure {
	switch in.Kind {
	case model.CrReserve:
		if got.Result != model.OK {
			break
		}
		if first, last := in.Class.SlotRange(); got.Token.Slot < first || got.Token.Slot > last {
			return m.hist.fail("C1", fmt.Sprintf("%v reservation got slot %d, outside its class's %d..%d", in.Class, got.Token.Slot, first, last))
		}
		if got.Token.Epoch == 0 || m.epochs[got.Token.Epoch] {
			return m.hist.fail("C3", fmt.Sprintf("reserve issued epoch %d, which was issued before (or is 0)", got.Token.Epoch))
		}
		m.epochs[got.Token.Epoch] = true
		m.tokens = append(m.tokens, Issued{Token: got.Token, Holder: in.Holder})
	case model.CrEnqueue:
		if got.Result != model.OK {
			break
		}
		if _, dup := m.payloads[in.Payload]; dup {
			return m.hist.fail("C7", fmt.Sprintf("payload p%d enqueued twice (the generator gives each enqueue a fresh payload)", in.Payload))
		}
		m.payloads[in.Payload] = &payloadInfo{tok: in.Token, state: inRow}
		m.live[in.Token] = in.Payload
	case model.CrTake:
		if !got.OK {
			break
		}
		p, ok := m.payloads[got.Payload]
		switch {
		case !ok:
			return m.hist.fail("C6", fmt.Sprintf("take returned p%d, which was never enqueued", got.Payload))
		case p.tok != in.Token:
			return m.hist.fail("C6", fmt.Sprintf("take of %v returned p%d, which was enqueued under %v", in.Token, got.Payload, p.tok))
		case p.state != inRow:
			return m.hist.fail("C7", fmt.Sprintf("take returned p%d a second time (or after it was finished)", got.Payload))
		}
		p.state = taken
	case model.CrFinish:
		if !got.OK {
			break
		}
		if pl, ok := m.live[in.Token]; ok {
			m.payloads[pl].state = consumed
			delete(m.live, in.Token)
			return nil
		}
		return m.hist.fail("C8", fmt.Sprintf("finish of %v freed a row, but no payload is enqueued or processing under that token", in.Token))
	case model.CrClose:
		m.closed = true
		for _, pl := range m.live {
			m.payloads[pl].state = consumed // C7: a closed table takes everything with it
		}
		clear(m.live)
	}
	return nil
}

// Check verifies the invariants that hold between operations, reading the
// implementation only through read-only operations: C14 (snapshot counts
// sum to the bounds), C7 (every payload enqueued and not finished is still
// in its row: listed by enqueued() while waiting, counted as processing once
// taken), C13 (enqueued() order), C11 (a closed table shows nothing), and,
// unless PropertiesOnly, that the implementation's snapshot and enqueued
// list equal the model's.
func (m *CrMachine) Check() *Failure {
	snapOut, perr := m.apply(model.CrInput[int]{Kind: model.CrSnapshot})
	if perr != "" {
		return m.hist.fail("panic", "snapshot: "+perr)
	}
	listOut, perr := m.apply(model.CrInput[int]{Kind: model.CrEnqueued})
	if perr != "" {
		return m.hist.fail("panic", "enqueued: "+perr)
	}
	snap, entries := snapOut.Snap, listOut.Entries
	if m.closed {
		if snap != (model.Snapshot{}) || len(entries) != 0 {
			return m.hist.fail("C11", fmt.Sprintf("closed table shows snapshot %+v and %d enqueued rows", snap, len(entries)))
		}
	} else {
		if snap.General.Total() != model.GeneralSlots || snap.Internal.Total() != model.InternalSlots {
			return m.hist.fail("C14", fmt.Sprintf("snapshot %+v: counts sum to %d general and %d internal, bounds are %d and %d",
				snap, snap.General.Total(), snap.Internal.Total(), model.GeneralSlots, model.InternalSlots))
		}
		sorted := slices.Clone(entries)
		model.SortEntries(sorted)
		if !slices.Equal(sorted, entries) {
			return m.hist.fail("C13", fmt.Sprintf("enqueued() not ordered by mark, then slot: %+v", entries))
		}
		if f := m.checkPayloads(snap, entries); f != nil {
			return f
		}
	}
	if m.opts.PropertiesOnly {
		return nil
	}
	for _, read := range []struct {
		in  model.CrInput[int]
		got model.CrOutput[int]
	}{{model.CrInput[int]{Kind: model.CrSnapshot}, snapOut}, {model.CrInput[int]{Kind: model.CrEnqueued}, listOut}} {
		if _, want := m.model.Step(read.in); !want.Equal(read.got) {
			return m.disagree(read.in, want, read.got, m.hist.ins, "after the last operation, ")
		}
	}
	return nil
}

// checkPayloads is C7's "never lost" half.
func (m *CrMachine) checkPayloads(snap model.Snapshot, entries []model.Entry[int]) *Failure {
	listed := make(map[int]bool, len(entries))
	for _, e := range entries {
		listed[e.Payload] = true
	}
	processing := 0
	for _, pl := range m.live {
		p := m.payloads[pl]
		switch p.state {
		case inRow:
			if !listed[pl] {
				return m.hist.fail("C7", fmt.Sprintf("payload p%d enqueued under %v and never taken is no longer listed by enqueued(): lost", pl, p.tok))
			}
		case taken:
			processing++
		}
	}
	for _, e := range entries {
		if p, ok := m.payloads[e.Payload]; !ok || p.state != inRow {
			return m.hist.fail("C7", fmt.Sprintf("enqueued() lists p%d, which is not waiting", e.Payload))
		}
	}
	if got := snap.General.Processing + snap.Internal.Processing; got != processing {
		return m.hist.fail("C7", fmt.Sprintf("%d payloads were taken and not finished, but the snapshot counts %d processing rows", processing, got))
	}
	return nil
}

// crActions are the operations the credit machines choose from, named as
// the rapid state machine's actions. Each draws its arguments from c and
// applies one or more inputs with Step.
var crActions = []action[*CrMachine]{
	{"reserve", func(m *CrMachine, c chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrReserve, Holder: drawHolder(c), Class: drawClass(c)})
	}},
	{"fill", func(m *CrMachine, c chooser) *Failure { // C1, C2: reserve until the class is exhausted
		class := drawClass(c)
		for range model.Slots + 1 {
			in := model.CrInput[int]{Kind: model.CrReserve, Holder: drawHolder(c), Class: class}
			if f := m.Step(in); f != nil {
				return f
			}
			if m.model.Exhausted(class) || m.model.Closed() {
				return m.Step(in) // the refusal itself
			}
		}
		return nil
	}},
	{"enqueue", func(m *CrMachine, c chooser) *Failure {
		is := m.drawIssued(c)
		return m.Step(model.CrInput[int]{Kind: model.CrEnqueue, Holder: m.drawActor(c, is), Token: is.Token,
			Payload: m.NextPayload(), NowMs: c.Int64Range("now", 0, 40)})
	}},
	{"take", func(m *CrMachine, c chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrTake, Token: m.drawIssued(c).Token})
	}},
	{"finish", func(m *CrMachine, c chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrFinish, Token: m.drawIssued(c).Token})
	}},
	{"drain", func(m *CrMachine, c chooser) *Failure { // the owner's poll: take and finish every listed row (C15 shape)
		for _, e := range m.model.Enqueued() {
			tok := model.Token{Slot: e.Slot, Epoch: e.Epoch}
			if f := m.Step(model.CrInput[int]{Kind: model.CrTake, Token: tok}); f != nil {
				return f
			}
			if c.Intn("finish-now", 4) != 0 {
				if f := m.Step(model.CrInput[int]{Kind: model.CrFinish, Token: tok}); f != nil {
					return f
				}
			}
		}
		return nil
	}},
	{"release", func(m *CrMachine, c chooser) *Failure {
		is := m.drawIssued(c)
		return m.Step(model.CrInput[int]{Kind: model.CrRelease, Holder: m.drawActor(c, is), Token: is.Token})
	}},
	{"sweep", func(m *CrMachine, _ chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrSweep})
	}},
	{"exit", func(m *CrMachine, c chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrExit, Holder: drawHolder(c)})
	}},
	{"enqueued", func(m *CrMachine, _ chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrEnqueued})
	}},
	{"snapshot", func(m *CrMachine, _ chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrSnapshot})
	}},
	{"bounds", func(m *CrMachine, _ chooser) *Failure {
		return m.Step(model.CrInput[int]{Kind: model.CrBounds})
	}},
	{"close", func(m *CrMachine, c chooser) *Failure { // rare: everything after it is C11
		if c.Intn("close-roll", 8) != 0 {
			return nil
		}
		return m.Step(model.CrInput[int]{Kind: model.CrClose})
	}},
}

// holders is how many distinct holders the machines use: few, so tokens
// often meet their own holder and sometimes a foreign one.
const holders = 5

func drawHolder(c chooser) model.HolderID { return model.HolderID(1 + c.Intn("holder", holders)) }

func drawClass(c chooser) model.Class {
	if c.Intn("class", 3) == 0 {
		return model.Internal
	}
	return model.General
}

// drawIssued picks a token: usually one the implementation issued (fresh or
// stale), sometimes a forged one for any slot with an epoch near the ones
// issued.
func (m *CrMachine) drawIssued(c chooser) Issued {
	if len(m.tokens) == 0 || c.Intn("forged", 10) == 0 {
		return Issued{
			Token:  model.Token{Slot: 1 + c.Intn("slot", model.Slots), Epoch: uint64(c.Int64Range("epoch", 1, int64(len(m.tokens))+3))},
			Holder: drawHolder(c),
		}
	}
	// Favour recent tokens: half the draws come from the last four.
	n := len(m.tokens)
	if n > 4 && c.Intn("recent", 2) == 0 {
		return m.tokens[n-1-c.Intn("back", 4)]
	}
	return m.tokens[c.Intn("token", n)]
}

// drawActor is the holder that acts on a token: its own holder three times
// in four, otherwise any holder (a foreign one, C5, C9).
func (m *CrMachine) drawActor(c chooser, is Issued) model.HolderID {
	if c.Intn("foreign", 4) != 0 {
		return is.Holder
	}
	return drawHolder(c)
}
