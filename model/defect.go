package model

import "fmt"

// Field names used in DefectError, as CrInput spells them.
const (
	FieldKind   = "kind"
	FieldHolder = "holder"
	FieldClass  = "class"
	FieldSlot   = "token.slot"
	FieldEpoch  = "token.epoch"
)

// DefectError is an argument of a credit-table operation that is a defect
// of the caller (C12): holder 0, a value that is not a class, a slot outside
// 1..32, a token with epoch 0, or an unknown operation. The model's methods
// panic with its message; the checkers that read inputs from outside (a
// recorded history, a protocol request) refuse it with Check before the
// model sees it. Field is one of the Field… constants above.
type DefectError struct {
	Field string
	Value any
	Rule  string
}

func (e *DefectError) Error() string {
	return fmt.Sprintf("model: %s %v %s (defect, C12)", e.Field, e.Value, e.Rule)
}

// HolderDefect reports holder 0, which is not a holder.
func HolderDefect(h HolderID) *DefectError {
	if h == 0 {
		return &DefectError{FieldHolder, h, "must not be 0"}
	}
	return nil
}

// ClassDefect reports a value that is neither General nor Internal.
func ClassDefect(c Class) *DefectError {
	if c != General && c != Internal {
		return &DefectError{FieldClass, uint8(c), fmt.Sprintf("must be general (%d) or internal (%d)", General, Internal)}
	}
	return nil
}

// SlotDefect reports a slot outside 1..32.
func SlotDefect(n int) *DefectError {
	if n < 1 || n > Slots {
		return &DefectError{FieldSlot, n, fmt.Sprintf("must be in 1..%d", Slots)}
	}
	return nil
}

// TokenDefect reports a token whose slot is outside 1..32 or whose epoch is
// 0, which no reservation carries, in that order.
func TokenDefect(t Token) *DefectError {
	if d := SlotDefect(t.Slot); d != nil {
		return d
	}
	if t.Epoch == 0 {
		return &DefectError{FieldEpoch, t.Epoch, "must not be 0 (no reservation carries it)"}
	}
	return nil
}

func checkHolder(h HolderID) {
	if d := HolderDefect(h); d != nil {
		panic(d.Error())
	}
}

func checkSlot(n int) {
	if d := SlotDefect(n); d != nil {
		panic(d.Error())
	}
}

func checkToken(t Token) {
	if d := TokenDefect(t); d != nil {
		panic(d.Error())
	}
}

// Check reports the first defect among the arguments in's operation uses
// (C12), in the order kind, holder, class, token; nil when Step can take it.
// Arguments an operation does not use are not looked at.
func (in CrInput[P]) Check() *DefectError {
	var holder, class, token bool
	switch in.Kind {
	case CrReserve:
		holder, class = true, true
	case CrEnqueue, CrRelease:
		holder, token = true, true
	case CrTake, CrFinish:
		token = true
	case CrExit:
		holder = true
	case CrSweep, CrEnqueued, CrSnapshot, CrBounds, CrClose:
	default:
		return &DefectError{FieldKind, uint8(in.Kind), fmt.Sprintf("is not an operation (%v=%d … %v=%d)", CrReserve, CrReserve, CrClose, CrClose)}
	}
	if d := HolderDefect(in.Holder); holder && d != nil {
		return d
	}
	if d := ClassDefect(in.Class); class && d != nil {
		return d
	}
	if d := TokenDefect(in.Token); token && d != nil {
		return d
	}
	return nil
}
