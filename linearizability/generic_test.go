package linearizability

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// counterModel: each call returns the number of calls before it.
var counterModel = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, _, output any) (bool, any) {
		n := state.(int64)
		return output.(int64) == n, n + 1
	},
	Equal:             func(a, b any) bool { return a == b },
	DescribeOperation: func(_, output any) string { return fmt.Sprint(output) },
}

func counterScripts(clients, per int) [][]struct{} {
	s := make([][]struct{}, clients)
	for c := range s {
		s[c] = make([]struct{}, per)
	}
	return s
}

// Record and CheckOps on any backend: an atomic counter linearizes; one
// that hands out a value twice (a lost update made certain) does not.
func TestRecordAnyBackend(t *testing.T) {
	var n atomic.Int64
	ops, err := Record[struct{}, int64](counterScripts(4, 100), Local(func(struct{}) int64 { return n.Add(1) - 1 }))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 400 {
		t.Fatalf("%d ops, want 400", len(ops))
	}
	for i := 1; i < len(ops); i++ {
		if ops[i].Call < ops[i-1].Call || ops[i].Return < ops[i].Call {
			t.Fatalf("op %d: stamps out of order: %+v after %+v", i, ops[i], ops[i-1])
		}
	}
	rep, err := CheckOps("counter", "X1", counterModel, ops, ops, Options{Timeout: 10 * time.Second})
	if err != nil || rep.Result != Ok {
		t.Fatalf("atomic counter: %+v, %v", rep, err)
	}
	res, order := Linearization(counterModel, ops, 10*time.Second)
	if res != Ok || len(order) != len(ops) {
		t.Fatalf("Linearization: %v, %d of %d ops", res, len(order), len(ops))
	}
	for k, i := range order {
		if ops[i].Output != int64(k) {
			t.Fatalf("linearization position %d holds op %d with output %d", k, i, ops[i].Output)
		}
	}

	var m atomic.Int64
	dup := Local(func(struct{}) int64 {
		v := m.Add(1) - 1
		if v == 7 {
			m.Add(-1) // the next call gets 7 again
		}
		return v
	})
	ops, err = Record[struct{}, int64](counterScripts(2, 20), dup)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err = CheckOps("counter", "X1", counterModel, ops, ops, Options{Timeout: 10 * time.Second, Dir: dir, Name: "dup"})
	if err != nil || rep.Result != Illegal || rep.Invariant != "X1" || rep.HTMLPath == "" {
		t.Fatalf("duplicating counter: %+v, %v; want Illegal with X1 and a visualization", rep, err)
	}
}

func TestRecordBadInput(t *testing.T) {
	if _, err := Record[struct{}, int64](nil, Local(func(struct{}) int64 { return 0 })); err == nil {
		t.Fatal("Record with no scripts: no error")
	}
	ops := []Op[struct{}, int64]{{Call: 5, Return: 3}}
	if _, err := CheckOps("counter", "X1", counterModel, ops, ops, Options{}); err == nil {
		t.Fatal("CheckOps with a return before its call: no error")
	}
}

// A backend that panics under Record stops the recording with an error
// wrapping ErrPanicked that carries the panic's value, as under
// RecordTokenBucket and RecordCredits: the panic is a violation seen, not a
// crash of the checker.
func TestRecordPanickingBackend(t *testing.T) {
	var n atomic.Int64
	b := Local(func(struct{}) int64 {
		if v := n.Add(1); v == 5 {
			panic("a corrupt counter")
		}
		return n.Load()
	})
	ops, err := Record[struct{}, int64](counterScripts(3, 10), b)
	if !errors.Is(err, ErrPanicked) || !strings.Contains(err.Error(), "a corrupt counter") {
		t.Fatalf("Record over a panicking backend returned %v, want ErrPanicked with the panic's value", err)
	}
	if ops != nil {
		t.Fatalf("Record over a panicking backend returned %d ops with its error, want none", len(ops))
	}
}
