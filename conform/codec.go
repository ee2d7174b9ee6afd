package conform

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/model"
)

// The codec translates between the protocol and the model's inputs and
// outputs. It is used in both directions by the harness (model → expected
// response, model input → request), by the vector generator and by the Go
// driver (request → model input → internal/sut → response), so the protocol
// form of every operation is written once, here.

// Operation names (spec/protocol.md §4).
const (
	OpHello      = "hello"
	OpTake       = "tb.take"
	OpPeek       = "tb.peek"
	OpRetryAfter = "tb.retry_after"
	OpReset      = "tb.reset"
	OpResetAll   = "tb.reset_all"
	OpReclaim    = "tb.reclaim"
	// OpAdmit is optional: a driver serves it when its hello lists it in
	// ops (spec/protocol.md §4, tb.admit).
	OpAdmit    = "tb.admit"
	OpNew      = "cr.new"
	OpReserve  = "cr.reserve"
	OpEnqueue  = "cr.enqueue"
	OpCrTake   = "cr.take"
	OpFinish   = "cr.finish"
	OpRelease  = "cr.release"
	OpSweep    = "cr.sweep"
	OpEnqueued = "cr.enqueued"
	OpSnapshot = "cr.snapshot"
	OpBounds   = "cr.bounds"
	OpExit     = "cr.exit"
	OpClose    = "cr.close"
)

var tbOps = map[string]model.TBKind{OpTake: model.TBTake, OpPeek: model.TBPeek, OpRetryAfter: model.TBRetryAfter,
	OpReset: model.TBReset, OpResetAll: model.TBResetAll, OpReclaim: model.TBReclaim, OpAdmit: model.TBAdmit}

var crOps = map[string]model.CrKind{OpReserve: model.CrReserve, OpEnqueue: model.CrEnqueue, OpCrTake: model.CrTake,
	OpFinish: model.CrFinish, OpRelease: model.CrRelease, OpSweep: model.CrSweep, OpEnqueued: model.CrEnqueued,
	OpSnapshot: model.CrSnapshot, OpBounds: model.CrBounds, OpExit: model.CrExit, OpClose: model.CrClose}

// BadRequest is a request the protocol refuses with bad_request: an unknown
// operation, a missing or mistyped field, a value outside its domain.
type BadRequest struct{ Msg string }

func (e *BadRequest) Error() string { return "conform: bad request: " + e.Msg }

func badf(format string, args ...any) error { return &BadRequest{fmt.Sprintf(format, args...)} }

// IsTB reports whether op is a token-bucket operation of the protocol.
func IsTB(op string) bool { _, ok := tbOps[op]; return ok }

// IsCr reports whether op is a credit-table operation of the protocol
// (cr.new included).
func IsCr(op string) bool { _, ok := crOps[op]; return ok || op == OpNew }

// DecodeTB turns a token-bucket request into the model's input. cost
// defaults to 1 (spec/protocol.md §4.1). Argument values are not checked
// here: the model (T9) decides what is invalid.
func DecodeTB(r *Request) (model.TBInput[string], error) {
	var in model.TBInput[string]
	kind, ok := tbOps[r.Op]
	if !ok {
		return in, badf("unknown operation %q", r.Op)
	}
	in.Kind = kind
	if kind == model.TBResetAll {
		return in, nil
	}
	if r.Key == nil && kind != model.TBReclaim {
		return in, badf("%s: field key is required (a string)", r.Op)
	}
	if kind != model.TBReclaim {
		in.Key = *r.Key
	}
	if kind == model.TBReset {
		return in, nil
	}
	if r.Capacity == nil {
		return in, badf("%s: field capacity is required (a number)", r.Op)
	}
	if r.RefillPerSecond == nil {
		return in, badf("%s: field refill_per_second is required (a number)", r.Op)
	}
	if r.NowMs == nil {
		return in, badf("%s: field now_ms is required (an integer)", r.Op)
	}
	in.Limits = model.Limits{Capacity: float64(*r.Capacity), RefillPerSecond: float64(*r.RefillPerSecond)}
	in.NowMs = *r.NowMs
	in.Cost = 1
	if kind == model.TBReclaim {
		in.Cost = 0 // reclaim takes no cost; one sent is ignored
	}
	if r.Cost != nil && kind != model.TBPeek && kind != model.TBReclaim {
		in.Cost = float64(*r.Cost)
	}
	return in, nil
}

