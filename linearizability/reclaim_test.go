package linearizability

import (
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/tollgate/tollgate/model"
)

func reclaimOp(client int, now, call, ret int64, count int) TBOp {
	return TBOp{Client: client, Input: model.TBInput[string]{Kind: model.TBReclaim, Limits: lim, NowMs: now},
		Output: model.TBOutput{OK: true, Reclaimed: count}, Call: call, Return: ret}
}

func staleTake(client int, key string, now, call, ret int64, rem float64) TBOp {
	return take(client, key, now, call, ret, true, rem)
}

// TestReclaimPerKey pins the whole-table check's reclaim (T11, T12): a
// reclaim that overlaps other operations is its floor step, then one step
// per key, each at its own instant inside its call, no reset_all between
// them, and its count is the number of keys it forgot. At lim (10 tokens,
// one a second) a bucket emptied by one token at 0 ms is full at 1000 ms; a
// take at 0 ms after a reclaim at 1000 ms forgot it stamps the floor and
// leaves 9, where the kept bucket leaves 8.
func TestReclaimPerKey(t *testing.T) {
	setup := []TBOp{take(0, "a", 0, 1, 2, true, 9), take(0, "b", 0, 3, 4, true, 9)}
	cases := []struct {
		name   string
		ops    []TBOp
		want   Result
		atomic Result // the verdict when the reclaim is one step
	}{
		// b forgotten before the stale take of b (9 left), a kept
		// because the take of a at 1000 ms, which came after, emptied
		// it a token first: no single instant of the reclaim explains
		// both, its steps of b and a do.
		{"steps of two keys on either side of two takes", []TBOp{
			reclaimOp(0, 1000, 10, 30, 1), staleTake(1, "b", 0, 11, 12, 9), take(1, "a", 1000, 13, 14, true, 9)}, Ok, Illegal},
		// b's take shows it forgotten.
		{"the same with a count no step explains", []TBOp{
			reclaimOp(0, 1000, 10, 30, 0), staleTake(1, "b", 0, 11, 12, 9), take(1, "a", 1000, 13, 14, true, 9)}, Illegal, Illegal},
		// a and b are full at every instant of the reclaim: it forgets
		// both, whatever c does.
		{"a full bucket kept", []TBOp{
			reclaimOp(0, 1000, 10, 30, 1), take(1, "c", 1000, 11, 12, true, 9)}, Illegal, Illegal},
		{"both full buckets forgotten", []TBOp{
			reclaimOp(0, 1000, 10, 30, 2), take(1, "c", 1000, 11, 12, true, 9)}, Ok, Ok},
		// b forgotten before 12, so the floor was raised before that: c,
		// new at 13, stamps 1000 and has no token back at 1000.
		{"floor raised after a kill", []TBOp{
			reclaimOp(0, 1000, 10, 30, 2), staleTake(1, "b", 0, 11, 12, 9),
			staleTake(1, "c", 0, 13, 14, 9), take(1, "c", 1000, 15, 16, true, 9)}, Illegal, Illegal},
		{"floor raised before the kill", []TBOp{
			reclaimOp(0, 1000, 10, 30, 2), staleTake(1, "b", 0, 11, 12, 9),
			staleTake(1, "c", 0, 13, 14, 9), take(1, "c", 1000, 15, 16, true, 8)}, Ok, Ok},
		// b forgotten before the reset_all, a (taken again after it)
		// forgotten after it: the reclaim would act on two tables.
		{"a reset_all between two steps", []TBOp{
			reclaimOp(0, 1000, 10, 30, 2), staleTake(1, "b", 0, 11, 12, 9),
			{Client: 1, Input: model.TBInput[string]{Kind: model.TBResetAll}, Output: model.TBOutput{OK: true}, Call: 13, Return: 14},
			take(1, "a", 0, 15, 16, true, 9), staleTake(1, "a", 0, 17, 18, 9)}, Illegal, Illegal},
		{"a reset_all after every step", []TBOp{
			reclaimOp(0, 1000, 10, 30, 2), staleTake(1, "b", 0, 11, 12, 9),
			{Client: 1, Input: model.TBInput[string]{Kind: model.TBResetAll}, Output: model.TBOutput{OK: true}, Call: 13, Return: 14},
			take(1, "a", 0, 15, 16, true, 9), staleTake(1, "a", 0, 17, 18, 8)}, Ok, Ok},
		// Two reclaims that both would forget a and b split them.
		{"two reclaims split two keys", []TBOp{
			reclaimOp(0, 1000, 10, 30, 1), reclaimOp(1, 1000, 11, 29, 1)}, Ok, Illegal},
		{"two reclaims forget a key each twice", []TBOp{
			reclaimOp(0, 1000, 10, 30, 2), reclaimOp(1, 1000, 11, 29, 1)}, Illegal, Illegal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := TBHistory{Ops: append(append([]TBOp(nil), setup...), c.ops...)}
			rep, err := CheckTokenBucketTable(h, Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Result != c.want {
				t.Fatalf("result %s, want %s", rep.Result, c.want)
			}
			if rep.Result == Illegal && (rep.HTMLPath == "" || rep.Invariant != "T11") {
				t.Fatalf("an illegal history without its visualization or T11: %+v", rep)
			}
			// The atomic reclaim: the same model, each reclaim one step.
			if got := porcupine.CheckOperationsTimeout(TokenBucketTableModel(), h.Operations(), 0); Result(got) != c.atomic {
				t.Fatalf("as one atomic step: %s, want %s", got, c.atomic)
			}
		})
	}
}
