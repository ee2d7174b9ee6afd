package model

import (
	"fmt"
	"slices"
)

// CrKind names a credit-table operation (including the two world events,
// a holder's exit and the owner's death).
type CrKind uint8

// The credit-table operations.
const (
	CrReserve CrKind = iota + 1
	CrEnqueue
	CrTake
	CrFinish
	CrRelease
	CrSweep
	CrEnqueued
	CrSnapshot
	CrBounds
	CrExit
	CrClose
)

var crKindNames = [...]string{CrReserve: "reserve", CrEnqueue: "enqueue", CrTake: "take", CrFinish: "finish",
	CrRelease: "release", CrSweep: "sweep", CrEnqueued: "enqueued", CrSnapshot: "snapshot", CrBounds: "bounds",
	CrExit: "exit", CrClose: "close"}

func (k CrKind) String() string {
	if int(k) < len(crKindNames) && crKindNames[k] != "" {
		return crKindNames[k]
	}
	return fmt.Sprintf("CrKind(%d)", uint8(k))
}

// CrInput is one credit-table operation with its arguments. Holder is used by
// reserve, enqueue, release and exit; Class by reserve; Token by enqueue,
// take, finish and release; Payload and NowMs by enqueue.
type CrInput[P comparable] struct {
	Kind    CrKind
	Holder  HolderID
	Class   Class
	Token   Token
	Payload P
	NowMs   int64
}

// CrOutput is what an operation returns. Result is set by reserve and
// enqueue; Token by a successful reserve; OK by take (payload found), finish
// and release (row freed), and is true for the operations that cannot fail;
// Payload by a successful take; Count by sweep; Entries by enqueued; Snap by
// snapshot; Bounds by bounds.
type CrOutput[P comparable] struct {
	Result  Result
	Token   Token
	OK      bool
	Payload P
	Count   int
	Entries []Entry[P]
	Snap    Snapshot
	Bounds  Bounds
}

// Equal compares two outputs field by field.
func (o CrOutput[P]) Equal(u CrOutput[P]) bool {
	return o.Result == u.Result && o.Token == u.Token && o.OK == u.OK && o.Payload == u.Payload &&
		o.Count == u.Count && slices.Equal(o.Entries, u.Entries) && o.Snap == u.Snap && o.Bounds == u.Bounds
}

// Step applies one operation and returns the new state and the output. It
// panics on the defects of C12, exactly as the methods it calls do.
func (s Credits[P]) Step(in CrInput[P]) (Credits[P], CrOutput[P]) {
	var out CrOutput[P]
	switch in.Kind {
	case CrReserve:
		s, out.Token, out.Result = s.Reserve(in.Holder, in.Class)
	case CrEnqueue:
		s, out.Result = s.Enqueue(in.Holder, in.Token, in.Payload, in.NowMs)
	case CrTake:
		s, out.Payload, out.OK = s.Take(in.Token)
	case CrFinish:
		s, out.OK = s.Finish(in.Token)
	case CrRelease:
		s, out.OK = s.Release(in.Holder, in.Token)
	case CrSweep:
		s, out.Count = s.Sweep()
	case CrEnqueued:
		out.Entries = s.Enqueued()
	case CrSnapshot:
		out.Snap = s.Snapshot()
	case CrBounds:
		out.Bounds = TableBounds
	case CrExit:
		s = s.Exit(in.Holder)
	case CrClose:
		s = s.Close()
	default:
		panic(fmt.Sprintf("model: unknown credit-table operation %d", in.Kind))
	}
	switch in.Kind {
	case CrSweep, CrEnqueued, CrSnapshot, CrBounds, CrExit, CrClose:
		out.OK = true
	}
	return s, out
}