// EncodeTB is DecodeTB's inverse: the request for a model input (no id, no
// table). A cost of exactly 1 is still written, so requests are explicit.
func EncodeTB(in model.TBInput[string]) Request {
	r := Request{}
	for op, k := range tbOps {
		if k == in.Kind {
			r.Op = op
		}
	}
	if in.Kind == model.TBResetAll {
		return r
	}
	if in.Kind != model.TBReclaim {
		r.Key = I(in.Key)
	}
	if in.Kind == model.TBReset {
		return r
	}
	r.Capacity, r.RefillPerSecond, r.NowMs = F(in.Limits.Capacity), F(in.Limits.RefillPerSecond), I(in.NowMs)
	if in.Kind != model.TBPeek && in.Kind != model.TBReclaim {
		r.Cost = F(in.Cost)
	}
	return r
}

// TBResponse renders the model's output for in as the protocol answer.
func TBResponse(in model.TBInput[string], out model.TBOutput) Response {
	if out.Invalid != "" {
		return Response{Error: ErrInvalidArgument, Field: out.Invalid}
	}
	switch in.Kind {
	case model.TBTake:
		if !out.OK {
			return Response{Error: ErrRateLimited}
		}
		return Response{OK: true, Remaining: F(out.Remaining)}
	case model.TBAdmit:
		if !out.OK {
			return Response{Error: ErrRateLimited, RetryAfterMs: I(out.RetryAfterMs)}
		}
		return Response{OK: true, Remaining: F(out.Remaining)}
	case model.TBPeek:
		return Response{OK: true, Tokens: F(out.Tokens)}
	case model.TBRetryAfter:
		return Response{OK: true, RetryAfterMs: I(out.RetryAfterMs)}
	case model.TBReclaim:
		return Response{OK: true, Reclaimed: I(out.Reclaimed)}
	}
	return Response{OK: true}
}

// InvalidMessage is the message of an invalid_argument answer for in, taken
// from the model's rule (T9).
func InvalidMessage(in model.TBInput[string]) string {
	if err := model.CheckLimits(in.Limits, in.Cost, in.Kind != model.TBPeek && in.Kind != model.TBReclaim); err != nil {
		return fmt.Sprintf("%s %s %s", err.Field, formatFloat(err.Value), err.Rule)
	}
	return ""
}

func formatFloat(x float64) string {
	b, _ := Float(x).MarshalJSON()
	return strings.Trim(string(b), `"`)
}

// CrNames resolves the protocol's names for the credit table: client names
// to holders, and opaque epochs to the model's epochs and back. These are
// formats, not renamings: the one renaming of a driver's epochs is Epochs.
type CrNames interface {
	Holder(client string) (model.HolderID, error)
	Epoch(raw json.RawMessage) (uint64, error)
	RawEpochs
}

// RawEpochs writes the model's epochs as a driver's values: the half of
// CrNames that the encoders (EncodeCr, CrResponse) need. Epochs is one too,
// for the requests of a concurrent session.
type RawEpochs interface {
	RawEpoch(e uint64) json.RawMessage
}

var classes = map[string]model.Class{"general": model.General, "internal": model.Internal}

// protocolFields names the fields of model.DefectError as the protocol
// spells them.
var protocolFields = map[string]string{model.FieldHolder: "client", model.FieldClass: "class", model.FieldSlot: "slot", model.FieldEpoch: "epoch"}

