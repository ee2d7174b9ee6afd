package linearizability

import (
	"testing"

	"github.com/tollgate/tollgate/model"
)

// TestListingsChecked: listings are operations of a credit-table history.
// An entry no enqueue could have left during the call fails the real-time
// rule (model.CheckListing, C13); listings that each pass it alone but
// agree with no linearization together fail porcupine's per-slot reads
// (C16); overlapping listings that some linearization explains pass.
func TestListingsChecked(t *testing.T) {
	tok := model.Token{Slot: 1, Epoch: 1}
	row := model.Entry[Payload]{Slot: 1, Epoch: 1, MarkedMs: 7, Payload: "p"}
	reserve := CrOp{Client: 0, Input: model.CrInput[Payload]{Kind: model.CrReserve, Holder: 1, Class: model.General},
		Output: model.CrOutput[Payload]{Token: tok}, Call: 0, Return: 1}
	enqueue := func(res model.Result, call, ret int64) CrOp {
		return CrOp{Client: 0, Input: model.CrInput[Payload]{Kind: model.CrEnqueue, Holder: 1, Token: tok, Payload: "p", NowMs: 7},
			Output: model.CrOutput[Payload]{Result: res}, Call: call, Return: ret}
	}
	list := func(call, ret int64, es ...model.Entry[Payload]) CrOp {
		return CrOp{Client: 1, Input: model.CrInput[Payload]{Kind: model.CrEnqueued}, Output: model.CrOutput[Payload]{Entries: es}, Call: call, Return: ret}
	}
	take := CrOp{Client: 2, Input: model.CrInput[Payload]{Kind: model.CrTake, Token: tok}, Output: model.CrOutput[Payload]{OK: true, Payload: "p"}, Call: 4, Return: 5}
	cases := []struct {
		name string
		ops  []CrOp
		want Result
		inv  string
	}{
		{"an enqueue overlapping two listings, seen by the second only", []CrOp{reserve, enqueue(model.OK, 2, 20), list(3, 6), list(8, 10, row)}, Ok, ""},
		{"seen by the first, then gone from the second with nothing to move it", []CrOp{reserve, enqueue(model.OK, 2, 20), list(3, 6, row), list(8, 10)}, Illegal, "C16"},
		{"seen, then taken during the second", []CrOp{reserve, enqueue(model.OK, 2, 20), list(3, 6, row), func() CrOp { o := take; o.Call, o.Return = 7, 12; return o }(), list(8, 10)}, Ok, ""},
		{"a lost enqueue's row", []CrOp{reserve, enqueue(model.Lost, 2, 3), list(4, 6, row)}, Illegal, "C13"},
		{"a row taken before the listing", []CrOp{reserve, enqueue(model.OK, 2, 3), take, list(6, 8, row)}, Illegal, "C13"},
		{"a row taken during the listing", []CrOp{reserve, enqueue(model.OK, 2, 3), func() CrOp { o := take; o.Call, o.Return = 5, 9; return o }(), list(6, 8, row)}, Ok, ""},
		{"an unknown listing", []CrOp{reserve, enqueue(model.OK, 2, 3), {Client: 1, Input: model.CrInput[Payload]{Kind: model.CrEnqueued}, Unknown: true, Call: 4}}, Ok, ""},
	}
	for _, c := range cases {
		rep, err := CheckCredits(CrHistory{Ops: c.ops}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rep.Result != c.want || rep.Invariant != c.inv {
			t.Errorf("%s: %v %s (%s), want %v %s", c.name, rep.Result, rep.Invariant, rep.Detail, c.want, c.inv)
		}
	}
}
