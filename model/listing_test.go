package model_test

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/model"
)

type top = model.TimedCrOp[string]

func enq(tok model.Token, p string, mark int64, res model.Result, call, ret int64) top {
	return top{Input: model.CrInput[string]{Kind: model.CrEnqueue, Holder: 1, Token: tok, Payload: p, NowMs: mark},
		Output: model.CrOutput[string]{Result: res}, Call: call, Return: ret}
}

func listing(call, ret int64, es ...model.Entry[string]) top {
	return top{Input: model.CrInput[string]{Kind: model.CrEnqueued}, Output: model.CrOutput[string]{Entries: es}, Call: call, Return: ret}
}

func tokOp(k model.CrKind, tok model.Token, ok bool, call, ret int64) top {
	return top{Input: model.CrInput[string]{Kind: k, Token: tok}, Output: model.CrOutput[string]{OK: ok}, Call: call, Return: ret}
}

func TestCheckListing(t *testing.T) {
	t1, t2 := model.Token{Slot: 1, Epoch: 1}, model.Token{Slot: 1, Epoch: 2}
	e1 := model.Entry[string]{Slot: 1, Epoch: 1, MarkedMs: 5, Payload: "a"}
	e2 := model.Entry[string]{Slot: 1, Epoch: 2, MarkedMs: 6, Payload: "b"}
	reserve2 := top{Input: model.CrInput[string]{Kind: model.CrReserve, Holder: 1, Class: model.General},
		Output: model.CrOutput[string]{Token: t2}, Call: 40, Return: 45}
	cases := []struct {
		name string
		ops  []top
		want string // "" passes; else a substring of the error
	}{
		{"enqueued before, listed", []top{enq(t1, "a", 5, model.OK, 0, 10), listing(20, 30, e1)}, ""},
		{"enqueue overlapping the listing, listed", []top{enq(t1, "a", 5, model.OK, 25, 40), listing(20, 30, e1)}, ""},
		{"enqueue overlapping the listing, not listed", []top{enq(t1, "a", 5, model.OK, 25, 40), listing(20, 30)}, ""},
		{"enqueue of unknown outcome, listed", []top{{Input: enq(t1, "a", 5, model.OK, 0, 10).Input, Call: 0, Return: 1 << 62, Unknown: true}, listing(20, 30, e1)}, ""},
		{"take overlapping the listing, listed", []top{enq(t1, "a", 5, model.OK, 0, 10), tokOp(model.CrTake, t1, true, 25, 35), listing(20, 30, e1)}, ""},
		{"take overlapping the listing, not listed", []top{enq(t1, "a", 5, model.OK, 0, 10), tokOp(model.CrTake, t1, true, 25, 35), listing(20, 30)}, ""},
		{"a failed take moves nothing", []top{enq(t1, "a", 5, model.OK, 0, 10), tokOp(model.CrTake, t1, false, 12, 15), listing(20, 30)}, "leaves out slot 1 epoch 1"},
		{"enqueue that answered lost", []top{enq(t1, "a", 5, model.Lost, 0, 10), listing(20, 30, e1)}, "answered lost"},
		{"enqueue called after the listing", []top{enq(t1, "a", 5, model.OK, 31, 40), listing(20, 30, e1)}, "did not hold"},
		{"taken before the listing", []top{enq(t1, "a", 5, model.OK, 0, 10), tokOp(model.CrTake, t1, true, 11, 12), listing(20, 30, e1)}, "taken, finished"},
		{"finished before the listing", []top{enq(t1, "a", 5, model.OK, 0, 10), tokOp(model.CrFinish, t1, true, 11, 12), listing(20, 30, e1)}, "taken, finished"},
		{"claimed again before the listing", []top{enq(t1, "a", 5, model.OK, 0, 10), func() top { r := reserve2; r.Call, r.Return = 11, 12; return r }(), listing(20, 30, e1)}, "claimed again"},
		{"a reserve overlapping the listing", []top{enq(t1, "a", 5, model.OK, 0, 10), func() top { r := reserve2; r.Call, r.Return = 11, 25; return r }(), tokOp(model.CrFinish, t1, true, 11, 12), listing(20, 30, e1)}, "taken, finished"},
		{"no such enqueue", []top{enq(t1, "a", 5, model.OK, 0, 10), listing(20, 30, model.Entry[string]{Slot: 1, Epoch: 1, MarkedMs: 5, Payload: "z"})}, "no enqueue"},
		{"wrong generation", []top{enq(t1, "a", 5, model.OK, 0, 10), tokOp(model.CrTake, t1, true, 11, 12), tokOp(model.CrFinish, t1, true, 13, 14), reserve2, enq(t2, "b", 6, model.OK, 46, 50), listing(60, 70, e1)}, "taken, finished"},
		{"the next generation", []top{enq(t1, "a", 5, model.OK, 0, 10), tokOp(model.CrTake, t1, true, 11, 12), tokOp(model.CrFinish, t1, true, 13, 14), reserve2, enq(t2, "b", 6, model.OK, 46, 50), listing(60, 70, e2)}, ""},
		{"out of order", []top{enq(t1, "a", 5, model.OK, 0, 10), enq(model.Token{Slot: 2, Epoch: 3}, "c", 1, model.OK, 0, 10),
			listing(20, 30, e1, model.Entry[string]{Slot: 2, Epoch: 3, MarkedMs: 1, Payload: "c"})}, "by mark"},
		{"a slot twice", []top{enq(t1, "a", 5, model.OK, 0, 10), listing(20, 30, e1, e1)}, "twice"},
		{"closed before", []top{enq(t1, "a", 5, model.OK, 0, 10), {Input: model.CrInput[string]{Kind: model.CrClose}, Call: 11, Return: 12}, listing(20, 30, e1)}, "C11"},
		{"closed during, not listed", []top{enq(t1, "a", 5, model.OK, 0, 10), {Input: model.CrInput[string]{Kind: model.CrClose}, Call: 25, Return: 26}, listing(20, 30)}, ""},
	}
	for _, c := range cases {
		l := c.ops[len(c.ops)-1]
		err := model.CheckListing(l, c.ops)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: passed, want an error with %q", c.name, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
