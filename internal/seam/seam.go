// Package seam is the one door through which impl/ touches shared memory:
// every slot word, counter, flag, bucket word and trie child word is one of
// its types. They are aliases of sync/atomic's types, so the real tables
// compile to exactly the instructions they would without the seam (CI
// checks the disassembly: scripts/seam-check.sh). The one type of its own is
// Pair, a 128-bit word that sync/atomic does not have (pair.go); on amd64
// and arm64 each of its methods inlines to a sync/atomic operation or to one
// call of its assembly, which the same check verifies.
//
// Its twin, internal/seam/hooked, has the same types with every operation a
// switch point. go generate (internal/mutants/gen) writes copies of the
// impl packages that differ from them only in importing the twin; the
// interleaving explorer (internal/interleave) drives those copies. Go's atomics
// are sequentially consistent (the Go memory model), so exploring the
// interleavings of these operations is exact for them; plain memory is left
// to the race detector.
package seam
