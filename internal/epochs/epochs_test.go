package epochs

import (
	"sync"
	"testing"
)

// First seen, first named; a repeat keeps its first number (the C3
// violation a checker must see); numbers map back; nothing else is named.
func TestNames(t *testing.T) {
	var n Names[string]
	if _, ok := n.Seen("a"); ok {
		t.Fatal("the zero Names has seen an epoch")
	}
	for i, e := range []string{"x", "y", "x", "z", "y"} {
		want := map[string]uint64{"x": 1, "y": 2, "z": 3}[e]
		if got := n.Name(e); got != want {
			t.Fatalf("call %d: Name(%q) = %d, want %d", i, e, got, want)
		}
	}
	if k, ok := n.Seen("z"); !ok || k != 3 {
		t.Fatalf("Seen(z) = %d, %v; want 3, true", k, ok)
	}
	if _, ok := n.Seen("w"); ok {
		t.Fatal("Seen named an epoch")
	}
	for k, want := range map[uint64]string{1: "x", 2: "y", 3: "z"} {
		if e, ok := n.Epoch(k); !ok || e != want {
			t.Fatalf("Epoch(%d) = %q, %v; want %q", k, e, ok, want)
		}
	}
	for _, k := range []uint64{0, 4} {
		if e, ok := n.Epoch(k); ok {
			t.Fatalf("Epoch(%d) = %q, but nothing is named %d", k, e, k)
		}
	}
}

// Concurrent callers naming the same epochs agree: every epoch gets one
// number, and the numbers are 1..distinct.
func TestNamesConcurrent(t *testing.T) {
	var n Names[uint64]
	const goroutines, epochs = 8, 200
	got := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range uint64(epochs) {
				got[g] = append(got[g], n.Name(e*7))
			}
		}()
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for e := range epochs {
		for g := 1; g < goroutines; g++ {
			if got[g][e] != got[0][e] {
				t.Fatalf("epoch %d named %d and %d", e*7, got[0][e], got[g][e])
			}
		}
		seen[got[0][e]] = true
	}
	for k := uint64(1); k <= epochs; k++ {
		if !seen[k] {
			t.Fatalf("number %d given to no epoch", k)
		}
	}
}
