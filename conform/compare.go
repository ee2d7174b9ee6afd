package conform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/tollgate/tollgate/internal/epochs"
	"github.com/tollgate/tollgate/model"
)

// Epochs is the harness's one naming of a driver's epochs, for a case or a
// concurrent session: the n-th distinct epoch the driver answered is the
// model's epoch n, written "$en" in vectors and reports (internal/epochs
// numbers them in the order first seen). Epochs are compared by identity
// (their compact JSON text), never by value (spec/protocol.md §3). A
// driver's epoch is renamed here and nowhere else: the Go driver answers
// its table's epochs as issued.
type Epochs struct {
	names epochs.Names[string] // compact JSON text → n
}

// NewEpochs returns an empty naming.
func NewEpochs() *Epochs { return &Epochs{} }

// Raw returns the driver's value named by a symbolic epoch "$en"; any
// other symbol (one the driver never answered) is sent as written.
func (e *Epochs) Raw(sym json.RawMessage) json.RawMessage {
	if n, err := (&SymbolicEpochs{}).Epoch(sym); err == nil && bytes.Equal(rawJSON(fmt.Sprintf("$e%d", n)), sym) {
		if raw, ok := e.names.Epoch(n); ok {
			return json.RawMessage(raw)
		}
	}
	return sym
}

// RawEpoch returns the driver's value named by model epoch n (for
// EncodeCr, on a concurrent session's requests), or "$en" if none is.
func (e *Epochs) RawEpoch(n uint64) json.RawMessage {
	if raw, ok := e.names.Epoch(n); ok {
		return json.RawMessage(raw)
	}
	return rawJSON(fmt.Sprintf("$e%d", n))
}

// bind names raw, which the driver answered to a reserve where sym was
// expected, and returns the name the actual answer is compared under:
// "$en", its new name, which is sym for a driver that agrees with the
// model so far (the model numbers its epochs in the order it issues them,
// as Epochs does); a marked name, naming nothing, when the driver reused an
// epoch (C3), answered one where the model issued none, or answered
// something that is not a JSON string or integer.
func (e *Epochs) bind(sym string, raw json.RawMessage) string {
	c, err := compactRaw(raw)
	if err != nil || c == "" || c[0] == '{' || c[0] == '[' || c == "null" || c == "true" || c == "false" {
		return fmt.Sprintf("!not-an-epoch %s", raw)
	}
	if n, ok := e.names.Seen(c); ok {
		return fmt.Sprintf("!reused %s (issued before as $e%d)", c, n)
	}
	if sym == "" {
		return "!unexpected " + c
	}
	return fmt.Sprintf("$e%d", e.names.Name(c))
}

// name returns the symbol of an epoch the driver answered before.
func (e *Epochs) name(raw json.RawMessage) string {
	c, err := compactRaw(raw)
	if err != nil {
		return fmt.Sprintf("!not-json %s", raw)
	}
	if n, ok := e.names.Seen(c); ok {
		return fmt.Sprintf("$e%d", n)
	}
	return "!never-issued " + c
}

// modelEpoch is the model's number of an epoch the driver answered before:
// its name. One never named (answered where the model issued none, or not
// an epoch at all) is math.MaxUint64, a number the model never issues.
func (e *Epochs) modelEpoch(raw json.RawMessage) uint64 {
	if c, err := compactRaw(raw); err == nil {
		if n, ok := e.names.Seen(c); ok {
			return n
		}
	}
	return math.MaxUint64
}

// number is the model's number of an epoch a driver answered in a
// concurrent session, naming it if new: a reused epoch gets the same
// number again, which linearizability.CheckEpochs reports (C3). A value
// that is not JSON is named by its text.
func (e *Epochs) number(raw json.RawMessage) uint64 {
	c, err := compactRaw(raw)
	if err != nil {
		c = string(raw)
	}
	return e.names.Name(c)
}

// Divergence is what the first answer that differs says, in the model's
// terms: the invariant it breaks and the operation with both answers.
type Divergence struct {
	Invariant string // the spec ID model.TBDivergence / model.CrDivergence names, or "protocol"
	Detail    string // the operation and both answers, as the model renders them
}