// DecodeCr turns a credit-table request (not cr.new) into the model's input.
// A class other than general/internal, a slot outside 1..32 and epoch 0 are
// bad_request: the model treats them as defects (C12, model.CrInput.Check),
// which a driver must never turn into an answer.
func DecodeCr(r *Request, names CrNames) (model.CrInput[string], error) {
	var in model.CrInput[string]
	kind, ok := crOps[r.Op]
	if !ok {
		return in, badf("unknown operation %q", r.Op)
	}
	in.Kind = kind
	var err error
	switch kind {
	case model.CrReserve, model.CrEnqueue, model.CrRelease, model.CrExit:
		if r.Client == "" {
			return in, badf("%s: field client is required (a non-empty string)", r.Op)
		}
		if in.Holder, err = names.Holder(r.Client); err != nil {
			return in, err
		}
	}
	switch kind {
	case model.CrReserve:
		c, ok := classes[r.Class]
		if !ok {
			return in, badf("%s: field class must be \"general\" or \"internal\", not %q", r.Op, r.Class)
		}
		in.Class = c
	case model.CrEnqueue, model.CrTake, model.CrFinish, model.CrRelease:
		if r.Slot == nil {
			return in, badf("%s: field slot is required, an integer in 1..%d", r.Op, model.Slots)
		}
		if len(r.Epoch) == 0 {
			return in, badf("%s: field epoch is required (the value cr.reserve answered)", r.Op)
		}
		e, err := names.Epoch(r.Epoch)
		if err != nil {
			return in, err
		}
		in.Token = model.Token{Slot: *r.Slot, Epoch: e}
	}
	if kind == model.CrEnqueue {
		if r.Payload == nil {
			return in, badf("%s: field payload is required (a string)", r.Op)
		}
		if r.NowMs == nil {
			return in, badf("%s: field now_ms is required (an integer)", r.Op)
		}
		in.Payload, in.NowMs = *r.Payload, *r.NowMs
	}
	if d := in.Check(); d != nil {
		return in, badf("%s: field %s %v %s (C12)", r.Op, protocolFields[d.Field], d.Value, d.Rule)
	}
	return in, nil
}

// EncodeCr is DecodeCr's inverse: the request for a model input issued by
// client (no id, no table).
func EncodeCr(in model.CrInput[string], client string, names RawEpochs) Request {
	r := Request{}
	for op, k := range crOps {
		if k == in.Kind {
			r.Op = op
		}
	}
	switch in.Kind {
	case model.CrReserve, model.CrEnqueue, model.CrRelease, model.CrExit:
		r.Client = client
	}
	switch in.Kind {
	case model.CrReserve:
		r.Class = in.Class.String()
	case model.CrEnqueue, model.CrTake, model.CrFinish, model.CrRelease:
		r.Slot, r.Epoch = I(in.Token.Slot), names.RawEpoch(in.Token.Epoch)
	}
	if in.Kind == model.CrEnqueue {
		r.Payload, r.NowMs = I(in.Payload), I(in.NowMs)
	}
	return r
}

// CrAnswer decodes a driver's credit-table answer to in into the model's
// output: CrResponse's inverse. epoch maps the driver's epoch values to the
// model's numbers. An answer that is not one of in's operation
// (spec/protocol.md §4) is an error naming what is wrong.
func CrAnswer(in model.CrInput[string], r Response, epoch func(json.RawMessage) uint64) (model.CrOutput[string], error) {
	if !r.OK {
		return crRefusal(in, r)
	}
	var out model.CrOutput[string]
	missing := func(field string) error { return fmt.Errorf("answer of %s lacks field %s", in.Kind, field) }
	switch in.Kind {
	case model.CrReserve:
		if r.Slot == nil || len(r.Epoch) == 0 {
			return out, missing("slot or epoch")
		}
		out.Token = model.Token{Slot: *r.Slot, Epoch: epoch(r.Epoch)}
		return out, nil
	case model.CrEnqueue:
		return out, nil
	case model.CrTake:
		if r.Payload == nil {
			return out, missing("payload")
		}
		out.Payload = *r.Payload
	case model.CrFinish, model.CrRelease, model.CrSweep:
		if r.Freed == nil {
			return out, missing("freed")
		}
		out.Count = *r.Freed
		if in.Kind != model.CrSweep {
			out.OK, out.Count = out.Count == 1, 0
			return out, nil
		}
	case model.CrEnqueued:
		if r.Entries == nil {
			return out, missing("entries")
		}
		for _, e := range *r.Entries {
			out.Entries = append(out.Entries, model.Entry[string]{Slot: e.Slot, Epoch: epoch(e.Epoch), MarkedMs: e.MarkedMs, Payload: e.Payload})
		}
	case model.CrSnapshot:
		var g, i Counts
		if json.Unmarshal(r.General, &g) != nil || json.Unmarshal(r.Internal, &i) != nil {
			return out, missing("general or internal (count objects)")
		}
		out.Snap = model.Snapshot{General: model.Counts(g), Internal: model.Counts(i)}
	case model.CrBounds:
		if json.Unmarshal(r.General, &out.Bounds.General) != nil || json.Unmarshal(r.Internal, &out.Bounds.Internal) != nil || r.Total == nil {
			return out, missing("general, internal or total (integers)")
		}
		out.Bounds.Total = *r.Total
	}
	out.OK = true
	return out, nil
}

