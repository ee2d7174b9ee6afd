package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The one rendering of operations and answers that every checker prints:
// failure reports, porcupine's visualization, the conformance harness.
// Floats are printed with %v, which round-trips exactly; keys and payloads
// that are strings are quoted (a key may be empty or hold spaces), others
// are printed after a letter ("k3", "p7").

// show renders a key or a payload.
func show(prefix string, v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return prefix + fmt.Sprint(v)
}

// String renders the limits as "[cap 5, 10/s]".
func (l Limits) String() string {
	return fmt.Sprintf("[cap %v, %v/s]", l.Capacity, l.RefillPerSecond)
}

// String renders the operation with the arguments it uses, for instance
// `take k0 cost=1 at 1000ms [cap 5, 10/s]`, `peek "hot" at 3ms [cap 5, 10/s]`,
// `reset k0`, `reset_all`, `reclaim at 9ms [cap 5, 10/s]`.
func (in TBInput[K]) String() string {
	switch in.Kind {
	case TBTake, TBRetryAfter, TBAdmit:
		return fmt.Sprintf("%v %s cost=%v at %dms %v", in.Kind, show("k", in.Key), in.Cost, in.NowMs, in.Limits)
	case TBPeek:
		return fmt.Sprintf("peek %s at %dms %v", show("k", in.Key), in.NowMs, in.Limits)
	case TBReset:
		return "reset " + show("k", in.Key)
	case TBReclaim:
		return fmt.Sprintf("reclaim at %dms %v", in.NowMs, in.Limits)
	}
	return in.Kind.String()
}

// String renders the output without knowing the operation: "invalid
// <field>", "rate_limited", or "ok", followed by every result field that is
// not zero. Answer renders it as the answer of one operation.
func (o TBOutput) String() string { return o.Answer(0) }

// Answer renders the output as the answer of an operation of kind: the
// result fields that operation returns are shown even when zero
// ("ok remaining=0", "ok retry_after=0ms"). Kind 0 means unknown (String).
func (o TBOutput) Answer(kind TBKind) string {
	var b strings.Builder
	switch {
	case o.Invalid != "":
		b.WriteString("invalid " + o.Invalid)
	case o.OK:
		b.WriteString("ok")
	case kind == 0 || kind == TBTake || kind == TBAdmit:
		b.WriteString("rate_limited")
	default:
		b.WriteString("not ok")
	}
	answers := o.Invalid == "" && o.OK
	field := func(name, value string, shown bool) {
		if shown {
			b.WriteString(" " + name + "=" + value)
		}
	}
	field("remaining", fmt.Sprint(o.Remaining), (answers && (kind == TBTake || kind == TBAdmit)) || math.Float64bits(o.Remaining) != 0)
	field("tokens", fmt.Sprint(o.Tokens), (answers && kind == TBPeek) || math.Float64bits(o.Tokens) != 0)
	field("retry_after", fmt.Sprintf("%dms", o.RetryAfterMs), (answers && kind == TBRetryAfter) || (kind == TBAdmit && o.Invalid == "" && !o.OK) || o.RetryAfterMs != 0)
	field("reclaimed", fmt.Sprint(o.Reclaimed), (answers && kind == TBReclaim) || o.Reclaimed != 0)
	return b.String()
}

// String renders a holder as "h3".
func (h HolderID) String() string { return "h" + strconv.FormatUint(uint64(h), 10) }

// String renders a token as "slot 4 epoch 7".
func (t Token) String() string { return fmt.Sprintf("slot %d epoch %d", t.Slot, t.Epoch) }

// String renders an entry as `slot 4 epoch 7 "p" at 2ms`.
func (e Entry[P]) String() string {
	return fmt.Sprintf("slot %d epoch %d %s at %dms", e.Slot, e.Epoch, show("p", e.Payload), e.MarkedMs)
}

// String renders the counts as "20 free, 3 reserved, 2 enqueued, 1 processing".
func (c Counts) String() string {
	return fmt.Sprintf("%d free, %d reserved, %d enqueued, %d processing", c.Free, c.Reserved, c.Enqueued, c.Processing)
}

// String renders a snapshot as "general {…}, internal {…}".
func (s Snapshot) String() string {
	return fmt.Sprintf("general {%v}, internal {%v}", s.General, s.Internal)
}

// String renders the bounds as "general 26, internal 6, total 32".
func (b Bounds) String() string {
	return fmt.Sprintf("general %d, internal %d, total %d", b.General, b.Internal, b.Total)
}

// String renders the operation with the arguments it uses, for instance
// `reserve h1 general`, `enqueue h3 slot 4 epoch 7 "p" at 2ms`,
// `take slot 4 epoch 7`, `release h1 slot 4 epoch 7`, `exit h2`, `sweep`.
func (in CrInput[P]) String() string {
	switch in.Kind {
	case CrReserve:
		return fmt.Sprintf("reserve %v %v", in.Holder, in.Class)
	case CrEnqueue:
		return fmt.Sprintf("enqueue %v %v %s at %dms", in.Holder, in.Token, show("p", in.Payload), in.NowMs)
	case CrTake, CrFinish:
		return fmt.Sprintf("%v %v", in.Kind, in.Token)
	case CrRelease:
		return fmt.Sprintf("release %v %v", in.Holder, in.Token)
	case CrExit:
		return fmt.Sprintf("exit %v", in.Holder)
	}
	return in.Kind.String()
}

// String renders the output without knowing the operation: the result and
// ok, then every other field that is not zero. Answer renders it as the
// answer of one operation.
func (o CrOutput[P]) String() string { return o.Answer(0) }

// Answer renders the output as the answer of an operation of kind, the way
// spec/credits.md §3 names results: "ok slot 4 epoch 7", "exhausted",
// `ok "p"`, "none", "freed", "not freed", "freed 2", a list of entries, a
// snapshot, the bounds. Kind 0 means unknown (String).
func (o CrOutput[P]) Answer(kind CrKind) string {
	var zero P
	switch kind {
	case CrReserve:
		if o.Result == OK {
			return "ok " + o.Token.String()
		}
		return o.Result.String()
	case CrEnqueue:
		return o.Result.String()
	case CrTake:
		if o.OK {
			return "ok " + show("p", o.Payload)
		}
		return "none"
	case CrFinish, CrRelease:
		if o.OK {
			return "freed"
		}
		return "not freed"
	case CrSweep:
		return fmt.Sprintf("freed %d", o.Count)
	case CrEnqueued:
		return entries(o.Entries)
	case CrSnapshot:
		return o.Snap.String()
	case CrBounds:
		return o.Bounds.String()
	case CrExit, CrClose:
		return "ok"
	}
	parts := []string{"result=" + o.Result.String(), "ok=" + strconv.FormatBool(o.OK)}
	if o.Token != (Token{}) {
		parts = append(parts, "token="+o.Token.String())
	}
	if o.Payload != zero {
		parts = append(parts, "payload="+show("p", o.Payload))
	}
	if o.Count != 0 {
		parts = append(parts, fmt.Sprintf("count=%d", o.Count))
	}
	if len(o.Entries) > 0 {
		parts = append(parts, "entries="+entries(o.Entries))
	}
	if o.Snap != (Snapshot{}) {
		parts = append(parts, "snapshot={"+o.Snap.String()+"}")
	}
	if o.Bounds != (Bounds{}) {
		parts = append(parts, "bounds={"+o.Bounds.String()+"}")
	}
	return strings.Join(parts, " ")
}

func entries[P comparable](es []Entry[P]) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return "[" + strings.Join(s, ", ") + "]"
}