// diverge judges the driver's answer got to the last of sent, the requests
// of one case in symbolic form (epochs "$eN" numbered as the model issues
// them), with binder holding the driver's epochs. It replays the requests
// before it through the model (those the protocol refuses are left out; a
// cr.new starts a fresh table) and hands both answers to the model's
// classifier. A refused request that was answered otherwise, or an answer
// that is not one of its operation's, breaks the protocol itself. It
// returns the zero Divergence when the driver agrees with the model (a
// vector file whose expectation the model does not share).
func diverge(sent []Request, got Response, binder *Epochs) Divergence {
	last := sent[len(sent)-1]
	protocol := func(why string) Divergence {
		return Divergence{Invariant: "protocol", Detail: fmt.Sprintf("%s: %s (spec/protocol.md)", last.Op, why)}
	}
	describe := func(in fmt.Stringer, want, got string) string {
		return fmt.Sprintf("%v: the model answers %s, the driver %s", in, want, got)
	}
	switch {
	case IsTB(last.Op):
		var prior []model.TBInput[string]
		var tbl model.TBTable[string]
		for _, r := range sent[:len(sent)-1] {
			if in, err := DecodeTB(&r); err == nil {
				prior = append(prior, in)
				tbl, _ = tbl.Step(in)
			}
		}
		in, err := DecodeTB(&last)
		if err != nil {
			return protocol("a request the protocol refuses was not answered bad_request")
		}
		_, want := tbl.Step(in)
		out, err := TBAnswer(in, got)
		if err != nil {
			return protocol(err.Error())
		}
		if id := model.TBDivergence(prior, in, want, out); id != "" {
			return Divergence{id, describe(in, want.Answer(in.Kind), out.Answer(in.Kind))}
		}
	case IsCr(last.Op) && last.Op != OpNew:
		names := &SymbolicEpochs{}
		var prior []model.CrInput[string]
		var st model.Credits[string]
		for _, r := range sent[:len(sent)-1] {
			if r.Op == OpNew {
				prior, st = nil, model.Credits[string]{}
			} else if in, err := DecodeCr(&r, names); err == nil {
				prior = append(prior, in)
				st, _ = st.Step(in)
			}
		}
		in, err := DecodeCr(&last, names)
		if err != nil {
			return protocol("a request the protocol refuses was not answered bad_request")
		}
		_, want := st.Step(in)
		out, err := CrAnswer(in, got, binder.modelEpoch)
		if err != nil {
			return protocol(err.Error())
		}
		if id := model.CrDivergence(prior, in, want, out); id != "" {
			return Divergence{id, describe(in, want.Answer(in.Kind), out.Answer(in.Kind))}
		}
	default:
		return protocol("not an operation of the primitive, or answered otherwise than the protocol says")
	}
	return Divergence{}
}

func symOf(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// Canonical is the part of an answer that conformance compares, for the
// given operation, as one JSON line: ok, error, the invalid field, and the
// operation's result fields with epochs by symbol and floats in shortest
// round-trip form (so equal text means equal bits). Messages and fields the
// operation does not define are dropped. For an actual answer, binder maps
// the driver's epochs to symbols (binding new ones as expect dictates); for
// an expected answer binder is nil and epochs are already symbols.
func Canonical(op string, r Response, expect *Response, binder *Epochs) string {
	c := Response{ID: 0, OK: r.OK, Error: r.Error}
	if r.Error == ErrInvalidArgument {
		c.Field = r.Field
	}
	if !r.OK {
		if op == OpAdmit && r.Error == ErrRateLimited {
			c.RetryAfterMs = r.RetryAfterMs // the wait of the state that refused
		}
		return canonLine(c)
	}
	canonResult(&c, op, r, expect, binder)
	return canonLine(c)
}

// canonResult copies into c the result fields op defines of a successful
// answer r: the token bucket's numbers as they are, the credit table's
// epochs by symbol (canonCredits).
func canonResult(c *Response, op string, r Response, expect *Response, binder *Epochs) {
	switch op {
	case OpHello:
		c.Protocol, c.Primitives = r.Protocol, r.Primitives
	case OpTake, OpAdmit:
		c.Remaining = r.Remaining
	case OpPeek:
		c.Tokens = r.Tokens
	case OpRetryAfter:
		c.RetryAfterMs = r.RetryAfterMs
	case OpReclaim:
		c.Reclaimed = r.Reclaimed
	default:
		canonCredits(c, op, r, expect, binder)
	}
}

// canonCredits is canonResult for the credit table's operations.
func canonCredits(c *Response, op string, r Response, expect *Response, binder *Epochs) {
	epoch := func(raw json.RawMessage, bindTo string, isNew bool) json.RawMessage {
		if raw == nil {
			return nil
		}
		if binder == nil {
			return raw
		}
		if isNew {
			return rawJSON(binder.bind(bindTo, raw))
		}
		return rawJSON(binder.name(raw))
	}
	switch op {
	case OpReserve:
		sym := ""
		if expect != nil && expect.OK {
			sym = symOf(expect.Epoch)
		}
		c.Slot, c.Epoch = r.Slot, epoch(r.Epoch, sym, true)
	case OpCrTake:
		c.Payload = r.Payload
	case OpFinish, OpRelease, OpSweep:
		c.Freed = r.Freed
	case OpEnqueued:
		if r.Entries != nil {
			es := make([]Entry, len(*r.Entries))
			for i, x := range *r.Entries {
				es[i] = Entry{Slot: x.Slot, Epoch: epoch(x.Epoch, "", false), MarkedMs: x.MarkedMs, Payload: x.Payload}
			}
			c.Entries = &es
		} else {
			c.Entries = &[]Entry{} // "entries" is required; absent compares as a mismatch below
			c.Error = "!missing entries"
		}
	case OpSnapshot:
		var g, i Counts
		if json.Unmarshal(r.General, &g) != nil || json.Unmarshal(r.Internal, &i) != nil {
			c.Error = "!snapshot general/internal are not count objects"
		}
		c.General, c.Internal = rawJSON(g), rawJSON(i)
	case OpBounds:
		var g, i int
		if json.Unmarshal(r.General, &g) != nil || json.Unmarshal(r.Internal, &i) != nil {
			c.Error = "!bounds general/internal are not integers"
		}
		c.General, c.Internal, c.Total = rawJSON(g), rawJSON(i), r.Total
	}
}

// canonLine writes a canonical answer without the id.
func canonLine(r Response) string {
	b, _ := json.Marshal(struct {
		Response
		ID *int `json:"id,omitempty"`
	}{Response: r})
	return string(b)
}
