package interleave

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// The oracle states no rule of the primitives: each run's history goes to
// linearizability.CheckCredits / CheckTokenBucket (porcupine over model/),
// and what the table shows once the threads are done goes to the same
// porcupine model as operations that follow the whole history. Verdicts are
// cached by the history's canonical form: the order of the call and return
// events (their stamps replaced by ranks) with every operation's input and
// output, plus the final observations; most schedules differ only in steps
// that no history can see, so porcupine runs once per distinct history.

// verdicts caches check results by canonical history.
type verdicts struct {
	m     map[string]*Failure // nil: the history passed
	keyb  []byte
	canon canon
}

func newVerdicts() *verdicts { return &verdicts{m: map[string]*Failure{}} }

// enc builds canonical keys.
type enc struct{ b []byte }

func (e *enc) u(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) s(v string) { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) f(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}
func (e *enc) t(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// canon builds the canonical form of a history from its operations'
// intervals and encodings. Porcupine sees only which operation returned
// before which was called, so the events, in stamp order, are cut into
// blocks of consecutive calls and of consecutive returns (reordering
// within a block changes nothing it sees); each operation is keyed by the
// blocks of its call and return and its encoding, and the operations are
// sorted by that key.
type canon struct {
	ev   []event
	ops  []canonOp
	data []byte
	e    enc
}

type event struct {
	at  int64
	op  int32
	ret bool
}

type canonOp struct {
	cb, rb   int32
	off, end int32
}

func (k *canon) reset() { k.ev, k.ops, k.data = k.ev[:0], k.ops[:0], k.data[:0] }

// add appends one operation; its input and output are to be encoded into
// the returned encoder, then done called with it.
func (k *canon) add(call, ret int64) *enc {
	i := int32(len(k.ops))
	k.ops = append(k.ops, canonOp{off: int32(len(k.data))})
	k.ev = append(k.ev, event{call, i, false}, event{ret, i, true})
	k.e.b = k.data
	return &k.e
}

// done ends the operation add began.
func (k *canon) done() {
	k.data = k.e.b
	k.ops[len(k.ops)-1].end = int32(len(k.data))
}

func (k *canon) key(dst []byte) []byte {
	slices.SortFunc(k.ev, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	block := int32(0)
	for i, e := range k.ev {
		if i > 0 && e.ret != k.ev[i-1].ret {
			block++
		}
		if e.ret {
			k.ops[e.op].rb = block
		} else {
			k.ops[e.op].cb = block
		}
	}
	slices.SortFunc(k.ops, func(a, b canonOp) int {
		if c := cmp.Compare(a.cb, b.cb); c != 0 {
			return c
		}
		if c := cmp.Compare(a.rb, b.rb); c != 0 {
			return c
		}
		return bytes.Compare(k.data[a.off:a.end], k.data[b.off:b.end])
	})
	e := enc{b: dst[:0]}
	for _, o := range k.ops {
		e.u(uint64(o.cb))
		e.u(uint64(o.rb))
		e.s(string(k.data[o.off:o.end]))
	}
	return e.b
}

func (e *enc) crIn(in model.CrInput[string]) {
	e.u(uint64(in.Kind))
	e.u(uint64(in.Holder))
	e.u(uint64(in.Class))
	e.u(uint64(in.Token.Slot))
	e.u(in.Token.Epoch)
	e.s(in.Payload)
	e.i(in.NowMs)
}

func (e *enc) crOut(o model.CrOutput[string]) {
	e.u(uint64(o.Result))
	e.u(uint64(o.Token.Slot))
	e.u(o.Token.Epoch)
	e.t(o.OK)
	e.s(o.Payload)
	e.i(int64(o.Count))
	e.u(uint64(len(o.Entries)))
	for _, x := range o.Entries {
		e.u(uint64(x.Slot))
		e.u(x.Epoch)
		e.i(x.MarkedMs)
		e.s(x.Payload)
	}
	for _, c := range []model.Counts{o.Snap.General, o.Snap.Internal} {
		e.i(int64(c.Free))
		e.i(int64(c.Reserved))
		e.i(int64(c.Enqueued))
		e.i(int64(c.Processing))
	}
}

// crKey is the canonical form of a credit-table history, the snapshots
// taken between steps and the final observations.
func crKey(k *canon, dst []byte, ops, obs []linearizability.CrOp, final []model.CrOutput[string]) []byte {
	k.reset()
	for _, set := range [2][]linearizability.CrOp{ops, obs} {
		for i := range set {
			op := &set[i]
			e := k.add(op.Call, op.Return)
			e.crIn(op.Input)
			e.crOut(op.Output)
			k.done()
		}
	}
	b := k.key(dst)
	e := enc{b: b}
	for _, o := range final {
		e.crOut(o)
	}
	return e.b
}

func (e *enc) tbIn(in model.TBInput[string]) {
	e.u(uint64(in.Kind))
	e.s(in.Key)
	e.f(in.Limits.Capacity)
	e.f(in.Limits.RefillPerSecond)
	e.f(in.Cost)
	e.i(in.NowMs)
}

func (e *enc) tbOut(o model.TBOutput) {
	e.s(o.Invalid)
	e.t(o.OK)
	e.f(o.Remaining)
	e.f(o.Tokens)
	e.i(o.RetryAfterMs)
	e.i(int64(o.Reclaimed))
}

// tbKey is the canonical form of a token-bucket history (its final peeks
// are operations of the history).
func tbKey(k *canon, dst []byte, ops []linearizability.TBOp) []byte {
	k.reset()
	for i := range ops {
		op := &ops[i]
		e := k.add(op.Call, op.Return)
		e.tbIn(op.Input)
		e.tbOut(op.Output)
		k.done()
	}
	return k.key(dst)
}
