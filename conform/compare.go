package conform

import (
	"encoding/json"
	"fmt"
)

// Epochs binds the symbolic epochs of expected answers ("$e1", …) to the
// opaque values a driver issued, in both directions. Epochs are compared by
// identity (their compact JSON text), never by value (spec/protocol.md §3).
type Epochs struct {
	symToRaw map[string]string
	rawToSym map[string]string
}

// NewEpochs returns an empty binding.
func NewEpochs() *Epochs {
	return &Epochs{symToRaw: map[string]string{}, rawToSym: map[string]string{}}
}

// Raw returns the driver's value bound to a symbolic epoch; an unbound symbol
// is sent as written.
func (e *Epochs) Raw(sym json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(sym, &s) == nil {
		if raw, ok := e.symToRaw[s]; ok {
			return json.RawMessage(raw)
		}
	}
	return sym
}

// bind records that the driver answered raw where sym was expected and
// returns the name the actual answer is compared under: sym when the value
// is new, a marked name when the driver reused an epoch (C3) or answered
// something that is not a JSON string or integer.
func (e *Epochs) bind(sym string, raw json.RawMessage) string {
	c, err := compactRaw(raw)
	if err != nil || c == "" || c[0] == '{' || c[0] == '[' || c == "null" || c == "true" || c == "false" {
		return fmt.Sprintf("!not-an-epoch %s", raw)
	}
	if old, ok := e.rawToSym[c]; ok {
		return fmt.Sprintf("!reused %s (issued before as %s)", c, old)
	}
	if sym == "" {
		return "!unexpected " + c
	}
	e.rawToSym[c] = sym
	e.symToRaw[sym] = c
	return sym
}

// name returns the symbol of an epoch the driver issued before.
func (e *Epochs) name(raw json.RawMessage) string {
	c, err := compactRaw(raw)
	if err != nil {
		return fmt.Sprintf("!not-json %s", raw)
	}
	if s, ok := e.rawToSym[c]; ok {
		return s
	}
	return "!never-issued " + c
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
		return canonLine(c)
	}
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
	case OpHello:
		c.Protocol, c.Primitives = r.Protocol, r.Primitives
	case OpTake:
		c.Remaining = r.Remaining
	case OpPeek:
		c.Tokens = r.Tokens
	case OpRetryAfter:
		c.RetryAfterMs = r.RetryAfterMs
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
	return canonLine(c)
}

// canonLine writes a canonical answer without the id.
func canonLine(r Response) string {
	b, _ := json.Marshal(struct {
		Response
		ID *int `json:"id,omitempty"`
	}{Response: r})
	return string(b)
}
