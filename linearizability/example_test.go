package linearizability_test

import (
	"fmt"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Two clients take from a fresh bucket of 10 at the same clock reading and
// both report 9 tokens left: a lost update, which no order of the two takes
// explains (T11).
func ExampleCheckTokenBucket() {
	lim := model.Limits{Capacity: 10, RefillPerSecond: 1}
	take := model.TBInput[string]{Kind: model.TBTake, Key: "k", Limits: lim, Cost: 1, NowMs: 0}
	h := linearizability.TBHistory{Ops: []linearizability.TBOp{
		{Client: 0, Input: take, Output: model.TBOutput{OK: true, Remaining: 9}, Call: 1, Return: 4},
		{Client: 1, Input: take, Output: model.TBOutput{OK: true, Remaining: 9}, Call: 2, Return: 3},
	}}
	rep, err := linearizability.CheckTokenBucket(h, linearizability.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Result)

	h.Ops[0].Output.Remaining = 8 // one of them saw the other's take
	rep, _ = linearizability.CheckTokenBucket(h, linearizability.Options{})
	fmt.Println(rep.Result)
	// Output:
	// Illegal
	// Ok
}

// A reserve may claim any free slot of its class under concurrency, but two
// reserves cannot both win slot 1 while it stays reserved (C2, C16).
func ExampleCheckCredits() {
	reserve := func(h model.HolderID) model.CrInput[string] {
		return model.CrInput[string]{Kind: model.CrReserve, Holder: h, Class: model.General}
	}
	ok := func(slot int, epoch uint64) model.CrOutput[string] {
		return model.CrOutput[string]{Result: model.OK, Token: model.Token{Slot: slot, Epoch: epoch}}
	}
	h := linearizability.CrHistory{Ops: []linearizability.CrOp{
		{Client: 0, Input: reserve(1), Output: ok(2, 1), Call: 1, Return: 4},
		{Client: 1, Input: reserve(2), Output: ok(1, 2), Call: 2, Return: 3},
	}}
	rep, _ := linearizability.CheckCredits(h, linearizability.Options{})
	fmt.Println(rep.Result)

	h.Ops[0].Output = ok(1, 1)
	rep, _ = linearizability.CheckCredits(h, linearizability.Options{})
	fmt.Println(rep.Result)
	// Output:
	// Ok
	// Illegal
}