// crRefusal is the model's output for an error answer to in: no_table to
// a reserve or an enqueue, exhausted to a reserve, lost to an enqueue,
// none to a take; any other error is not an answer of in.
func crRefusal(in model.CrInput[string], r Response) (model.CrOutput[string], error) {
	var out model.CrOutput[string]
	switch {
	case r.Error == ErrNoTable && (in.Kind == model.CrReserve || in.Kind == model.CrEnqueue):
		out.Result = model.NoTable
	case r.Error == ErrExhausted && in.Kind == model.CrReserve:
		out.Result = model.Exhausted
	case r.Error == ErrLost && in.Kind == model.CrEnqueue:
		out.Result = model.Lost
	case r.Error == ErrNone && in.Kind == model.CrTake:
	default:
		return out, fmt.Errorf("error %q is not an answer of %s", r.Error, in.Kind)
	}
	return out, nil
}

// CrResponse renders the model's output for in as the protocol answer.
func CrResponse(in model.CrInput[string], out model.CrOutput[string], names RawEpochs) Response {
	result := func() Response {
		switch out.Result {
		case model.OK:
			return Response{OK: true}
		case model.Exhausted:
			return Response{Error: ErrExhausted}
		case model.Lost:
			return Response{Error: ErrLost}
		}
		return Response{Error: ErrNoTable}
	}
	freed := func(ok bool) Response {
		if ok {
			return Response{OK: true, Freed: I(1)}
		}
		return Response{OK: true, Freed: I(0)}
	}
	switch in.Kind {
	case model.CrReserve:
		r := result()
		if r.OK {
			r.Slot, r.Epoch = I(out.Token.Slot), names.RawEpoch(out.Token.Epoch)
		}
		return r
	case model.CrEnqueue:
		return result()
	case model.CrTake:
		if !out.OK {
			return Response{Error: ErrNone}
		}
		return Response{OK: true, Payload: I(out.Payload)}
	case model.CrFinish, model.CrRelease:
		return freed(out.OK)
	case model.CrSweep:
		return Response{OK: true, Freed: I(out.Count)}
	case model.CrEnqueued:
		es := make([]Entry, 0, len(out.Entries))
		for _, e := range out.Entries {
			es = append(es, Entry{Slot: e.Slot, Epoch: names.RawEpoch(e.Epoch), MarkedMs: e.MarkedMs, Payload: e.Payload})
		}
		return Response{OK: true, Entries: &es}
	case model.CrSnapshot:
		c := func(c model.Counts) Counts { return Counts{c.Free, c.Reserved, c.Enqueued, c.Processing} }
		return Response{OK: true, General: rawJSON(c(out.Snap.General)), Internal: rawJSON(c(out.Snap.Internal))}
	case model.CrBounds:
		return Response{OK: true, General: rawJSON(out.Bounds.General), Internal: rawJSON(out.Bounds.Internal), Total: I(out.Bounds.Total)}
	}
	return Response{OK: true}
}

// SymbolicEpochs names model epoch n "$en": the form epochs take in vectors
// and in failure reports. Holders are looked up in Clients.
type SymbolicEpochs struct {
	Clients map[string]model.HolderID
}

// Holder implements CrNames; unknown clients get the next id.
func (s *SymbolicEpochs) Holder(client string) (model.HolderID, error) {
	if s.Clients == nil {
		s.Clients = map[string]model.HolderID{}
	}
	h, ok := s.Clients[client]
	if !ok {
		h = model.HolderID(len(s.Clients) + 1)
		s.Clients[client] = h
	}
	return h, nil
}

// Epoch implements CrNames for "$en".
func (s *SymbolicEpochs) Epoch(raw json.RawMessage) (uint64, error) {
	var sym string
	if json.Unmarshal(raw, &sym) != nil || !strings.HasPrefix(sym, "$e") {
		return 0, badf("epoch %s is not a symbolic epoch \"$eN\"", raw)
	}
	n, err := strconv.ParseUint(sym[2:], 10, 64)
	if err != nil {
		return 0, badf("epoch %s is not a symbolic epoch \"$eN\"", raw)
	}
	return n, nil // "$e0" is the epoch-0 defect, refused by DecodeCr (C12)
}

// RawEpoch implements CrNames.
func (s *SymbolicEpochs) RawEpoch(e uint64) json.RawMessage {
	return rawJSON(fmt.Sprintf("$e%d", e))
}
